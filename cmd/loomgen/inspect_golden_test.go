package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/gen"
)

var updateInspect = flag.Bool("update", false, "rewrite testdata/inspect/*.json from loomgen inspect -json")

// TestInspectJSONGoldens runs `loomgen inspect -json` on every file of the
// loom corpus and compares the report with testdata/inspect/<name>.json
// (go test ./cmd/loomgen -run TestInspectJSONGoldens -update rewrites the
// goldens that changed).
func TestInspectJSONGoldens(t *testing.T) {
	files, err := filepath.Glob("../../loom/testdata/*.loom")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".loom")
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runInspect([]string{"-json", path}, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			golden := filepath.Join("testdata", "inspect", name+".json")
			want, _ := os.ReadFile(golden)
			if *updateInspect {
				if !bytes.Equal(out.Bytes(), want) {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("inspect -json of %s differs from %s (run go test ./cmd/loomgen -run TestInspectJSONGoldens -update after checking):\n%s",
					path, golden, gen.UnifiedDiff(golden, "inspect -json", want, out.Bytes()))
			}
		})
	}
}
