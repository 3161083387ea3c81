package interp

import (
	"fmt"
	"strings"
	"testing"
)

// clusterDivergentKernel reduces tid+1 over clusters of SIZE lanes STRIDE
// apart inside a branch that leaves every lane with tid%3 == 0 out, and
// writes each active lane's result (the others keep -1).
const clusterDivergentKernel = `
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 40 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%dst: buffer) {
  %tid = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c3 = index.constant 3 : index
  %z = index.constant 0 : offset
  %out = buffer.view %dst[%z] : buffer -> view<40xi32>
  %m = index.rem %tid, %c3 : index
  %in = index.cmp ne, %m, %c0 : index
  scf.if %in {
    %t1 = index.add %tid, %c1 : index
    %x = index.cast %t1 : index to i32
    %r = kernel.subgroup.reduce<addi> %x {cluster_size = SIZE, cluster_stride = STRIDE} : i32
    view.store %r, %out[%tid] : i32, view<40xi32>
  }
  kernel.return
}
`

// TestClusterReduceDivergent: a clustered subgroup reduction in divergent
// code sums only the active lanes of each cluster, and gives every active
// lane its cluster's sum, for clusters of adjacent and of strided lanes
// and a last subgroup of 8 lanes (40 lanes in subgroups of 32).
func TestClusterReduceDivergent(t *testing.T) {
	for _, c := range []struct{ size, stride int }{{8, 1}, {4, 2}, {2, 8}, {32, 1}} {
		t.Run(fmt.Sprintf("size %d stride %d", c.size, c.stride), func(t *testing.T) {
			src := strings.NewReplacer("SIZE", fmt.Sprint(c.size), "STRIDE", fmt.Sprint(c.stride)).Replace(clusterDivergentKernel)
			for _, opts := range []Options{{}, {Sanitize: Sanitize{Races: true}}} {
				r := compileRun(t, parseSrc(t, src), "k", opts)
				out := make([]int32, 40)
				for i := range out {
					out[i] = -1
				}
				b := i32bytes(out)
				r.run(nil, buf(b))
				got := bytesI32(b)
				for l := range 40 {
					want := int32(-1)
					if l%3 != 0 {
						// l's cluster: its subgroup, the span of size·stride
						// lanes holding it, its residue mod stride.
						sg := l / 32 * 32
						span := c.size * c.stride
						base := sg + (l-sg)/span*span + (l-sg)%c.stride
						want = 0
						for j := range c.size {
							m := base + j*c.stride
							if m < min(sg+32, 40) && m%3 != 0 {
								want += int32(m + 1)
							}
						}
					}
					if got[l] != want {
						t.Fatalf("%+v: lane %d = %d, want %d", opts.Sanitize, l, got[l], want)
					}
				}
			}
		})
	}
}

// clusterF32Kernel sums, over clusters of 16 lanes, 1 on each cluster's
// first lane and 2^-24 on the others, in f32.
const clusterF32Kernel = `
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%dst: buffer) {
  %tid = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %c16 = index.constant 16 : index
  %z = index.constant 0 : offset
  %out = buffer.view %dst[%z] : buffer -> view<32xf32>
  %m = index.rem %tid, %c16 : index
  %first = index.cmp eq, %m, %c0 : index
  %one = scalar.constant 1.0 : f32
  %tiny = scalar.constant 5.9604644775390625e-08 : f32
  %x = scf.select %first, %one, %tiny : f32
  %r = kernel.subgroup.reduce<addf> %x {cluster_size = 16} : f32
  view.store %r, %out[%tid] : f32, view<32xf32>
  kernel.return
}
`

// TestClusterReduceF32Order: a clustered f32 sum rounds to f32 after each
// lane, in lane order: 1 + 2^-24 is 1 again (a tie, to even), so fifteen
// of them leave 1, where a float64 sum rounded once would give 1 + 2^-23.
func TestClusterReduceF32Order(t *testing.T) {
	for _, opts := range []Options{{}, {Sanitize: Sanitize{Races: true}}} {
		r := compileRun(t, parseSrc(t, clusterF32Kernel), "k", opts)
		b := make([]byte, 4*32)
		r.run(nil, buf(b))
		for l, v := range bytesF32(b) {
			if v != 1 {
				t.Fatalf("%+v: lane %d = %v, want 1", opts.Sanitize, l, v)
			}
		}
	}
}
