package ptx

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/loom"
)

// TestHrxSamplesCompile compiles every self-checking function of Loom's own
// tests (hrxsamples.Find, wrapped as in the CPU executor's
// TestHrxSelfCheckingSamples) to PTX: each compiles or is refused with
// ErrUnsupported (or needs a run-time config value), never another error. Without a GPU this checks only the
// compilation, not the values; it skips, uncounted, without the snapshot.
func TestHrxSamplesCompile(t *testing.T) {
	checks, _, err := hrxsamples.Find(hrxsamples.Dir)
	if err != nil {
		t.Skipf("Loom's tests are not extracted under %s (%v): NOT COVERED — these checks did not run", hrxsamples.Dir, err)
	}
	var compiled, refused int
	for _, c := range checks {
		text, _, err := hrxsamples.Wrap(c.Input, c.Name, c.Results)
		if err == nil {
			var m *loom.Module
			if m, err = loom.ParseFile(c.File, []byte(text)); err == nil {
				_, err = Compile([]*loom.Module{m}, "sample", Options{})
			}
		}
		switch {
		case err == nil:
			compiled++
		case errors.Is(err, ErrUnsupported) || errors.Is(err, hrxsamples.ErrType):
			t.Logf("refused %s @%s: %v", c.Where, c.Name, err)
			refused++
		case strings.Contains(err.Error(), "no value supplied"):
			t.Logf("needs a run-time config value %s @%s: %v", c.Where, c.Name, err)
			refused++
		default:
			t.Errorf("%s @%s: %v", c.Where, c.Name, err)
		}
	}
	t.Logf("%d self-checking functions: %d compile to PTX, %d refused as unsupported or needing a config value", len(checks), compiled, refused)
	if len(checks) == 0 {
		t.Fatal("no self-checking functions found")
	}
}
