package loom

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// positions matches what Dump prints of positions: the line:col opening an
// op line, a region's range, and the definition an operand resolves to.
var positions = regexp.MustCompile(`(?m)^(\s*)\d+:\d+ |\s\d+:\d+-\d+:\d+|@\d+:\d+`)

// structure is Dump without positions: what a re-layout must preserve.
func structure(m *Module) string {
	return positions.ReplaceAllString(Dump(m), "$1")
}

// TestFormatRoundTrip is the round-trip property over every corpus file:
// Format's output parses and checks to the same tree (positions aside) as
// the original, and formatting it again changes nothing.
func TestFormatRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.loom")
	if len(files) < 40 {
		t.Fatalf("corpus has %d files", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, "f.loom", src)
		})
	}
}

func roundTrip(t *testing.T, name string, src []byte) {
	t.Helper()
	m1, err := ParseFile(name, src)
	if err != nil {
		t.Fatalf("original does not parse: %v", err)
	}
	out, err := Format(name, src)
	if err != nil {
		t.Fatalf("Format: %v", err)
	}
	m2, err := ParseFile(name, out)
	if err != nil {
		t.Fatalf("formatted output does not parse: %v\n%s", err, out)
	}
	if a, b := structure(m1), structure(m2); a != b {
		t.Fatalf("formatted output parses differently:\n%s\nformatted:\n%s", firstDiff(a, b), out)
	}
	again, err := Format(name, out)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(out) {
		t.Fatalf("Format is not idempotent:\n%s", firstDiff(string(out), string(again)))
	}
}

// TestFormatLayout checks the canonical layout of the constructs that
// layout freedom admits.
func TestFormatLayout(t *testing.T) {
	src := `// doc of f
func.def @f(%c: i1, %x: f32,
            %v: view<4xf32>) -> (f32) { // header note
  %i = index.constant 0 : index


  %a, %b =
    func.call @g(%x,
                 %x) : (f32, f32) -> (f32, f32)
  scf.if %c { view.store %a, %v[%i] : f32, view<4xf32> }
  %r = scf.if %c -> (f32) {
    scf.yield %a : f32
  } else {scf.yield %b : f32}
  func.return %r : f32
}
func.def @g(%x: f32, %y: f32) -> (f32, f32) {
  func.return %x, %y : f32, f32
}
`
	want := `// doc of f
func.def @f(%c: i1, %x: f32, %v: view<4xf32>) -> (f32) { // header note
  %i = index.constant 0 : index

  %a, %b = func.call @g(%x, %x) : (f32, f32) -> (f32, f32)
  scf.if %c {
    view.store %a, %v[%i] : f32, view<4xf32>
  }
  %r = scf.if %c -> (f32) {
    scf.yield %a : f32
  } else {
    scf.yield %b : f32
  }
  func.return %r : f32
}
func.def @g(%x: f32, %y: f32) -> (f32, f32) {
  func.return %x, %y : f32, f32
}
`
	out, err := Format("t.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	roundTrip(t, "t.loom", []byte(src))
}

// TestFormatDataBlock checks that a target record's data block is copied
// as written and that a comment after its closing brace is kept.
func TestFormatDataBlock(t *testing.T) {
	src := "test.target<low_core> @t {\n    abi = hal_kernel, // the ABI\n  lanes = 64\n} // record\nfunc.decl @f((f32) -> (f32))\n"
	want := "test.target<low_core> @t {\n    abi = hal_kernel, // the ABI\n  lanes = 64\n} // record\nfunc.decl @f((f32) -> (f32))\n"
	out, err := Format("t.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	roundTrip(t, "t.loom", []byte(src))
}

// TestFormatErrors checks that Format reports syntax errors with positions.
func TestFormatErrors(t *testing.T) {
	_, err := Format("t.loom", []byte("func.def @f() {\n  %x = \n"))
	if err == nil || !strings.HasPrefix(err.Error(), "t.loom:") {
		t.Errorf("err = %v", err)
	}
}
