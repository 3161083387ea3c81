package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// TestManualIsPackageDoc keeps -h and the package documentation equal.
func TestManualIsPackageDoc(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Doc.Text(); got != manual {
		t.Errorf("doc.go and manual differ; doc.go:\n%s", got)
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"doc", "-h"}} {
		code, out, _ := runCLI(args...)
		if code != 0 || out != manual {
			t.Errorf("%v: exit %d, manual printed: %v", args, code, out == manual)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{}, {"-nosuchflag", "x.loom"}, {"doc"}, {"init", "a", "b"},
		{"-pkg", "1bad", "x.loom"}, {"doc", "-pkg", "type", "x.loom"}, {"init", "-pkg", "a-b"}} {
		code, _, stderr := runCLI(args...)
		if code != 2 || !strings.Contains(stderr, "loomgen -h") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a pointer to -h", args, code, stderr)
		}
	}
}

const scaleLoom = `// dst[i] = src[i] * k.
kernel.def export("scale_f32") @scale(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 64 : index
  %wgm1 = index.sub %wg, %one : index
  %p = index.add %n, %wgm1 : index
  %g = index.div %p, %wg : index
  kernel.launch.config workgroups(%g, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %k: f32, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  %z = index.constant 0 : offset
  %a = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %b = buffer.view %dst[%z] : buffer -> view<[%n]xf32>
  scf.if %ok {
    %x = view.load %a[%i] : view<[%n]xf32> -> f32
    %y = scalar.mulf %x, %k : f32
    view.store %y, %b[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
`

func TestGenerateCheckDoc(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("kernels", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("kernels/scale.loom", []byte(scaleLoom), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI("-pkg", "model", "-v", "kernels")
	if code != 0 || !strings.Contains(stderr, "wrote loom_gen.go (package model, 1 kernels") {
		t.Fatalf("generate: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI("-pkg", "model", "-v", "kernels/*.loom")
	if code != 0 || !strings.Contains(stderr, "unchanged") {
		t.Fatalf("regenerate: exit %d: %s", code, stderr)
	}
	if code, _, stderr = runCLI("-pkg", "model", "-check", "kernels"); code != 0 {
		t.Fatalf("check of a fresh file: exit %d: %s", code, stderr)
	}
	// A wider scalar parameter, narrowed in the body: the bindings change.
	edited := strings.NewReplacer("%k: f32", "%k: f64",
		"%y = scalar.mulf %x, %k : f32", "%kn = scalar.fptrunc %k : f64 to f32\n    %y = scalar.mulf %x, %kn : f32").Replace(scaleLoom)
	if err := os.WriteFile("kernels/scale.loom", []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("-pkg", "model", "-check", "kernels")
	if code != 1 || !strings.Contains(stdout, "+func (k ScaleF32) Dispatch(n int, k_ float64") || !strings.Contains(stderr, "stale") {
		t.Fatalf("check of a stale file: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("doc", "-pkg", "model", "kernels")
	if code != 0 || !strings.Contains(stdout, "### `scale_f32` → `ScaleF32`") || !strings.Contains(stdout, "| `dst` | `buffer` | `loomrt.Slice[float32]` | write | `n*4` |") {
		t.Fatalf("doc: exit %d: %s\n%s", code, stderr, stdout)
	}
}

func TestInputErrorsAllReported(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bad1 := "kernel.def export(\"a\") @a() {\n  kernel.launch.config workgroups(%x, %x, %x) workgroup_size(%x, %x, %x) : index\n} launch() {\n  kernel.return\n}\n"
	bad2 := "kernel.def @b( {\n"
	for name, src := range map[string]string{"a.loom": bad1, "b.loom": bad2} {
		if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, stderr := runCLI("-pkg", "p", "a.loom", "b.loom", "missing.loom")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr, "missing.loom") {
		t.Fatalf("missing input not reported: %s", stderr)
	}
	code, _, stderr = runCLI("-pkg", "p", "a.loom", "b.loom")
	if code != 1 || !strings.Contains(stderr, "a.loom:2:") || !strings.Contains(stderr, "b.loom:1:") {
		t.Fatalf("exit %d; want positioned errors of both files:\n%s", code, stderr)
	}
	if _, err := os.Stat("loom_gen.go"); err == nil {
		t.Fatal("a failed run wrote output")
	}
}

// TestEndToEnd is the user's path: init a package in a module, go generate,
// go test; then edit a kernel signature without regenerating: -check fails
// and Load fails with the stale-binding error.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go generate and go test in a temporary module")
	}
	root, _ := filepath.Abs("../..")
	mod := t.TempDir()
	gomod := "module example.com/m\n\ngo 1.26.0\n\nrequire github.com/loomgen/loomgen v0.0.0\n\nreplace github.com/loomgen/loomgen => " + root + "\n"
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(mod)
	if code, _, stderr := runCLI("init", "model"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	if code, _, stderr := runCLI("init", "model"); code != 1 || !strings.Contains(stderr, "already holds") {
		t.Fatalf("second init must refuse to overwrite: exit %d %s", code, stderr)
	}
	// go generate must produce the bindings itself.
	if err := os.Remove(filepath.Join("model", "loom_gen.go")); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	gocmd := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := gocmd("generate", "./..."); err != nil {
		t.Fatalf("go generate: %v\n%s", err, out)
	}
	if out, err := gocmd("test", "-count=1", "./..."); err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	kernel := filepath.Join("model", "kernels", "scale.loom")
	src, _ := os.ReadFile(kernel)
	edited := strings.Replace(string(src), "%factor: f32, %src: buffer", "%factor: f32, %bias: f32, %src: buffer", 1)
	if edited == string(src) {
		t.Fatal("scaffold kernel changed; update the edit")
	}
	if err := os.WriteFile(kernel, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir("model")
	if code, _, _ := runCLI("-check", "kernels"); code != 1 {
		t.Fatalf("-check after a signature edit: exit %d, want 1", code)
	}
	t.Chdir(mod)
	out, err := gocmd("test", "-count=1", "./...")
	if err == nil || !strings.Contains(out, "stale generated binding") || !strings.Contains(out, "kernel scale") {
		t.Fatalf("go test with stale bindings must fail at Load with ErrStaleBinding:\n%s", out)
	}
}
