package ptx

import (
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestCFGCompile compiles every kernel of cfg_flow.loom (unstructured
// control flow, structured by the shared lowering) and checks the shape of
// the PTX: loops branch back, divergent branches are predicated jumps, the
// barrier after the early exit is emitted once, and no kernel returns
// from inside a loop. TestGPUCorpus runs the same kernels on a GPU against
// the CPU executor.
func TestCFGCompile(t *testing.T) {
	m := parse(t, "../testdata/cfg_flow.loom")
	backward := regexp.MustCompile(`bra\.uni \$L_while_\d+;`)
	for _, c := range []struct {
		export string
		loops  int // scf.while loops the lowering forms
		bars   int
	}{
		{"cfg_collatz", 1, 0},
		{"cfg_diamond", 0, 0},
		{"cfg_nested", 2, 0},
		{"cfg_barrier", 0, 1},
		{"cfg_uniform", 0, 0},
		{"cfg_search", 1, 0},
		{"cfg_stride", 1, 0},
		{"cfg_dowhile", 1, 0},
	} {
		k, err := Compile([]*loom.Module{m}, c.export, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.export, err)
		}
		if got := len(backward.FindAllString(k.PTX, -1)); got != c.loops {
			t.Errorf("%s: %d backward branches, want %d:\n%s", c.export, got, c.loops, k.PTX)
		}
		if got := strings.Count(k.PTX, "bar.sync"); got != c.bars {
			t.Errorf("%s: %d barriers, want %d", c.export, got, c.bars)
		}
		if !strings.Contains(k.PTX, "@") {
			t.Errorf("%s: no predicated branch", c.export)
		}
	}
}
