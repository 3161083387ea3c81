package interp

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestLazyIndexThroughCall: a dispatch id passed to a function whose
// parameter has the same name, where the callee reads it through its
// affine facts (a load) and through its lanes (a store of a uniform
// value). Only the call counts as its use in the kernel; the callee's
// load once counted too (same name, same register), so the id's lanes
// were left unwritten and every invocation stored at index 0.
func TestLazyIndexThroughCall(t *testing.T) {
	src := `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 48 : index
  %g = index.div %n, %wg : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %x: buffer, %y: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  func.call @f(%i, %n, %x, %y) : (index, index, buffer, buffer)
  kernel.return
}
func.def @f(%i: index, %n: index, %x: buffer, %y: buffer) {
  %z = index.constant 0 : offset
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  %a = view.load %xv[%i] : view<[%n]xf32> -> f32
  %s = kernel.workgroup.reduce<addf> %a : f32
  view.store %s, %yv[%i] : f32, view<[%n]xf32>
  func.return
}
`
	m, err := loom.ParseFile("lazy.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	const n, wg = 96, 48
	for _, workers := range []int{1, 4} {
		k, err := Compile([]*loom.Module{m}, "k", Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		x, y := make([]byte, 4*n), make([]byte, 4*n)
		want := make([]float32, n)
		for g := 0; g < n/wg; g++ {
			var sum float32 // small integers: exact in any order
			for i := g * wg; i < (g+1)*wg; i++ {
				binary.LittleEndian.PutUint32(x[4*i:], math.Float32bits(float32(i%7)))
				sum += float32(i % 7)
			}
			for i := g * wg; i < (g+1)*wg; i++ {
				want[i] = sum
			}
		}
		l := Launch{Workgroups: [3]int{n / wg, 1, 1}, WorkgroupSize: [3]int{wg, 1, 1}}
		if err := k.Run(l, []Arg{{Bits: n}, {Buffer: x}, {Buffer: y}}); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(y[4*i:])); got != want[i] {
				t.Fatalf("workers %d: y[%d] = %v, want %v", workers, i, got, want[i])
			}
		}
	}
}

// TestLazyIndexPerCall: one function inlined twice, its affine index %j
// read through its affine facts in the first call (a load through a
// uniform view) and through its lanes in the second (the view's extent
// varies by lane there, so the load goes lane by lane). The uses are
// recorded per register: the first call's must not let the second's %j
// leave its lanes unwritten (same name, same op, same depth).
func TestLazyIndexPerCall(t *testing.T) {
	src := `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %x: buffer, %y: buffer, %w: buffer) {
  %i = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %c64 = index.constant 64 : index
  %none = index.mul %i, %c0 : index
  %lane_extent = index.add %none, %c64 : index
  func.call @shifted(%i, %c64, %x, %y) : (index, index, buffer, buffer)
  func.call @shifted(%i, %lane_extent, %x, %w) : (index, index, buffer, buffer)
  kernel.return
}
func.def @shifted(%i: index, %extent: index, %src: buffer, %dst: buffer) {
  %z = index.constant 0 : offset
  %c3 = index.constant 3 : index
  %j = index.add %i, %c3 : index
  %sv = buffer.view %src[%z] : buffer -> view<[%extent]xf32>
  %dv = buffer.view %dst[%z] : buffer -> view<[%extent]xf32>
  %a = view.load %sv[%j] : view<[%extent]xf32> -> f32
  view.store %a, %dv[%i] : f32, view<[%extent]xf32>
  func.return
}
`
	m, err := loom.ParseFile("lazy.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, y, w := make([]byte, 4*64), make([]byte, 4*64), make([]byte, 4*64)
	for i := range 64 {
		binary.LittleEndian.PutUint32(x[4*i:], math.Float32bits(float32(10+i)))
	}
	l := Launch{Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{32, 1, 1}}
	if err := k.Run(l, []Arg{{Bits: 64}, {Buffer: x}, {Buffer: y}, {Buffer: w}}); err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		want := float32(10 + i + 3)
		for name, out := range map[string][]byte{"uniform view": y, "varying view": w} {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])); got != want {
				t.Fatalf("%s: out[%d] = %v, want %v", name, i, got, want)
			}
		}
	}
}
