package ptx

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestIndexWidePTX: an index of [2^31, 2^32) is held unsigned in its 32-bit
// register, widened by zero extension (addresses, casts to i64), compared
// unsigned; ops that would read it signed are refused, and a constant
// outside [-2^31, 2^32) is an error at its position.
func TestIndexWidePTX(t *testing.T) {
	m := parse(t, filepath.Join("..", "testdata", "ops_index_wide.loom"))
	k, err := Compile([]*loom.Module{m}, "index_wide", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mov.b32 %r", "4294967000;", "mad.wide.u32", "cvt.u64.u32", "setp.ge.u32"} {
		if !strings.Contains(k.PTX, want) {
			t.Errorf("PTX lacks %q", want)
		}
	}
	cases := []struct{ name, body, err, at string }{
		{"signed compare", `%c = index.cmp slt, %w, %n : index`, "may exceed 2^31-1", "w.loom:7:"},
		{"division", `%d = index.div %w, %n : index`, "may exceed 2^31-1", "w.loom:7:"},
		{"constant past 2^32", `%huge = index.constant 4294967296 : index`, "does not fit the 32-bit index carrier", "w.loom:7:"},
		{"yielded out of a region", "%p = index.cmp eq, %n, %n : index\n  %y = scf.if %p -> (index) {\n    scf.yield %w : index\n  } else {\n    scf.yield %n : index\n  }",
			"yielding an index that may exceed 2^31-1", "w.loom:9:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index) {
  %big = index.constant 3000000000 : index
  %w = index.add %n, %big : index
  ` + tc.body + `
  kernel.return
}
`
			m, err := loom.ParseFile("w.loom", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Compile([]*loom.Module{m}, "k", Options{})
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.at) {
				t.Fatalf("got %v, want %q at %s", err, tc.err, tc.at)
			}
			if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrInvalid) {
				t.Errorf("error class: %v", err)
			}
		})
	}
}
