package bench

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/ptxload"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

// GPUOptions configure the GPU suite.
type GPUOptions struct {
	// NvccPTX are the PTX files nvcc built from the nvcc side's sources
	// (NvccSources), each loaded as a module of its own; CublasLib the
	// shared library built from native/cublas.c (empty: no cuBLAS side).
	NvccPTX   []string
	CublasLib string
	// Rounds of alternating timing per comparison.
	Rounds int
	// DumpPTX, when set, is a folder that receives our PTX per kernel.
	DumpPTX string
	// Only, when set, selects the kernels (by export name) to compare.
	Only *regexp.Regexp
	// Log receives progress lines.
	Log func(format string, args ...any)
}

// gpu is an open device with the loaded comparison modules.
type gpu struct {
	opt        GPUOptions
	ctx        *hip.Context
	s          *hip.Stream
	nv         []*hip.Module
	nvErrs     []error // nvcc modules the driver did not load
	start, end *hip.Event
	cublasInit uintptr
	cublasGemm uintptr
	closers    []func()
}

// OpenGPU opens device 0 through the CUDA driver; hip.ErrNoLibrary or
// hip.ErrNoDevice (wrapped) mean there is no GPU to measure.
func OpenGPU(opt GPUOptions, machine map[string]string) (g *gpu, err error) {
	s, err := hip.OpenStream(hip.CUDA, 0)
	if err != nil {
		return nil, err
	}
	ctx := s.Context()
	g = &gpu{opt: opt, ctx: ctx, s: s}
	g.closers = append(g.closers, func() { ctx.Close() }, func() { s.Close() })
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if name, err := ctx.Device().Name(); err == nil {
		machine["gpu"] = name
	}
	machine["cuda_driver"] = fmt.Sprint(ctx.Library().DriverVersion())
	if g.start, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	if g.end, err = ctx.NewEvent(); err != nil {
		return nil, err
	}
	g.closers = append(g.closers, func() { g.start.Close(); g.end.Close() })
	for _, file := range opt.NvccPTX {
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		// A module the driver does not take costs only its kernels'
		// nvcc sides: their reports name this error.
		m, err := ctx.LoadModule(src)
		if err != nil {
			g.nvErrs = append(g.nvErrs, fmt.Errorf("JIT of nvcc's PTX %s: %w", file, err))
			continue
		}
		g.nv = append(g.nv, m)
		g.closers = append(g.closers, func() { m.Close() })
	}
	if opt.CublasLib != "" {
		h, err := purego.Dlopen(opt.CublasLib, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			return nil, fmt.Errorf("cuBLAS baseline %s: %w", opt.CublasLib, err)
		}
		if g.cublasInit, err = purego.Dlsym(h, "bench_cublas_init"); err != nil {
			return nil, err
		}
		if g.cublasGemm, err = purego.Dlsym(h, "bench_cublas_sgemm"); err != nil {
			return nil, err
		}
		if r, _, _ := purego.SyscallN(g.cublasInit); r != 0 {
			return nil, fmt.Errorf("bench_cublas_init failed (%d)", r)
		}
	}
	return g, nil
}

// Close releases everything OpenGPU made.
func (g *gpu) Close() {
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
	g.closers = nil
}

func (g *gpu) logf(format string, args ...any) {
	if g.opt.Log != nil {
		g.opt.Log(format, args...)
	}
}

// alloc allocates device memory released by Close.
func (g *gpu) alloc(n int) (*hip.DeviceMemory, error) {
	m, err := g.ctx.Alloc(n)
	if err != nil {
		return nil, err
	}
	g.closers = append(g.closers, func() { m.Close() })
	return m, nil
}

// timed runs f (which enqueues work on the stream) between two events
// and returns the microseconds it took divided by per.
func (g *gpu) timed(per int, f func() error) (float64, error) {
	if err := g.start.Record(g.s); err != nil {
		return 0, err
	}
	if err := f(); err != nil {
		return 0, err
	}
	if err := g.end.Record(g.s); err != nil {
		return 0, err
	}
	if err := g.end.Synchronize(); err != nil {
		return 0, err
	}
	d, err := hip.Elapsed(g.start, g.end)
	return float64(d.Nanoseconds()) / 1e3 / float64(per), err
}

// CopyBandwidth measures cuMemcpyDtoD of 256 MiB (read plus write bytes
// per second): the memory-bound kernels' yardstick.
func (g *gpu) CopyBandwidth() (Result, float64, error) {
	const n = 256 << 20
	src, err := g.alloc(n)
	if err != nil {
		return Result{}, 0, err
	}
	dst, err := g.alloc(n)
	if err != nil {
		return Result{}, 0, err
	}
	const per = 10
	cp := func() (float64, error) {
		return g.timed(per, func() error {
			for range per {
				if err := g.s.CopyDtoD(dst.Ptr(), src.Ptr(), n); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for range 3 {
		if _, err := cp(); err != nil {
			return Result{}, 0, err
		}
	}
	t, err := rounds(g.opt.Rounds, cp)
	if err != nil {
		return Result{}, 0, err
	}
	sd := side("cuMemcpyDtoD", "us", t[0])
	sd.Rate, sd.RateUnit = 2*n/sd.Median/1e3, "GB/s"
	return Result{Group: "gpu-memory", Name: "copy", Shape: "256 MiB", Sides: []Side{sd}}, sd.Rate, nil
}

// CopyAt measures cuMemcpyDtoD moving traffic bytes (read plus write: a
// copy of traffic/2 bytes), 20 copies between two events as the kernels'
// launches are timed, source and destination rotating through 256 MiB so
// every copy reads DRAM: the copy's own rate at a kernel's size, its
// fixed costs included. The result is named "copy at" name and shape.
func (g *gpu) CopyAt(name, shape string, traffic float64) (Result, error) {
	const span = 256 << 20
	n := int(traffic/2) &^ 255
	src, err := g.alloc(span)
	if err != nil {
		return Result{}, err
	}
	dst, err := g.alloc(span)
	if err != nil {
		return Result{}, err
	}
	const per = 20
	slots := span / n
	next := 0
	cp := func() (float64, error) {
		return g.timed(per, func() error {
			for range per {
				off := uintptr(next%slots) * uintptr(n)
				next++
				if err := g.s.CopyDtoD(dst.Ptr()+hip.DevicePtr(off), src.Ptr()+hip.DevicePtr(off), n); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for range 3 {
		if _, err := cp(); err != nil {
			return Result{}, err
		}
	}
	t, err := rounds(g.opt.Rounds, cp)
	if err != nil {
		return Result{}, err
	}
	sd := side("cuMemcpyDtoD", "us", t[0])
	sd.Rate, sd.RateUnit = 2*float64(n)/sd.Median/1e3, "GB/s"
	res := Result{Group: "gpu-memory", Name: "copy at " + name, Shape: shape, Sides: []Side{sd}}
	g.logf("copy at %s %s (%d bytes a copy): %.3f us, %.1f GB/s", name, shape, n, sd.Median, sd.Rate)
	return res, nil
}

// launchable is one side of a kernel comparison: a function and one
// argument list per copy of the weights.
type launchable struct {
	name  string
	fn    *hip.Function
	args  []*hip.Args
	out   *hip.DeviceMemory
	grid  hip.Dim3
	block hip.Dim3
	next  int
}

// launch enqueues one launch on the next copy of the weights.
func (l *launchable) launch(s *hip.Stream) error {
	a := l.args[l.next%len(l.args)]
	l.next++
	return s.Launch(l.fn, l.grid, l.block, 0, a)
}

// Kernel compares one instance: ours against nvcc's entry of the same
// name, both checked against the instance's reference first, launched
// one by one on a stream (and, for cuBLAS's SGEMM, its own loop). A
// memory-bound instance is also timed as graphs of the same launches
// (graphResult): a second result named export/graph.
func (g *gpu) Kernel(group string, inst *Instance, copyGBs float64, targets map[string]float64) ([]Result, error) {
	res := Result{Group: group, Name: inst.Export, Shape: inst.Shape, Check: inst.CheckWhat}
	fail := func(err error) ([]Result, error) { return []Result{res}, err }
	m, err := parseKernel(inst.File)
	if err != nil {
		return fail(err)
	}
	k, err := ptx.Compile([]*loom.Module{m}, inst.Export, ptx.Options{})
	if err != nil {
		return fail(err)
	}
	// Device allocations are aligned, so ours is the build the runtime
	// launches on them: the one for aligned buffers where there is one.
	text, capped := k.PTX, k.CappedPTX()
	if k.AlignedPTX != "" {
		text, capped = k.AlignedPTX, k.CappedAlignedPTX()
	}
	if g.opt.DumpPTX != "" {
		if err := os.WriteFile(filepath.Join(g.opt.DumpPTX, k.Entry+".loom.ptx"), []byte(text), 0o644); err != nil {
			return fail(err)
		}
	}
	mod, fn, err := ptxload.Load(g.ctx, []byte(text), []byte(capped), k.MaxRegs, k.Entry)
	if err != nil {
		return fail(fmt.Errorf("%s: JIT of our PTX: %w", inst.Export, err))
	}
	g.closers = append(g.closers, func() { mod.Close() })
	grid3, block3, err := Geometry(m, inst.Export, inst.Workload)
	if err != nil {
		return fail(err)
	}
	grid, err := hip.Dim3Of("grid", grid3)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", inst.Export, err))
	}
	block, err := hip.Dim3Of("block", block3)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", inst.Export, err))
	}
	// Inputs once; weights in as many copies as keep 256 MiB in flight.
	copies := 1
	var wbytes int
	for _, w := range inst.Weights {
		wbytes += len(inst.Args[w].Buffer)
	}
	if wbytes > 0 {
		copies = max(1, (256<<20+wbytes-1)/wbytes)
	}
	bufs := make([][]hip.DevicePtr, len(inst.Args))
	for i, a := range inst.Args {
		if a.Scalar || a.Out > 0 {
			continue
		}
		n := 1
		for _, w := range inst.Weights {
			if w == i {
				n = copies
			}
		}
		for range n {
			d, err := g.alloc(len(a.Buffer))
			if err != nil {
				return fail(err)
			}
			if err := g.ctx.CopyHtoD(d.Ptr(), a.Buffer); err != nil {
				return fail(err)
			}
			bufs[i] = append(bufs[i], d.Ptr())
		}
	}
	sizes := make([]int, len(k.Params))
	for i, p := range k.Params {
		sizes[i] = p.Size
	}
	build := func(name string, fn *hip.Function) (*launchable, error) {
		l := &launchable{name: name, fn: fn, grid: grid, block: block}
		outAt := -1
		for i, a := range inst.Args {
			if a.Out > 0 {
				if l.out, err = g.alloc(a.Out); err != nil {
					return nil, err
				}
				if err := g.s.MemsetD32(l.out.Ptr(), 0x7fc00000, a.Out/4); err != nil {
					return nil, err
				}
				outAt = i
			}
		}
		for c := range copies {
			args := hip.NewArgs(sizes...)
			for i, a := range inst.Args {
				switch {
				case i == outAt:
					args.SetPtr(i, l.out.Ptr())
				case a.Scalar && sizes[i] == 8:
					args.SetUint64(i, a.Bits)
				case a.Scalar && sizes[i] == 4:
					args.SetUint32(i, uint32(a.Bits))
				case a.Scalar:
					var b [8]byte
					binary.LittleEndian.PutUint64(b[:], a.Bits)
					args.SetBytes(i, b[:sizes[i]])
				default:
					args.SetPtr(i, bufs[i][c%len(bufs[i])])
				}
			}
			if name == "loom" {
				for _, i := range k.AlignedParams {
					ptr := l.out.Ptr()
					if i != outAt {
						ptr = bufs[i][c%len(bufs[i])]
					}
					if ptr%16 != 0 {
						return nil, fmt.Errorf("%s: argument %d is not 16-byte aligned, as the build for aligned buffers needs", inst.Export, i)
					}
				}
			}
			if err := args.Err(); err != nil {
				return nil, err
			}
			l.args = append(l.args, args)
		}
		return l, nil
	}
	ours := fn
	sides := []*launchable{}
	lo, err := build("loom", ours)
	if err != nil {
		return fail(err)
	}
	sides = append(sides, lo)
	if len(g.nv)+len(g.nvErrs) > 0 {
		// A kernel without an nvcc entry is still measured, against
		// the copy rate only.
		if fn, err := g.nvccFunction(k.Entry); err != nil {
			g.logf("%s: no nvcc side: %v", inst.Export, err)
			res.Check += "; no nvcc side (" + err.Error() + ")"
		} else {
			ln, err := build("nvcc", fn)
			if err != nil {
				return fail(err)
			}
			sides = append(sides, ln)
		}
	}
	outLen := 0
	for _, a := range inst.Args {
		outLen += a.Out
	}
	// Check every side before timing it.
	for _, l := range sides {
		if err := l.launch(g.s); err != nil {
			return fail(fmt.Errorf("%s %s: %w", l.name, inst.Export, err))
		}
		if err := g.s.Synchronize(); err != nil {
			return fail(fmt.Errorf("%s %s: %w", l.name, inst.Export, err))
		}
		host := make([]byte, outLen)
		if err := g.ctx.CopyDtoH(host, l.out.Ptr()); err != nil {
			return fail(err)
		}
		worst, err := inst.Check(host)
		if err != nil {
			return fail(fmt.Errorf("%s %s: %w", l.name, inst.Export, err))
		}
		res.Check += fmt.Sprintf("; %s largest error %.3g of tolerance", l.name, worst)
		if inst.CheckNote != "" {
			res.Check += ", " + inst.CheckNote
			inst.CheckNote = ""
		}
	}
	var fs []func() (float64, error)
	per := 20
	if inst.Flops > 1e10 {
		per = 5
	}
	streamSides := sides
	for _, l := range sides {
		fs = append(fs, func() (float64, error) {
			return g.timed(per, func() error {
				for range per {
					if err := l.launch(g.s); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
	var cublasC *hip.DeviceMemory
	if inst.Export == "sgemm_f32" && g.cublasGemm != 0 {
		m, n, kk := int(inst.Workload[0]), int(inst.Workload[1]), int(inst.Workload[2])
		if cublasC, err = g.alloc(4 * m * n); err != nil {
			return fail(err)
		}
		a, b := bufs[3][0], bufs[4][0]
		var us float32
		gemm := func(iters int) (float64, error) {
			r, _, _ := purego.SyscallN(g.cublasGemm, uintptr(m), uintptr(n), uintptr(kk), uintptr(a), uintptr(b), uintptr(cublasC.Ptr()), uintptr(iters), uintptr(unsafe.Pointer(&us)))
			if r != 0 {
				return 0, fmt.Errorf("bench_cublas_sgemm failed (%d)", r)
			}
			return float64(us), nil
		}
		if _, err := gemm(1); err != nil {
			return fail(err)
		}
		host := make([]byte, 4*m*n)
		if err := g.ctx.CopyDtoH(host, cublasC.Ptr()); err != nil {
			return fail(err)
		}
		worst, err := inst.Check(host)
		if err != nil {
			return fail(fmt.Errorf("cuBLAS: %w", err))
		}
		res.Check += fmt.Sprintf("; cublas largest error %.3g of tolerance", worst)
		fs = append(fs, func() (float64, error) { return gemm(per) })
		sides = append(sides, &launchable{name: "cublas"})
	}
	names := make([]string, len(sides))
	for i, l := range sides {
		names[i] = l.name
	}
	if err := g.measure(&res, inst, names, fs, copyGBs, targets); err != nil {
		return fail(err)
	}
	out := []Result{res}
	if inst.Flops < 1e10 {
		gr, err := g.graphResult(group, inst, streamSides, per, outLen, copyGBs, targets, false)
		if err != nil {
			return out, fmt.Errorf("%s as graphs: %w", inst.Export, err)
		}
		out = append(out, gr)
		// Both sides wait for their predecessor at entry (ours:
		// WaitsForPredecessors; nvcc's: entry_wait, native/entry.cuh), so
		// their chains may also be linked programmatically.
		if k.WaitsForPredecessors && g.ctx.SupportsProgrammaticDependencies() {
			gr, err := g.graphResult(group, inst, streamSides, per, outLen, copyGBs, targets, true)
			if err != nil {
				return out, fmt.Errorf("%s as graphs of programmatic dependencies: %w", inst.Export, err)
			}
			sr, err := g.programmaticResult(group, inst, streamSides, per, outLen, copyGBs, targets)
			if err != nil {
				return out, fmt.Errorf("%s launched programmatically: %w", inst.Export, err)
			}
			out = append(out, gr, sr)
		}
	}
	return out, nil
}

// measure runs warm-up and the timed rounds of fs (one per side, ours
// first) into res: each side's cost and rate, the ratios ours ÷ the
// others, and for a memory-bound instance ours against the copy rate.
func (g *gpu) measure(res *Result, inst *Instance, names []string, fs []func() (float64, error), copyGBs float64, targets map[string]float64) error {
	for range 2 { // warm-up
		for _, f := range fs {
			if _, err := f(); err != nil {
				return err
			}
		}
	}
	t, err := rounds(g.opt.Rounds, fs...)
	if err != nil {
		return err
	}
	for i, name := range names {
		sd := side(name, "us", t[i])
		if inst.Flops > 1e10 {
			sd.Rate, sd.RateUnit = inst.Flops/sd.Median/1e6, "TFLOP/s"
		} else {
			sd.Rate, sd.RateUnit = inst.Bytes/sd.Median/1e3, "GB/s"
		}
		res.Sides = append(res.Sides, sd)
		if i > 0 {
			res.Ratios = append(res.Ratios, ratio(name, t[0], t[i], targets[name]))
		}
	}
	if copyGBs > 0 && inst.Flops < 1e10 {
		// Ours against the copy: per-round bandwidth over the copy's median.
		bw := make([]float64, len(t[0]))
		ref := make([]float64, len(t[0]))
		for i, us := range t[0] {
			bw[i] = us
			ref[i] = inst.Bytes / copyGBs / 1e3 // the copy's time for these bytes
		}
		res.Ratios = append(res.Ratios, ratio("copy", bw, ref, targets["copy"]))
	}
	g.logf("%s %s: %s", res.Name, inst.Shape, summary(*res))
	return nil
}

// graphResult times each side as one graph of per launches in a chain (the
// weights rotating as on the stream), replayed: how a model's decode step
// runs its kernels, without the host's launch rate as a floor (a stream
// launch costs this host about 4 µs, more than a 4096×4096 q4_K mat-vec
// takes at the copy rate) and with a graph's shorter gap between kernels.
// Each side's graph output is checked against the reference first.
// programmatic links each launch to the one before by a programmatic
// dependency (export/graph-programmatic): it is scheduled while its
// predecessor's last workgroups run and waits at entry for it to complete.
func (g *gpu) graphResult(group string, inst *Instance, sides []*launchable, per, outLen int, copyGBs float64, targets map[string]float64, programmatic bool) (Result, error) {
	name := inst.Export + "/graph"
	if programmatic {
		name += "-programmatic"
	}
	res := Result{Group: group, Name: name, Shape: inst.Shape, Check: inst.CheckWhat}
	var fs []func() (float64, error)
	var names []string
	for _, l := range sides {
		gr, err := g.ctx.NewGraph()
		if err != nil {
			return res, err
		}
		var prev []hip.GraphNode
		for i := range per {
			deps := prev
			if programmatic {
				deps = nil
			}
			n, err := gr.AddKernel(l.fn, l.grid, l.block, 0, l.args[i%len(l.args)], deps...)
			if err == nil && programmatic && len(prev) > 0 {
				err = gr.AddProgrammaticDependency(prev[0], n)
			}
			if err != nil {
				gr.Close()
				return res, err
			}
			prev = []hip.GraphNode{n}
		}
		ex, err := gr.Instantiate()
		gr.Close()
		if err != nil {
			return res, err
		}
		g.closers = append(g.closers, func() { ex.Close() })
		run := func() error { return ex.Launch(g.s) }
		if err := g.checkRun(&res, inst, l, outLen, run); err != nil {
			return res, err
		}
		fs = append(fs, func() (float64, error) { return g.timed(per, run) })
		names = append(names, l.name)
	}
	return res, g.measure(&res, inst, names, fs, copyGBs, targets)
}

// checkRun poisons l's output, runs run (which enqueues l's launches on
// the stream), and checks the output against the instance's reference,
// noting the largest error in res.
func (g *gpu) checkRun(res *Result, inst *Instance, l *launchable, outLen int, run func() error) error {
	if err := g.s.MemsetD32(l.out.Ptr(), 0x7fc00000, outLen/4); err != nil {
		return err
	}
	if err := run(); err != nil {
		return err
	}
	if err := g.s.Synchronize(); err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	host := make([]byte, outLen)
	if err := g.ctx.CopyDtoH(host, l.out.Ptr()); err != nil {
		return err
	}
	worst, err := inst.Check(host)
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	res.Check += fmt.Sprintf("; %s largest error %.3g of tolerance", l.name, worst)
	inst.CheckNote = ""
	return nil
}

// programmaticResult times each side as on the stream, per launches a
// chunk, every launch after a chunk's first queued by
// Stream.LaunchProgrammatic (export/stream-programmatic): scheduled while
// the launch before it runs, waiting at entry for it to complete. Each
// side's output after a chunk is checked against the reference first.
func (g *gpu) programmaticResult(group string, inst *Instance, sides []*launchable, per, outLen int, copyGBs float64, targets map[string]float64) (Result, error) {
	res := Result{Group: group, Name: inst.Export + "/stream-programmatic", Shape: inst.Shape, Check: inst.CheckWhat}
	var fs []func() (float64, error)
	var names []string
	for _, l := range sides {
		run := func() error {
			for i := range per {
				a := l.args[l.next%len(l.args)]
				l.next++
				launch := g.s.LaunchProgrammatic
				if i == 0 {
					launch = g.s.Launch
				}
				if err := launch(l.fn, l.grid, l.block, 0, a); err != nil {
					return err
				}
			}
			return nil
		}
		if err := g.checkRun(&res, inst, l, outLen, run); err != nil {
			return res, err
		}
		fs = append(fs, func() (float64, error) { return g.timed(per, run) })
		names = append(names, l.name)
	}
	return res, g.measure(&res, inst, names, fs, copyGBs, targets)
}

// summary is a one-line account of a result for the log.
func summary(r Result) string {
	s := ""
	for _, sd := range r.Sides {
		s += fmt.Sprintf("%s %.4g %s (%.4g %s) ", sd.Name, sd.Median, sd.Unit, sd.Rate, sd.RateUnit)
	}
	for _, q := range r.Ratios {
		s += fmt.Sprintf("| vs %s %.3f (p95 %.3f) ", q.Versus, q.Median, q.P95)
	}
	return s
}

// nvccFunction finds entry in the first of nvcc's modules that has it;
// its error also names the modules that did not load.
func (g *gpu) nvccFunction(entry string) (*hip.Function, error) {
	var first error
	for _, m := range g.nv {
		fn, err := m.Function(entry)
		if err == nil {
			return fn, nil
		}
		first = cmp.Or(first, err)
	}
	err := cmp.Or(first, fmt.Errorf("no nvcc module holds %s", entry))
	for _, e := range g.nvErrs {
		err = fmt.Errorf("%w; %w", err, e) // one line, for the report's check column
	}
	return nil, err
}
