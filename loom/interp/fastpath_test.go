package interp

import (
	"math"
	"testing"
)

// The lane loop of fmaf with a uniform multiplier must agree with fma32 on
// every lane, including batches where only one lane sits on a rounding tie
// or in the subnormal range (the loop then redoes the batch exactly).
func TestFMALaneLoopMatchesFMA32(t *testing.T) {
	u := float32(1 + 0x1p-12)
	xs := ramp(600, 7, 1000)
	traps := []struct{ b, c float32 }{
		{u, 0x1p-60}, {u, -0x1p-60}, {u, 0}, {1e-30, 1e-20}, {-u, 0x1p-61},
		{float32(math.Inf(1)), 1}, {float32(math.NaN()), 1}, {0x1p-130, 0},
	}
	for ti := -1; ti < len(traps); ti++ {
		for _, x := range []float32{u, 1.5, -3.25, 0x1p-100} {
			B := make([]float64, 256)
			C := make([]float64, 256)
			for i := range B {
				B[i], C[i] = float64(xs[i]), float64(xs[i+300])
			}
			if ti >= 0 {
				B[77], C[77] = float64(traps[ti].b), float64(traps[ti].c)
			}
			R := make([]float64, len(B))
			fmaSVV32(R, float64(x), B, C)
			for i := range R {
				want := fma32(float64(x), B[i], C[i])
				if R[i] != want && !(math.IsNaN(R[i]) && math.IsNaN(want)) {
					t.Fatalf("trap %d, x=%v, lane %d: got %v, want %v", ti, x, i, R[i], want)
				}
			}
		}
	}
}
