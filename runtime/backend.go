package runtime

import (
	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
)

// backend is what a session needs from an executor. The session does all
// checking (bounds, access, ownership, argument kinds) before it calls a
// backend, so implementations may trust their inputs. Implementations: cpu
// (backend_cpu.go, loom/interp) and gpu (backend_gpu*.go, hip + ptx).
//
// Ordering: every call that touches memory (upload, download, copy, fill,
// launch, launchGraph) is ordered after all work submitted before it, as if
// on one stream. upload returns only once the host slice may be reused;
// download may only queue the copy, so its destination is valid after the
// next synchronize (ReadMany queues every copy, then waits once).
// synchronize waits for all submitted work and reports the first
// asynchronous failure.
type backend interface {
	// name is "cpu", "cuda" or "hip".
	name() string
	// target is the code-generation profile kernels are compiled for; it
	// decides the carrier widths of index and offset scalars.
	target() loom.Target

	// alloc returns n zeroed bytes of device memory; shared memory is also
	// host-visible (hostBytes reports it).
	alloc(n int, shared bool) (devMem, error)
	free(m devMem) error
	// hostBytes returns the host view of a host-visible allocation.
	hostBytes(m devMem) ([]byte, bool)

	upload(dst devMem, off int, data []byte) error
	download(dst []byte, src devMem, off int) error
	copy(dst devMem, dstOff int, src devMem, srcOff, n int) error
	// fill writes the little-endian 4-byte value over [off, off+n); off and
	// n are multiples of 4.
	fill(dst devMem, off, n int, value uint32) error

	// loadKernel compiles one kernel for this backend.
	loadKernel(req *kernelRequest) (devKernel, error)
	// maxWorkgroupStorage is the most dynamic workgroup storage, in
	// bytes, a dispatch of the loaded kernel may ask for.
	maxWorkgroupStorage(k devKernel) int
	// freeKernel releases a loaded kernel (a GPU module); Close calls it.
	freeKernel(k devKernel) error
	// launch runs one dispatch.
	launch(l *launchCmd) error

	// buildGraph turns a recording into something launchGraph replays. Nodes
	// are in a valid execution order; node.deps lists earlier nodes that must
	// finish before it starts (no duplicates, no self edges).
	buildGraph(nodes []graphNode) (devGraph, error)
	launchGraph(g devGraph) error
	freeGraph(g devGraph) error

	synchronize() error
	// close releases everything the backend still holds.
	close() error
}

// launchPacker is a backend that packs a checked launch once, when
// NewDispatch seals it, into a hip.PackedLaunch a direct Run calls with
// nothing left to convert (the CUDA backend: the driver's call frame and
// parameter block). It must stay valid while its session is open (kernels
// and allocations are released only by Close). Backends without it launch
// the sealed launchCmd each time. The packed launch is a concrete type,
// not an interface: Run calls it directly, without an itab, one cache line
// fewer for the driver's work to evict between two launches.
type launchPacker interface {
	packLaunch(l *launchCmd) (*hip.PackedLaunch, error)
}

// dependentLauncher is a backend that can queue a launch to overlap the
// end of the launch queued just before it: on the CUDA backend, an sm_90
// kernel (which waits at entry for its predecessor to complete) is launched
// programmatically, scheduled while its predecessor's last workgroups run.
// A backend without it launches each command after the last has ended.
type dependentLauncher interface {
	launchDependent(l *launchCmd) error
}

// devMem, devKernel and devGraph are backend-owned handles; only the backend
// that made one looks inside.
type (
	devMem    any
	devKernel any
	devGraph  any
)

// kernelRequest is everything a backend needs to compile one kernel: the
// parsed modules of the package (funcs and templates across files are
// visible), the analysed program, and the kernel to compile.
type kernelRequest struct {
	Modules []*loom.Module
	Program *loom.Program
	Kernel  *loom.Kernel
	Export  string
	Config  map[string]loom.Const
	Target  loom.Target
	Workers int
	// SM is the device's compute capability times ten (90 for sm_90), set
	// by the CUDA backend so PTX targets the device it loads on.
	SM int
}

// launchArg is one packed launch argument: a buffer range, a scalar at its
// carrier width, or a vector's lanes.
type launchArg struct {
	Buffer bool
	Mem    devMem // buffer: allocation
	Off, N int    // buffer: byte range within Mem
	Bits   uint64 // scalar: value at its carrier width, zero-extended
	// Size is a scalar's carrier width in bytes (1, 2, 4, 8), or a
	// vector's parameter size (len(Lanes)).
	Size int
	// Lanes holds a vector's lanes little-endian, lane 0 first, each at
	// its carrier width (nil for scalars and buffers); nothing writes it.
	Lanes []byte
}

// launchCmd is one fully checked and packed dispatch.
type launchCmd struct {
	Kernel        devKernel
	Name          string // export name, for error messages
	Workgroups    [3]int
	WorkgroupSize [3]int
	// WorkgroupStorage is the dynamic workgroup storage in bytes.
	WorkgroupStorage int
	Args             []launchArg
}

// fillCmd is one checked fill.
type fillCmd struct {
	Mem    devMem
	Off, N int
	Value  uint32
}

// graphNode is one recorded command with its inferred dependencies. Exactly
// one of Launch and Fill is set.
type graphNode struct {
	Launch *launchCmd
	Fill   *fillCmd
	Deps   []int
}

// gpuBackends holds constructors for GPU backends, registered by the init of
// backend_gpu*.go so this package's other files never refer to them. Each is
// tried for "auto" and for its own name; the first error explains why the
// GPU was not used.
var gpuBackends []gpuBackendCtor

// gpuBackendCtor starts one GPU backend. Kind is "cuda" or "hip".
type gpuBackendCtor struct {
	Kind string
	Open func(opts Options) (backend, error)
}
