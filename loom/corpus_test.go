package loom

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/parse/*.golden from the parser's output")

func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*.loom")
	if err != nil || len(files) < 40 {
		t.Fatalf("corpus: %d files, err %v; want at least 40", len(files), err)
	}
	return files
}

// TestCorpusGolden parses every corpus kernel and compares Dump with its
// golden; -update rewrites goldens that changed (and only those).
func TestCorpusGolden(t *testing.T) {
	for _, path := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".loom")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseFile(filepath.ToSlash(path), src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if len(m.Kernels) == 0 {
				t.Errorf("no kernels in %s", path)
			}
			got := []byte(Dump(m))
			golden := filepath.Join("testdata", "parse", name+".golden")
			want, _ := os.ReadFile(golden)
			if *update {
				if !bytes.Equal(got, want) {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("dump differs from %s (run go test ./loom -run TestCorpusGolden -update):\n%s", golden, firstDiff(string(want), string(got)))
			}
		})
	}
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, w, g)
		}
	}
	return ""
}

// TestCorpusResolved checks that every operand and dynamic dimension of the
// corpus resolved to a definition and that every result has a type.
func TestCorpusResolved(t *testing.T) {
	for _, path := range corpusFiles(t) {
		src, _ := os.ReadFile(path)
		m, err := ParseFile(path, src)
		if err != nil {
			t.Fatalf("%v", err)
		}
		var walk func(ops []*Op)
		checkType := func(op *Op, ty *Type) {
			for _, d := range ty.Dims {
				if d.Value != nil && d.Value.Value == nil {
					t.Errorf("%s: %s: dim %%%s unresolved", op.Pos, op.Name, d.Value.Name)
				}
			}
		}
		walk = func(ops []*Op) {
			for _, op := range ops {
				for _, o := range op.Operands {
					if o.Lit == nil && o.Value == nil {
						t.Errorf("%s: %s: operand %%%s unresolved", o.Pos, op.Name, o.Name)
					}
					if !o.Pos.IsValid() {
						t.Errorf("%s: %s: operand without position", op.Pos, op.Name)
					}
				}
				for _, ty := range append(append([]*Type{}, op.Types...), op.ResultTypes...) {
					checkType(op, ty)
					if !ty.Pos.IsValid() {
						t.Errorf("%s: %s: type without position", op.Pos, op.Name)
					}
				}
				if !op.Opaque {
					for _, r := range op.Results {
						if r.Type == nil {
							t.Errorf("%s: %s: result %%%s has no type", r.Pos, op.Name, r.Name)
						}
					}
				}
				for _, r := range op.Regions {
					for _, a := range r.Args {
						if a.Type == nil {
							t.Errorf("%s: region arg %%%s has no type", a.Pos, a.Name)
						}
					}
					walk(r.Ops)
				}
			}
		}
		walk(m.Ops)
	}
}

// TestBadFiles parses every testdata/bad file and expects exactly the error
// written on its first line as `// error: path:line:col: message`.
func TestBadFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.loom")
	if len(files) < 15 {
		t.Fatalf("only %d bad files", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(src), "\n")
			want, ok := strings.CutPrefix(first, "// error: ")
			if !ok {
				t.Fatalf("first line must be // error: …")
			}
			_, err = ParseFile(filepath.ToSlash(path), src)
			if err == nil {
				t.Fatalf("no error; want %s", want)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is %T, want ErrorList", err)
			}
			if got := list[0].Error(); got != want {
				t.Errorf("first error\n got: %s\nwant: %s", got, want)
			}
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrInvalid) {
				t.Errorf("error has no class: %v", err)
			}
		})
	}
}

// BenchmarkParse measures parse+check throughput over the whole corpus.
func BenchmarkParse(b *testing.B) {
	var srcs [][]byte
	var total int64
	for _, path := range corpusFiles(b) {
		src, _ := os.ReadFile(path)
		srcs = append(srcs, src)
		total += int64(len(src))
	}
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, src := range srcs {
			if _, err := ParseFile("bench.loom", src); err != nil {
				b.Fatal(err)
			}
		}
	}
}
