package ptx

import (
	"math"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestSmallIntToFloat: the add-and-subtract conversion is exact over the
// whole range it is used for, and the compiler uses it exactly where the
// operand is known to fit (a mask, a shift, an extension), cvt elsewhere.
func TestSmallIntToFloat(t *testing.T) {
	for x := int32(-1 << 22); x < 1<<22; x++ {
		f := math.Float32frombits(uint32(x+0x4B400000)) - 12582912
		if f != float32(x) {
			t.Fatalf("%d converts to %g", x, f)
		}
	}
	src := `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %w: i32, %o: buffer) {
  %z = index.constant 0 : offset
  %ov = buffer.view %o[%z] : buffer -> view<4xf32>
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %m = scalar.constant 15 : i32
  %s = scalar.constant 24 : i32
  %lo = scalar.andi %w, %m : i32
  %hi = scalar.shrsi %w, %s : i32
  %a = scalar.uitofp %lo : i32 to f32
  %b = scalar.sitofp %hi : i32 to f32
  %c = scalar.sitofp %w : i32 to f32
  %u = scalar.uitofp %hi : i32 to f32
  view.store %a, %ov[%c0] : f32, view<4xf32>
  view.store %b, %ov[%c1] : f32, view<4xf32>
  view.store %c, %ov[%c2] : f32, view<4xf32>
  view.store %u, %ov[%c3] : f32, view<4xf32>
  kernel.return
}`
	m, err := loom.ParseFile("cvt.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The mask and the signed shift convert by addition; the full-range
	// value and the unsigned view of a possibly negative one by cvt.
	if n := strings.Count(k.PTX, "0x4B400000"); n != 2 {
		t.Errorf("%d additive conversions, want 2:\n%s", n, k.PTX)
	}
	if n := strings.Count(k.PTX, "cvt.rn.f32.s32") + strings.Count(k.PTX, "cvt.rn.f32.u32"); n != 2 {
		t.Errorf("%d cvt conversions, want 2:\n%s", n, k.PTX)
	}
}
