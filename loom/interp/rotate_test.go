package interp

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestRotate runs ops_rotate.loom against Go natively and through the
// shared lowering (shifts and masks): exact, counts modulo the width.
func TestRotate(t *testing.T) {
	var xi []int32
	for v := int32(-70); v < 120; v++ {
		xi = append(xi, v)
	}
	rot32 := func(x uint32, k int32) int32 { return int32(bits.RotateLeft32(x, int(k%32))) }
	m := corpus(t, "ops_rotate.loom")
	for _, shared := range []bool{false, true} {
		r := compileRun(t, m, "ops_rotate", Options{})
		if shared {
			mods, err := loom.Lower([]*loom.Module{m}, loom.LowerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r.k, err = Compile(mods, "ops_rotate", Options{}); err != nil {
				t.Fatal(err)
			}
		}
		n := int64(len(xi))
		o32, o64 := make([]byte, 4*8*len(xi)), make([]byte, 8*2*len(xi))
		r.run(wl(n), idx(n), buf(i32bytes(xi)), buf(o32), buf(o64))
		got := bytesI32(o32)
		for i, raw := range xi {
			x := uint32(raw) * 0x9E3779B1
			s := raw - 40
			w := uint64(int64(int32(x)))<<20 + uint64(int64(raw))
			want := []int32{rot32(x, s), rot32(x, -s),
				int32(int8(bits.RotateLeft8(uint8(x), int(int8(s)%8)))),
				int32(int16(bits.RotateLeft16(uint16(x), -int(int16(s)%16)))),
				rot32(x, s), rot32(-x, 3), rot32(x, -s), rot32(-x, -3)}
			for c, w := range want {
				if got[8*i+c] != w {
					t.Fatalf("shared=%v raw=%d column %d: got %#x, want %#x", shared, raw, c, got[8*i+c], w)
				}
			}
			for c, k := range []int{int(int64(s) % 64), -int(int64(s) % 64)} {
				wantW := bits.RotateLeft64(w, k)
				if g := binary.LittleEndian.Uint64(o64[16*i+8*c:]); g != wantW {
					t.Fatalf("shared=%v raw=%d i64 column %d: got %#x, want %#x", shared, raw, c, g, wantW)
				}
			}
		}
	}
}
