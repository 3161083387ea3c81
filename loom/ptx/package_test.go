package ptx

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// The kernels of a package of several files (gen/testdata/pkg: templates,
// providers, helpers and config in common.loom) compile with the other
// files' symbols.
func TestCompilePackageOfSeveralFiles(t *testing.T) {
	paths, err := filepath.Glob("../../gen/testdata/pkg/kernels/*.loom")
	if err != nil || len(paths) != 4 {
		t.Fatalf("package files %v, %v", paths, err)
	}
	mods, err := loom.ParseFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	for _, export := range []string{"addf", "axpy", "rowsum"} {
		k, err := Compile(mods, export, Options{})
		if err != nil {
			t.Errorf("%s: %v", export, err)
			continue
		}
		if !strings.Contains(k.PTX, ".visible .entry "+k.Entry) {
			t.Errorf("%s: no entry in the PTX", export)
		}
	}
	// One file alone does not compile: its symbols are in common.loom.
	if _, err := loom.ParseFiles(paths[0]); err == nil {
		t.Errorf("%s alone parsed without its package", paths[0])
	}
}
