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
		// Scratch for three values (f32, i32, i64) of each of the three
		// warps, each value's slots 16-byte aligned: 16 + 16 + 32 bytes.
		if want := "__loom_coll[64]"; !strings.Contains(text, want) {
			t.Errorf("%s: no %s in the PTX", export, want)
		}
	}
}

// TestPartialWarpReducePTX: with a partial last warp (592 invocations,
// 19 warps) each warp gathers its lanes into lane 0 without broadcasting
// them (only lane 0 stores), and every invocation reads the 19 f32
// results four at a time and combines them by a tree: 18 additions in 5
// levels, not a chain of 18.
func TestPartialWarpReducePTX(t *testing.T) {
	text := compileTestdata(t, "partial_reduce.loom", "partial_reduce_592")
	bar := strings.Index(text, "bar.sync")
	if bar < 0 {
		t.Fatal("no barrier in the PTX")
	}
	_, after, _ := strings.Cut(text[bar:], "bar.sync")
	if strings.Contains(text[:bar], "shfl.sync.idx") {
		t.Error("a warp broadcasts its result before the barrier; only lane 0 stores it")
	}
	second, _, _ := strings.Cut(after, "bar.sync")
	if n := strings.Count(second, "ld.shared.v4.f32"); n != 4 {
		t.Errorf("%d ld.shared.v4.f32 of the 19 f32 results, want 4 (then a v2 and one scalar):\n%s", n, second)
	}
	// The tree's depth: each addition's operands and the level they sit at.
	level := map[string]int{}
	depth := 0
	for _, line := range strings.Split(second, "\n") {
		f := strings.Fields(strings.NewReplacer(",", " ", ";", " ").Replace(line))
		if len(f) != 4 || f[0] != "add.rn.f32" {
			continue
		}
		l := max(level[f[2]], level[f[3]]) + 1
		level[f[1]] = l
		depth = max(depth, l)
	}
	if depth != 5 {
		t.Errorf("the f32 results combine in %d levels, want 5 (a tree of 19)", depth)
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
