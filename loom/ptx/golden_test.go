package ptx

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

var update = flag.Bool("update", false, "rewrite the golden PTX files")

// TestGolden pins the generated PTX of a few representative kernels, so a
// change in the lowering shows up as a reviewable diff (go test -update).
func TestGolden(t *testing.T) {
	cases := []struct{ file, export string }{
		{"../testdata/saxpy.loom", "saxpy"},
		{"../testdata/reduce_sum_workgroup.loom", "reduce_sum_f32"},
		{"../testdata/cast_f16.loom", "cast_f32_f16"},
		{"../testdata/while_collatz.loom", "collatz_steps"},
		{"../testdata/histogram.loom", "histogram_i32"},
		{"../../examples/gen/kernels/mlp.loom", "softmax_rows"},
		{"../testdata/vector_add.loom", "vector_add4_f32"},
		{"../testdata/vector_dot.loom", "rowdot_f32"},
		{"../testdata/vector_masked.loom", "vector_scale8_masked"},
	}
	for _, c := range cases {
		t.Run(c.export, func(t *testing.T) {
			m := parse(t, c.file)
			k, err := Compile([]*loom.Module{m}, c.export, Options{Config: testConfig(m)})
			if err != nil {
				t.Fatal(err)
			}
			if err := wellFormed(k.PTX); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", c.export+".ptx")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(k.PTX), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if string(want) != k.PTX {
				t.Errorf("PTX differs from %s (run go test -update and review the diff):\n%s", golden, k.PTX)
			}
		})
	}
}
