package bench

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

// GPUOptions configure the GPU suite.
type GPUOptions struct {
	// NvccPTX is the PTX nvcc built from native/kernels.cu; CublasLib the
	// shared library built from native/cublas.c (empty: no cuBLAS side).
	NvccPTX, CublasLib string
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
	nv         *hip.Module
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
	if opt.NvccPTX != "" {
		src, err := os.ReadFile(opt.NvccPTX)
		if err != nil {
			return nil, err
		}
		if g.nv, err = ctx.LoadModule(src); err != nil {
			return nil, fmt.Errorf("JIT of nvcc's PTX %s: %w", opt.NvccPTX, err)
		}
		g.closers = append(g.closers, func() { g.nv.Close() })
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
// name, both checked against the instance's reference first. extra adds
// further timed sides (cuBLAS) with their checks done by the caller.
func (g *gpu) Kernel(group string, inst *Instance, copyGBs float64, targets map[string]float64) (Result, error) {
	res := Result{Group: group, Name: inst.Export, Shape: inst.Shape, Check: inst.CheckWhat}
	m, err := parseKernel(inst.File)
	if err != nil {
		return res, err
	}
	k, err := ptx.Compile([]*loom.Module{m}, inst.Export, ptx.Options{})
	if err != nil {
		return res, err
	}
	if g.opt.DumpPTX != "" {
		if err := os.WriteFile(filepath.Join(g.opt.DumpPTX, k.Entry+".loom.ptx"), []byte(k.PTX), 0o644); err != nil {
			return res, err
		}
	}
	mod, err := g.ctx.LoadModule([]byte(k.PTX))
	if err != nil {
		return res, fmt.Errorf("%s: JIT of our PTX: %w", inst.Export, err)
	}
	g.closers = append(g.closers, func() { mod.Close() })
	grid3, block3, err := Geometry(m, inst.Export, inst.Workload)
	if err != nil {
		return res, err
	}
	grid, err := hip.Dim3Of("grid", grid3)
	if err != nil {
		return res, fmt.Errorf("%s: %w", inst.Export, err)
	}
	block, err := hip.Dim3Of("block", block3)
	if err != nil {
		return res, fmt.Errorf("%s: %w", inst.Export, err)
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
				return res, err
			}
			if err := g.ctx.CopyHtoD(d.Ptr(), a.Buffer); err != nil {
				return res, err
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
			if err := args.Err(); err != nil {
				return nil, err
			}
			l.args = append(l.args, args)
		}
		return l, nil
	}
	ours, err := mod.Function(k.Entry)
	if err != nil {
		return res, err
	}
	sides := []*launchable{}
	lo, err := build("loom", ours)
	if err != nil {
		return res, err
	}
	sides = append(sides, lo)
	if g.nv != nil {
		fn, err := g.nv.Function(k.Entry)
		if err != nil {
			return res, fmt.Errorf("nvcc module: %w", err)
		}
		ln, err := build("nvcc", fn)
		if err != nil {
			return res, err
		}
		sides = append(sides, ln)
	}
	outLen := 0
	for _, a := range inst.Args {
		outLen += a.Out
	}
	// Check every side before timing it.
	for _, l := range sides {
		if err := l.launch(g.s); err != nil {
			return res, fmt.Errorf("%s %s: %w", l.name, inst.Export, err)
		}
		if err := g.s.Synchronize(); err != nil {
			return res, fmt.Errorf("%s %s: %w", l.name, inst.Export, err)
		}
		host := make([]byte, outLen)
		if err := g.ctx.CopyDtoH(host, l.out.Ptr()); err != nil {
			return res, err
		}
		worst, err := inst.Check(host)
		if err != nil {
			return res, fmt.Errorf("%s %s: %w", l.name, inst.Export, err)
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
			return res, err
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
			return res, err
		}
		host := make([]byte, 4*m*n)
		if err := g.ctx.CopyDtoH(host, cublasC.Ptr()); err != nil {
			return res, err
		}
		worst, err := inst.Check(host)
		if err != nil {
			return res, fmt.Errorf("cuBLAS: %w", err)
		}
		res.Check += fmt.Sprintf("; cublas largest error %.3g of tolerance", worst)
		fs = append(fs, func() (float64, error) { return gemm(per) })
		sides = append(sides, &launchable{name: "cublas"})
	}
	for range 2 { // warm-up
		for _, f := range fs {
			if _, err := f(); err != nil {
				return res, err
			}
		}
	}
	t, err := rounds(g.opt.Rounds, fs...)
	if err != nil {
		return res, err
	}
	for i, l := range sides {
		sd := side(l.name, "us", t[i])
		if inst.Flops > 1e10 {
			sd.Rate, sd.RateUnit = inst.Flops/sd.Median/1e6, "TFLOP/s"
		} else {
			sd.Rate, sd.RateUnit = inst.Bytes/sd.Median/1e3, "GB/s"
		}
		res.Sides = append(res.Sides, sd)
		if i > 0 {
			res.Ratios = append(res.Ratios, ratio(l.name, t[0], t[i], targets[l.name]))
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
	g.logf("%s %s: %s", inst.Export, inst.Shape, summary(res))
	return res, nil
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
