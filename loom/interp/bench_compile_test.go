package interp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// straightKernel is a kernel of n steps, each a load at the work-item id
// plus a constant (an affine index, a lazy-lanes candidate) folded into
// a running fma: the shape of a fully unrolled loop.
func straightKernel(n int) string {
	var b strings.Builder
	b.WriteString(`kernel.def export("straight") @straight(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 64 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %zero = index.constant 0 : offset
  %len = index.constant 1048576 : index
  %in = buffer.view %src[%zero] : buffer -> view<[%len]xf32>
  %out = buffer.view %dst[%zero] : buffer -> view<[%len]xf32>
  %acc0 = scalar.constant 0.0 : f32
`)
	for k := range n {
		fmt.Fprintf(&b, "  %%o%d = index.constant %d : index\n", k, k)
		fmt.Fprintf(&b, "  %%j%d = index.add %%i, %%o%d : index\n", k, k)
		fmt.Fprintf(&b, "  %%x%d = view.load %%in[%%j%d] : view<[%%len]xf32> -> f32\n", k, k)
		fmt.Fprintf(&b, "  %%acc%d = scalar.fmaf %%x%d, %%x%d, %%acc%d : f32\n", k+1, k, k, k)
	}
	fmt.Fprintf(&b, "  view.store %%acc%d, %%out[%%i] : f32, view<[%%len]xf32>\n  kernel.return\n}\n", n)
	return b.String()
}

// BenchmarkCompileLong compiles straightKernel at two lengths: the time
// per step should not grow with the length (every pass of Compile is
// linear in the kernel). Compare two commits with
//
//	go test ./loom/interp -run '^$' -bench CompileLong -count 5
func BenchmarkCompileLong(b *testing.B) {
	for _, n := range []int{1000, 8000} {
		m, err := loom.ParseFile("straight.loom", []byte(straightKernel(n)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile([]*loom.Module{m}, "straight", Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/step")
		})
	}
}
