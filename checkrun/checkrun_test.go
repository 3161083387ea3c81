package checkrun

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	loomrt "github.com/loomgen/loomgen/runtime"
)

func loadDir(t *testing.T, pattern string) *Suite {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no files for %s", pattern)
	}
	s, err := LoadFiles(files)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func results(t *testing.T, s *Suite, opts Options) map[string]Result {
	t.Helper()
	if opts.Backend == "" {
		opts.Backend = "cpu"
	}
	r, err := NewRunner(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := map[string]Result{}
	for _, res := range r.RunAll() {
		out[res.Name()] = res
	}
	return out
}

// TestOwnCases runs our check files: every case passes, except those
// whose requirement providers loomgen does not have, which skip saying so.
func TestOwnCases(t *testing.T) {
	skips := map[string]string{
		"unknown_provider":      "check.requires<vendor.feature>",
		"unknown_skip_provider": "fixture too large",
	}
	got := results(t, loadDir(t, "testdata/*.loom"), Options{})
	if len(got) < 25 {
		t.Fatalf("%d sub-cases, want the 25+ of testdata", len(got))
	}
	for name, res := range got {
		if want, ok := skips[name]; ok {
			if res.Status != Skip || !strings.Contains(res.Reason, want) {
				t.Errorf("%s: %s %q, want SKIP mentioning %q", name, res.Status, res.Reason, want)
			}
			continue
		}
		if res.Status != Pass {
			t.Errorf("%s: %s %s", name, res.Status, res.Reason)
		}
	}
	// Sweeps expand into sub-cases named by their values.
	for _, name := range []string{"saxpy_sizes[n=65]", "double_i32_po2[n=128]", "matmul_reference[m=16,n=7]", "matmul_random[seed=8]"} {
		if _, ok := got[name]; !ok {
			t.Errorf("no sub-case %s", name)
		}
	}
	if got["slot_race_reported"].Backend != "cpu+sanitizer" {
		t.Errorf("slot_race_reported ran on %s, want the sanitized cpu session", got["slot_race_reported"].Backend)
	}
}

// TestMustFail asserts the outcome of each case of testdata/fail and that
// its message says what went wrong.
func TestMustFail(t *testing.T) {
	want := map[string]struct {
		st   Status
		says []string
	}{
		"wrong_equal":              {Fail, []string{"wrong.loom:69:3: check.expect.equal", "7 of 8 elements differ", "element 1: got 2, want 2.25", "3 more"}},
		"wrong_close":              {Fail, []string{"element 0: got 1.5, want 1.25", "|diff| 0.25 > atol 0.1 + rtol 0.01"}},
		"wrong_bitwise":            {Fail, []string{"check.expect.bitwise", "bits 0x80000000, want 0x0"}},
		"wrong_scalar":             {Fail, []string{"got 3, want 4"}},
		"wrong_shape":              {Fail, []string{"shape [2 3], want [3 2]"}},
		"race_unexpected":          {Fail, []string{"1 matching events, want 0", "tsan_report: data_race read of 4 bytes at workgroup offset 4", "races with write"}},
		"race_expected_but_absent": {Fail, []string{"0 matching events, want 1", "reported nothing"}},
		"racy_kernel":              {Pass, nil}, // no sanitizer asked for: the race goes unseen
		"out_of_bounds":            {Fail, []string{"func.call @read_past_end", "buffer %src holds 16 bytes; the kernel's views span 20 bytes"}},
		"declared_only":            {Skip, []string{"only calls of a kernel.def", "func.decl"}},
		"npy_fixture":              {Skip, []string{"check.file.read.npy is not supported"}},
		"unknown_oracle":           {Skip, []string{"check.oracle.call<reference.scalar>: provider not supported"}},
	}
	got := results(t, loadDir(t, "testdata/fail/*.loom"), Options{})
	if len(got) != len(want) {
		t.Errorf("%d results, want %d", len(got), len(want))
	}
	for name, w := range want {
		res, ok := got[name]
		if !ok {
			t.Errorf("%s: no result", name)
			continue
		}
		if res.Status != w.st {
			t.Errorf("%s: %s %q, want %s", name, res.Status, res.Reason, w.st)
		}
		for _, s := range w.says {
			if !strings.Contains(res.Reason, s) {
				t.Errorf("%s: reason %q does not say %q", name, res.Reason, s)
			}
		}
	}
}

// TestRaceOption: under Options.Race every case runs checked, so the racy
// kernel that passes unchecked fails with its tsan report.
func TestRaceOption(t *testing.T) {
	got := results(t, loadDir(t, "testdata/fail/*.loom"), Options{Race: true, Run: regexp.MustCompile(`^racy_kernel$`)})
	res := got["racy_kernel"]
	if len(got) != 1 || res.Status != Fail || !strings.Contains(res.Reason, "unexpected sanitizer report: tsan_report: data_race") {
		t.Fatalf("racy_kernel under Race: %+v", got)
	}
	// Clean kernels stay clean in the checked mode.
	for name, res := range results(t, loadDir(t, "testdata/*.loom"), Options{Race: true, Run: regexp.MustCompile(`matmul|saxpy|rotate`)}) {
		if res.Status != Pass || res.Backend != "cpu+sanitizer" {
			t.Errorf("%s under Race: %s on %s: %s", name, res.Status, res.Backend, res.Reason)
		}
	}
}

func TestBench(t *testing.T) {
	s := loadDir(t, "testdata/*.loom")
	r, err := NewRunner(s, Options{Backend: "cpu", Run: regexp.MustCompile(`^saxpy_tail$`)})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []BenchResult
	for _, b := range s.Benchmarks {
		got = append(got, r.Bench(b)...)
	}
	if len(got) != 1 || got[0].Status != Pass || got[0].NsPerOp <= 0 || got[0].BytesPerOp != 3*65*4 || got[0].Params != "n=65" {
		t.Fatalf("saxpy_tail: %+v", got)
	}
}

// TestLoadErrors: malformed suites are errors with positions.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown case", "check.benchmark<@nope> @b\n", "x.loom:1:1: check.benchmark<@nope>: no check.case @nope"},
		{"bad choice", "check.case @c {\n  %v = check.param.choice values([1.5]) : index\n  check.return\n}\n", "x.loom:2:3: check.param.choice: value 1.5 is not an integer"},
		{"foreign param", "check.case @c {\n  check.return\n}\ncheck.benchmark<@c> @b {n = 4}\n", "@c has no parameter \"n\""},
		{"value not swept", "check.case @c {\n  %n = check.param.choice values([1, 2]) : index\n  check.return\n}\ncheck.benchmark<@c> @b {n = 4}\n", "n = 4 is not one of the values @c sweeps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "x.loom")
			os.WriteFile(p, []byte(tc.src), 0o644)
			_, err := LoadFiles([]string{p})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestOwnCasesOnGPU runs our check files on the GPU backend, when there is
// one, and compares each outcome with the CPU's: every case that passes on
// the CPU passes there too; cases expecting sanitizer events, the cpu-only
// case and the one that skips on cuda are skipped with their reason; and
// wrong expectations fail
// with the same diff.
func TestOwnCasesOnGPU(t *testing.T) {
	s, err := loomrt.Open(loomrt.Options{Backend: "cuda"})
	if err != nil {
		t.Skipf("no cuda backend: %v", err)
	}
	s.Close()
	suite := loadDir(t, "testdata/*.loom")
	cpu := results(t, suite, Options{Backend: "cpu"})
	gpu := results(t, suite, Options{Backend: "cuda"})
	passed := 0
	for name, c := range cpu {
		g, ok := gpu[name]
		switch {
		case !ok:
			t.Errorf("%s: no cuda result", name)
		case c.Backend == "cpu+sanitizer":
			if g.Status != Skip || !strings.Contains(g.Reason, "has none") {
				t.Errorf("%s on cuda: %s %q, want SKIP (no sanitizer)", name, g.Status, g.Reason)
			}
		case name == "cpu_only" || name == "not_on_cuda":
			if g.Status != Skip {
				t.Errorf("%s on cuda: %s, want SKIP", name, g.Status)
			}
		case g.Status != c.Status:
			t.Errorf("%s: cuda %s %q, cpu %s %q", name, g.Status, g.Reason, c.Status, c.Reason)
		case g.Status == Pass:
			passed++
			t.Logf("%s: cpu %v, cuda %v", name, c.Elapsed, g.Elapsed)
		}
	}
	t.Logf("%d sub-cases pass on cuda as on cpu", passed)
	fail := results(t, loadDir(t, "testdata/fail/*.loom"), Options{Backend: "cuda", Run: regexp.MustCompile(`^wrong_(equal|close|bitwise)$`)})
	cpuFail := results(t, loadDir(t, "testdata/fail/*.loom"), Options{Backend: "cpu", Run: regexp.MustCompile(`^wrong_(equal|close|bitwise)$`)})
	for name, c := range cpuFail {
		if g := fail[name]; g.Status != Fail || g.Reason != c.Reason {
			t.Errorf("%s: cuda %s %q, cpu %s %q", name, g.Status, g.Reason, c.Status, c.Reason)
		}
	}
}
