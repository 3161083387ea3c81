package gen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// tempModule makes a module that requires this repository through a
// replace directive, the way a model repository would use a local checkout.
func tempModule(t *testing.T) (dir string, env []string) {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	gomod := "module example.com/m\n\ngo 1.26.0\n\nrequire github.com/loomgen/loomgen v0.0.0\n\nreplace github.com/loomgen/loomgen => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
}

func goCmd(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGeneratedCode puts every golden binding (corpus and cases) into one
// temporary module and requires `go vet` to pass on all of them; generates
// the e2e package and runs its tests on the CPU backend (Go references and
// the mistakes caught at Dispatch, Load and Run); runs go generate on a
// package of several .loom files (testdata/pkg) and its kernels' tests
// against Go references on the CPU backend; and type-checks each
// program of testdata/mistakes, which must fail with the error it names.
func TestGeneratedCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a temporary module")
	}
	mod, env := tempModule(t)
	goldens, _ := filepath.Glob("testdata/corpus/*.golden")
	built := 0
	for _, g := range goldens {
		src, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(src, []byte(Header)) {
			continue // a corpus file generation rejects
		}
		name := strings.TrimSuffix(filepath.Base(g), ".golden")
		loomSrc, err := os.ReadFile(filepath.Join("../loom/testdata", name+".loom"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(mod, "corpus", name, "kernels", name+".loom"), loomSrc)
		writeFile(t, filepath.Join(mod, "corpus", name, DefaultOutput), src)
		built++
	}
	cases, _ := filepath.Glob("testdata/cases/*/loom_gen.go.golden")
	for _, g := range cases {
		caseDir := filepath.Dir(g)
		dst := filepath.Join(mod, "cases", filepath.Base(caseDir))
		copyTree(t, caseDir, dst)
		src, _ := os.ReadFile(g)
		writeFile(t, filepath.Join(dst, DefaultOutput), src)
		built++
	}
	if built < 10 {
		t.Fatalf("only %d golden packages to build", built)
	}
	e2e := filepath.Join(mod, "e2e")
	copyTree(t, "testdata/e2e", e2e)
	res, err := Generate(Options{Inputs: []string{"kernels"}, Dir: e2e, Package: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	// A package of several files (templates, providers, helpers and config
	// in kernels/common.loom, three kernel files using them), generated the
	// way a model repository does it: go generate.
	pkg := filepath.Join(mod, "pkg")
	copyTree(t, "testdata/pkg", pkg)
	if out, err := goCmd(t, mod, env, "generate", "./pkg/"); err != nil {
		t.Fatalf("go generate of the package of several files failed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(pkg, DefaultOutput)); err != nil {
		t.Fatalf("go generate wrote no bindings: %v", err)
	}
	if out, err := goCmd(t, mod, env, "vet", "./..."); err != nil {
		t.Fatalf("go vet of %d generated packages failed:\n%s", built+2, out)
	}
	// Cases with a test of their own run it on their golden bindings.
	if out, err := goCmd(t, mod, env, "test", "-count=1", "./e2e/", "./pkg/", "./cases/vectors/", "./cases/config_encoding/"); err != nil {
		t.Fatalf("e2e tests failed:\n%s", out)
	}

	// Each mistake program is its own package importing the e2e bindings.
	mistakes, _ := filepath.Glob("testdata/mistakes/*.go.txt")
	want := map[string]string{}
	for _, m := range mistakes {
		src, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(src), "\n")
		w, ok := strings.CutPrefix(first, "// want: ")
		if !ok {
			t.Fatalf("%s: first line must be // want: <error text>", m)
		}
		name := strings.TrimSuffix(filepath.Base(m), ".go.txt")
		// The imports every misuse needs; the blank uses keep them used.
		rest = strings.Replace(rest, "package m\n", "package m\n\nimport (\n\te2e \"example.com/m/e2e\"\n\tloomrt \"github.com/loomgen/loomgen/runtime\"\n)\n", 1)
		rest += "\nvar _ loomrt.Region\nvar _ *e2e.Kernels\n"
		writeFile(t, filepath.Join(mod, "mistakes", name, "m.go"), []byte(rest))
		want["example.com/m/mistakes/"+name] = w
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax, Dir: mod, Env: env}, "./mistakes/...")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != len(want) {
		t.Fatalf("loaded %d mistake packages, want %d", len(pkgs), len(want))
	}
	for _, p := range pkgs {
		w := want[p.PkgPath]
		var msgs []string
		for _, e := range p.Errors {
			msgs = append(msgs, e.Msg)
		}
		all := strings.Join(msgs, "\n")
		if len(p.Errors) == 0 {
			t.Errorf("%s type-checks, but the misuse must not compile (want %q)", p.PkgPath, w)
		} else if !strings.Contains(all, w) {
			t.Errorf("%s: errors\n%s\ndo not contain %q", p.PkgPath, all, w)
		}
	}
}
