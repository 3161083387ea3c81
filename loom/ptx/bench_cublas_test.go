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
			benchTensorCore(b, ctx, s, m, kd.Export, el, size, gemm)
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

func benchTensorCore(b *testing.B, ctx *hip.Context, s *hip.Stream, m *loom.Module, export string, el *loom.Type, size int, gemm func(a, bm, out uintptr) error) {
	k, err := Compile([]*loom.Module{m}, export, Options{})
	if err != nil {
		b.Fatal(err)
	}
	mod, err := ctx.LoadModule([]byte(launchedPTX(k)))
	if err != nil {
		b.Fatalf("JIT: %v", err)
	}
	b.Cleanup(func() { mod.Close() })
	fn, err := mod.Function(k.Entry)
	if err != nil {
		b.Fatal(err)
	}
	grid, block, storage, err := tensorLaunch(m, export, int64(size), int64(size), int64(size))
	if err != nil {
		b.Fatal(err)
	}
	if storage > 0 {
		if err := fn.SetMaxDynamicSharedBytes(storage); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(fn.Attributes().NumRegs), "regs")
	b.ReportMetric(float64(fn.Attributes().LocalSizeBytes), "local-bytes")
	av, araw := halfOperand(size*size, 1, el)
	bv, braw := halfOperand(size*size, 2, el)
	da, db := upload(b, ctx, araw), upload(b, ctx, braw)
	p := &nvccPair{ctx: ctx, s: s}
	cOurs, cBlas := poisoned(b, p, size*size), poisoned(b, p, size*size)
	sizes := make([]int, len(k.Params))
	for i, q := range k.Params {
		sizes[i] = q.Size
	}
	a := hip.NewArgs(sizes...)
	a.SetUint32(0, uint32(size))
	a.SetUint32(1, uint32(size))
	a.SetUint32(2, uint32(size))
	a.SetPtr(3, da.Ptr())
	a.SetPtr(4, db.Ptr())
	a.SetPtr(5, cOurs.Ptr())
	if err := a.Err(); err != nil {
		b.Fatal(err)
	}
	if err := s.Launch(fn, grid, block, uint32(storage), a); err != nil {
		b.Fatalf("ours: %v", err)
	}
	if err := gemm(uintptr(da.Ptr()), uintptr(db.Ptr()), uintptr(cBlas.Ptr())); err != nil {
		b.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	got, want := download(b, ctx, cOurs, size*size), download(b, ctx, cBlas, size*size)
	errOurs, errBlas, err := checkMatmul(av, bv, got, want, size, size, size, 65537)
	if err != nil {
		b.Fatalf("ours against cuBLAS: %v", err)
	}
	start, err := ctx.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	end, err := ctx.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { start.Close(); end.Close() })
	round := func(launch func() error) func() (float64, error) {
		return func() (float64, error) {
			if err := start.Record(s); err != nil {
				return 0, err
			}
			for range b.N {
				if err := launch(); err != nil {
					return 0, err
				}
			}
			if err := end.Record(s); err != nil {
				return 0, err
			}
			if err := end.Synchronize(); err != nil {
				return 0, err
			}
			d, err := hip.Elapsed(start, end)
			return float64(d.Nanoseconds()) / 1e3 / float64(b.N), err
		}
	}
	ours := round(func() error { return s.Launch(fn, grid, block, uint32(storage), a) })
	blas := round(func() error { return gemm(uintptr(da.Ptr()), uintptr(db.Ptr()), uintptr(cBlas.Ptr())) })
	b.ResetTimer()
	r, err := sidebyside.Run(15, blas, ours)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	r.Report(b, "us", "cublas", "ours")
	oursUS, blasUS := sidebyside.Median(r.B), sidebyside.Median(r.A)
	flop := 2 * float64(size) * float64(size) * float64(size)
	b.ReportMetric(flop/oursUS/1e6, "ours-TFLOP/s")
	b.ReportMetric(flop/blasUS/1e6, "cublas-TFLOP/s")
	b.ReportMetric(1/sidebyside.Median(r.Ratio), "ratio-of-cublas")
	b.ReportMetric(errOurs, "ours-relerr")
	b.ReportMetric(errBlas, "cublas-relerr")
}
