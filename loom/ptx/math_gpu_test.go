package ptx

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/mathacc"
	"github.com/loomgen/loomgen/loom"
)

// The shared lowering of sinf, cosf and powf (loom/lower_math.go) on the
// GPU, where its exp2f and log2f steps are ex2.approx and lg2.approx: the
// error against float64 is measured here (go test -v on the device) for
// the bounds docs/LOOM.md states.

// accuracyRunner compiles kernel export of the accuracy probe file and
// returns a function running it over xs and ys (n elements each) that
// gives its four f32 results per element.
func accuracyRunner(t *testing.T, export string) func(xs, ys []float32) []float32 {
	ctx, s := gpuContext(t)
	m := parse(t, "testdata/accuracy/math_accuracy.loom")
	k, err := Compile([]*loom.Module{m}, export, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod, err := ctx.LoadModule([]byte(k.PTX))
	if err != nil {
		t.Fatalf("JIT: %v", err)
	}
	t.Cleanup(func() { mod.Close() })
	fn, err := mod.Function(k.Entry)
	if err != nil {
		t.Fatal(err)
	}
	return func(xs, ys []float32) []float32 {
		n := len(xs)
		bufs := make([]*hip.DeviceMemory, 3)
		for i, size := range []int{4 * n, 4 * n, 16 * n} {
			if bufs[i], err = ctx.Alloc(size); err != nil {
				t.Fatal(err)
			}
			defer bufs[i].Close()
		}
		for i, v := range [][]float32{xs, ys} {
			b := make([]byte, 4*n)
			for j, x := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(x))
			}
			if err := s.CopyHtoD(bufs[i].Ptr(), b); err != nil {
				t.Fatal(err)
			}
		}
		a := hip.NewArgs(4, 8, 8, 8)
		a.SetUint32(0, uint32(n))
		for i := range bufs {
			a.SetPtr(i+1, bufs[i].Ptr())
		}
		if err := s.Launch(fn, hip.Dim3{X: uint32((n + 63) / 64), Y: 1, Z: 1}, hip.Dim3{X: 64, Y: 1, Z: 1}, 0, a); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 16*n)
		if err := s.CopyDtoH(out, bufs[2].Ptr()); err != nil {
			t.Fatal(err)
		}
		r := make([]float32, 4*n)
		for i := range r {
			r[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		}
		return r
	}
}

func TestGPUSharedMathAccuracy(t *testing.T) {
	run := accuracyRunner(t, "acc")
	const n = 1 << 18
	rng := uint64(0x9e3779b97f4a7c15)
	next := func() float64 {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return float64(rng>>11) / (1 << 53)
	}
	for _, hi := range []float64{math.Pi / 4, 100, 1e4, 1e5} {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32((2*next() - 1) * hi)
		}
		got := run(xs, make([]float32, n))
		var ws, wc, abs float64
		for i, x := range xs {
			for j, want := range []float64{math.Sin(float64(x)), math.Cos(float64(x))} {
				g := got[4*i+j]
				if math.Abs(want) < 1e-3 {
					abs = max(abs, math.Abs(float64(g)-want))
					continue
				}
				if j == 0 {
					ws = max(ws, mathacc.ULPs(g, want))
				} else {
					wc = max(wc, mathacc.ULPs(g, want))
				}
			}
		}
		t.Logf("GPU sinf/cosf |x| ≤ %g: max %.2f / %.2f ulp where |result| ≥ 1e-3, max abs error %.3g below", hi, ws, wc, abs)
		if ws > 4 || wc > 4 || abs > 1e-6 {
			t.Errorf("GPU sinf/cosf |x| ≤ %g: %.2f / %.2f ulp, abs %.3g", hi, ws, wc, abs)
		}
	}
	xs, ys := make([]float32, n), make([]float32, n)
	mathacc.PowInputs(xs, ys, next)
	got := run(xs, ys)
	worst, atY, ratio, over := mathacc.PowStats(xs, ys, func(i int) float32 { return got[4*i+2] }, 4)
	t.Logf("GPU powf: max %.2f ulp (at |y| = %.1f) over normal results; max ulp/(4+|y|) = %.3f; %d above 4 + |y|", worst, atY, ratio, over)
	if over > 0 {
		t.Errorf("GPU powf: %d results above the bound", over)
	}
}

// TestGPUSharedTurnsSoftplusAccuracy measures the shared sinturnsf,
// costurnsf and softplusf on the device (expf and the turn reduction's
// fmas as PTX computes them) against float64: mathacc.TurnsStats and
// SoftplusStats, with the bounds docs/LOOM.md states.
func TestGPUSharedTurnsSoftplusAccuracy(t *testing.T) {
	run := accuracyRunner(t, "acc_turns")
	const n = 1 << 18
	for _, b := range mathacc.TurnBands {
		xs := mathacc.TurnInputs(n, b)
		st := mathacc.TurnsStats(xs, run(xs, make([]float32, n)))
		t.Logf("GPU %s", st)
		if st.Worst() > 2 || st.Abs > 1e-7 {
			t.Errorf("GPU %s: above 2 ulp or 1e-7 absolute", st)
		}
	}
	xs := mathacc.SoftplusInputs(n)
	got := run(xs, make([]float32, n))
	worst, at := mathacc.SoftplusStats(xs, func(i int) float32 { return got[4*i+2] })
	t.Logf("GPU softplusf: max %.2f ulp (at x = %g)", worst, at)
	if worst > 6 {
		t.Errorf("GPU softplusf: %.2f ulp above 6", worst)
	}
}

// TestGPUSharedLog1pExpm1Accuracy measures the shared log1pf and expm1f
// on the device (expm1's expf is PTX's, ≤ 3 ulp; log1p uses only exact
// operations) against float64: mathacc.Log1pStats, bounds 4 and 6 ulp.
func TestGPUSharedLog1pExpm1Accuracy(t *testing.T) {
	run := accuracyRunner(t, "acc_log1p")
	const n = 1 << 18
	xs := mathacc.Log1pInputs(n)
	lw, ew := mathacc.Log1pStats(xs, run(xs, make([]float32, n)))
	t.Logf("GPU log1pf: max %.2f ulp; expm1f: max %.2f ulp", lw, ew)
	if lw > 4 || ew > 6 {
		t.Errorf("GPU log1pf %.2f ulp (bound 4) / expm1f %.2f ulp (bound 6)", lw, ew)
	}
}

// TestGPUSharedAtanHypAccuracy measures the shared atanf, atan2f, sinhf
// and coshf on the device against float64 (mathacc.AtanStats): atan and
// atan2 use only exact operations (bound 3 ulp), sinh and cosh PTX's
// expf (≤ 3 ulp; bound 8).
func TestGPUSharedAtanHypAccuracy(t *testing.T) {
	run := accuracyRunner(t, "acc_atan")
	const n = 1 << 18
	xs, ys := mathacc.AtanInputs(n)
	w := mathacc.AtanStats(xs, ys, run(xs, ys))
	t.Logf("GPU atanf %.2f, atan2f %.2f, sinhf %.2f, coshf %.2f ulp", w[0], w[1], w[2], w[3])
	for j, b := range []float64{3, 3, 8, 8} {
		if w[j] > b {
			t.Errorf("GPU result %d: %.2f ulp above %g", j, w[j], b)
		}
	}
}

// TestGPUSharedLibmAccuracy measures the shared tanf, asinf, acosf, erfcf,
// asinhf, acoshf, atanhf and cbrtf on the device against float64
// (mathacc.LibmStats): the CPU-measured bounds where the sequence uses only
// exact operations (cbrt's Newton steps undo ex2.approx), erfcf 14 (two
// PTX expf).
func TestGPUSharedLibmAccuracy(t *testing.T) {
	const n = 1 << 18
	xs, ys := mathacc.LibmInputs(n)
	names := [2][4]string{{"tanf", "asinf", "acosf", "erfcf"}, {"asinhf", "acoshf", "atanhf", "cbrtf"}}
	bounds := [2][4]float64{{4, 3, 3, 14}, {4, 4, 5, 2}}
	for p, export := range []string{"acc_libm1", "acc_libm2"} {
		run := accuracyRunner(t, export)
		w := mathacc.LibmStats(xs, ys, run(xs, ys), p == 1)
		for j, name := range names[p] {
			t.Logf("GPU %s: max %.2f ulp", name, w[j])
			if w[j] > bounds[p][j] {
				t.Errorf("GPU %s: %.2f ulp above %g", name, w[j], bounds[p][j])
			}
		}
	}
}
