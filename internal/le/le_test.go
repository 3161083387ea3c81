package le

import (
	"math"
	"slices"
	"testing"
)

func TestF32RoundTrip(t *testing.T) {
	v := []float32{0, 1, -2.5, float32(math.Inf(1)), math.SmallestNonzeroFloat32, math.MaxFloat32}
	b := F32Bytes(v)
	if len(b) != 4*len(v) || b[4] != 0x00 || b[7] != 0x3f { // 1.0 is 0x3f800000
		t.Fatalf("bytes % x", b)
	}
	if got := BytesF32(append(b, 0xff)); !slices.Equal(got, v) {
		t.Fatalf("round trip %v, want %v", got, v)
	}
}
