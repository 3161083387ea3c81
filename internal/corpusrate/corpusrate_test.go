package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a/b.loom-test:12:3: use of undefined value %state", "use of undefined value %…"},
		{"x.loom:1:2: %off is an argument of block ^loop", "%… is an argument of block ^…"},
		{"kernel k1: x.loom:1:2: op foo.bar is not supported: interp: unsupported", "op foo.bar is not supported: interp: unsupported"},
		{`x.loom:3:4: ptx: unsupported: buffer.alloca: alloca in memory space "private"`, `ptx: unsupported: buffer.alloca: alloca in memory space "…"`},
		{"x.loom:1:1: index constant 4294966000 does not fit the 32-bit carrier", "index constant N does not fit the N-bit carrier"},
		{"x.loom:1:1: duplicate definition of @f (first defined at x.loom:2:1)", "duplicate definition of @… (first defined at )"},
	} {
		if got := normalize(c.in); got != c.want {
			t.Errorf("normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRun measures testdata/tree: a .loom-test file whose cases cover the
// exclusion rules and a .loom file in a subdirectory.
func TestRun(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run([]string{"-json", "testdata/tree"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	var r Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	// 6 cases and 1 file; the verify case and the SYMBOL case are
	// excluded; the case that is not Loom fails to parse.
	if r.Files != 2 || r.Inputs != 7 || r.Valid != 5 || r.Parsed != 4 || r.Analysed != 4 {
		t.Errorf("files %d inputs %d valid %d parsed %d analysed %d; want 2 7 5 4 4", r.Files, r.Inputs, r.Valid, r.Parsed, r.Analysed)
	}
	if r.Excluded["verify case expects an error"] != 1 || r.Excluded["expects a SYMBOL error"] != 1 {
		t.Errorf("excluded %v", r.Excluded)
	}
	if r.Formatted != 4 || r.Bound != 4 {
		t.Errorf("formatted %d, bindings %d; want the 4 parsed inputs, the 4 analysed", r.Formatted, r.Bound)
	}
	if r.Kernels != 1 || r.CPU != 1 || r.PTX != 1 {
		t.Errorf("kernels %d cpu %d ptx %d; want 1 1 1", r.Kernels, r.CPU, r.PTX)
	}
	g := r.Groups["parse"]
	if len(g) != 1 || g[0].Count != 1 || !strings.HasPrefix(g[0].Examples[0], "testdata/tree/cases.loom-test:58: testdata/tree/cases.loom-test:58:") {
		t.Errorf("parse groups %+v; want one failure at cases.loom-test:58 with the file's own line numbers", g)
	}
	var names []string
	for _, in := range r.List {
		names = append(names, in.Name)
	}
	if want := "testdata/tree/cases.loom-test:5"; len(names) == 0 || names[0] != want {
		t.Errorf("inputs %v; want the first named %s", names, want)
	}

	out.Reset()
	if rc := run([]string{"testdata/tree"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	for _, want := range []string{"valid 5", "parse    4/5 = 80.00%", "format   4/4 = 100.00% of parsed (round trip)", "bindings 4/4 = 100.00% of analysed (go generate)", "cpu      1/1 = 100.00% kernels", "parse failures (1 groups):"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if rc := run([]string{"-list", "parse", "testdata/tree"}, &out, &errb); rc != 0 || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("-list parse: rc %d, output %q", rc, out.String())
	}
	out.Reset()
	if rc := run([]string{"-invalid", "sub/plain.loom", "testdata/tree"}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "excluded: named by -invalid: 1") || !strings.Contains(out.String(), "valid 4") {
		t.Errorf("-invalid: rc %d, output:\n%s", rc, out.String())
	}
	// A package of two files: alone, the kernel's file does not resolve
	// its call; with -packages the directory is one input that compiles.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"testdata/pkg"}, []string{"valid 2", "parse    1/2 = 50.00%", "use of undefined symbol @…"}},
		{[]string{"-packages", "testdata/pkg"}, []string{"inputs 1,", "valid 1", "parse    1/1 = 100.00%", "cpu      1/1 = 100.00% kernels", "ptx      1/1 = 100.00% kernels"}},
	} {
		out.Reset()
		if rc := run(c.args, &out, &errb); rc != 0 {
			t.Fatalf("%v: rc %d", c.args, rc)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out.String())
			}
		}
	}
	// -expected measures the one expected output of a pass case (not Loom).
	out.Reset()
	if rc := run([]string{"-expected", "-list", "parse", "testdata/tree"}, &out, &errb); rc != 0 || !strings.HasPrefix(out.String(), "testdata/tree/cases.loom-test:39: testdata/tree/cases.loom-test:39:") {
		t.Errorf("-expected: rc %d, output %q", rc, out.String())
	}
	if rc := run([]string{"-list", "nothing", "testdata/tree"}, &out, &errb); rc != 2 {
		t.Errorf("-list nothing: rc %d, want 2", rc)
	}
}
