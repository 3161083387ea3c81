package ptx

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ebitengine/purego"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/sidebyside"
	"github.com/loomgen/loomgen/loom"
)

// BenchmarkTensorCoreVersusCublas measures issue 15's tensor-core target:
// the Loom matmul of testdata/matmul_tc.loom (matrix fragments, workgroup
// tiling) against cublasGemmEx on the same f16 or bf16 operands with f32
// accumulation, at 4096³, timed in alternating rounds in one process. Both
// results are checked against each other over the whole matrix and
// against a float64 reference on a sample before timing. Run it through
// testdata/cublas/cublascmp.sh, which builds the cuBLAS shim with nvcc and
// sets LOOM_CUBLAS_SHIM; without it or a GPU it skips. The metric
// "ours/cublas" is the median per-round time ratio; "ratio-of-cublas" is
// its inverse, the fraction of cuBLAS throughput reached.
func BenchmarkTensorCoreVersusCublas(b *testing.B) {
	forTensorCoreKernels(b, func(b *testing.B, ctx *hip.Context, s *hip.Stream, m *loom.Module, export string, el *loom.Type, size int, gemm func(a, bm, out uintptr) error) {
		benchTensorCore(b, ctx, s, m, export, el, size, gemm)
	})
}

// BenchmarkCopyDeferral times each tensor-core matmul whose loop defers
// its last copy group (async_defer.go) against the same kernel compiled
// without the deferral, side by side; both are checked first. The metric
// "speedup" is the median per-round time ratio plain/deferred.
func BenchmarkCopyDeferral(b *testing.B) {
	forTensorCoreKernels(b, func(b *testing.B, ctx *hip.Context, s *hip.Stream, m *loom.Module, export string, el *loom.Type, size int, gemm func(a, bm, out uintptr) error) {
		compile := func(deferral bool) *Kernel {
			copyDeferral = deferral
			defer func() { copyDeferral = true }()
			k, err := Compile([]*loom.Module{m}, export, Options{})
			if err != nil {
				b.Fatal(err)
			}
			return k
		}
		plain, deferred := compile(false), compile(true)
		if launchedPTX(plain) == launchedPTX(deferred) {
			b.Skipf("%s defers no copy group", export)
		}
		t := prepareTensorCore(b, ctx, s, m, export, el, size, gemm)
		p, _, _ := t.load(plain)
		d, _, _ := t.load(deferred)
		r := t.race(p, d, "plain", "deferred")
		b.ReportMetric(t.tflops(sidebyside.Median(r.A)), "plain-TFLOP/s")
		b.ReportMetric(t.tflops(sidebyside.Median(r.B)), "deferred-TFLOP/s")
		b.ReportMetric(1/sidebyside.Median(r.Ratio), "speedup")
	})
}

// forTensorCoreKernels loads the cuBLAS shim and runs f as a sub-benchmark
// for every matmul_tc_<element>[_<variant>] kernel of
// testdata/matmul_tc.loom (or LOOM_TC_KERNELS) at 4096³, with the matching
// cuBLAS product.
func forTensorCoreKernels(b *testing.B, f func(b *testing.B, ctx *hip.Context, s *hip.Stream, m *loom.Module, export string, el *loom.Type, size int, gemm func(a, bm, out uintptr) error)) {
	path := os.Getenv("LOOM_CUBLAS_SHIM")
	if path == "" {
		b.Skip("LOOM_CUBLAS_SHIM is unset: run loom/ptx/testdata/cublas/cublascmp.sh, which builds the cuBLAS shim with nvcc")
	}
	ctx, s := gpuContext(b)
	lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		b.Fatalf("loading %s: %v", path, err)
	}
	var shimInit func(stream uintptr) int32
	var shimGemm func(bf16, m, n, k int32, a, b, c uintptr) int32
	purego.RegisterLibFunc(&shimInit, lib, "shim_init")
	purego.RegisterLibFunc(&shimGemm, lib, "shim_gemm")
	if st := shimInit(s.Handle()); st != 0 {
		b.Fatalf("cublasCreate/cublasSetStream: status %d", st)
	}
	const size = 4096
	file := "testdata/matmul_tc.loom"
	if f := os.Getenv("LOOM_TC_KERNELS"); f != "" {
		file = f
	}
	m := parse(b, file)
	for _, kd := range m.Kernels {
		// matmul_tc_<element>[_<variant>]: the element type names the
		// cuBLAS side.
		name, ok := strings.CutPrefix(kd.Export, "matmul_tc_")
		if !ok {
			continue
		}
		elem, _, _ := strings.Cut(name, "_")
		var bf16 int32
		switch elem {
		case "f16":
		case "bf16":
			bf16 = 1
		default:
			b.Fatalf("%s: no cuBLAS side for element type %q", kd.Export, elem)
		}
		el := &loom.Type{Kind: loom.TypeFloat, Name: elem, Bits: 16}
		b.Run(fmt.Sprintf("%s_%d", name, size), func(b *testing.B) {
			gemm := func(a, bm, out uintptr) error {
				if st := shimGemm(bf16, size, size, size, a, bm, out); st != 0 {
					return fmt.Errorf("cublasGemmEx: status %d", st)
				}
				return nil
			}
			f(b, ctx, s, m, kd.Export, el, size, gemm)
		})
	}
}

// halfOperand returns n values that are multiples of 1/64 in [-1, 1)
// (exact in f16 and bf16) as float32 and as the element type's bytes.
func halfOperand(n int, seed uint32, el *loom.Type) ([]float32, []byte) {
	v := randomF32(n, seed, -1, 2)
	raw := make([]byte, 2*n)
	for i := range v {
		v[i] = float32(int(v[i]*64)) / 64
		binary.LittleEndian.PutUint16(raw[2*i:], halfBits(el, float64(v[i])))
	}
	return v, raw
}

// tcBench is one 4096³-style tensor-core comparison: operands on the
// device and cuBLAS's product of them, against which each kernel loaded
// is checked before it is timed.
type tcBench struct {
	b      *testing.B
	ctx    *hip.Context
	s      *hip.Stream
	m      *loom.Module
	export string
	size   int
	av, bv []float32
	da, db *hip.DeviceMemory
	blas   []float32 // cuBLAS's product
	errs   float64   // cuBLAS's relative error on the checked sample
	gemm   func() error
}

// prepareTensorCore uploads the operands of an export of m at size³ and
// runs cuBLAS's product once.
func prepareTensorCore(b *testing.B, ctx *hip.Context, s *hip.Stream, m *loom.Module, export string, el *loom.Type, size int, gemm func(a, bm, out uintptr) error) *tcBench {
	t := &tcBench{b: b, ctx: ctx, s: s, m: m, export: export, size: size}
	var araw, braw []byte
	t.av, araw = halfOperand(size*size, 1, el)
	t.bv, braw = halfOperand(size*size, 2, el)
	t.da, t.db = upload(b, ctx, araw), upload(b, ctx, braw)
	cBlas := poisoned(b, &nvccPair{ctx: ctx, s: s}, size*size)
	t.gemm = func() error { return gemm(uintptr(t.da.Ptr()), uintptr(t.db.Ptr()), uintptr(cBlas.Ptr())) }
	if err := t.gemm(); err != nil {
		b.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	t.blas = download(b, ctx, cBlas, size*size)
	return t
}

// load loads compiled kernel k, runs it once and checks its product
// against cuBLAS's and a float64 reference; it returns the launch.
func (t *tcBench) load(k *Kernel) (launch func() error, regs, local int) {
	b, size := t.b, t.size
	mod, err := t.ctx.LoadModule([]byte(launchedPTX(k)))
	if err != nil {
		b.Fatalf("JIT: %v", err)
	}
	b.Cleanup(func() { mod.Close() })
	fn, err := mod.Function(k.Entry)
	if err != nil {
		b.Fatal(err)
	}
	grid, block, storage, err := tensorLaunch(t.m, t.export, int64(size), int64(size), int64(size))
	if err != nil {
		b.Fatal(err)
	}
	if storage > 0 {
		if err := fn.SetMaxDynamicSharedBytes(storage); err != nil {
			b.Fatal(err)
		}
	}
	out := poisoned(b, &nvccPair{ctx: t.ctx, s: t.s}, size*size)
	sizes := make([]int, len(k.Params))
	for i, q := range k.Params {
		sizes[i] = q.Size
	}
	a := hip.NewArgs(sizes...)
	a.SetUint32(0, uint32(size))
	a.SetUint32(1, uint32(size))
	a.SetUint32(2, uint32(size))
	a.SetPtr(3, t.da.Ptr())
	a.SetPtr(4, t.db.Ptr())
	a.SetPtr(5, out.Ptr())
	if err := a.Err(); err != nil {
		b.Fatal(err)
	}
	launch = func() error { return t.s.Launch(fn, grid, block, uint32(storage), a) }
	if err := launch(); err != nil {
		b.Fatalf("ours: %v", err)
	}
	if err := t.s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	got := download(b, t.ctx, out, size*size)
	errOurs, errBlas, err := checkMatmul(t.av, t.bv, got, t.blas, size, size, size, 65537)
	if err != nil {
		b.Fatalf("ours against cuBLAS: %v", err)
	}
	b.ReportMetric(errOurs, "ours-relerr")
	t.errs = errBlas
	attr := fn.Attributes()
	return launch, int(attr.NumRegs), int(attr.LocalSizeBytes)
}

// timed returns a round that times b.N back-to-back launches between two
// events, in microseconds a launch.
func (t *tcBench) timed(launch func() error) func() (float64, error) {
	start, err := t.ctx.NewEvent()
	if err != nil {
		t.b.Fatal(err)
	}
	end, err := t.ctx.NewEvent()
	if err != nil {
		t.b.Fatal(err)
	}
	t.b.Cleanup(func() { start.Close(); end.Close() })
	return func() (float64, error) {
		if err := start.Record(t.s); err != nil {
			return 0, err
		}
		for range t.b.N {
			if err := launch(); err != nil {
				return 0, err
			}
		}
		if err := end.Record(t.s); err != nil {
			return 0, err
		}
		if err := end.Synchronize(); err != nil {
			return 0, err
		}
		d, err := hip.Elapsed(start, end)
		return float64(d.Nanoseconds()) / 1e3 / float64(t.b.N), err
	}
}

// race times launches a and b (named na and nb) in 15 alternating rounds
// and reports their medians and ratio (b ÷ a).
func (t *tcBench) race(a, b func() error, na, nb string) sidebyside.Result {
	t.b.ResetTimer()
	r, err := sidebyside.Run(15, t.timed(a), t.timed(b))
	t.b.StopTimer()
	if err != nil {
		t.b.Fatal(err)
	}
	r.Report(t.b, "us", na, nb)
	return r
}

// tflops is the size³ product's rate at us microseconds.
func (t *tcBench) tflops(us float64) float64 {
	return 2 * float64(t.size) * float64(t.size) * float64(t.size) / us / 1e6
}

func benchTensorCore(b *testing.B, ctx *hip.Context, s *hip.Stream, m *loom.Module, export string, el *loom.Type, size int, gemm func(a, bm, out uintptr) error) {
	k, err := Compile([]*loom.Module{m}, export, Options{})
	if err != nil {
		b.Fatal(err)
	}
	t := prepareTensorCore(b, ctx, s, m, export, el, size, gemm)
	launch, regs, local := t.load(k)
	b.ReportMetric(float64(regs), "regs")
	b.ReportMetric(float64(local), "local-bytes")
	r := t.race(t.gemm, launch, "cublas", "ours")
	b.ReportMetric(t.tflops(sidebyside.Median(r.B)), "ours-TFLOP/s")
	b.ReportMetric(t.tflops(sidebyside.Median(r.A)), "cublas-TFLOP/s")
	b.ReportMetric(1/sidebyside.Median(r.Ratio), "ratio-of-cublas")
	b.ReportMetric(t.errs, "cublas-relerr")
}
