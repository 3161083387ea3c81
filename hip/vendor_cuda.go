package hip

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// cudaSpec binds the NVIDIA driver API. Versioned symbols (_v2) are the ones
// cuda.h maps the plain names to; fallbacks cover older drivers.
var cudaSpec = &vendorSpec{
	vendor:     CUDA,
	libraries:  []string{"libcuda.so.1", "libcuda.so"},
	envVar:     "LOOM_CUDA_LIB",
	minDriver:  12000,
	minDriverS: "CUDA 12.0 (NVIDIA driver 525 or newer)",
	symbols: [numFns][]string{
		fnInit:                {"cuInit"},
		fnDriverGetVersion:    {"cuDriverGetVersion"},
		fnDeviceGetCount:      {"cuDeviceGetCount"},
		fnDeviceGet:           {"cuDeviceGet"},
		fnDeviceGetName:       {"cuDeviceGetName"},
		fnDeviceTotalMem:      {"cuDeviceTotalMem_v2"},
		fnDeviceGetAttribute:  {"cuDeviceGetAttribute"},
		fnDeviceGetProperties: nil,
		fnPrimaryCtxRetain:    {"cuDevicePrimaryCtxRetain"},
		fnPrimaryCtxRelease:   {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"},
		fnCtxSetCurrent:       {"cuCtxSetCurrent"},
		fnCtxSynchronize:      {"cuCtxSynchronize"},
		fnMemGetInfo:          {"cuMemGetInfo_v2"},
		fnStreamCreate:        {"cuStreamCreate"},
		fnStreamDestroy:       {"cuStreamDestroy_v2", "cuStreamDestroy"},
		fnStreamSynchronize:   {"cuStreamSynchronize"},
		fnStreamQuery:         {"cuStreamQuery"},
		fnEventCreate:         {"cuEventCreate"},
		fnEventDestroy:        {"cuEventDestroy_v2", "cuEventDestroy"},
		fnEventRecord:         {"cuEventRecord"},
		fnEventSynchronize:    {"cuEventSynchronize"},
		fnEventElapsedTime:    {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
		fnMemAlloc:            {"cuMemAlloc_v2"},
		fnMemFree:             {"cuMemFree_v2"},
		fnMemHostAlloc:        {"cuMemHostAlloc"},
		fnMemFreeHost:         {"cuMemFreeHost"},
		fnMemcpyHtoD:          {"cuMemcpyHtoD_v2"},
		fnMemcpyDtoH:          {"cuMemcpyDtoH_v2"},
		fnMemcpyHtoDAsync:     {"cuMemcpyHtoDAsync_v2"},
		fnMemcpyDtoHAsync:     {"cuMemcpyDtoHAsync_v2"},
		fnMemcpyDtoDAsync:     {"cuMemcpyDtoDAsync_v2"},
		fnMemsetD8Async:       {"cuMemsetD8Async"},
		fnMemsetD32Async:      {"cuMemsetD32Async"},
		fnModuleLoadDataEx:    {"cuModuleLoadDataEx"},
		fnModuleUnload:        {"cuModuleUnload"},
		fnModuleGetFunction:   {"cuModuleGetFunction"},
		fnFuncGetAttribute:    {"cuFuncGetAttribute"},
		fnFuncGetParamInfo:    {"cuFuncGetParamInfo"},
		fnFuncSetAttribute:    {"cuFuncSetAttribute"},
		fnLaunchKernel:        {"cuLaunchKernel"},
		fnLaunchKernelEx:      {"cuLaunchKernelEx"},
		fnGraphCreate:         {"cuGraphCreate"},
		fnGraphDestroy:        {"cuGraphDestroy"},
		fnGraphAddKernelNode:  {"cuGraphAddKernelNode_v2", "cuGraphAddKernelNode"},
		fnGraphAddMemsetNode:  {"cuGraphAddMemsetNode"},
		// The _v2 entry takes edge data (CUDA 12.3); the plain one does not.
		fnGraphAddDependencies: {"cuGraphAddDependencies_v2"},
		fnGraphInstantiate:     {"cuGraphInstantiateWithFlags"},
		fnGraphExecDestroy:     {"cuGraphExecDestroy"},
		fnGraphLaunch:          {"cuGraphLaunch"},
		fnGetErrorName:         {"cuGetErrorName"},
	},
	optional: [numFns]bool{fnDeviceGetProperties: true, fnFuncGetParamInfo: true, fnGraphAddDependencies: true, fnLaunchKernelEx: true},
	attrs: attrCodes{
		maxThreadsPerBlock: 1,
		ccMajor:            75,
		ccMinor:            76,
		multiprocessors:    16,
		sharedPerBlock:     8,
		// CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
		sharedPerBlockOptin: 97,
		warpSize:            10,
	},
	names: map[int32]string{
		0: "CUDA_SUCCESS", 1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY",
		3: "CUDA_ERROR_NOT_INITIALIZED", 4: "CUDA_ERROR_DEINITIALIZED", 34: "CUDA_ERROR_STUB_LIBRARY",
		100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 200: "CUDA_ERROR_INVALID_IMAGE",
		201: "CUDA_ERROR_INVALID_CONTEXT", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU", 218: "CUDA_ERROR_INVALID_PTX",
		222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 400: "CUDA_ERROR_INVALID_HANDLE", 500: "CUDA_ERROR_NOT_FOUND",
		600: "CUDA_ERROR_NOT_READY", 700: "CUDA_ERROR_ILLEGAL_ADDRESS", 701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
		702: "CUDA_ERROR_LAUNCH_TIMEOUT", 710: "CUDA_ERROR_ASSERT", 714: "CUDA_ERROR_HARDWARE_STACK_ERROR",
		715: "CUDA_ERROR_ILLEGAL_INSTRUCTION", 716: "CUDA_ERROR_MISALIGNED_ADDRESS",
		717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC", 719: "CUDA_ERROR_LAUNCH_FAILED",
		801: "CUDA_ERROR_NOT_SUPPORTED", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 999: "CUDA_ERROR_UNKNOWN",
	},
	classes: map[int32]error{
		1: ErrInvalidValue, 2: ErrOutOfMemory, 34: ErrNoLibrary, 100: ErrNoDevice, 101: ErrNoDevice,
		200: ErrInvalidImage, 209: ErrInvalidImage, 218: ErrInvalidImage, 222: ErrInvalidImage,
		400: ErrInvalidHandle, 500: ErrNotFound, 600: ErrNotReady, 701: ErrLaunchOutOfResources,
		801: ErrNotSupported, 803: ErrOldDriver,
	},
	faults: map[int32]bool{700: true, 702: true, 710: true, 714: true, 715: true, 716: true, 717: true, 718: true, 719: true},
	// The driver documents stream-taken contexts for library kernels and
	// applies it to every stream-ordered call (checked on driver 580 with
	// nothing current, and with another context current); 201 and 400 are
	// its answers when a stream's context is required to be current.
	streamContext: true,
	wantsContext:  map[int32]bool{201: true, 400: true},
	errorName: func(l *Library, code int32) (string, bool) {
		var p uintptr
		if r := l.raw(fnGetErrorName, uintptr(code), uintptr(unsafe.Pointer(&p))); r != 0 || p == 0 {
			return "", false
		}
		return goString(p), true
	},
	kernelNodeSize: 72, // CUDA_KERNEL_NODE_PARAMS_v2
	kernelNode: func(b []byte, p *kernelNodeParams) {
		le := binary.LittleEndian
		clear(b)
		le.PutUint64(b[0:], uint64(p.fn))
		le.PutUint32(b[8:], p.grid.X)
		le.PutUint32(b[12:], p.grid.Y)
		le.PutUint32(b[16:], p.grid.Z)
		le.PutUint32(b[20:], p.block.X)
		le.PutUint32(b[24:], p.block.Y)
		le.PutUint32(b[28:], p.block.Z)
		le.PutUint32(b[32:], p.sharedBytes)
		le.PutUint64(b[40:], uint64(p.kernelParams))
		// extra (48), kern (56) stay NULL; ctx (64) is ignored when func is set.
		le.PutUint64(b[64:], uint64(p.ctx))
	},
	memsetNodeSize: 40, // CUDA_MEMSET_NODE_PARAMS
	memsetNode: func(b []byte, p *memsetNodeParams) {
		le := binary.LittleEndian
		clear(b)
		le.PutUint64(b[0:], uint64(p.dst))
		le.PutUint64(b[8:], p.width*uint64(p.elementSize)) // pitch
		le.PutUint32(b[16:], p.value)
		le.PutUint32(b[20:], p.elementSize)
		le.PutUint64(b[24:], p.width)
		le.PutUint64(b[32:], 1) // height
	},
	arch: func(_ *Device, major, minor int) string { return fmt.Sprintf("sm_%d%d", major, minor) },
}
