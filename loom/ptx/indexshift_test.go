package ptx

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestIndexShiftPTX: index shifts and rotates compile over the 64-bit
// logical value (LOOM.md 6.1). index_shift64.loom compiles (TestGPUCorpus
// runs it on the device against the CPU executor); the forms without an
// exact 32-bit lowering trap, those with one do not, and constants fold
// to Loom's value.
func TestIndexShiftPTX(t *testing.T) {
	m := parse(t, filepath.Join("..", "testdata", "index_shift64.loom"))
	k, err := Compile([]*loom.Module{m}, "index_shift64", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Checked: shli/shrui/rotli/rotri by s, shli by 31 and 40, rotri by
	// 8, rotli of w by s (8 columns).
	if n := strings.Count(k.PTX, "trap;"); n != 8 {
		t.Errorf("%d traps, want 8", n)
	}
	cases := []struct {
		name, body string
		want, not  []string
	}{
		{"shrui by 32 of a signed value", `%r = index.shrui %x, %c32 : index`, []string{"shr.s32", "cvt.u64.u32"}, []string{"trap"}},
		{"shrui by 40", `%r = index.shrui %x, %c40 : index`, []string{"shr.s32", "and.b32", "16777215", "cvt.s64.s32"}, []string{"trap"}},
		{"shrsi by a run-time count", `%r = index.shrsi %x, %s : index`, []string{"shr.s32"}, []string{"trap"}},
		{"shli by 3", `%r = index.shli %x, %c3 : index`, []string{"shl.b32"}, []string{"trap"}},
		{"rotli", `%r = index.rotli %x, %s : index`, []string{"shl.b64", "shr.b64", "trap"}, nil},
		{"shli 1 by 31 folds unsigned", `%r = index.shli %c1, %c31 : index`, []string{"mov.b32 %r", "2147483648", "cvt.u64.u32"}, []string{"trap"}},
		{"rotri 2 by 1 folds", `%r = index.rotri %c2, %c1 : index`, []string{"mov.b64 %rd", ", 1;"}, []string{"trap", "shr.b64"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%x: index, %s: index, %b: buffer) {
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %c31 = index.constant 31 : index
  %c32 = index.constant 32 : index
  %c40 = index.constant 40 : index
  %z = index.constant 0 : offset
  %v = buffer.view %b[%z] : buffer -> view<1xi64>
  ` + tc.body + `
  %q = index.cast %r : index to i64
  view.store %q, %v[%c0] : i64, view<1xi64>
  kernel.return
}
`
			m, err := loom.ParseFile("s.loom", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			k, err := Compile([]*loom.Module{m}, "k", Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(k.PTX, w) {
					t.Errorf("PTX lacks %q:\n%s", w, k.PTX)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(k.PTX, w) {
					t.Errorf("PTX has %q:\n%s", w, k.PTX)
				}
			}
		})
	}
}
