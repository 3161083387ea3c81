package checkrun

import (
	"os"
	"path/filepath"
	"testing"

	loomrt "github.com/loomgen/loomgen/runtime"
)

// FuzzLoad: any source either loads or is an error; nothing panics, and
// every loaded case expands into named sub-cases.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.loom")
	more, _ := filepath.Glob("testdata/fail/*.loom")
	for _, p := range append(files, more...) {
		b, err := os.ReadFile(p)
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("check.case @c {\n  %v = check.param.range po2 bounds(1 to 64) : index\n  check.return\n}\ncheck.benchmark<@c> @b {v = 8}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Load([]loomrt.Source{{Name: "f.loom", Text: src}})
		if err != nil {
			return
		}
		for _, c := range s.Cases {
			for _, in := range c.Instances() {
				if in.Name() == "" {
					t.Fatal("unnamed sub-case")
				}
			}
		}
	})
}
