package interp

import "testing"

// TestRowExtract pins vector.extract with fewer indices than the rank
// (Loom's partial extract, hrx vector facts @extract_rank2_small_static_lanes):
// row r of a 2x3 vector is its lanes 3r..3r+2, here with a dynamic r.
func TestRowExtract(t *testing.T) {
	const n = 37
	in := make([]int32, 6*n)
	for i := range in {
		in[i] = int32(i*7919 - 100000)
	}
	r := compileRun(t, corpus(t, "vector_row_extract.loom"), "row_extract", Options{})
	out := make([]byte, 4*3*n)
	r.run(wl(n), idx(n), buf(i32bytes(in)), buf(out))
	want := make([]int32, 0, 3*n)
	for i := 0; i < n; i++ {
		row := i % 2
		want = append(want, in[6*i+3*row:6*i+3*row+3]...)
	}
	exactI32(t, "row", bytesI32(out), want)
}
