package gen

import (
	"bytes"
	"flag"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of gen/testdata")

// copyTree copies a testdata case into dir, dropping the .golden files and
// the .txt suffix that keeps Go files in testdata from being built as such.
func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if strings.HasSuffix(p, ".golden") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, strings.TrimSuffix(rel, ".txt")), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// compareGolden checks got against the golden file, or rewrites it under
// -update.
func compareGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./gen -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test ./gen -update rewrites it):\n%s", golden, UnifiedDiff(golden, "generated", want, got))
	}
}

// generateCase runs the generator the way go generate does in a package
// directory holding the case's files.
func generateCase(t *testing.T, dir, pkg string) ([]byte, bool) {
	t.Helper()
	res, err := Generate(Options{Inputs: []string{"kernels"}, Dir: dir, Package: pkg})
	if err != nil {
		return []byte(err.Error() + "\n"), false
	}
	return res.Source, true
}

// TestGoldenCases generates each case of gen/testdata/cases; a case's
// expected output is loom_gen.go.golden, or errors.golden when generation
// must fail with those messages.
func TestGoldenCases(t *testing.T) {
	cases, err := os.ReadDir("testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, filepath.Join("testdata/cases", c.Name()), dir)
			out, ok := generateCase(t, dir, c.Name())
			golden := filepath.Join("testdata/cases", c.Name(), "loom_gen.go.golden")
			other := filepath.Join("testdata/cases", c.Name(), "errors.golden")
			if !ok {
				golden, other = other, golden
			}
			if _, err := os.Stat(other); err == nil && !*update {
				t.Fatalf("generation ok=%v, but %s exists:\n%s", ok, other, out)
			}
			compareGolden(t, golden, out)
		})
	}
}

// corpusPackage names the package a corpus file is generated into.
func corpusPackage(name string) string {
	if token.IsIdentifier(name) && !token.IsKeyword(name) {
		return name
	}
	return "p"
}

// TestGoldenCorpus generates bindings for every file of the Loom corpus
// (loom/testdata/*.loom), each as kernels/<name>.loom of its own package.
func TestGoldenCorpus(t *testing.T) {
	files, err := filepath.Glob("../loom/testdata/*.loom")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".loom")
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "kernels"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "kernels", name+".loom"), src, 0o644); err != nil {
				t.Fatal(err)
			}
			out, _ := generateCase(t, dir, corpusPackage(name))
			compareGolden(t, filepath.Join("testdata/corpus", name+".golden"), out)
		})
	}
}

// TestDeterministic generates one package twice, with the inputs named in
// different orders and forms, and expects identical bytes.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	copyTree(t, "testdata/cases/multifile", dir)
	a, err := Generate(Options{Inputs: []string{"kernels/rows.loom", "kernels/config.loom"}, Dir: dir, Package: "multifile"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(Options{Inputs: []string{"kernels/*.loom", "kernels"}, Dir: dir, Package: "multifile"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Source, b.Source) {
		t.Fatal(UnifiedDiff("a", "b", a.Source, b.Source))
	}
	if bytes.Contains(a.Source, []byte(dir)) {
		t.Fatal("generated code contains the absolute package directory")
	}
}
