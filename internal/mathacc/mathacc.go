// Package mathacc measures f32 results of approximated math against
// float64 references, for the accuracy tests of the shared lowering's pow,
// sin and cos on the CPU executor (loom/interp) and on the GPU (loom/ptx).
package mathacc

import (
	"fmt"
	"math"
)

// ULPs is |got − want| in units of the last place of an f32 at want's
// magnitude (subnormal spacing below the normal range). NaN matches NaN,
// an infinity only itself.
func ULPs(got float32, want float64) float64 {
	if math.IsNaN(want) {
		if got != got {
			return 0
		}
		return math.Inf(1)
	}
	if math.IsInf(want, 0) || math.Abs(want) > math.MaxFloat32 {
		if float64(got) == want || math.IsInf(float64(got), 0) && math.Signbit(float64(got)) == math.Signbit(want) {
			return 0
		}
		return math.Inf(1)
	}
	_, e := math.Frexp(want)
	return math.Abs(float64(got)-want) / math.Ldexp(1, max(e-24, -149))
}

// PowInputs fills xs and ys with pow's test inputs from next (uniform in
// [0, 1)): positive bases over 2^±20 with |y| ≤ 4, bases below 4 with
// |y| ≤ 20, and negative bases with integer exponents, in turn.
func PowInputs(xs, ys []float32, next func() float64) {
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i], ys[i] = float32(math.Exp2(next()*40-20)), float32(next()*8-4)
		case 1:
			xs[i], ys[i] = float32(next()*4), float32(next()*40-20)
		default:
			xs[i], ys[i] = -float32(next()*3), float32(math.Round(next()*20-10))
		}
	}
}

// PowStats measures pow results pow(i) of inputs xs, ys against float64
// over the normal f32 range: the largest error in ulps and |y| there, the
// largest ratio error/(base+|y|), and how many exceed base + |y|.
func PowStats(xs, ys []float32, pow func(i int) float32, base float64) (worst, atY, ratio float64, over int) {
	for i := range xs {
		w := math.Pow(float64(xs[i]), float64(ys[i]))
		if math.Abs(w) > math.MaxFloat32 || math.Abs(w) < 0x1p-126 {
			continue
		}
		e := ULPs(pow(i), w)
		ay := math.Abs(float64(ys[i]))
		if e > worst {
			worst, atY = e, ay
		}
		ratio = max(ratio, e/(base+ay))
		if e > base+ay {
			over++
		}
	}
	return worst, atY, ratio, over
}

// Turns is sin(2π·x) (sin) or cos(2π·x) with the reduction done exactly
// in turns: k = roundeven(4x), r = x − k/4, then ±sin or ±cos of 2πr by
// k mod 4 — the float64 reference the shared sinturnsf/costurnsf are
// measured against (half and quarter turns give exact zeros and ones).
func Turns(x float64, sin bool) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return math.NaN()
	}
	if math.Abs(x) >= 1<<52 {
		x = 0 // a whole number of turns
	}
	k := math.RoundToEven(4 * x)
	r := 2 * math.Pi * (x - k/4)
	q := int(math.Mod(k, 4))
	if q < 0 {
		q += 4
	}
	if !sin {
		q++ // cos θ = sin(θ + π/2)
	}
	switch q % 4 {
	case 0:
		return math.Sin(r)
	case 1:
		return math.Cos(r)
	case 2:
		return -math.Sin(r)
	}
	return -math.Cos(r)
}

// TurnBands are the magnitudes sinturnsf/costurnsf are measured over:
// inside one reduction step, a few turns, many, and up to 2^22 (past
// 2^23 every f32 is a whole number of turns).
var TurnBands = []float64{0.125, 4, 1000, 1 << 22}

// TurnInputs are n inputs uniform in [−hi, hi] from a fixed xorshift.
func TurnInputs(n int, hi float64) []float32 {
	xs := make([]float32, n)
	s := uint64(0x9e3779b97f4a7c15)
	for i := range xs {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		xs[i] = float32((2*float64(s>>11)/(1<<53) - 1) * hi)
	}
	return xs
}

// TurnStats is the error of sinturnsf/costurnsf results over a band: ulps
// where |result| ≥ 1e-3, the absolute error below.
type TurnStats struct {
	Hi, Sin, Cos, Abs float64
}

// Worst is the larger of the sin and cos ulp errors.
func (s TurnStats) Worst() float64 { return max(s.Sin, s.Cos) }

func (s TurnStats) String() string {
	return fmt.Sprintf("sinturnsf/costurnsf |x| ≤ %.3g: max %.2f / %.2f ulp where |result| ≥ 1e-3, max abs error %.3g below", s.Hi, s.Sin, s.Cos, s.Abs)
}

// TurnsStats measures got (four results per element: sinturns, costurns
// first) against Turns.
func TurnsStats(xs, got []float32) TurnStats {
	var st TurnStats
	for i, x := range xs {
		st.Hi = max(st.Hi, math.Abs(float64(x)))
		for j, sin := range []bool{true, false} {
			w, g := Turns(float64(x), sin), got[4*i+j]
			if math.Abs(w) < 1e-3 {
				st.Abs = max(st.Abs, math.Abs(float64(g)-w))
				continue
			}
			if sin {
				st.Sin = max(st.Sin, ULPs(g, w))
			} else {
				st.Cos = max(st.Cos, ULPs(g, w))
			}
		}
	}
	return st
}

// SoftplusInputs are n inputs: uniform in [−20, 20], in [−90, 90] (the
// tails, down to results near the subnormals), and within 2^-20 of 0.
func SoftplusInputs(n int) []float32 {
	xs := make([]float32, n)
	s := uint32(2463534242)
	next := func() float64 { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return float64(s) / (1 << 32) }
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = float32(next()*40 - 20)
		case 1:
			xs[i] = float32(next()*180 - 90)
		default:
			xs[i] = float32((next()*2 - 1) * 0x1p-20)
		}
	}
	return xs
}

// Softplus is the float64 reference max(x, 0) + log1p(e^−|x|).
func Softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

// SoftplusStats is the largest ulp error of softplus results got(i) over
// the normal f32 range, and the input where it occurs.
func SoftplusStats(xs []float32, got func(i int) float32) (worst, at float64) {
	for i, x := range xs {
		w := Softplus(float64(x))
		if w < 0x1p-126 {
			continue
		}
		if e := ULPs(got(i), w); e > worst {
			worst, at = e, float64(x)
		}
	}
	return worst, at
}

// FmodPairs64 are f64 fmod operands the CPU and GPU remf tests check
// exactly: every pair (x, −y) of signed zeros, subnormals, the normal
// range's ends (the widest exponent gaps), ordinary values, ∞ and NaN.
func FmodPairs64() [][2]float64 {
	vals := []float64{0, math.Copysign(0, -1), 5e-324, 15e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 0.1, 0.3, 1, 1.5, 3, 7,
		9007199254740993, 1e300, math.MaxFloat64, math.Inf(1), math.NaN()}
	var pairs [][2]float64
	for _, x := range vals {
		for _, y := range vals {
			pairs = append(pairs, [2]float64{x, -y})
		}
	}
	return pairs
}

// Log1pInputs are n inputs for log1p and expm1: in (−1, 3) (log1p's
// cancellation near −1 and 0), in [−20, 20] (expm1's range up to large
// results), and log-uniform magnitudes down to 2^-30 of either sign.
func Log1pInputs(n int) []float32 {
	xs := make([]float32, n)
	s := uint32(88675123)
	next := func() float64 { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return float64(s) / (1 << 32) }
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = float32(next()*4 - 1)
		case 1:
			xs[i] = float32(next()*40 - 20)
		default:
			xs[i] = float32(math.Copysign(math.Exp2(-30*next()), next()-0.5))
		}
	}
	return xs
}

// Log1pStats measures got (four results per element: log1p x, expm1 x,
// log1p(x·2^-20), expm1(x·2^-20)) against float64 over normal results:
// the largest ulp error of log1p and of expm1.
func Log1pStats(xs, got []float32) (log1p, expm1 float64) {
	for i, x := range xs {
		xs := float32(float64(x) * 0x1p-20)
		for j, w := range []float64{math.Log1p(float64(x)), math.Expm1(float64(x)), math.Log1p(float64(xs)), math.Expm1(float64(xs))} {
			if math.IsNaN(w) || math.IsInf(w, 0) || math.Abs(w) < 0x1p-126 || math.Abs(w) > math.MaxFloat32 {
				continue
			}
			e := ULPs(got[4*i+j], w)
			if j%2 == 0 {
				log1p = max(log1p, e)
			} else {
				expm1 = max(expm1, e)
			}
		}
	}
	return log1p, expm1
}

// AtanInputs are n pairs (x, y) for atan, atan2, sinh and cosh: x
// log-uniform in magnitude from 2^-30 to 2^30 of either sign, or uniform
// in [−90, 90] (sinh/cosh up to overflow) and in [−4, 4]; y log-uniform
// likewise, with either sign.
func AtanInputs(n int) (xs, ys []float32) {
	xs, ys = make([]float32, n), make([]float32, n)
	s := uint32(2463534242)
	next := func() float64 { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return float64(s) / (1 << 32) }
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = float32(math.Copysign(math.Exp2(60*next()-30), next()-0.5))
		case 1:
			xs[i] = float32(next()*180 - 90)
		default:
			xs[i] = float32(next()*8 - 4)
		}
		ys[i] = float32(math.Copysign(math.Exp2(60*next()-30), next()-0.5))
	}
	return xs, ys
}

// AtanStats measures got (four results per element: atan x, atan2(x, y),
// sinh x, cosh x) against float64 over normal finite results: the largest
// ulp error of each.
func AtanStats(xs, ys, got []float32) (worst [4]float64) {
	for i, x := range xs {
		a, b := float64(x), float64(ys[i])
		for j, w := range []float64{math.Atan(a), math.Atan2(a, b), math.Sinh(a), math.Cosh(a)} {
			if math.IsNaN(w) || math.Abs(w) < 0x1p-126 || math.Abs(w) > math.MaxFloat32 {
				continue
			}
			worst[j] = max(worst[j], ULPs(got[4*i+j], w))
		}
	}
	return worst
}

// LibmInputs are n pairs (x, y) for the libm probes (acc_libm1/2): x
// log-uniform in magnitude from 2^-30 to 2^60 or to 2^14, or uniform in
// [−12, 12], either sign; y in [−1, 1]: uniform, within 2^-20…2^-1 of ±1,
// or log-uniform down to 2^-30.
func LibmInputs(n int) (xs, ys []float32) {
	xs, ys = make([]float32, n), make([]float32, n)
	s := uint32(1013904223)
	next := func() float64 { s ^= s << 13; s ^= s >> 17; s ^= s << 5; return float64(s) / (1 << 32) }
	sign := func() float64 { return math.Copysign(1, next()-0.5) }
	for i := range xs {
		switch i % 3 {
		case 0:
			xs[i] = float32(sign() * math.Exp2(90*next()-30))
			ys[i] = float32(next()*2 - 1)
		case 1:
			xs[i] = float32(sign() * math.Exp2(44*next()-30))
			ys[i] = float32(sign() * (1 - math.Exp2(-1-19*next())))
		default:
			xs[i] = float32(next()*24 - 12)
			ys[i] = float32(sign() * math.Exp2(-30*next()))
		}
	}
	return xs, ys
}

// LibmStats measures acc_libm1 (tan x, asin y, acos y, erfc x) or, with
// second, acc_libm2 (asinh x, acosh x, atanh y, cbrt x) results against
// float64 over normal finite results (tan where |x| ≤ 2^14, sinf's
// reduction range): the largest ulp error of each.
func LibmStats(xs, ys, got []float32, second bool) (worst [4]float64) {
	for i := range xs {
		x, y := float64(xs[i]), float64(ys[i])
		want := []float64{math.Tan(x), math.Asin(y), math.Acos(y), math.Erfc(x)}
		if second {
			want = []float64{math.Asinh(x), math.Acosh(x), math.Atanh(y), math.Cbrt(x)}
		} else if math.Abs(x) > 0x1p14 {
			want[0] = math.NaN()
		}
		for j, w := range want {
			if math.IsNaN(w) || math.Abs(w) < 0x1p-126 || math.Abs(w) > math.MaxFloat32 {
				continue
			}
			worst[j] = max(worst[j], ULPs(got[4*i+j], w))
		}
	}
	return worst
}
