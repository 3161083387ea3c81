package interp

import (
	"math"
	"os"
	"testing"

	"github.com/loomgen/loomgen/internal/mathacc"
	"github.com/loomgen/loomgen/loom"
)

// TestOpsMath checks loom/testdata/ops_math.loom against float64 math
// rounded once to f32: the CPU executor's pow, sin and cos are native and
// exact to that rounding; clamp, floor and round are exact.
func TestOpsMath(t *testing.T) {
	const n = 4096
	xs := ramp(n, 7, 2)
	xs[0], xs[1], xs[2], xs[3] = 0, float32(math.Copysign(0, -1)), -1, 1
	r := compileRun(t, corpus(t, "ops_math.loom"), "math_f32", Options{})
	dst := make([]byte, 4*10*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(dst))
	got := bytesF32(dst)
	clamp := func(x, lo, hi float32) float32 {
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		return x
	}
	f := func(v float64) float32 { return float32(v) }
	for i, x := range xs {
		x50 := x * 50
		y := x*x - 1
		base := float32(math.Abs(float64(x))) * 4
		yi := f(math.Round(float64(y * 3)))
		want := []float32{
			f(math.Sin(float64(x50))), f(math.Cos(float64(x50))), f(math.Sin(float64(x))),
			f(math.Pow(float64(base), float64(y))), f(math.Pow(float64(x), float64(yi))),
			clamp(x, -0.5, 0.75), clamp(x, -0.5, 0.75), clamp(x, -0.5, 0.75),
			f(math.Floor(float64(x * 3.3))), f(math.Round(float64(x * 3.5))),
		}
		for j, w := range want {
			g := got[10*i+j]
			if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
				t.Fatalf("element %d (x = %g) result %d: got %g, want %g", i, x, j, g, w)
			}
		}
	}
}

// sharedResults runs the accuracy kernel with every op the shared pass
// knows rewritten (nothing native), on the CPU executor: it measures the
// shared sequences themselves with exactly rounded f32 building blocks.
func sharedResults(t *testing.T, xs, ys []float32) []float32 {
	t.Helper()
	return sharedKernelResults(t, "acc", xs, ys)
}

// sharedKernelResults runs kernel export of the accuracy probe file as
// sharedResults does.
func sharedKernelResults(t *testing.T, export string, xs, ys []float32) []float32 {
	t.Helper()
	src, err := os.ReadFile("../ptx/testdata/accuracy/math_accuracy.loom")
	if err != nil {
		t.Fatal(err)
	}
	mods, err := loom.Lower([]*loom.Module{parseSrc(t, string(src))}, loom.LowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile(mods, export, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := len(xs)
	out := make([]byte, 16*n)
	l := Launch{Workgroups: [3]int{(n + 63) / 64, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}}
	if err := k.Run(l, []Arg{idx(int64(n)), buf(f32bytes(xs)), buf(f32bytes(ys)), buf(out)}); err != nil {
		t.Fatal(err)
	}
	return bytesF32(out)
}

// TestSharedMathAccuracy measures the shared lowering of sinf, cosf and
// powf against float64 over many inputs and checks the bounds docs/LOOM.md
// states. The numbers are logged (go test -v) to keep the docs honest.
func TestSharedMathAccuracy(t *testing.T) {
	type band struct {
		name   string
		lo, hi float64
		maxUlp float64 // bound checked below (sin/cos); abs error below 2^-24 also passes
	}
	bands := []band{{"|x| ≤ π/4", 0, math.Pi / 4, 2}, {"|x| ≤ 100", 0, 100, 2}, {"|x| ≤ 1e4", 0, 1e4, 2}, {"|x| ≤ 1e5", 0, 1e5, 2}}
	const n = 1 << 15
	for _, b := range bands {
		xs := make([]float32, n)
		s := uint64(0x9e3779b97f4a7c15)
		for i := range xs {
			s ^= s << 13
			s ^= s >> 7
			s ^= s << 17
			u := float64(s>>11) / (1 << 53)
			xs[i] = float32((b.lo + (b.hi-b.lo)*u) * float64(1-2*int(s&1)))
		}
		got := sharedResults(t, xs, make([]float32, n))
		var worstS, worstC, absS float64
		for i, x := range xs {
			ws, wc := math.Sin(float64(x)), math.Cos(float64(x))
			es, ec := mathacc.ULPs(got[4*i], ws), mathacc.ULPs(got[4*i+1], wc)
			if math.Abs(ws) < 1e-3 {
				absS = max(absS, math.Abs(float64(got[4*i])-ws))
			} else {
				worstS = max(worstS, es)
			}
			if math.Abs(wc) >= 1e-3 {
				worstC = max(worstC, ec)
			} else {
				absS = max(absS, math.Abs(float64(got[4*i+1])-wc))
			}
		}
		t.Logf("sinf/cosf %s: max %.2f / %.2f ulp where |result| ≥ 1e-3, max abs error %.3g below", b.name, worstS, worstC, absS)
		if worstS > b.maxUlp || worstC > b.maxUlp || absS > 1.0/(1<<24) {
			t.Errorf("sinf/cosf %s: %.2f / %.2f ulp, abs %.3g (bound %.0f ulp, 2^-24 abs)", b.name, worstS, worstC, absS, b.maxUlp)
		}
	}
	// powf: positive bases over a wide range of exponents, and negative
	// bases with integer exponents.
	xs, ys := make([]float32, n), make([]float32, n)
	s := uint32(12345)
	next := func() float64 { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return float64(s) / (1 << 32) }
	mathacc.PowInputs(xs, ys, next)
	got := sharedResults(t, xs, ys)
	// log2|x| is carried as hi + lo, so the error grows with |y| (the
	// rounding of u = (m−1)/(m+1)), not with |y·log2 x|.
	worst, worstY, ratio, over := mathacc.PowStats(xs, ys, func(i int) float32 { return got[4*i+2] }, 2)
	t.Logf("powf: max %.2f ulp (at |y| = %.1f) over normal results; max ulp/(2+|y|) = %.3f", worst, worstY, ratio)
	if over > 0 {
		t.Errorf("powf: %d results above 2 + |y| ulp", over)
	}
	// f16 sin: computed in f32 and rounded once to f16.
	var worstH float64
	hx := make([]float32, n)
	for i := range hx {
		hx[i] = float32(next()*8 - 4)
	}
	gh := sharedResults(t, hx, make([]float32, n))
	for i, x := range hx {
		xh := float64(roundF16(x))
		w := math.Sin(xh)
		d := math.Abs(float64(gh[4*i+3]) - w)
		_, e := math.Frexp(w)
		ulp := math.Ldexp(1, max(e-11, -24))
		worstH = max(worstH, d/ulp)
	}
	t.Logf("f16 sinf: max %.2f f16 ulp", worstH)
	if worstH > 1 {
		t.Errorf("f16 sinf: %.2f ulp", worstH)
	}
	// Special cases of pow (C99 Annex F), exact.
	sp := [][3]float64{
		{0, -1, math.Inf(1)}, {math.Copysign(0, -1), -1, math.Inf(-1)}, {math.Copysign(0, -1), 3, math.Copysign(0, -1)},
		{-2, 3, -8}, {-2, 2, 4}, {-2, 0.5, math.NaN()}, {1, math.NaN(), 1}, {math.NaN(), 0, 1},
		{-1, math.Inf(1), 1}, {-1, math.Inf(-1), 1}, {0.5, math.Inf(1), 0}, {2, math.Inf(1), math.Inf(1)},
		{2, math.Inf(-1), 0}, {math.Inf(-1), 3, math.Inf(-1)}, {math.Inf(-1), -3, math.Copysign(0, -1)},
		{math.Inf(1), -1, 0}, {math.NaN(), 1, math.NaN()}, {2, 10, 1024}, {2, -3, 0.125},
	}
	px, py := make([]float32, len(sp)), make([]float32, len(sp))
	for i, c := range sp {
		px[i], py[i] = float32(c[0]), float32(c[1])
	}
	gp := sharedResults(t, px, py)
	for i, c := range sp {
		g, w := float64(gp[4*i+2]), c[2]
		if !(g == w && math.Signbit(g) == math.Signbit(w) || math.IsNaN(g) && math.IsNaN(w)) {
			t.Errorf("powf(%g, %g) = %g, want %g", c[0], c[1], g, w)
		}
	}
	// sin(−0) = −0, sin/cos of ±∞ and NaN are NaN.
	gz := sharedResults(t, []float32{float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.NaN())}, make([]float32, 3))
	if !math.Signbit(float64(gz[0])) || gz[0] != 0 || gz[1] != 1 {
		t.Errorf("sin/cos(−0) = %g, %g", gz[0], gz[1])
	}
	for i := 1; i < 3; i++ {
		if gz[4*i] == gz[4*i] || gz[4*i+1] == gz[4*i+1] {
			t.Errorf("sin/cos(%g) = %g, %g, want NaN", []float64{0, math.Inf(1), math.NaN()}[i], gz[4*i], gz[4*i+1])
		}
	}
}

// roundF16 rounds x to the nearest f16 value (ties to even).
func roundF16(x float32) float32 {
	if x == 0 || x != x {
		return x
	}
	_, e := math.Frexp(float64(x))
	q := math.Ldexp(1, max(e-11, -24))
	return float32(math.RoundToEven(float64(x)/q) * q)
}
