package hrxsamples

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind runs the finder on a corpus of our own: a verify sample, a
// folded canonicalize case, a rewritten one, and cases it must leave out.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	src := strings.Join([]string{
		"// RUN: pass canonicalize",
		"func.def @folds() -> (i32, vector<2xi1>) {",
		"  %a = scalar.constant 3 : i32",
		"  %r = scalar.addi %a, %a : i32",
		"  %m = vector.constant dense<[true, false]> : vector<2xi1>",
		"  func.return %r, %m : i32, vector<2xi1>",
		"}",
		"// ----",
		"func.def @folds() -> (i32, vector<2xi1>) {",
		"  %s = encoding.define #ggml_q8_0<block_elems=32, storage_bytes=34> : encoding<schema>",
		"  test.use %s : encoding<schema>",
		"  %r = scalar.constant 6 : i32",
		"  %m = vector.constant dense<[true, false]> : vector<2xi1>",
		"  func.return %r, %m : i32, vector<2xi1>",
		"}",
		"// ====",
		"func.def @rewrites() -> (i32) {",
		"  %a = scalar.constant 3 : i32",
		"  func.return %a : i32",
		"}",
		"// ----",
		"func.def @rewrites() -> (i32) {",
		"  %a = scalar.constant 3 : i32",
		"  %b = scalar.addi %a, %a : i32",
		"  func.return %b : i32",
		"}",
		"// ====",
		"func.def @takes_args(%x: i32) -> (i32) {",
		"  func.return %x : i32",
		"}",
		"// ----",
		"func.def @takes_args(%x: i32) -> (i32) {",
		"  func.return %x : i32",
		"}",
	}, "\n")
	verify := strings.Join([]string{
		"// RUN: verify",
		"func.def @sample() -> (i1) {",
		"  %t = scalar.constant true : i1",
		"  func.return %t : i1",
		"}",
		"// ====",
		"// ERROR@+1: TYPE",
		"func.def @bad() -> (i1) {",
		"  func.return",
		"}",
	}, "\n")
	for name, text := range map[string]string{"a.loom-test": src, "b.loom-test": verify} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checks, skipped, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Check{}
	for _, c := range checks {
		got[c.Name] = c
	}
	if len(checks) != 3 {
		t.Fatalf("found %d checks (%v), want folds, rewrites, sample", len(checks), got)
	}
	if c := got["folds"]; c.Rewritten || c.Want == "" || strings.Contains(c.Want, "test.use") || strings.Join(c.Results, ",") != "i32,vector<2xi1>" {
		t.Errorf("folds: %+v", c)
	}
	if c := got["rewrites"]; !c.Rewritten {
		t.Errorf("rewrites: not marked as a rewritten form")
	}
	if c := got["sample"]; c.Want != "" || c.Where != "b.loom-test:2" {
		t.Errorf("sample: %+v", c)
	}
	if why := skipped["b.loom-test:7 @bad"]; !strings.Contains(why, "reject") {
		t.Errorf("bad: skipped as %q, want an expected-error case (skipped: %v)", why, skipped)
	}
	if _, _, err := Find(filepath.Join(dir, "missing")); err == nil {
		t.Error("Find of a missing directory: no error (the executor tests would not skip)")
	}
	text, sizes, err := Wrap(got["folds"].Input, "folds", got["folds"].Results)
	if err != nil || !strings.Contains(text, `export("sample")`) || len(sizes) != 2 || sizes[0] != 4 || sizes[1] != 8 {
		t.Errorf("Wrap: sizes %v, err %v", sizes, err)
	}
	if m := Mismatch([]string{"f32"}, [][]byte{{0, 0, 0xc0, 0x7f}}, [][]byte{{1, 0, 0xc0, 0x7f}}); m != "" {
		t.Errorf("two NaNs differ: %s", m)
	}
	if m := Mismatch([]string{"f32"}, [][]byte{{0, 0, 0, 0}}, [][]byte{{0, 0, 0, 0x80}}); m == "" {
		t.Error("+0 and -0 compare equal")
	}
}

// recorder is a Reporter that keeps what it is told.
type recorder struct{ errs, logs []string }

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

// TestCompare: each outcome of a check is counted and reported, with an
// executor stood in by a table of results per source.
func TestCompare(t *testing.T) {
	errNo := errors.New("no such op")
	word := func(v byte) [][]byte { return [][]byte{{v, 0, 0, 0}} }
	results := map[string][][]byte{"true": word(1), "false": word(0), "seven": word(7), "eight": word(8)}
	run := func(c Check, src string) ([][]byte, error) {
		switch src {
		case "refused":
			return nil, errNo
		case "broken":
			return nil, errors.New("internal error")
		}
		return results[src], nil
	}
	cannot := func(err error) (string, bool) { return err.Error(), errors.Is(err, errNo) }
	i32 := []string{"i32"}
	checks := []Check{
		{Name: "holds", Results: []string{"i1"}, Input: "true"},
		{Name: "fails", Results: []string{"i1"}, Input: "false"},
		{Name: "folds", Results: i32, Input: "seven", Want: "seven"},
		{Name: "rewrites", Results: i32, Input: "eight", Want: "eight", Rewritten: true},
		{Name: "wrong", Results: i32, Input: "seven", Want: "eight"},
		{Name: "unsupported", Results: i32, Input: "refused"},
		{Name: "want_unsupported", Results: i32, Input: "seven", Want: "refused"},
		{Name: "crashes", Results: i32, Input: "broken"},
	}
	var r recorder
	got := Compare(&r, checks, run, cannot)
	want := Counts{Agree: 2, AgreeForm: 1, Disagree: 3, Cannot: 2}
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	errs := strings.Join(r.errs, "\n")
	for _, name := range []string{"@fails", "@wrong: result 0 (i32) lane 0: got 7, want 8", "@crashes: internal error"} {
		if !strings.Contains(errs, name) {
			t.Errorf("errors do not report %s:\n%s", name, errs)
		}
	}
	if len(r.errs) != 3 || len(r.logs) != 2 || !strings.Contains(r.logs[1], "the expected form of") {
		t.Errorf("errors %q, logs %q", r.errs, r.logs)
	}
}
