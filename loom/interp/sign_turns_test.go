package interp

import (
	"math"
	"testing"

	"github.com/loomgen/loomgen/internal/mathacc"
	"github.com/loomgen/loomgen/loom"
)

// signTurnsInputs are ops_sign_turns' inputs: floats across signs, zeros,
// quarter and half turns, tails; integers around 32 (j = xi − 32).
func signTurnsInputs() ([]float32, []int32) {
	xf := []float32{0, float32(math.Copysign(0, -1)), 0.25, 0.5, 0.75, 1, -0.25, -0.5, -1.75, 0.125,
		1.5, -2, 3.3, -7.1, 0.3, 1e-8, -1e-8, 88, -88, 120.5, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for x := float32(-2); x < 2; x += 0.0517 {
		xf = append(xf, x)
	}
	xi := make([]int32, len(xf))
	for i := range xi {
		xi[i] = int32(i*7%80) - 8
	}
	xi[0], xi[1] = 32, math.MinInt32+32
	return xf, xi
}

func signf(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

func signi(x int64) int32 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// signTurnsRef is ops_sign_turns' rows in Go: the float columns as float64
// values (to compare after rounding, or within a bound), the int columns
// exactly. turns and softplus are the CPU executor's native forms.
func signTurnsRef(xf []float32, xi []int32) ([][20]float64, [][8]int32) {
	sinT := func(x float64) float64 { return math.Sin(2 * math.Pi * math.Mod(x, 1)) }
	cosT := func(x float64) float64 { return math.Cos(2 * math.Pi * math.Mod(x, 1)) }
	f16 := func(x float32) float64 { return float64(roundF16(x)) }
	fr := make([][20]float64, len(xf))
	ir := make([][8]int32, len(xf))
	for i, x32 := range xf {
		x := float64(x32)
		fr[i] = [20]float64{signf(x), signf(f16(x32)), sinT(x), cosT(x), mathacc.Softplus(x),
			mathacc.Softplus(float64(x32 * 20)), sinT(float64(x32 * 1000.3)), cosT(float64(x32 * 0.37))}
		lanes := []float64{x, -x, float64(x32 - 0.5), float64(x32 * 0)}
		for k, v := range lanes {
			fr[i][8+k], fr[i][12+k], fr[i][16+k] = signf(v), cosT(v), mathacc.Softplus(v)
		}
		j := xi[i] - 32
		ir[i] = [8]int32{signi(int64(j)), signi(int64(int8(j * 5))), signi(int64(j) << 40), signi(int64(int16(j * 1000))),
			signi(int64(j)), signi(int64(-j)), 0, signi(int64(j - 1))}
	}
	return fr, ir
}

// runSignTurns runs ops_sign_turns on the CPU executor, natively or (with
// shared) with every op the shared pass knows rewritten by it.
func runSignTurns(t *testing.T, shared bool, xf []float32, xi []int32) ([]float32, []int32) {
	m := corpus(t, "ops_sign_turns.loom")
	r := compileRun(t, m, "ops_sign_turns", Options{})
	if shared {
		mods, err := loom.Lower([]*loom.Module{m}, loom.LowerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.k, err = Compile(mods, "ops_sign_turns", Options{}); err != nil {
			t.Fatal(err)
		}
	}
	n := int64(len(xf))
	of, oi := make([]byte, 4*20*len(xf)), make([]byte, 4*8*len(xf))
	r.run(wl(n), idx(n), buf(f32bytes(xf)), buf(i32bytes(xi)), buf(of), buf(oi))
	return bytesF32(of), bytesI32(oi)
}

// TestSignTurns checks ops_sign_turns against Go on the CPU executor's
// native forms (every column rounded once from float64, so exact), and
// the shared lowering's forms: signs exact, turns within 2 f32 ulps at
// max(|result|, 1) (the crosscheck measure), softplus within 4 ulps.
func TestSignTurns(t *testing.T) {
	xf, xi := signTurnsInputs()
	fr, ir := signTurnsRef(xf, xi)
	for _, shared := range []bool{false, true} {
		gf, gi := runSignTurns(t, shared, xf, xi)
		for i := range xf {
			for c := 0; c < 20; c++ {
				g, w := gf[20*i+c], fr[i][c]
				sign := c <= 1 || c >= 8 && c < 12
				if !shared || sign {
					if math.Float32bits(g) != math.Float32bits(float32(w)) && !(g != g && w != w) {
						t.Fatalf("shared=%v x=%g column %d: got %g, want %g", shared, xf[i], c, g, float32(w))
					}
					continue
				}
				bound := 2.0
				if c == 4 || c == 5 || c >= 16 {
					bound = 4
				}
				if e := ulpsAtOne(g, w); e > bound {
					t.Fatalf("shared x=%g column %d: got %g, want %g (%.2f ulp)", xf[i], c, g, w, e)
				}
			}
			for c := 0; c < 8; c++ {
				if gi[8*i+c] != ir[i][c] {
					t.Fatalf("shared=%v j=%d int column %d: got %d, want %d", shared, xi[i]-32, c, gi[8*i+c], ir[i][c])
				}
			}
		}
	}
}

// ulpsAtOne is |g − w| in f32 ulps at max(|w|, 1) (crosscheck's measure);
// NaN matches NaN, an infinity only itself.
func ulpsAtOne(g float32, w float64) float64 {
	if math.IsNaN(w) || math.IsInf(w, 0) {
		return mathacc.ULPs(g, w)
	}
	_, e := math.Frexp(math.Max(math.Abs(w), 1))
	return math.Abs(float64(g)-w) / math.Ldexp(1, e-24)
}

// TestSharedTurnsSoftplusAccuracy measures the shared sinturnsf,
// costurnsf and softplusf with exactly rounded f32 building blocks against
// float64 (mathacc) and checks the bounds docs/LOOM.md states; -v logs
// the numbers.
func TestSharedTurnsSoftplusAccuracy(t *testing.T) {
	const n = 1 << 15
	for _, hi := range mathacc.TurnBands {
		xs := mathacc.TurnInputs(n, hi)
		got := sharedKernelResults(t, "acc_turns", xs, make([]float32, n))
		st := mathacc.TurnsStats(xs, got)
		t.Logf("%s", st)
		if st.Worst() > 2 || st.Abs > 1e-7 {
			t.Errorf("%s: above 2 ulp or 1e-7 absolute", st)
		}
		var worstH float64
		for i, x := range xs {
			if math.Abs(float64(x)) > 65504 {
				continue // past f16's range
			}
			w := mathacc.Turns(float64(roundF16(x)), true)
			_, e := math.Frexp(w)
			worstH = max(worstH, math.Abs(float64(got[4*i+3])-w)/math.Ldexp(1, max(e-11, -24)))
		}
		t.Logf("f16 sinturnsf |x| ≤ %g: max %.2f f16 ulp", hi, worstH)
		if worstH > 1 {
			t.Errorf("f16 sinturnsf |x| ≤ %g: %.2f f16 ulp", hi, worstH)
		}
	}
	xs := mathacc.SoftplusInputs(n)
	got := sharedKernelResults(t, "acc_turns", xs, make([]float32, n))
	worst, at := mathacc.SoftplusStats(xs, func(i int) float32 { return got[4*i+2] })
	t.Logf("softplusf: max %.2f ulp (at x = %g)", worst, at)
	if worst > 4 {
		t.Errorf("softplusf: %.2f ulp above 4", worst)
	}
	// Special values, exact: ±0, whole, half and quarter turns (as Loom
	// folds them: sin/cos of 2π·fmod(x, 1) in float64, so cos of a
	// quarter turn is 6.1e-17), ±∞, NaN; softplus of ±∞, NaN and large
	// magnitudes.
	sp := []float32{0, float32(math.Copysign(0, -1)), 0.5, -0.5, 0.25, 0.75, 3, -1e9, 1e9, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	g := sharedKernelResults(t, "acc_turns", sp, make([]float32, len(sp)))
	for i, x := range sp {
		m := math.Mod(float64(x), 1)
		want := []float64{math.Sin(2 * math.Pi * m), math.Cos(2 * math.Pi * m)}
		if a := math.Abs(float64(x)); a > 100 || a != a {
			want = append(want, mathacc.Softplus(float64(x)))
		}
		for k, w := range want {
			if gk := g[4*i+k]; math.Float32bits(gk) != math.Float32bits(float32(w)) && !(gk != gk && w != w) {
				t.Errorf("x = %g result %d: got %g, want %g", x, k, gk, float32(w))
			}
		}
	}
}

// TestSharedLog1pExpm1Accuracy measures the shared log1pf and expm1f with
// exactly rounded steps against float64 (bounds in docs/LOOM.md; -v logs
// the numbers) and checks their special values exactly.
func TestSharedLog1pExpm1Accuracy(t *testing.T) {
	const n = 1 << 15
	xs := mathacc.Log1pInputs(n)
	lw, ew := mathacc.Log1pStats(xs, sharedKernelResults(t, "acc_log1p", xs, make([]float32, n)))
	t.Logf("log1pf: max %.2f ulp; expm1f: max %.2f ulp", lw, ew)
	if lw > 4 || ew > 4 {
		t.Errorf("log1pf %.2f / expm1f %.2f ulp above 4", lw, ew)
	}
	inf, nan := math.Inf(1), math.NaN()
	sp := []float32{0, float32(math.Copysign(0, -1)), -1, -2, 1e-30, -1e-30, 100, -100, float32(inf), float32(-inf), float32(nan)}
	g := sharedKernelResults(t, "acc_log1p", sp, make([]float32, len(sp)))
	for i, x := range sp {
		for k, w := range []float64{math.Log1p(float64(x)), math.Expm1(float64(x))} {
			if gk := g[4*i+k]; math.Float32bits(gk) != math.Float32bits(float32(w)) && !(gk != gk && w != w) {
				t.Errorf("x = %g result %d: got %g, want %g", x, k, gk, float32(w))
			}
		}
	}
}

// TestSharedAtanHypAccuracy measures the shared atanf, atan2f, sinhf and
// coshf with exactly rounded steps against float64 (bounds in
// docs/LOOM.md; -v logs the numbers) and checks their special values.
func TestSharedAtanHypAccuracy(t *testing.T) {
	const n = 1 << 15
	xs, ys := mathacc.AtanInputs(n)
	w := mathacc.AtanStats(xs, ys, sharedKernelResults(t, "acc_atan", xs, ys))
	t.Logf("atanf %.2f, atan2f %.2f, sinhf %.2f, coshf %.2f ulp", w[0], w[1], w[2], w[3])
	for j, b := range []float64{3, 3, 4, 3} {
		if w[j] > b {
			t.Errorf("result %d: %.2f ulp above %g", j, w[j], b)
		}
	}
	inf, nan, nz := float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
	sx := []float32{0, nz, 0, nz, 0, nz, 1, -1, inf, -inf, inf, -inf, inf, nan, 1, 100, -100, 1e-30, 89, -89.4}
	sy := []float32{0, 0, nz, nz, 1, -1, 0, nz, inf, inf, -inf, -inf, 1, 1, nan, -inf, inf, -1, 1, 1}
	g := sharedKernelResults(t, "acc_atan", sx, sy)
	for i, x := range sx {
		a, b := float64(x), float64(sy[i])
		for k, w := range []float64{math.Atan(a), math.Atan2(a, b), math.Sinh(a), math.Cosh(a)} {
			gk := g[4*i+k]
			if gk != gk || w != w || math.IsInf(w, 0) || w == 0 || float32(w) == 0 {
				if math.Float32bits(gk) != math.Float32bits(float32(w)) && !(gk != gk && w != w) {
					t.Errorf("x = %g, y = %g result %d: got %g, want %g", x, sy[i], k, gk, float32(w))
				}
			} else if e := mathacc.ULPs(gk, w); e > 4 {
				t.Errorf("x = %g, y = %g result %d: got %g, want %g (%.2f ulp)", x, sy[i], k, gk, float32(w), e)
			}
		}
	}
}

// TestSharedLibmAccuracy measures the shared tanf, asinf, acosf, erfcf,
// asinhf, acoshf, atanhf and cbrtf with exactly rounded steps against
// float64 (bounds in docs/LOOM.md; -v logs the numbers) and checks their
// special values exactly.
func TestSharedLibmAccuracy(t *testing.T) {
	const n = 1 << 15
	xs, ys := mathacc.LibmInputs(n)
	names := [2][4]string{{"tanf", "asinf", "acosf", "erfcf"}, {"asinhf", "acoshf", "atanhf", "cbrtf"}}
	bounds := [2][4]float64{{4, 3, 3, 8}, {4, 4, 5, 2}}
	for p, export := range []string{"acc_libm1", "acc_libm2"} {
		w := mathacc.LibmStats(xs, ys, sharedKernelResults(t, export, xs, ys), p == 1)
		for j, name := range names[p] {
			t.Logf("%s: max %.2f ulp", name, w[j])
			if w[j] > bounds[p][j] {
				t.Errorf("%s: %.2f ulp above %g", name, w[j], bounds[p][j])
			}
		}
	}
	inf, nan, nz := float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
	sp := []float32{0, nz, 1, -1, 2, -2, 0.5, -0.5, inf, -inf, nan, 1e-30, -1e-30, 20, -20}
	for p, export := range []string{"acc_libm1", "acc_libm2"} {
		g := sharedKernelResults(t, export, sp, sp)
		for i, x := range sp {
			a := float64(x)
			want := []float64{math.Tan(a), math.Asin(a), math.Acos(a), math.Erfc(a)}
			if p == 1 {
				want = []float64{math.Asinh(a), math.Acosh(a), math.Atanh(a), math.Cbrt(a)}
			}
			for k, w := range want {
				gk := g[4*i+k]
				if gk != gk || w != w || math.IsInf(w, 0) || float32(w) == 0 {
					if math.Float32bits(gk) != math.Float32bits(float32(w)) && !(gk != gk && w != w) {
						t.Errorf("%s(%g): got %g, want %g", names[p][k], x, gk, float32(w))
					}
				} else if e := mathacc.ULPs(gk, w); e > 8 {
					t.Errorf("%s(%g): got %g, want %g (%.2f ulp)", names[p][k], x, gk, float32(w), e)
				}
			}
		}
	}
}
