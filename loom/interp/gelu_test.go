package interp

import (
	"math"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// geluRef is Loom's float64 geluf (its folds): erf, tanh, logistic with
// scale s.
func geluRef(variant string, x, s float64) float64 {
	switch variant {
	case "erf":
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2))
	case "tanh":
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	return x / (1 + math.Exp(-s*x))
}

// TestGelu runs ops_gelu.loom against Go: natively every column is the
// float64 formula rounded once; through the shared lowering (erff, tanhf,
// logisticf exactly rounded here) within 2 f32 ulps at max(|result|, 1)
// (the crosscheck measure; on PTX its erff and tanhf bound it, 9 ulp).
func TestGelu(t *testing.T) {
	var xf []float32
	for x := float32(-2); x < 2; x += 0.00731 {
		xf = append(xf, x)
	}
	xf = append(xf, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-20, -30)
	m := corpus(t, "ops_gelu.loom")
	for _, shared := range []bool{false, true} {
		r := compileRun(t, m, "ops_gelu", Options{})
		if shared {
			mods, err := loom.Lower([]*loom.Module{m}, loom.LowerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r.k, err = Compile(mods, "ops_gelu", Options{}); err != nil {
				t.Fatal(err)
			}
		}
		n := int64(len(xf))
		out := make([]byte, 4*8*len(xf))
		r.run(wl(n), idx(n), buf(f32bytes(xf)), buf(out))
		got := bytesF32(out)
		worst := 0.0
		for i, x0 := range xf {
			x := float64(x0 * 3)
			want := []float64{geluRef("erf", x, 0), geluRef("tanh", x, 0), geluRef("logistic", x, 1.702), geluRef("logistic", x, 1.5),
				geluRef("erf", x, 0), geluRef("erf", -x, 0), geluRef("tanh", x, 0), geluRef("tanh", -x, 0)}
			for c, w := range want {
				g := got[8*i+c]
				if !shared {
					if math.Float32bits(g) != math.Float32bits(float32(w)) && !(g != g && w != w) {
						t.Fatalf("native x=%g column %d: got %g, want %g", x, c, g, float32(w))
					}
					continue
				}
				e := ulpsAtOne(g, w)
				worst = max(worst, e)
				if e > 2 {
					t.Fatalf("shared x=%g column %d: got %g, want %g (%.2f ulp)", x, c, g, w, e)
				}
			}
		}
		if shared {
			t.Logf("shared geluf: max %.2f ulp at max(|result|, 1)", worst)
		}
	}
}

// TestLog1pExpm1 runs ops_log1p_expm1.loom against Go: natively every
// column is float64 rounded once; through the shared lowering within 4
// f32 ulps at max(|result|, 1), and exact on the native forms' zeros.
func TestLog1pExpm1(t *testing.T) {
	var xf []float32
	for x := float32(-2); x < 2; x += 0.00917 {
		xf = append(xf, x)
	}
	xf = append(xf, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-20)
	for _, shared := range []bool{false, true} {
		got := runBothForms(t, "ops_log1p_expm1", xf, 8, shared)
		for i, x := range xf {
			a := float64(x * 0.49)
			want := []float64{math.Log1p(a), math.Log1p(float64(x * 1e-5)), math.Expm1(float64(x * 10)), math.Expm1(float64(x * 1e-6)),
				math.Log1p(a), math.Log1p(-a), math.Expm1(a), math.Expm1(-a)}
			for c, w := range want {
				g := got[8*i+c]
				if !shared {
					if math.Float32bits(g) != math.Float32bits(float32(w)) && !(g != g && w != w) {
						t.Fatalf("native x=%g column %d: got %g, want %g", x, c, g, float32(w))
					}
					continue
				}
				if e := ulpsAtOne(g, w); e > 4 {
					t.Fatalf("shared x=%g column %d: got %g, want %g (%.2f ulp)", x, c, g, w, e)
				}
			}
		}
	}
}

// TestAtanHyp runs ops_atan_hyp.loom against Go: natively every column is
// float64 rounded once; through the shared lowering within 4 f32 ulps at
// max(|result|, 1).
func TestAtanHyp(t *testing.T) {
	xf := mathSweep()
	for _, shared := range []bool{false, true} {
		got := runBothForms(t, "ops_atan_hyp", xf, 8, shared)
		for i, x := range xf {
			a := float64(x)
			q := float64(x*x - 1)
			h := float64(x * 20)
			want := []float64{math.Atan(float64(x * 10)), math.Atan2(a, q), math.Sinh(h), math.Cosh(h),
				math.Atan(a), math.Atan2(float64(x*-0.5), float64(-x)), math.Sinh(float64(x * -0.5)), math.Cosh(a)}
			for c, w := range want {
				checkColumn(t, shared, x, c, got[8*i+c], w, 4)
			}
		}
	}
}

// TestLibm runs ops_libm.loom against Go: natively every column is float64
// rounded once; through the shared lowering within 8 f32 ulps at
// max(|result|, 1) (erfc's bound; the others are tighter,
// TestSharedLibmAccuracy), infinities and NaNs exact.
func TestLibm(t *testing.T) {
	xf := mathSweep()
	for _, shared := range []bool{false, true} {
		got := runBothForms(t, "ops_libm", xf, 16, shared)
		for i, x := range xf {
			f := func(v float32) float64 { return float64(v) }
			xh, xq := x*0.5, x*-0.25
			want := []float64{math.Tan(f(x)), math.Asin(f(xh)), math.Acos(f(xh)), math.Erfc(f(x * 2)),
				math.Asinh(f(x * 50)), math.Acosh(f(float32(math.FMA(f(x*x), 20, 1)))), math.Atanh(f(x * 0.499)), math.Cbrt(f(x * 1000)),
				math.Tan(f(xh)), math.Asin(f(xq)), math.Acos(f(xh)), math.Erfc(f(xq)),
				math.Asinh(f(xh)), math.Acosh(3.5), math.Atanh(f(xh)), math.Cbrt(f(xq))}
			for c, w := range want {
				checkColumn(t, shared, x, c, got[16*i+c], w, 8)
			}
		}
	}
}

// runBothForms runs the corpus kernel export (in export.loom, rows from
// xf, cols f32 results each) natively or, with shared, with every shared
// rewrite applied and nothing native, and returns its results.
func runBothForms(t *testing.T, export string, xf []float32, cols int, shared bool) []float32 {
	t.Helper()
	m := corpus(t, export+".loom")
	r := compileRun(t, m, export, Options{})
	if shared {
		mods, err := loom.Lower([]*loom.Module{m}, loom.LowerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.k, err = Compile(mods, export, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	n := int64(len(xf))
	out := make([]byte, 4*cols*len(xf))
	r.run(wl(n), idx(n), buf(f32bytes(xf)), buf(out))
	return bytesF32(out)
}

// mathSweep is the rows of the math corpus tests: [−2, 2) in steps of
// 0.00917, then zeros, ±1, ±∞, NaN and a tiny value.
func mathSweep() []float32 {
	var xf []float32
	for x := float32(-2); x < 2; x += 0.00917 {
		xf = append(xf, x)
	}
	return append(xf, 0, float32(math.Copysign(0, -1)), 1, -1, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-20)
}

// checkColumn checks one result g of row x against float64 w: natively,
// and for infinite or NaN w, bit for bit as w rounded once; through the
// shared lowering within bound f32 ulps at max(|result|, 1).
func checkColumn(t *testing.T, shared bool, x float32, c int, g float32, w float64, bound float64) {
	t.Helper()
	if !shared || math.IsInf(w, 0) || w != w {
		if math.Float32bits(g) != math.Float32bits(float32(w)) && !(g != g && w != w) {
			t.Fatalf("shared %v x=%g column %d: got %g, want %g", shared, x, c, g, float32(w))
		}
		return
	}
	if e := ulpsAtOne(g, w); e > bound {
		t.Fatalf("shared x=%g column %d: got %g, want %g (%.2f ulp)", x, c, g, w, e)
	}
}
