package ptx

import (
	"strings"
	"testing"
)

// TestFusedReductionsPTX: the three adjacent independent reductions of
// testdata/fused_reduce.loom share one barrier pair and the fourth, which
// reads the first's result, gets its own leading barrier, its trailing one
// dropped (nothing after it uses the scratch): three barriers where one
// pair a reduction took eight (TestGPUCorpus checks the results against
// the CPU executor, in whole warps and with a partial last warp).
func TestFusedReductionsPTX(t *testing.T) {
	for _, export := range []string{"fused_reduce_96", "fused_reduce_80"} {
		text := compileTestdata(t, "fused_reduce.loom", export)
		if n := strings.Count(text, "bar.sync"); n != 3 {
			t.Errorf("%s: %d barriers, want 3", export, n)
		}
		// Scratch for three values of each of the three warps.
		if want := "__loom_coll[72]"; !strings.Contains(text, want) {
			t.Errorf("%s: no %s in the PTX", export, want)
		}
	}
}

// TestDropTrailingBarriers: a reduction's trailing barrier goes only where
// nothing after it in its body version can reuse the scratch.
func TestDropTrailingBarriers(t *testing.T) {
	bar := trailingMark + "\tbar.sync 0;\n"
	use := "\tmov.u64 %rd9, " + collScratch + ";\n"
	for _, c := range []struct {
		name, body string
		kept       int
	}{
		{"last", "\tadd.s32 %r1, %r2, 1;\n" + bar + "\tst.global.f32 [%rd1], %f1;\n\tret;\n", 0},
		{"scratch reused after", bar + "\tadd.s32 %r1, %r2, 1;\n" + use + "\tret;\n", 1},
		{"in a loop", "$L_for_3:\n" + bar + "\t@%p1 bra $L_for_3;\n\tret;\n", 1},
		{"loop before it", "$L_for_3:\n\t@%p1 bra $L_for_3;\n" + bar + "\tret;\n", 0},
		{"forward branch", bar + "\t@%p1 bra $L_skip_4;\n$L_skip_4:\n\tret;\n", 0},
		{"aligned version", bar + "\tret;\n$L_misaligned_2:\n" + use + bar + "\tret;\n", 0},
		{"early exit, then more", bar + "\t@!%p2 bra $L_noexit_5;\n\tret;\n$L_noexit_5:\n" + use + "\tret;\n", 1},
	} {
		out := dropTrailingBarriers(c.body)
		if n := strings.Count(out, "bar.sync"); n != c.kept {
			t.Errorf("%s: %d barriers kept, want %d:\n%s", c.name, n, c.kept, out)
		}
		if strings.Contains(out, trailingMark) {
			t.Errorf("%s: the mark is left in:\n%s", c.name, out)
		}
	}
}
