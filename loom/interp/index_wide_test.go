package interp

import (
	"encoding/binary"
	"testing"
)

// TestIndexWide runs ops_index_wide.loom: index values past 2^31-1 held
// unsigned in the 32-bit carrier stay exact.
func TestIndexWide(t *testing.T) {
	const n = 200
	src := make([]int32, n+1)
	for i := range src {
		src[i] = int32(3*i - 7)
	}
	r := compileRun(t, corpus(t, "ops_index_wide.loom"), "index_wide", Options{})
	dst, wide := make([]byte, 12*n), make([]byte, 8*n)
	r.run(wl(n), idx(n), buf(i32bytes(src)), buf(dst), buf(wide))
	got := bytesI32(dst)
	for i := 0; i < n; i++ {
		w := int64(4294967000 + i)
		want := []int32{src[i+1], int32(uint32(w)), 1}
		for j := range want {
			if got[3*i+j] != want[j] {
				t.Fatalf("row %d element %d: got %d, want %d", i, j, got[3*i+j], want[j])
			}
		}
		if g := int64(binary.LittleEndian.Uint64(wide[8*i:])); g != w {
			t.Fatalf("row %d: w = %d, want %d", i, g, w)
		}
	}
}
