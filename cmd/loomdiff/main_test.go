package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/internal/ptxas/ptxastest"
)

// TestMain lets the test binary stand in for the command when the
// supervisor re-executes itself as a worker.
func TestMain(m *testing.M) {
	if os.Getenv("LOOMDIFF_TEST_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestCPUOnly runs testdata/cases.loom through workers without a GPU:
// each kernel gets the outcome its comment promises.
func TestCPUOnly(t *testing.T) {
	t.Setenv("LOOMDIFF_TEST_AS_COMMAND", "1")
	var out, errs bytes.Buffer
	if code := run([]string{"-json", "-cpu-only", "testdata/cases.loom"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ status, detail string }{
		"double_f32":   {Checked, ""},
		"last_writer":  {Skipped, "data race (undefined results)"},
		"past_the_end": {Skipped, "traps on the CPU executor at every size tried"},
		"sine_f64":     {NotBoth, "ptx: "},
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("%d results, want %d: %+v", len(rep.Results), len(want), rep.Results)
	}
	for _, r := range rep.Results {
		export := r.Name[strings.LastIndexByte(r.Name, '/')+1:]
		w, ok := want[export]
		if !ok {
			t.Errorf("unexpected kernel %s", r.Name)
			continue
		}
		if r.Status != w.status || !strings.Contains(r.Detail, w.detail) {
			t.Errorf("%s: %s %q, want %s %q", export, r.Status, r.Detail, w.status, w.detail)
		}
	}
	if rep.Kernels != 4 || rep.Counts[NotBoth] != 1 || rep.Counts[Skipped] != 2 {
		t.Errorf("counts %+v of %d kernels", rep.Counts, rep.Kernels)
	}
}

// TestStall: a kernel that never ends is given up after -timeout and the
// next kernel runs in a fresh worker.
func TestStall(t *testing.T) {
	t.Setenv("LOOMDIFF_TEST_AS_COMMAND", "1")
	var out, errs bytes.Buffer
	if code := run([]string{"-json", "-cpu-only", "-timeout", "3s", "testdata/stall"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 || rep.Results[0].Status != Skipped || !strings.HasPrefix(rep.Results[0].Detail, "timed out after 3s") ||
		rep.Results[1].Status != Checked {
		t.Fatalf("results %+v", rep.Results)
	}
}

func TestUsage(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), "usage") {
		t.Errorf("exit %d, stderr %q", code, errs.String())
	}
	if code := run([]string{"no/such/dir"}, &out, &errs); code != 1 {
		t.Errorf("missing path: exit %d", code)
	}
}

// TestVerdict: the outcome of a kernel that ran on both backends, for each
// combination of a race, two GPU runs that differ, and a difference from
// the CPU executor; a race is reported as a race even when the GPU's runs
// differ (before, that read "nondeterministic on the GPU").
func TestVerdict(t *testing.T) {
	race := errors.New("view.store races")
	d := &crosscheck.Difference{Name: "out", Type: "i32", CPU: "0x00000003", Other: "0x00000001", Count: 1}
	for _, c := range []struct {
		name         string
		race         error
		rerun, diff  *crosscheck.Difference
		status, want string
	}{
		{"same", nil, nil, nil, Same, ""},
		{"differs", nil, nil, d, Differs, "%out[0] (i32): cpu 0x00000003, gpu 0x00000001; 1 elements differ"},
		{"nondeterministic", nil, d, d, Skipped, "nondeterministic on the GPU: two runs differ at %out[0] (i32): first run 0x00000003, second run 0x00000001"},
		{"race, runs differ", race, d, nil, Skipped, "data race (undefined results): view.store races [the race shows: two GPU runs differ at %out[0] (i32): first run 0x00000003"},
		{"race, hidden", race, nil, nil, Skipped, "[the GPU's result equals the CPU executor's in this run]"},
		{"race, shows", race, nil, d, Skipped, "[the race shows: %out[0] (i32): cpu 0x00000003, gpu 0x00000001"},
	} {
		r := verdict(Result{Name: c.name}, c.race, c.rerun, c.diff)
		if r.Status != c.status || !strings.Contains(r.Detail, c.want) {
			t.Errorf("%s: %s %q, want %s containing %q", c.name, r.Status, r.Detail, c.status, c.want)
		}
	}
}

// TestBrokenInputsNamed: an input that does not analyse is counted, and
// -v says which one and why.
func TestBrokenInputsNamed(t *testing.T) {
	dir := t.TempDir()
	src := "kernel.def export(\"k\") @k() {\n  %c1 = index.constant 1 : index\n  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n} launch(%x: buffer) {\n  func.call @missing() : () -> ()\n  kernel.return\n}\n"
	if err := os.WriteFile(dir+"/bad.loom", []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if code := run([]string{"-v", "-cpu-only", dir + "/bad.loom"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	text := out.String()
	if !strings.Contains(text, "1 inputs that do not parse or analyse") || !strings.Contains(text, "broken      "+dir+"/bad.loom: ") || !strings.Contains(text, "@missing") {
		t.Errorf("output lacks the broken input and its error:\n%s", text)
	}
}

// TestPtxasFlag: with -ptxas, a kernel whose PTX the assembler rejects is
// ptxas-rejects with its message, one it is too old for runs on with a
// note, and a -ptxas that does not run stops loomdiff before any kernel.
func TestPtxasFlag(t *testing.T) {
	t.Setenv("LOOMDIFF_TEST_AS_COMMAND", "1")
	report := func(asm string) Report {
		t.Helper()
		var out, errs bytes.Buffer
		if code := run([]string{"-json", "-cpu-only", "-ptxas", asm, "testdata/cases.loom"}, &out, &errs); code != 0 {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
		var rep Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := report(ptxastest.StandIn(t, "k.ptx, line 7; error : Unknown instruction", 255))
	// The three kernels that compile on both backends are rejected.
	if rep.Counts[Rejected] != 3 || rep.Counts[NotBoth] != 1 {
		t.Errorf("rejecting ptxas: counts %+v", rep.Counts)
	}
	for _, r := range rep.Results {
		if r.Status == Rejected && !strings.Contains(r.Detail, "Unknown instruction") {
			t.Errorf("%s: detail %q lacks ptxas's message", r.Name, r.Detail)
		}
	}
	rep = report(ptxastest.StandIn(t, "ptxas fatal : Unsupported .version 7.8; current version is '7.0'", 255))
	if rep.Counts[Rejected] != 0 || rep.Counts[Checked] != 1 {
		t.Errorf("too-old ptxas: counts %+v", rep.Counts)
	}
	for _, r := range rep.Results {
		if r.Status == Checked && !strings.Contains(strings.Join(r.Notes, ";"), "ptxas too old") {
			t.Errorf("%s: notes %q lack the too-old note", r.Name, r.Notes)
		}
	}
	var out, errs bytes.Buffer
	if code := run([]string{"-cpu-only", "-ptxas", filepath.Join(t.TempDir(), "none"), "testdata/cases.loom"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "does not run") {
		t.Errorf("missing ptxas: exit %d, stderr %q", code, errs.String())
	}
}
