package runtime

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/ptxload"
	"github.com/loomgen/loomgen/loom"
)

func init() {
	gpuBackends = append(gpuBackends, gpuBackendCtor{Kind: "cuda", Open: openCUDABackend})
}

// ptxCompiler turns a kernel request into PTX. It is nil until the
// Loom→PTX compiler (loom/ptx) registers itself; tests set it to return
// hand-written PTX.
//
// Kernel ABI: one parameter per launch argument, in order; a buffer is its
// 64-bit device address (allocation base + offset), a scalar its carrier
// width (1, 2, 4 or 8 bytes).
var ptxCompiler func(req *kernelRequest) (compiledPTX, error)

// compiledPTX is a kernel's PTX and entry name, with the same PTX allowing
// maxRegs registers (capped) where its static workgroup size bounds them
// below 255: loadKernel takes it where the default build spills
// (internal/ptxload).
type compiledPTX struct {
	text, capped []byte
	maxRegs      int
	entry        string
	// aligned (and alignedCapped) is the build for launches whose buffer
	// arguments alignedParams are all at 16-byte aligned addresses
	// (ptx.Kernel.AlignedPTX); nil when text serves every launch alone.
	aligned, alignedCapped []byte
	alignedParams          []int
	// waits says every build begins with griddepcontrol.wait
	// (ptx.Kernel.WaitsForPredecessors): in a graph, the kernel may depend
	// on the kernels before it programmatically.
	waits bool
}

// errNoPTXCompiler explains why the GPU is not used for Loom sources yet.
var errNoPTXCompiler = errors.New("no Loom→PTX compiler yet (loom/ptx is a later issue)")

// requestedBackend repeats Open's choice so the CUDA backend can tell
// "auto" from an explicit "cuda".
func requestedBackend(opts Options) string {
	want := strings.ToLower(strings.TrimSpace(opts.Backend))
	if env := strings.ToLower(strings.TrimSpace(os.Getenv("LOOM_BACKEND"))); env != "" {
		want = env
	}
	if want == "" {
		want = "auto"
	}
	return want
}

// gpuBackend runs a session on one CUDA device through hip. All work goes
// to one stream, which gives the in-order semantics backend requires.
type gpuBackend struct {
	lib    *hip.Library
	ctx    *hip.Context
	stream *hip.Stream
	sm     int // compute capability times ten, the PTX target
	// programmatic: the device and driver take programmatic dependencies
	// (graph edges and stream launches; hip.Context.SupportsProgrammaticDependencies).
	programmatic bool
}

func openCUDABackend(opts Options) (backend, error) {
	lib, err := hip.OpenVendor(hip.CUDA)
	if err != nil {
		return nil, err
	}
	if ptxCompiler == nil && requestedBackend(opts) == "auto" {
		name := "an NVIDIA GPU"
		if d, err := lib.Device(opts.Device); err == nil {
			if n, err := d.Name(); err == nil {
				name = n
			}
		}
		return nil, fmt.Errorf("%s present, but %w", name, errNoPTXCompiler)
	}
	ctx, err := lib.NewContext(opts.Device)
	if err != nil {
		return nil, err
	}
	major, minor, err := ctx.Device().ComputeCapability()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	// loom/ptx emits instructions from sm_80 on; under auto an older GPU
	// leaves the session on the CPU rather than failing every Compile.
	if sm := 10*major + minor; sm < 80 && requestedBackend(opts) == "auto" {
		ctx.Close()
		return nil, fmt.Errorf("compute capability %d.%d is below sm_80, the oldest target of the Loom→PTX compiler", major, minor)
	}
	s, err := ctx.NewStream()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return &gpuBackend{lib: lib, ctx: ctx, stream: s, sm: 10*major + minor, programmatic: ctx.SupportsProgrammaticDependencies()}, nil
}

// gpuMem is an allocation: device memory, or pinned host memory that the
// device reaches at the same address (unified addressing). A zero-byte
// allocation holds neither: the drivers refuse empty allocations, and no
// command can touch its bytes.
type gpuMem struct {
	dev    *hip.DeviceMemory
	host   *hip.HostMemory
	ptr    hip.DevicePtr
	size   int
	shared bool
}

type gpuKernel struct {
	// mod and fn are the build loaded at compile: the aligned one where
	// the kernel has it (alignedParams non-empty), else the one for every
	// launch.
	mod  *hip.Module
	fn   *hip.Function
	args *hip.Args // reused while the argument layout stays the same
	// alignedParams are the launch arguments fn needs at 16-byte aligned
	// addresses. A launch with one that is not takes the general build,
	// loaded on first need into generalMod/general from src: allocations
	// are aligned, so only a sub-slice at an odd offset ever needs it.
	alignedParams []int
	src           compiledPTX
	generalMod    *hip.Module
	general       *hip.Function
	// maxDynamic is the dynamic shared memory a launch may ask for: the
	// device's opt-in limit less the kernel's static shared memory.
	maxDynamic int
	// waits: every build waits at entry for the grids it depends on
	// (compiledPTX.waits).
	waits bool
}

type gpuGraph struct {
	g    *hip.Graph
	exec *hip.GraphExec
}

func (b *gpuBackend) name() string        { return "cuda" }
func (b *gpuBackend) target() loom.Target { return loom.TargetGPU }

func (b *gpuBackend) alloc(n int, shared bool) (devMem, error) {
	if n == 0 {
		return &gpuMem{shared: shared}, nil
	}
	if shared {
		h, err := b.ctx.AllocHost(n)
		if err != nil {
			return nil, err
		}
		clear(h.Bytes())
		return &gpuMem{host: h, ptr: h.DevicePtr(), size: n, shared: true}, nil
	}
	d, err := b.ctx.Alloc(n)
	if err != nil {
		return nil, err
	}
	if err := b.stream.MemsetD8(d.Ptr(), 0, n); err != nil {
		d.Close()
		return nil, err
	}
	return &gpuMem{dev: d, ptr: d.Ptr(), size: n}, nil
}

func (b *gpuBackend) free(m devMem) error {
	g := m.(*gpuMem)
	if g.host == nil && g.dev == nil {
		return nil
	}
	// Work queued on the memory must finish before it is released. After a
	// device fault nothing queued will run again, so there is nothing to
	// wait for (and the wait would only repeat the fault the session
	// already reported): the memory is released straight away.
	var err error
	if b.ctx.Err() == nil {
		err = b.stream.Synchronize()
	}
	if g.host != nil {
		return errors.Join(err, g.host.Close())
	}
	return errors.Join(err, g.dev.Close())
}

func (b *gpuBackend) hostBytes(m devMem) ([]byte, bool) {
	g := m.(*gpuMem)
	if !g.shared {
		return nil, false
	}
	if g.host == nil {
		return []byte{}, true
	}
	return g.host.Bytes(), true
}

func (b *gpuBackend) upload(dst devMem, off int, data []byte) error {
	g := dst.(*gpuMem)
	if err := b.stream.CopyHtoD(g.ptr.Add(off), data); err != nil {
		return err
	}
	return b.stream.Synchronize()
}

// download queues the copy on the stream; dst is valid after the next
// synchronize, so ReadMany waits once for all of its copies.
func (b *gpuBackend) download(dst []byte, src devMem, off int) error {
	g := src.(*gpuMem)
	return b.stream.CopyDtoH(dst, g.ptr.Add(off))
}

func (b *gpuBackend) copy(dst devMem, dstOff int, src devMem, srcOff, n int) error {
	return b.stream.CopyDtoD(dst.(*gpuMem).ptr.Add(dstOff), src.(*gpuMem).ptr.Add(srcOff), n)
}

func (b *gpuBackend) fill(dst devMem, off, n int, value uint32) error {
	return b.stream.MemsetD32(dst.(*gpuMem).ptr.Add(off), value, n/4)
}

func (b *gpuBackend) loadKernel(req *kernelRequest) (devKernel, error) {
	if ptxCompiler == nil {
		return nil, fmt.Errorf("cuda backend: kernel %s: %w", req.Export, errNoPTXCompiler)
	}
	r := *req
	r.SM = b.sm
	c, err := ptxCompiler(&r)
	if err != nil {
		return nil, fmt.Errorf("cuda backend: kernel %s: %w", req.Export, err)
	}
	text, capped := c.text, c.capped
	if len(c.aligned) > 0 {
		text, capped = c.aligned, c.alignedCapped
	}
	mod, fn, err := ptxload.Load(b.ctx, text, capped, c.maxRegs, c.entry)
	if err != nil {
		return nil, fmt.Errorf("cuda backend: kernel %s: %w", req.Export, err)
	}
	k := &gpuKernel{mod: mod, fn: fn, waits: c.waits}
	if len(c.aligned) > 0 {
		k.alignedParams, k.src = c.alignedParams, c
	}
	if req.Program == nil || req.Kernel == nil {
		return k, nil
	}
	if le, err := req.Program.LaunchExprs(req.Kernel); err == nil && le.DynamicWorkgroupStorage != nil {
		// The kernel takes dynamic shared memory (kernel.workgroup.storage):
		// allow up to what the device gives a block once, instead of the
		// default 48 KiB, so every launch may ask for its size.
		lim, err := b.ctx.Device().Limits()
		if err != nil {
			mod.Close()
			return nil, fmt.Errorf("cuda backend: kernel %s: %w", req.Export, err)
		}
		k.maxDynamic = max(lim.SharedPerBlockOptin-fn.Attributes().SharedSizeBytes, 0)
		if err := fn.SetMaxDynamicSharedBytes(k.maxDynamic); err != nil {
			mod.Close()
			return nil, fmt.Errorf("cuda backend: kernel %s: %w", req.Export, err)
		}
	}
	return k, nil
}

func (b *gpuBackend) maxWorkgroupStorage(k devKernel) int { return k.(*gpuKernel).maxDynamic }

func (b *gpuBackend) freeKernel(k devKernel) error {
	g := k.(*gpuKernel)
	err := g.mod.Close()
	if g.generalMod != nil {
		err = errors.Join(err, g.generalMod.Close())
	}
	return err
}

// function is the build of k that a launch with args may take: fn when
// every argument of alignedParams is at a 16-byte aligned address (the
// test the general build makes at entry), else the general build, JIT-
// compiled on first need.
func (b *gpuBackend) function(k *gpuKernel, args []launchArg) (*hip.Function, error) {
	if alignedArgs(k.alignedParams, args) {
		return k.fn, nil
	}
	if k.general != nil {
		return k.general, nil
	}
	c := k.src
	mod, fn, err := ptxload.Load(b.ctx, c.text, c.capped, c.maxRegs, c.entry)
	if err == nil && k.maxDynamic > 0 {
		if err = fn.SetMaxDynamicSharedBytes(k.maxDynamic); err != nil {
			mod.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: kernel %s: the build for buffers not 16-byte aligned: %w", ErrCompile, c.entry, err)
	}
	k.generalMod, k.general = mod, fn
	return fn, nil
}

// alignedArgs reports whether every buffer argument listed in params is
// at an address that is a multiple of 16.
func alignedArgs(params []int, args []launchArg) bool {
	for _, i := range params {
		if i >= len(args) || !args[i].Buffer {
			return false
		}
		if a := args[i]; uint64(a.Mem.(*gpuMem).ptr.Add(a.Off))%16 != 0 {
			return false
		}
	}
	return true
}

// pack fills the kernel's reusable Args from a launch's packed arguments.
func (k *gpuKernel) pack(args []launchArg) *hip.Args {
	if k.args == nil || !sameLayout(k.args.Sizes(), args) {
		k.args = newArgs(args)
	}
	setArgs(k.args, args)
	return k.args
}

// newArgs is parameter storage of the layout of args: 8 bytes for a
// buffer's address, the carrier width for a scalar, the lanes' bytes for
// a vector (the PTX .b8 array parameter).
func newArgs(args []launchArg) *hip.Args {
	sizes := make([]int, len(args))
	for i, a := range args {
		sizes[i] = 8
		if !a.Buffer {
			sizes[i] = a.Size
		}
	}
	return hip.NewArgs(sizes...)
}

// setArgs writes args' values into h, which has their layout.
func setArgs(h *hip.Args, args []launchArg) {
	for i, a := range args {
		switch {
		case a.Buffer:
			h.SetPtr(i, a.Mem.(*gpuMem).ptr.Add(a.Off))
		case a.Lanes != nil:
			h.SetBytes(i, a.Lanes)
		case a.Size == 8:
			h.SetUint64(i, a.Bits)
		case a.Size == 4:
			h.SetUint32(i, uint32(a.Bits))
		default:
			var buf [8]byte
			for j := 0; j < a.Size; j++ {
				buf[j] = byte(a.Bits >> (8 * j))
			}
			h.SetBytes(i, buf[:a.Size])
		}
	}
}

func sameLayout(sizes []int, args []launchArg) bool {
	if len(sizes) != len(args) {
		return false
	}
	for i, a := range args {
		want := a.Size
		if a.Buffer {
			want = 8
		}
		if sizes[i] != want {
			return false
		}
	}
	return true
}

// dims converts a launch geometry NewDispatch checked ([1, 2^31) workgroups,
// [1, 2^20] invocations per axis); hip refuses a zero left by anything else.
func dims(v [3]int) hip.Dim3 { return hip.Dim3{X: uint32(v[0]), Y: uint32(v[1]), Z: uint32(v[2])} }

func (b *gpuBackend) launch(l *launchCmd) error {
	k := l.Kernel.(*gpuKernel)
	fn, err := b.function(k, l.Args)
	if err != nil {
		return err
	}
	return b.stream.Launch(fn, dims(l.Workgroups), dims(l.WorkgroupSize), uint32(l.WorkgroupStorage), k.pack(l.Args))
}

// launchDependent is launch of a dispatch queued right after another
// launch: programmatic where the device and driver allow it and the kernel
// waits at entry for the grids before it (compiledPTX.waits).
func (b *gpuBackend) launchDependent(l *launchCmd) error {
	k := l.Kernel.(*gpuKernel)
	if !b.programmatic || !k.waits {
		return b.launch(l)
	}
	fn, err := b.function(k, l.Args)
	if err != nil {
		return err
	}
	return b.stream.LaunchProgrammatic(fn, dims(l.Workgroups), dims(l.WorkgroupSize), uint32(l.WorkgroupStorage), k.pack(l.Args))
}

// packLaunch packs l into the driver's call frame and a parameter block of
// its own, once: device addresses do not move while the session is open,
// so a sealed dispatch's launch is the same bytes every time.
func (b *gpuBackend) packLaunch(l *launchCmd) (*hip.PackedLaunch, error) {
	k := l.Kernel.(*gpuKernel)
	fn, err := b.function(k, l.Args)
	if err != nil {
		return nil, err
	}
	args := newArgs(l.Args)
	setArgs(args, l.Args)
	return b.stream.Pack(fn, dims(l.Workgroups), dims(l.WorkgroupSize), uint32(l.WorkgroupStorage), args)
}

func (b *gpuBackend) buildGraph(nodes []graphNode) (devGraph, error) {
	g, err := b.ctx.NewGraph()
	if err != nil {
		return nil, err
	}
	made := make([]hip.GraphNode, len(nodes))
	programmatic := b.programmatic
	for i, n := range nodes {
		// A fill of no bytes has no node (the drivers refuse empty
		// memsets); it touches nothing, so nothing depends on it.
		if n.Fill != nil && n.Fill.N == 0 {
			continue
		}
		// A kernel that waits at entry for the grids it depends on follows
		// the kernels before it programmatically: it is scheduled while
		// their last workgroups run, which hides the gap between kernels,
		// and waits for them, their memory visible, before anything else.
		// Fills stay full dependencies.
		waits := programmatic && n.Launch != nil && n.Launch.Kernel.(*gpuKernel).waits
		deps := make([]hip.GraphNode, 0, len(n.Deps))
		var after []hip.GraphNode
		for _, d := range n.Deps {
			switch {
			case made[d] == 0:
			case waits && nodes[d].Launch != nil:
				after = append(after, made[d])
			default:
				deps = append(deps, made[d])
			}
		}
		switch {
		case n.Launch != nil:
			k := n.Launch.Kernel.(*gpuKernel)
			var fn *hip.Function
			if fn, err = b.function(k, n.Launch.Args); err == nil {
				made[i], err = g.AddKernel(fn, dims(n.Launch.Workgroups), dims(n.Launch.WorkgroupSize), uint32(n.Launch.WorkgroupStorage), k.pack(n.Launch.Args), deps...)
			}
			for _, a := range after {
				if err == nil {
					err = g.AddProgrammaticDependency(a, made[i])
				}
			}
		case n.Fill != nil:
			made[i], err = g.AddMemset(n.Fill.Mem.(*gpuMem).ptr.Add(n.Fill.Off), n.Fill.Value, 4, n.Fill.N/4, deps...)
		default:
			err = fmt.Errorf("cuda backend: graph node %d has no command", i)
		}
		if err != nil {
			g.Close()
			return nil, err
		}
	}
	exec, err := g.Instantiate()
	if err != nil {
		g.Close()
		return nil, err
	}
	return &gpuGraph{g: g, exec: exec}, nil
}

func (b *gpuBackend) launchGraph(g devGraph) error { return g.(*gpuGraph).exec.Launch(b.stream) }

func (b *gpuBackend) freeGraph(g devGraph) error {
	gg := g.(*gpuGraph)
	return errors.Join(gg.exec.Close(), gg.g.Close())
}

func (b *gpuBackend) synchronize() error { return b.stream.Synchronize() }

func (b *gpuBackend) close() error {
	return errors.Join(b.stream.Close(), b.ctx.Close())
}
