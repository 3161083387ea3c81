package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestTestCommand(t *testing.T) {
	t.Setenv("LOOM_BACKEND", "")
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		says   []string
	}{
		{"failing cases", []string{"test", "-backend", "cpu", "../../checkrun/testdata/fail"}, exitError,
			[]string{"FAIL wrong_equal: ", "element 1: got 2, want 2.25", "PASS racy_kernel ", "SKIP npy_fixture: ", "cpu: 1 passed, 8 failed, 0 errors, 3 skipped in "}},
		{"passing cases", []string{"test", "-backend", "cpu", "-run", `^(saxpy_sizes|nan_same|slot_race_reported)`, "../../checkrun/testdata"}, exitOK,
			[]string{"PASS saxpy_sizes[n=65] ", "PASS slot_race_reported ", "cpu: 7 passed, 0 failed, 0 errors, 0 skipped"}},
		{"race", []string{"test", "-race", "-run", "^racy_kernel$", "../../checkrun/testdata/fail/wrong.loom"}, exitError,
			[]string{"FAIL racy_kernel: unexpected sanitizer report: tsan_report"}},
		{"bench", []string{"test", "-backend", "cpu", "-bench", "-run", "^saxpy_tail$", "../../checkrun/testdata"}, exitOK,
			[]string{"BENCH saxpy_tail saxpy_sizes[n=65] ", " ns/op ", " GB/s"}},
		{"no inputs", []string{"test"}, exitUsage, nil},
		{"bad regexp", []string{"test", "-run", "(", "x.loom"}, exitUsage, nil},
		{"race on cuda", []string{"test", "-race", "-backend", "cuda", "../../checkrun/testdata"}, exitError, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if st := run(tc.args, &out, &errb); st != tc.status {
				t.Fatalf("status %d, want %d\nstdout:\n%s\nstderr:\n%s", st, tc.status, out.String(), errb.String())
			}
			for _, s := range tc.says {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output does not say %q:\n%s", s, out.String())
				}
			}
		})
	}
}

func TestTestCommandJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if st := run([]string{"test", "-json", "-backend", "cpu", "-run", "^(wrong_scalar|declared_only)$", "../../checkrun/testdata/fail"}, &out, &errb); st != exitError {
		t.Fatalf("status %d: %s", st, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 JSON lines, got:\n%s", out.String())
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		for _, k := range []string{"case", "params", "backend", "status", "elapsed_ns"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %q", l, k)
			}
		}
	}
}
