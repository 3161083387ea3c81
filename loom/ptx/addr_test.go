package ptx

import (
	"regexp"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestAffineAddresses: rows a constant apart (%r, %r+16, %r+32 of a view
// with a run-time row stride, and the same rows of a workgroup tile) share
// the address arithmetic of %r; the constants become one mad by the
// stride register and immediate offsets.
func TestAffineAddresses(t *testing.T) {
	src := `kernel.def export("rows3") @rows3(%n: index) {
  %c1 = index.constant 1 : index
  %c32 = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c32, %c1, %c1) : index
} launch(%n: index, %w: index, %a: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c16 = index.constant 16 : index
  %tid = kernel.workitem.id<x> : index
  %av = buffer.view %a[%z] : buffer -> view<[%n]x[%w]xf32>
  %ov = buffer.view %out[%z] : buffer -> view<[%n]xf32>
  %bytes = index.constant 8192 : offset
  %s = buffer.alloca<workgroup> align(16) %bytes : buffer
  %sv = buffer.view %s[%z] : buffer -> view<64x32xf32>
  %r1 = index.add %tid, %c16 : index
  %r2 = index.add %r1, %c16 : index
  %x0 = view.load %av[%tid, %c0] : view<[%n]x[%w]xf32> -> f32
  %x1 = view.load %av[%r1, %c0] : view<[%n]x[%w]xf32> -> f32
  %x2 = view.load %av[%r2, %c0] : view<[%n]x[%w]xf32> -> f32
  view.store %x0, %sv[%tid, %c0] : f32, view<64x32xf32>
  view.store %x1, %sv[%r1, %c0] : f32, view<64x32xf32>
  view.store %x2, %sv[%r2, %c0] : f32, view<64x32xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %y = view.load %sv[%r2, %c0] : view<64x32xf32> -> f32
  view.store %y, %ov[%tid] : f32, view<[%n]xf32>
  kernel.return
}
`
	m, err := loom.ParseFile("rows3.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "rows3", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wellFormed(k.PTX); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, re string
		n        int
	}{
		{"row × run-time stride, once per row", `mul\.wide\.s32 %rd\d+, %r\d+, %r\d+;`, 3},
		{"+16 rows by the stride register", `mad\.wide\.s32 %rd\d+, %r\d+, 64, %rd\d+;`, 1},
		{"+32 rows by the stride register", `mad\.wide\.s32 %rd\d+, %r\d+, 128, %rd\d+;`, 1},
		{"+16 rows of the tile", `add\.s32 %r\d+, %r\d+, 2048;`, 1},
		{"+32 rows of the tile", `add\.s32 %r\d+, %r\d+, 4096;`, 2},
	} {
		if got := len(regexp.MustCompile(c.re).FindAllString(k.PTX, -1)); got != c.n {
			t.Errorf("%s: %d matches of %s, want %d:\n%s", c.what, got, c.re, c.n, k.PTX)
		}
	}
	// The three rows' register part is %tid for all: each multiply reads it.
	mul := regexp.MustCompile(`mul\.wide\.s32 %rd\d+, (%r\d+), %r\d+;`).FindAllStringSubmatch(k.PTX, -1)
	for _, x := range mul {
		if x[1] != mul[0][1] {
			t.Errorf("rows multiplied from %s and %s, want one register part", mul[0][1], x[1])
		}
	}
}

// TestAffineScale checks the split affineScale records for x·k: the
// register part times k, with what divides it, and the constant part
// times k; none where the product's constant part is out of bounds, the
// factor is not constant, or the operand is wide.
func TestAffineScale(t *testing.T) {
	e := &emitter{}
	b := e.newVal(indexType)
	b.p2 = 4
	x := e.newVal(indexType)
	x.aff = &affineIndex{base: b, off: 3}
	for _, c := range []struct {
		k       int64
		first   bool // the constant is the first operand
		off, p2 int64
	}{
		{6, false, 18, 8},
		{6, true, 18, 8},
		{-12, false, -36, 16},
		{1, false, 3, 4},
	} {
		k := e.constInt(indexType, c.k)
		out := e.newVal(indexType)
		if c.first {
			e.affineScale(out, k, x)
		} else {
			e.affineScale(out, x, k)
		}
		if out.aff == nil {
			t.Fatalf("·%d: no split", c.k)
		}
		if out.aff.off != c.off || pow2Of(out.aff.base) != c.p2 {
			t.Errorf("·%d: constant part %d, register part divisible by %d; want %d, %d", c.k, out.aff.off, pow2Of(out.aff.base), c.off, c.p2)
		}
		if c.k == 1 && out.aff.base != b {
			t.Errorf("·1 made a new register part")
		}
	}
	big := e.constInt(indexType, maxAffineOff)
	out := e.newVal(indexType)
	e.affineScale(out, x, big)
	if out.aff != nil {
		t.Errorf("·2^20 of a constant part 3: split recorded past the bound")
	}
	out = e.newVal(indexType)
	e.affineScale(out, x, e.newVal(indexType))
	if out.aff != nil {
		t.Errorf("a run-time factor: split recorded")
	}
	w := e.newVal(indexType)
	w.aff, w.wide = x.aff, true
	out = e.newVal(indexType)
	e.affineScale(out, w, e.constInt(indexType, 2))
	if out.aff != nil {
		t.Errorf("a wide operand: split recorded")
	}
}
