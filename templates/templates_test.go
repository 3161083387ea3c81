package templates

import (
	"bytes"
	"strings"
	"testing"
)

func TestInitFiles(t *testing.T) {
	files, err := Init(InitData{Package: "model", Generate: "go run example.com/loomgen"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"generate.go":        "//go:generate go run example.com/loomgen kernels",
		"kernels/scale.loom": "config.decl @model.block",
		"loom_smoke_test.go": "package model",
	}
	if len(files) != len(want) {
		t.Fatalf("%d files, want %d", len(files), len(want))
	}
	for _, f := range files {
		if !bytes.Contains(f.Text, []byte(want[f.Path])) {
			t.Errorf("%s does not contain %q", f.Path, want[f.Path])
		}
	}
}

func TestDocEscapesCells(t *testing.T) {
	type cfg struct{ Key, GoName, Type, GoType, Doc, Constraints, Default string }
	data := struct {
		Package string
		Sources []string
		Kernels []struct{}
		Config  []cfg
		Fixed   []struct{ Key, Type, Pos, Default string }
	}{Package: "p", Sources: []string{"a.loom"}, Config: []cfg{{Key: "p.x", GoName: "PX", Type: "index", GoType: "int", Doc: "a|b\nc"}}}
	var buf bytes.Buffer
	if err := Doc(&buf, data); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "- `PX`: a\\|b c") {
		t.Fatalf("doc cell not escaped:\n%s", buf.String())
	}
}
