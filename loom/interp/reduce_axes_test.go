package interp

import (
	"math"
	"testing"
)

// TestReduceAxes pins vector.reduce.axes (hrx vector facts
// @reduce_axes_from_elements_extract, @reduce_axes_uniform_all_axes_addi)
// against Go: each result lane is its init lane combined with the reduced
// lanes in row-major order, f32 sums rounding at each step in that order.
func TestReduceAxes(t *testing.T) {
	const n = 29
	in := make([]float32, 6*n)
	for i := range in {
		in[i] = float32(math.Sin(float64(i)*1.7)) * float32(int(1)<<(i%20))
	}
	init := []float32{0.1, -3e5, 7.25}
	cols := make([]byte, 4*3*n)
	rows := make([]byte, 4*2*n)
	all := make([]byte, 4*n)
	r := compileRun(t, corpus(t, "vector_reduce_axes.loom"), "reduce_axes", Options{})
	r.run(wl(n), idx(n), buf(f32bytes(in)), buf(f32bytes(init)), buf(cols), buf(rows), buf(all))
	var wantC, wantR []float32
	var wantA []int32
	for i := 0; i < n; i++ {
		m := in[6*i : 6*i+6]
		for c := 0; c < 3; c++ {
			wantC = append(wantC, init[c]+m[c]+m[3+c])
		}
		for r := 0; r < 2; r++ {
			wantR = append(wantR, init[r]+m[3*r]+m[3*r+1]+m[3*r+2])
		}
		s := int32(1)
		for _, v := range m {
			s += int32(math.Float32bits(v))
		}
		wantA = append(wantA, s)
	}
	exactF32(t, "axes [0]", bytesF32(cols), wantC)
	exactF32(t, "axes [1]", bytesF32(rows), wantR)
	exactI32(t, "axes [0, 1]", bytesI32(all), wantA)
}
