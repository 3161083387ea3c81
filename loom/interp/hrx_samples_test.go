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
	n := hrxsamples.Compare(t, checks, func(c hrxsamples.Check, src string) ([][]byte, error) {
		return runSample(c.File, src, c.Name, c.Results, false)
	}, sampleCannotRun)
	for k, why := range skipped {
		t.Logf("not compared %s: %s", k, why)
	}
	t.Logf("%d self-checking functions: %v; %d argument-less functions not compared", len(checks), n, len(skipped))
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

// TestHrxSamplesShared runs the same samples with every op the shared
// lowering knows rewritten by it (loom.Lower with nothing native), as the
// PTX backend compiles them, on exactly rounded building blocks: the
// shared forms (signs, rotates, turns, softplus, gelu, pow, sin, cos,
// clamps) must give Loom's stated values where the native forms do.
func TestHrxSamplesShared(t *testing.T) {
	checks, _, err := hrxsamples.Find(hrxsamples.Dir)
	if err != nil {
		t.Skipf("Loom's tests are not extracted under %s (%v): NOT COVERED — these checks did not run", hrxsamples.Dir, err)
	}
	n := hrxsamples.Compare(t, checks, func(c hrxsamples.Check, src string) ([][]byte, error) {
		return runSample(c.File, src, c.Name, c.Results, true)
	}, sampleCannotRun)
	t.Logf("%d self-checking functions through the shared lowering: %v", len(checks), n)
}

// runSample runs func.def @name of src through hrxsamples.Wrap's kernel
// and returns its result buffers; with shared, the module is lowered with
// no op native first.
func runSample(file, src, name string, results []string, shared bool) ([][]byte, error) {
	text, sizes, err := hrxsamples.Wrap(src, name, results)
	if err != nil {
		return nil, err
	}
	m, err := loom.ParseFile(file, []byte(text))
	if err != nil {
		return nil, err
	}
	mods := []*loom.Module{m}
	if shared {
		if mods, err = loom.Lower(mods, loom.LowerOptions{}); err != nil {
			return nil, err
		}
	}
	k, err := Compile(mods, "sample", Options{})
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
