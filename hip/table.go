package hip

// fnID indexes the table of driver entry points. Each vendor maps every fnID
// to symbol names (the first one present wins) with the same C signature;
// where the vendors' calls differ in shape, the difference lives in the
// vendor's spec functions below, never in branches at call sites.
type fnID int

const (
	fnInit fnID = iota
	fnDriverGetVersion
	fnDeviceGetCount
	fnDeviceGet
	fnDeviceGetName
	fnDeviceTotalMem
	fnDeviceGetAttribute
	fnDeviceGetProperties // optional: HIP's properties, read for the gfx name
	fnPrimaryCtxRetain
	fnPrimaryCtxRelease
	fnCtxSetCurrent
	fnCtxSynchronize
	fnMemGetInfo
	fnStreamCreate
	fnStreamDestroy
	fnStreamSynchronize
	fnStreamQuery
	fnEventCreate
	fnEventDestroy
	fnEventRecord
	fnEventSynchronize
	fnEventElapsedTime
	fnMemAlloc
	fnMemFree
	fnMemHostAlloc
	fnMemFreeHost
	fnMemcpyHtoD
	fnMemcpyDtoH
	fnMemcpyHtoDAsync
	fnMemcpyDtoHAsync
	fnMemcpyDtoDAsync
	fnMemsetD8Async
	fnMemsetD32Async
	fnModuleLoadDataEx
	fnModuleUnload
	fnModuleGetFunction
	fnFuncGetAttribute
	fnFuncGetParamInfo // optional: lets Launch check argument sizes
	fnFuncSetAttribute // optional on AMD, which needs no opt-in for dynamic shared memory
	fnLaunchKernel
	fnLaunchKernelEx // optional: launches with attributes (CUDA 12.0+), for programmatic serialization
	fnGraphCreate
	fnGraphDestroy
	fnGraphAddKernelNode
	fnGraphAddMemsetNode
	fnGraphAddDependencies // optional: edges with data (CUDA 12.3+), for programmatic dependencies
	fnGraphInstantiate
	fnGraphExecDestroy
	fnGraphLaunch
	fnGetErrorName
	numFns
)

// attrCodes are the vendor's enum values for the device attributes read.
type attrCodes struct {
	maxThreadsPerBlock int32
	ccMajor, ccMinor   int32
	multiprocessors    int32
	sharedPerBlock     int32
	// sharedPerBlockOptin: the most shared memory a block may have once
	// its kernel opts in (FuncSetAttribute).
	sharedPerBlockOptin int32
	warpSize            int32
}

// Function attribute codes: identical in CUDA (CUfunction_attribute) and HIP
// (hipFunction_attribute).
const (
	funcAttrMaxThreadsPerBlock = 0
	funcAttrSharedSizeBytes    = 1
	funcAttrConstSizeBytes     = 2
	funcAttrLocalSizeBytes     = 3
	funcAttrNumRegs            = 4
	funcAttrPTXVersion         = 5
	funcAttrBinaryVersion      = 6
	// funcAttrMaxDynamicSharedSizeBytes is settable: the dynamic shared
	// memory a launch of the kernel may ask for.
	funcAttrMaxDynamicSharedSizeBytes = 8
)

// JIT option codes: identical in CUjit_option and hipJitOption.
const (
	jitInfoLogBuffer       = 3
	jitInfoLogBufferBytes  = 4
	jitErrorLogBuffer      = 5
	jitErrorLogBufferBytes = 6
	jitLogVerbose          = 12
)

// vendorSpec is everything that differs between the two drivers.
type vendorSpec struct {
	vendor     Vendor
	libraries  []string // tried in order when no explicit path is given
	envVar     string   // explicit library path
	minDriver  int32    // lowest DriverGetVersion accepted
	minDriverS string   // the same, for people
	symbols    [numFns][]string
	optional   [numFns]bool
	attrs      attrCodes
	// codes maps error codes to names (used when the driver cannot name
	// one) and to sentinel classes; faults lists codes that poison a context.
	names   map[int32]string
	classes map[int32]error
	faults  map[int32]bool
	// errorName asks the loaded driver for a code's name: the two drivers
	// return it differently (out-parameter vs return value).
	errorName func(l *Library, code int32) (string, bool)
	// kernelNode and memsetNode encode graph node parameter structs, whose
	// layouts differ between the vendors.
	kernelNodeSize int
	kernelNode     func(dst []byte, p *kernelNodeParams)
	memsetNodeSize int
	memsetNode     func(dst []byte, p *memsetNodeParams)
	// arch names the device's instruction set ("sm_90", "gfx942").
	arch func(d *Device, major, minor int) string
	// streamContext says that stream-ordered calls on a non-default stream
	// take their context from the stream, so they need no current context
	// on the calling thread; wantsContext are the codes a driver answers
	// when it disagrees (see Stream.call).
	streamContext bool
	wantsContext  map[int32]bool
}

// kernelNodeParams is the vendor-neutral content of a kernel graph node.
type kernelNodeParams struct {
	fn           uintptr
	grid, block  Dim3
	sharedBytes  uint32
	kernelParams uintptr // void**
	ctx          uintptr
}

// memsetNodeParams is the vendor-neutral content of a memset graph node.
type memsetNodeParams struct {
	dst         uintptr
	value       uint32
	elementSize uint32
	width       uint64 // elements
}

// vendorSpecs lists the drivers Open tries, in order.
var vendorSpecs = []*vendorSpec{cudaSpec, hipSpec}

func specFor(v Vendor) *vendorSpec {
	for _, s := range vendorSpecs {
		if s.vendor == v {
			return s
		}
	}
	return nil
}
