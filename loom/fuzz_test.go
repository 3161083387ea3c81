package loom

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, pattern := range []string{"testdata/*.loom", "testdata/bad/*.loom", "testdata/frontend/*.loom"} {
		files, _ := filepath.Glob(pattern)
		for _, path := range files {
			src, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Add([]byte("view<4x8xf32> vector<[%m]x[%n]xf32> tensor<0xf32, #dense>"))
	f.Add([]byte("%a = \"\\u00e9\\ud83d\\ude00\" 0x1F -1.5e-3 -> {[(<>)]}"))
	// Layouts and signatures of the extended grammar, in small pieces.
	f.Add([]byte("#q8 = #q8_0<block=32>\nfunc.decl @m(%m: index, %t: tile<[%m]xf32, #q8>) -> (%t as tile<[%m]xf32, #q8>, %c: index)\n"))
	f.Add([]byte("func.decl @f(%fn: (f32, i32) -> (f32), %p: pool<[%m]>, %m: index, %g: group<workgroup>, %h: hal.buffer, %v: vector<0xf32>)\n"))
	f.Add([]byte("global.variable @g : view<[%n]xf32, %l> where [mul(%n, 16)] = 0\nfunc.def @u() {\n  %v, %n, %l =\n    global.load @g : view<[%n]xf32, %l>\n  scf.if %c { global.store %v, @g : view<[%n]xf32, %l> } else {test.yield}\n}\n"))
	f.Add([]byte("test.split_func @p(%a: i32) {\n  test.use %a : i32\n} launch {\n  test.yield\n}\n"))
}

// FuzzLex checks that the lexer terminates on any input, ends with EOF,
// and reports errors with a position inside the input.
func FuzzLex(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		toks, _, err := lex("f.loom", src)
		if len(toks) == 0 || toks[len(toks)-1].kind != tEOF {
			t.Fatalf("token stream does not end with EOF")
		}
		for i := 1; i < len(toks); i++ {
			if toks[i].off < toks[i-1].off {
				t.Fatalf("token offsets go backwards at %d", i)
			}
		}
		if err != nil && (err.Pos.Offset < 0 || err.Pos.Offset > len(src) || err.Pos.Line < 1) {
			t.Fatalf("error position %+v outside input of %d bytes", err.Pos, len(src))
		}
	})
}

// FuzzParse checks that ParseFile never panics, that errors are a sorted
// ErrorList of classified diagnostics with positions, and that a file that
// parses cleanly dumps and lowers (Lower) without panicking.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := ParseFile("f.loom", src)
		if m == nil {
			t.Fatal("nil module")
		}
		if err == nil {
			_ = Dump(m)
			formatRoundTrip(t, src, m)
			// The shared lowering (its cfg structuring too) refuses
			// what it cannot rewrite with a positioned error, never by
			// a recovered panic.
			if _, lerr := Lower([]*Module{m}, LowerOptions{}); lerr != nil && strings.Contains(lerr.Error(), "internal error") {
				t.Fatalf("Lower: %v", lerr)
			}
			return
		}
		var list ErrorList
		if !errors.As(err, &list) || len(list) == 0 {
			t.Fatalf("error %T is not a non-empty ErrorList", err)
		}
		for i, e := range list {
			if !e.Pos.IsValid() {
				t.Fatalf("error without position: %v", e)
			}
			if !errors.Is(e, ErrSyntax) && !errors.Is(e, ErrInvalid) {
				t.Fatalf("unclassified error: %v", e)
			}
			if i > 0 && list[i-1].Pos.Offset > e.Pos.Offset {
				t.Fatalf("errors not sorted")
			}
		}
	})
}

// formatRoundTrip checks the round-trip property on a file that parses:
// Format's output parses to the same tree (positions aside) and formats
// to itself.
func formatRoundTrip(t *testing.T, src []byte, m *Module) {
	out, err := Format("f.loom", src)
	if err != nil {
		t.Fatalf("Format fails on a file that parses: %v", err)
	}
	m2, err := ParseFile("f.loom", out)
	if err != nil {
		t.Fatalf("formatted output does not parse: %v\n%s", err, out)
	}
	if a, b := structure(m), structure(m2); a != b {
		t.Fatalf("formatted output parses differently:\n%s\nformatted:\n%s", firstDiff(a, b), out)
	}
	again, err := Format("f.loom", out)
	if err != nil || string(again) != string(out) {
		t.Fatalf("Format is not idempotent (%v):\n%s", err, firstDiff(string(out), string(again)))
	}
}
