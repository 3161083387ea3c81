package ptx

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestCompiledOpsCap: a kernel whose inlining doubles at every level is
// refused past loom.MaxCompiledOps, positioned and naming the inline
// chain, and the same functions inlined twelve levels deep still compile.
func TestCompiledOpsCap(t *testing.T) {
	m := parse(t, "../testdata/refused/inline_doubling.loom")
	if _, err := Compile([]*loom.Module{m}, "doubling_small", Options{}); err != nil {
		t.Fatalf("doubling_small: %v", err)
	}
	_, err := Compile([]*loom.Module{m}, "doubling", Options{})
	if err == nil || !errors.Is(err, ErrUnsupported) ||
		!strings.Contains(err.Error(), "inline_doubling.loom:") ||
		!strings.Contains(err.Error(), "compiles to more than 1048576 operations") ||
		!strings.Contains(err.Error(), "inlining @f19 → @f18 → @f17 → … → ") {
		t.Fatalf("doubling: got %v, want a positioned refusal past 1048576 operations naming the inline chain", err)
	}
}
