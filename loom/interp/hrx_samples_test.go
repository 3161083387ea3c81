package interp

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/loom"
)

// TestHrxSelfCheckingSamples runs every self-checking function of Loom's
// own tests (hrxsamples.Find) on the CPU executor and compares its results
// with the values Loom's authors state: true for the i1 samples of verify
// cases, the folded constants (scalar or 1-D vector) for canonicalize
// cases, or, where the canonical form is not only constants, what that
// form returns (a weaker check: both could be wrong alike). The expected
// form is run too (it is Loom source, with its value-less
// encoding/test.use lines blanked), so the constants are read by our
// parser exactly as a kernel's would be. Functions that cannot be compared
// are logged with the reason; the test skips, uncounted, without the
// snapshot.
func TestHrxSelfCheckingSamples(t *testing.T) {
	checks, skipped, err := hrxsamples.Find(hrxsamples.Dir)
	if err != nil {
		t.Skipf("Loom's tests are not extracted under %s (%v): NOT COVERED — these checks did not run", hrxsamples.Dir, err)
	}
	var agree, agreeForm, disagree, cannot, weaker int
	for _, c := range checks {
		got, err := runSample(c.File, c.Input, c.Name, c.Results)
		if err != nil {
			if why, ok := sampleCannotRun(err); ok {
				t.Logf("cannot run %s @%s: %s", c.Where, c.Name, why)
				cannot++
				continue
			}
			t.Errorf("%s @%s: %v", c.Where, c.Name, err)
			disagree++
			continue
		}
		var want [][]byte
		if c.Want == "" {
			want = [][]byte{{1, 0, 0, 0}} // an i1 sample must be true
		} else if want, err = runSample(c.File, c.Want, c.Name, c.Results); err != nil {
			if why, ok := sampleCannotRun(err); ok {
				t.Logf("cannot run the expected form of %s @%s: %s", c.Where, c.Name, why)
				cannot++
				continue
			}
			t.Errorf("%s @%s: expected form: %v", c.Where, c.Name, err)
			disagree++
			continue
		}
		if why := hrxsamples.Mismatch(c.Results, got, want); why != "" {
			if hrxsamples.Probe(c.Input, c.Name) {
				t.Logf("probe precision %s @%s: %s", c.Where, c.Name, why)
				weaker++
				continue
			}
			t.Errorf("%s @%s: %s", c.Where, c.Name, why)
			disagree++
			continue
		}
		if c.Rewritten {
			agreeForm++
			continue
		}
		agree++
	}
	for k, why := range skipped {
		t.Logf("not compared %s: %s", k, why)
	}
	t.Logf("%d self-checking functions: %d agree with the stated value, %d with their (non-constant) canonical form, %d disagree, %d probe answers less precise than Loom's, %d cannot run; %d argument-less functions not compared",
		len(checks), agree, agreeForm, disagree, weaker, cannot, len(skipped))
	if len(checks) == 0 {
		t.Fatal("no self-checking functions found")
	}
}

// sampleCannotRun says whether err means the function cannot run on the
// executor (an op it does not support, a result the wrapper cannot store, a
// run-time config value), and why.
func sampleCannotRun(err error) (string, bool) {
	if errors.Is(err, ErrUnsupported) || errors.Is(err, hrxsamples.ErrType) {
		return err.Error(), true
	}
	if strings.Contains(err.Error(), "no value for config") {
		// A config.decl without a value is set per launch; the sample
		// states what Loom's canonical form keeps, not a value.
		return "reads a run-time config value the sample does not give: " + err.Error(), true
	}
	return "", false
}

// runSample runs func.def @name of src through hrxsamples.Wrap's kernel
// and returns its result buffers.
func runSample(file, src, name string, results []string) ([][]byte, error) {
	text, sizes, err := hrxsamples.Wrap(src, name, results)
	if err != nil {
		return nil, err
	}
	m, err := loom.ParseFile(file, []byte(text))
	if err != nil {
		return nil, err
	}
	k, err := Compile([]*loom.Module{m}, "sample", Options{})
	if err != nil {
		return nil, err
	}
	args := make([]Arg, len(results))
	out := make([][]byte, len(results))
	for i := range results {
		out[i] = make([]byte, sizes[i])
		args[i] = Arg{Buffer: out[i]}
	}
	l := Launch{Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{1, 1, 1}}
	if err := k.Run(l, args); err != nil {
		return nil, err
	}
	return out, nil
}
