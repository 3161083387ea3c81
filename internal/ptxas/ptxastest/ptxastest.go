// Package ptxastest runs internal/ptxas from tests: find an assembler or
// skip, and fail the test for each module it rejects.
package ptxastest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/internal/ptxas"
)

// ForTest is ptxas.Find for a test: it skips t without a ptxas and fails
// it on a $LOOM_PTXAS that does not run.
func ForTest(t testing.TB) string {
	t.Helper()
	p, err := ptxas.Find()
	if err != nil {
		t.Fatal(err)
	}
	if p == "" {
		t.Skip("no ptxas ($LOOM_PTXAS or on PATH): nothing assembled")
	}
	return p
}

// Test assembles mods with the ptxas at path, failing t for each module it
// rejects (and when it assembles none) and logging the counts.
func Test(t testing.TB, path string, mods []ptxas.Module) {
	t.Helper()
	r := ptxas.AssembleAll(path, t.TempDir(), mods)
	for _, err := range r.Failed {
		t.Error(err)
	}
	t.Logf("%s assembled %d builds; %d need a newer ptxas (ISA version or target)", path, r.Assembled, r.TooOld)
	if r.Assembled == 0 {
		t.Fatal("ptxas assembled nothing")
	}
}

// StandIn writes a stand-in ptxas for tests of code that runs one: it
// answers --version, and otherwise prints msg and exits with code.
func StandIn(t testing.TB, msg string, code int) string {
	t.Helper()
	dir := t.TempDir()
	p, text := filepath.Join(dir, "ptxas"), filepath.Join(dir, "msg")
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = --version ] && exit 0\ncat '%s' >&2\nexit %d\n", text, code)
	if err := os.WriteFile(text, []byte(msg+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
