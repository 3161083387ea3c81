package nativeloop

import (
	"errors"
	"strings"
	"testing"
)

// TestOpenRefuses: without LOOM_NATIVE_LOOP Open says how to build the
// library; with a path that does not load, it says which. (The loops
// themselves need a CUDA device: hip's and runtime's VersusNative
// benchmarks run them.)
func TestOpenRefuses(t *testing.T) {
	t.Setenv("LOOM_NATIVE_LOOP", "")
	if _, err := Open(); !errors.Is(err, ErrNotSet) || !strings.Contains(err.Error(), "native_loop.c") {
		t.Fatalf("unset: %v", err)
	}
	t.Setenv("LOOM_NATIVE_LOOP", "/nonexistent/libnative_loop.so")
	if _, err := Open(); err == nil || errors.Is(err, ErrNotSet) || !strings.Contains(err.Error(), "nativeloop") {
		t.Fatalf("missing library: %v", err)
	}
}
