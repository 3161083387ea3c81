package ptx

import (
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// BenchmarkCompile times Compile of kernels a model loads at start-up:
// the wgmma matmul (unrolled, the largest PTX we emit), the
// register-tiled SGEMM and the q4_K mat-vec. Compare two commits with
//
//	go test ./loom/ptx -run '^$' -bench Compile -count 5
func BenchmarkCompile(b *testing.B) {
	for _, c := range []struct{ path, export string }{
		{"testdata/matmul_tc.loom", "matmul_tc_f16_wg2_s4"},
		{"../../internal/bench/kernels/sgemm.loom", "sgemm_f32"},
		{"../../internal/bench/kernels/matvec_q.loom", "matvec_q4_k"},
	} {
		m := parse(b, c.path)
		b.Run(c.export, func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile([]*loom.Module{m}, c.export, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
