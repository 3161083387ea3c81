package interp

import (
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// loadCorpus parses every loom/testdata/*.loom file that parses cleanly.
func loadCorpus(t *testing.T) map[string]*loom.Module {
	t.Helper()
	paths, err := filepath.Glob("../testdata/*.loom")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*loom.Module{}
	for _, p := range paths {
		m, err := loom.ParseFiles(p)
		if err != nil {
			t.Logf("skip %s: %v", p, err)
			continue
		}
		out[filepath.Base(p)] = m[0]
	}
	return out
}

func TestCorpusCompiles(t *testing.T) {
	for name, m := range loadCorpus(t) {
		for _, k := range m.Kernels {
			if k.Decl {
				continue
			}
			_, err := Compile([]*loom.Module{m}, k.Export, Options{})
			t.Logf("%s %s: %v", name, k.Export, err)
		}
	}
}
