package interp

import (
	"math"
	"math/bits"
	"testing"
)

// TestIndexBitCounts pins index.ctlzi/cttzi/ctpopi to Loom's meaning: the
// count is over the 64-bit logical value (its facts fold index.ctlzi of 1
// to 63, hrx index/test/fold.loom-test @bit_count_facts), so a negative
// index has no leading zeros and 64 − popcount(^x) ones, whatever carrier
// holds it.
func TestIndexBitCounts(t *testing.T) {
	in := []int32{0, 1, -1, 2, 3, 8, -8, 255, 1 << 20, math.MaxInt32, math.MinInt32, -12345, 40000}
	r := compileRun(t, corpus(t, "index_bit_counts.loom"), "index_bit_counts", Options{})
	out := make([]byte, 4*3*len(in))
	n := int64(len(in))
	r.run(wl(n), idx(n), buf(i32bytes(in)), buf(out))
	want := make([]int32, 0, 3*len(in))
	for _, x := range in {
		u := uint64(int64(x)) // the logical value, sign-extended
		want = append(want, int32(bits.LeadingZeros64(u)), int32(bits.TrailingZeros64(u)), int32(bits.OnesCount64(u)))
	}
	exactI32(t, "ctlz/cttz/ctpop", bytesI32(out), want)
}
