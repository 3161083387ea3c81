package hip

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"unsafe"
)

// hipSpec binds AMD HIP (ROCm 5 and 6). Its driver-style calls (hipModule*,
// hipDevicePrimaryCtx*) mirror the NVIDIA driver API argument for argument;
// the graph node structs and attribute numbers differ and live here.
var hipSpec = &vendorSpec{
	vendor:     HIP,
	libraries:  []string{"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"},
	envVar:     "LOOM_HIP_LIB",
	minDriver:  0,
	minDriverS: "ROCm 5",
	symbols: [numFns][]string{
		fnInit:                {"hipInit"},
		fnDriverGetVersion:    {"hipDriverGetVersion"},
		fnDeviceGetCount:      {"hipGetDeviceCount"},
		fnDeviceGet:           {"hipDeviceGet"},
		fnDeviceGetName:       {"hipDeviceGetName"},
		fnDeviceTotalMem:      {"hipDeviceTotalMem"},
		fnDeviceGetAttribute:  {"hipDeviceGetAttribute"},
		fnDeviceGetProperties: {"hipGetDevicePropertiesR0600", "hipGetDeviceProperties"},
		fnPrimaryCtxRetain:    {"hipDevicePrimaryCtxRetain"},
		fnPrimaryCtxRelease:   {"hipDevicePrimaryCtxRelease"},
		fnCtxSetCurrent:       {"hipCtxSetCurrent"},
		fnCtxSynchronize:      {"hipCtxSynchronize", "hipDeviceSynchronize"},
		fnMemGetInfo:          {"hipMemGetInfo"},
		fnStreamCreate:        {"hipStreamCreateWithFlags"},
		fnStreamDestroy:       {"hipStreamDestroy"},
		fnStreamSynchronize:   {"hipStreamSynchronize"},
		fnStreamQuery:         {"hipStreamQuery"},
		fnEventCreate:         {"hipEventCreateWithFlags"},
		fnEventDestroy:        {"hipEventDestroy"},
		fnEventRecord:         {"hipEventRecord"},
		fnEventSynchronize:    {"hipEventSynchronize"},
		fnEventElapsedTime:    {"hipEventElapsedTime"},
		fnMemAlloc:            {"hipMalloc"},
		fnMemFree:             {"hipFree"},
		fnMemHostAlloc:        {"hipHostMalloc", "hipExtHostAlloc"},
		fnMemFreeHost:         {"hipHostFree"},
		fnMemcpyHtoD:          {"hipMemcpyHtoD"},
		fnMemcpyDtoH:          {"hipMemcpyDtoH"},
		fnMemcpyHtoDAsync:     {"hipMemcpyHtoDAsync"},
		fnMemcpyDtoHAsync:     {"hipMemcpyDtoHAsync"},
		fnMemcpyDtoDAsync:     {"hipMemcpyDtoDAsync"},
		fnMemsetD8Async:       {"hipMemsetD8Async"},
		fnMemsetD32Async:      {"hipMemsetD32Async"},
		fnModuleLoadDataEx:    {"hipModuleLoadDataEx"},
		fnModuleUnload:        {"hipModuleUnload"},
		fnModuleGetFunction:   {"hipModuleGetFunction"},
		fnFuncGetAttribute:    {"hipFuncGetAttribute"},
		fnFuncGetParamInfo:    nil,
		fnFuncSetAttribute:    {"hipFuncSetAttribute"},
		fnLaunchKernel:        {"hipModuleLaunchKernel"},
		fnGraphCreate:         {"hipGraphCreate"},
		fnGraphDestroy:        {"hipGraphDestroy"},
		fnGraphAddKernelNode:  {"hipGraphAddKernelNode"},
		fnGraphAddMemsetNode:  {"hipGraphAddMemsetNode"},
		fnGraphInstantiate:    {"hipGraphInstantiateWithFlags"},
		fnGraphExecDestroy:    {"hipGraphExecDestroy"},
		fnGraphLaunch:         {"hipGraphLaunch"},
		fnGetErrorName:        {"hipGetErrorName"},
	},
	// HIP has no programmatic dependencies: fnGraphAddDependencies and
	// fnLaunchKernelEx stay unbound.
	optional: [numFns]bool{fnDeviceGetProperties: true, fnFuncGetParamInfo: true, fnFuncSetAttribute: true, fnGraphAddDependencies: true, fnLaunchKernelEx: true},
	// hipDeviceAttribute_t as renumbered in ROCm 5.
	attrs: attrCodes{
		maxThreadsPerBlock: 56,
		ccMajor:            23,
		ccMinor:            61,
		multiprocessors:    63,
		sharedPerBlock:     74,
		// AMD has no opt-in: a block may use all of its LDS.
		sharedPerBlockOptin: 74,
		warpSize:            87,
	},
	names: map[int32]string{
		0: "hipSuccess", 1: "hipErrorInvalidValue", 2: "hipErrorOutOfMemory", 3: "hipErrorNotInitialized",
		9: "hipErrorInvalidConfiguration", 17: "hipErrorInvalidDevicePointer", 35: "hipErrorInsufficientDriver",
		53: "hipErrorPriorLaunchFailure", 98: "hipErrorInvalidDeviceFunction", 100: "hipErrorNoDevice",
		101: "hipErrorInvalidDevice", 200: "hipErrorInvalidImage", 201: "hipErrorInvalidContext",
		209: "hipErrorNoBinaryForGpu", 218: "hipErrorInvalidKernelFile", 400: "hipErrorInvalidHandle",
		500: "hipErrorNotFound", 600: "hipErrorNotReady", 700: "hipErrorIllegalAddress",
		701: "hipErrorLaunchOutOfResources", 702: "hipErrorLaunchTimeOut", 710: "hipErrorAssert",
		719: "hipErrorLaunchFailure", 801: "hipErrorNotSupported", 999: "hipErrorUnknown",
	},
	classes: map[int32]error{
		1: ErrInvalidValue, 2: ErrOutOfMemory, 9: ErrInvalidValue, 17: ErrInvalidValue, 35: ErrOldDriver,
		98: ErrInvalidValue, 100: ErrNoDevice, 101: ErrNoDevice, 200: ErrInvalidImage, 209: ErrInvalidImage,
		218: ErrInvalidImage, 400: ErrInvalidHandle, 500: ErrNotFound, 600: ErrNotReady,
		701: ErrLaunchOutOfResources, 801: ErrNotSupported,
	},
	faults: map[int32]bool{53: true, 700: true, 702: true, 710: true, 719: true},
	errorName: func(l *Library, code int32) (string, bool) {
		p := l.raw(fnGetErrorName, uintptr(code))
		if p == 0 {
			return "", false
		}
		return goString(p), true
	},
	kernelNodeSize: 64, // hipKernelNodeParams
	kernelNode: func(b []byte, p *kernelNodeParams) {
		le := binary.LittleEndian
		clear(b)
		le.PutUint32(b[0:], p.block.X)
		le.PutUint32(b[4:], p.block.Y)
		le.PutUint32(b[8:], p.block.Z)
		// extra (16) stays NULL.
		le.PutUint64(b[24:], uint64(p.fn))
		le.PutUint32(b[32:], p.grid.X)
		le.PutUint32(b[36:], p.grid.Y)
		le.PutUint32(b[40:], p.grid.Z)
		le.PutUint64(b[48:], uint64(p.kernelParams))
		le.PutUint32(b[56:], p.sharedBytes)
	},
	memsetNodeSize: 48, // hipMemsetParams
	memsetNode: func(b []byte, p *memsetNodeParams) {
		le := binary.LittleEndian
		clear(b)
		le.PutUint64(b[0:], uint64(p.dst))
		le.PutUint32(b[8:], p.elementSize)
		le.PutUint64(b[16:], 1) // height
		le.PutUint64(b[24:], p.width*uint64(p.elementSize))
		le.PutUint32(b[32:], p.value)
		le.PutUint64(b[40:], p.width)
	},
	arch: hipArch,
}

var gfxName = regexp.MustCompile(`gfx[0-9a-f]{3,4}(:[a-z+-:]+)?`)

// hipArch reads the gfx target out of hipDeviceProp_t. The struct's layout
// changed between ROCm releases, so rather than trust an offset, the
// properties land in a generous buffer and the NUL-terminated gcnArchName is
// found by its shape.
func hipArch(d *Device, major, minor int) string {
	if d.lib.fn[fnDeviceGetProperties] == 0 {
		return fmt.Sprintf("gfx%d%d", major, minor)
	}
	buf := make([]byte, 16<<10)
	if r := d.lib.raw(fnDeviceGetProperties, uintptr(unsafe.Pointer(&buf[0])), uintptr(d.ordinal)); r != 0 {
		return fmt.Sprintf("gfx%d%d", major, minor)
	}
	if m := gfxName.Find(buf); m != nil {
		return string(m)
	}
	return fmt.Sprintf("gfx%d%d", major, minor)
}
