package ptx

import (
	"strings"
	"testing"
)

// TestFusedReductionsPTX: the three adjacent independent reductions of
// testdata/fused_reduce.loom share one barrier pair and the fourth, which
// reads the first's result, gets its own: four barriers where one pair a
// reduction took eight (TestGPUCorpus checks the results against the CPU
// executor, in whole warps and with a partial last warp).
func TestFusedReductionsPTX(t *testing.T) {
	for _, export := range []string{"fused_reduce_96", "fused_reduce_80"} {
		text := compileTestdata(t, "fused_reduce.loom", export)
		if n := strings.Count(text, "bar.sync"); n != 4 {
			t.Errorf("%s: %d barriers, want 4", export, n)
		}
		// Scratch for three values of each of the three warps.
		if want := "__loom_coll[72]"; !strings.Contains(text, want) {
			t.Errorf("%s: no %s in the PTX", export, want)
		}
	}
}
