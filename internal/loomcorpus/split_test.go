package loomcorpus

import (
	"strings"
	"testing"
)

func TestSplitTest(t *testing.T) {
	src := strings.Join([]string{
		"// RUN: pass fold",         // 1
		"// about the case",         // 2
		"",                          // 3
		"func.def @a() {",           // 4
		"  func.return",             // 5
		"}",                         // 6
		"// ----",                   // 7
		"expected output",           // 8
		"// ====",                   // 9
		"func.def @b() {",           // 10: inherits pass
		"// ERROR@+1: LOWERING",     // 11
		"  func.return",             // 12
		"}",                         // 13
		"// ====",                   // 14
		"// RUN: verify",            // 15
		"// ERROR@+1: TARGET \"x\"", // 16
		"func.def @c()",             // 17
		"// ====",                   // 18
		"// RUN: roundtrip",         // 19
		"// ERROR: \"no domain\"",   // 20
		"func.def @d()",             // 21
		"// ====",                   // 22
		"// only a comment",         // 23
	}, "\n")
	want := []Case{
		{Index: 1, Line: 4, Mode: "pass", Input: "func.def @a() {\n  func.return\n}", Expected: "expected output", ExpectedLine: 8},
		{Index: 2, Line: 10, Mode: "pass", Input: "func.def @b() {\n// ERROR@+1: LOWERING\n  func.return\n}"},
		{Index: 3, Line: 16, Mode: "verify", Input: "// ERROR@+1: TARGET \"x\"\nfunc.def @c()", Excluded: "verify case expects an error"},
		{Index: 4, Line: 20, Mode: "roundtrip", Input: "// ERROR: \"no domain\"\nfunc.def @d()", Excluded: "expects an error without a domain"},
		{Index: 5, Line: 24, Mode: "pass", Excluded: "empty input"},
	}
	got := SplitTest(src)
	if len(got) != len(want) {
		t.Fatalf("got %d cases, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("case %d:\n got %+v\nwant %+v", i+1, got[i], want[i])
		}
	}
}

func TestAnnotation(t *testing.T) {
	for _, c := range []struct {
		line, sev, domain string
		ok                bool
	}{
		{`// ERROR: TYPE/12 "x"`, "ERROR", "TYPE", true},
		{`// ERROR@+2: STRUCTURE`, "ERROR", "STRUCTURE", true},
		{`// ERROR@-1: "text only"`, "ERROR", "", true},
		{`// REMARK: BACKEND`, "REMARK", "BACKEND", true},
		{`// WARNING:`, "WARNING", "", true},
		{`// ERRORS are reported here`, "", "", false},
		{`// an ERROR: in prose`, "", "", false},
		{`%x = scalar.addi %a, %b : i32`, "", "", false},
	} {
		sev, domain, ok := annotation(c.line)
		if sev != c.sev || domain != c.domain || ok != c.ok {
			t.Errorf("annotation(%q) = %q, %q, %v; want %q, %q, %v", c.line, sev, domain, ok, c.sev, c.domain, c.ok)
		}
	}
}
