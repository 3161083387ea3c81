// Package mathacc measures f32 results of approximated math against
// float64 references, for the accuracy tests of the shared lowering's pow,
// sin and cos on the CPU executor (loom/interp) and on the GPU (loom/ptx).
package mathacc

import "math"

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
