package interp

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// hrxVectorTests is where Loom's own vector tests are extracted, when they
// are (the snapshot is not part of this repository).
const hrxVectorTests = "/tmp/hrx/loom/src/loom/ops/vector/test/"

var (
	sampleFuncRE  = regexp.MustCompile(`func\.def @(\w+)\(\) -> \((i1|f32)\)`)
	sampleConstRE = regexp.MustCompile(`scalar\.constant (\S+) : f32`)
)

// TestHrxBlockQuantSamples runs Loom's self-checking block-quant samples on
// the CPU executor, when the snapshot's tests are present: every
// argument-less func.def returning i1 must return true, and one returning
// f32 must return the constant its canonicalized form (after `// ----`)
// folds it to. They use concat, interleave, vector.decode of #ggml_q8_0,
// table lookups and bitfield ops, with the expected values spelled out by
// Loom's authors.
func TestHrxBlockQuantSamples(t *testing.T) {
	ran := 0
	for _, file := range []string{"block_quant_samples.loom-test", "block_quant_canonicalize.loom-test"} {
		src, err := os.ReadFile(hrxVectorTests + file)
		if err != nil {
			t.Skipf("Loom's tests are not extracted: %v", err)
		}
		for _, chunk := range strings.Split(string(src), "\n// ====") {
			before, after, _ := strings.Cut(chunk, "\n// ----")
			m := sampleFuncRE.FindStringSubmatch(before)
			if m == nil {
				continue
			}
			name, typ := m[1], m[2]
			want := 1.0
			if typ == "f32" {
				c := sampleConstRE.FindStringSubmatch(after)
				if c == nil {
					continue // no folded constant to compare with
				}
				if want, err = strconv.ParseFloat(c[1], 64); err != nil {
					t.Fatalf("%s: folded constant %q: %v", name, c[1], err)
				}
			}
			got, err := runSample(before, name, typ)
			if err != nil {
				t.Errorf("%s %s: %v", file, name, err)
				continue
			}
			if got != want {
				t.Errorf("%s %s: got %g, want %g", file, name, got, want)
			}
			t.Logf("%s %s: %g", file, name, got)
			ran++
		}
	}
	t.Logf("%d samples agree", ran)
	if ran == 0 {
		t.Fatal("no samples found")
	}
}

// runSample runs func.def @name of src through a one-invocation kernel
// that stores its i1 (as i32) or f32 result.
func runSample(src, name, typ string) (float64, error) {
	store := fmt.Sprintf("%%w = scalar.extui %%r : i1 to i32\n  view.store %%w, %%dv[%%c0] : i32, view<1xi32>")
	view := "view<1xi32>"
	if typ == "f32" {
		store = "view.store %r, %dv[%c0] : f32, view<1xf32>"
		view = "view<1xf32>"
	}
	wrapper := fmt.Sprintf(`
kernel.def export("sample") @sample() {
  %%c1 = index.constant 1 : index
  kernel.launch.config workgroups(%%c1, %%c1, %%c1) workgroup_size(%%c1, %%c1, %%c1) : index
} launch(%%dst: buffer) {
  %%z = index.constant 0 : offset
  %%c0 = index.constant 0 : index
  %%dv = buffer.view %%dst[%%z] : buffer -> %s
  %%r = func.call @%s() : () -> (%s)
  %s
  kernel.return
}
`, view, name, typ, store)
	m, err := loom.ParseFile(name+".loom", []byte(src+wrapper))
	if err != nil {
		return 0, err
	}
	k, err := Compile([]*loom.Module{m}, "sample", Options{})
	if err != nil {
		return 0, err
	}
	dst := make([]byte, 4)
	l := Launch{Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{1, 1, 1}}
	if err := k.Run(l, []Arg{{Buffer: dst}}); err != nil {
		return 0, err
	}
	if typ == "f32" {
		return float64(bytesF32(dst)[0]), nil
	}
	return float64(bytesI32(dst)[0]), nil
}
