package interp

import (
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// wgTreeBody is a 256-lane tree reduction through workgroup memory whose
// step is %op: addf fuses into one block op (fuse.go), maximumf runs op
// by op, so the batched form's lane-wise ops must stay on each group's
// window (batchwg.go, windowed).
const wgTreeBody = `
  %tid = kernel.workitem.id<x> : index
  %gid = kernel.workitem.dispatch.id<x> : index
  %wgid = kernel.workgroup.id<x> : index
  %ng = kernel.workgroup.count<x> : index
  %z = index.constant 0 : offset
  %bytes = index.constant 1024 : offset
  %s = buffer.alloca<workgroup> align(16) %bytes : buffer
  %tile = buffer.view %s[%z] : buffer -> view<256xf32>
  %in = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %out = buffer.view %o[%z] : buffer -> view<[%ng]xf32>
  %v = view.load %in[%gid] : view<[%n]xf32> -> f32
  view.store %v, %tile[%tid] : f32, view<256xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c8 = index.constant 8 : index
  %c128 = index.constant 128 : index
  scf.for %k = [%c0 to %c8 step %c1] {
    %stride = index.shrui %c128, %k : index
    %active = index.cmp ult, %tid, %stride : index
    scf.if %active {
      %j = index.add %tid, %stride : index
      %a = view.load %tile[%tid] : view<256xf32> -> f32
      %b = view.load %tile[%j] : view<256xf32> -> f32
      %r = scalar.OP %a, %b : f32
      view.store %r, %tile[%tid] : f32, view<256xf32>
    }
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  }
  %first = index.cmp eq, %tid, %c0 : index
  scf.if %first {
    %t = view.load %tile[%c0] : view<256xf32> -> f32
    view.store %t, %out[%wgid] : f32, view<[%ng]xf32>
  }`

// BenchmarkWorkgroupTree times tree reductions through workgroup memory
// with each workgroup alone and in batches (Run's choice), one worker.
func BenchmarkWorkgroupTree(b *testing.B) {
	const groups = 1 << 14
	const n = 256 * groups
	src := f32bytes(ramp(n, 3, 1))
	for _, op := range []string{"addf", "maximumf"} {
		m := parseSrc(b, inlineKernel("%n: index, %src: buffer, %o: buffer", strings.Replace(wgTreeBody, "OP", op, 1)))
		for _, batched := range []bool{false, true} {
			name := op + "/alone"
			if batched {
				name = op + "/batched"
			}
			b.Run(name, func(b *testing.B) {
				k, err := Compile([]*loom.Module{m}, "k", Options{Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				if !batched {
					k.batch = nil
				}
				out := make([]byte, 4*groups)
				l := Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{256, 1, 1}}
				b.SetBytes(4 * n)
				for b.Loop() {
					if err := k.Run(l, []Arg{idx(n), buf(src), buf(out)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
