package interp

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestBroadcastPerLane: kernel.subgroup.broadcast from a lane that differs
// between invocations gives each invocation the value of the lane its own
// operand names (Loom's AMDGPU lowering is ds_bpermute; PTX's shfl.idx),
// for integer and float values, batched or checked, in workgroups that end
// inside a subgroup.
func TestBroadcastPerLane(t *testing.T) {
	body := `
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %lane = kernel.subgroup.lane.id : index
  %l32 = index.cast %lane : index to i32
  %one = scalar.constant 1 : i32
  %from = scalar.xori %l32, %one : i32
  %x = index.cast %i : index to i32
  %f = scalar.sitofp %x : i32 to f32
  %bi = kernel.subgroup.broadcast %x from %from : i32, i32
  %bf = kernel.subgroup.broadcast %f from %from : f32, i32
  %oi = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %of = buffer.view %p[%z] : buffer -> view<[%n]xf32>
  view.store %bi, %oi[%i] : i32, view<[%n]xi32>
  view.store %bf, %of[%i] : f32, view<[%n]xf32>`
	m := parseSrc(t, inlineKernel("%n: index, %o: buffer, %p: buffer", body))
	for _, opts := range []Options{{Workers: 2}, {Sanitize: Sanitize{Races: true, GlobalRaces: true}}} {
		for _, L := range []int{64, 35} {
			const groups = 3
			n := groups * L
			r := compileRun(t, m, "k", opts)
			oi, of := make([]byte, 4*n), make([]byte, 4*n)
			if err := r.k.Run(Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}, []Arg{idx(int64(n)), buf(oi), buf(of)}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n; i++ {
				// The neighbour lane^1 of the subgroup (32 lanes from the
				// workgroup's start) exists unless it lies past the
				// workgroup's end: then the invocation keeps its own.
				base, p := i/L*L, i%L
				want := base + p/32*32 + ((p % 32) ^ 1)
				if want >= base+L {
					want = i
				}
				gi := int32(binary.LittleEndian.Uint32(oi[4*i:]))
				gf := math.Float32frombits(binary.LittleEndian.Uint32(of[4*i:]))
				if gi != int32(want) || gf != float32(want) {
					t.Fatalf("%+v, workgroups of %d: invocation %d got %d, %g; want %d", opts, L, i, gi, gf, want)
				}
			}
		}
	}
}
