package interp

import "testing"

// TestShuffle pins vector.shuffle (hrx vector facts
// @shuffle_small_static_lanes_then_extract): result lane i is source lane
// m[i], with repeats and omissions.
func TestShuffle(t *testing.T) {
	const n = 21
	in := make([]float32, 4*n)
	for i := range in {
		in[i] = float32(i)*1.5 - 40
	}
	r := compileRun(t, corpus(t, "vector_shuffle.loom"), "shuffle", Options{})
	out := make([]byte, 4*4*n)
	r.run(wl(n), idx(n), buf(f32bytes(in)), buf(out))
	var want []float32
	for i := 0; i < n; i++ {
		v := in[4*i : 4*i+4]
		want = append(want, v[3], v[0], v[0], v[2])
	}
	exactF32(t, "shuffle", bytesF32(out), want)
}
