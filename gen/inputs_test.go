package gen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpandInputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"k/a.loom", "k/b.loom", "k/notes.txt", "other/c.loom", "empty/.keep"} {
		writeFile(t, filepath.Join(dir, f), []byte("\n"))
	}
	rel := func(ps []string) string {
		var out []string
		for _, p := range ps {
			out = append(out, relSlash(dir, p))
		}
		return strings.Join(out, " ")
	}
	got, err := ExpandInputs(dir, []string{"other/c.loom", "k", "k/*.loom"})
	if err != nil {
		t.Fatal(err)
	}
	if rel(got) != "k/a.loom k/b.loom other/c.loom" {
		t.Fatalf("got %s", rel(got))
	}
	_, err = ExpandInputs(dir, []string{"missing.loom", "empty", "k/*.cu", "k"})
	if !errors.Is(err, ErrInput) {
		t.Fatalf("want ErrInput, got %v", err)
	}
	for _, want := range []string{"missing.loom", "empty: directory holds no .loom files", "k/*.cu: pattern matches no files"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := ExpandInputs(dir, nil); !errors.Is(err, ErrInput) {
		t.Fatalf("no inputs: %v", err)
	}
}

func TestLoadPackage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "model.go"), []byte("package model\n\ntype Scale struct{}\n\nvar x, _ = 1, 2\n\nfunc (Scale) Dispatch() {}\n"))
	writeFile(t, filepath.Join(dir, "x_test.go"), []byte("package model_test\n\nfunc Load() {}\n"))
	writeFile(t, filepath.Join(dir, "loom_gen.go"), []byte("package model\n\nfunc Load() {}\n"))
	env := func(k string) string {
		if k == "GOPACKAGE" {
			return "fromenv"
		}
		return ""
	}
	p, err := LoadPackage(PackageOptions{Dir: dir, Output: filepath.Join(dir, "loom_gen.go"), Getenv: env, Workdir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "fromenv" {
		t.Errorf("name %q: $GOPACKAGE should win under go generate", p.Name)
	}
	if d, ok := p.Decls["Scale"]; !ok || d.Kind != "type" || d.Pos.String() != "model.go:3:6" {
		t.Errorf("Scale: %+v", d)
	}
	if _, ok := p.Decls["x"]; !ok {
		t.Error("var x not found")
	}
	if _, ok := p.Decls["Load"]; ok {
		t.Error("Load of the output file or of an external test package counted as existing")
	}
	if _, ok := p.Methods["Scale.Dispatch"]; !ok {
		t.Error("method Scale.Dispatch not found")
	}
	// Without $GOPACKAGE the package clause decides (through go/packages or
	// the files themselves); an empty directory falls back on its name.
	p, err = LoadPackage(PackageOptions{Dir: dir, Getenv: func(string) string { return "" }, Workdir: dir})
	if err != nil || p.Name != "model" {
		t.Errorf("name %q, err %v", p.Name, err)
	}
	empty := filepath.Join(t.TempDir(), "my-kernels")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	p, err = LoadPackage(PackageOptions{Dir: empty, Getenv: func(string) string { return "" }, Workdir: empty})
	if err != nil || p.Name != "mykernels" {
		t.Errorf("name %q, err %v", p.Name, err)
	}
	if _, err := LoadPackage(PackageOptions{Dir: empty, Name: "not-valid"}); !errors.Is(err, ErrPackage) {
		t.Errorf("invalid -pkg: %v", err)
	}
}

func TestWriteIfChanged(t *testing.T) {
	dir := t.TempDir()
	r := &Result{Path: filepath.Join(dir, "loom_gen.go"), Source: []byte("package p\n")}
	if _, err := r.Check(""); !errors.Is(err, ErrStale) {
		t.Fatalf("missing file: %v", err)
	}
	if wrote, err := r.Write(); err != nil || !wrote {
		t.Fatalf("first write: %v %v", wrote, err)
	}
	st1, _ := os.Stat(r.Path)
	if wrote, err := r.Write(); err != nil || wrote {
		t.Fatalf("second write rewrote unchanged bytes: %v %v", wrote, err)
	}
	st2, _ := os.Stat(r.Path)
	if !st1.ModTime().Equal(st2.ModTime()) {
		t.Fatal("modification time changed")
	}
	if diff, err := r.Check(""); err != nil || diff != "" {
		t.Fatalf("up to date: %q %v", diff, err)
	}
	r.Source = []byte("package q\n")
	diff, err := r.Check("loom_gen.go")
	if !errors.Is(err, ErrStale) || !strings.Contains(diff, "-package p\n+package q\n") {
		t.Fatalf("stale: %v\n%s", err, diff)
	}
}

// The kernel reference states the dynamic workgroup storage of a launch.
func TestDocDynamicWorkgroupStorage(t *testing.T) {
	src, err := os.ReadFile("../loom/testdata/dynamic_storage.loom")
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildModel("x", []Source{{Name: "dynamic_storage.loom", Text: src}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderDoc(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Dynamic workgroup storage (bytes per workgroup): `tile*4`.", "Dynamic workgroup storage (bytes per workgroup): `words*4`."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("reference lacks %q:\n%s", want, out)
		}
	}
}

// The kernel reference lists the encoding declarations Config has no
// field for.
func TestDocFixedConfig(t *testing.T) {
	src, err := os.ReadFile("testdata/cases/config_encoding/kernels/quant.loom")
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildModel("x", []Source{{Name: "quant.loom", Text: src}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := RenderDoc(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- `@quant.schema` (`encoding<schema>`, quant.loom:7:1): config.def `#q8_0<block=32>`", "- `@quant.layout` (`encoding<layout>`, quant.loom:10:1): no config.def"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("reference lacks %q:\n%s", want, out)
		}
	}
}
