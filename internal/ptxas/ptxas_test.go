package ptxas_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/ptxas"
	"github.com/loomgen/loomgen/internal/ptxas/ptxastest"
)

const module = ".version 7.8\n.target sm_90\n.address_size 64\n"

func TestHeader(t *testing.T) {
	if v, tg := ptxas.Header("// x\n\n" + module); v != "7.8" || tg != "sm_90" {
		t.Errorf("Header = %q, %q", v, tg)
	}
	if v, tg := ptxas.Header(".target sm_90\n"); v != "" || tg != "" {
		t.Errorf("Header of a module without .version = %q, %q", v, tg)
	}
}

// TestAssembleClassifies checks how ptxas's answers come back: success,
// a rejection with its message, and a ptxas too old for the module, which
// is ptxas.ErrTooOld and not a failure of the module.
func TestAssembleClassifies(t *testing.T) {
	dir := t.TempDir()
	if err := ptxas.Assemble(ptxastest.StandIn(t, "", 0), dir, module); err != nil {
		t.Errorf("accepted module: %v", err)
	}
	err := ptxas.Assemble(ptxastest.StandIn(t, "k.ptx, line 9; error : Unknown symbol", 1), dir, module)
	if err == nil || errors.Is(err, ptxas.ErrTooOld) || !strings.Contains(err.Error(), "Unknown symbol") {
		t.Errorf("rejected module: %v", err)
	}
	for _, msg := range []string{"ptxas fatal : Unsupported .version 8.0; current version is '7.8'", "ptxas fatal : Value 'sm_90a' is not defined for option 'gpu-name'"} {
		if err := ptxas.Assemble(ptxastest.StandIn(t, msg, 1), dir, module); !errors.Is(err, ptxas.ErrTooOld) {
			t.Errorf("%q: %v, want ptxas.ErrTooOld", msg, err)
		}
	}
	if err := ptxas.Assemble(ptxastest.StandIn(t, "", 0), dir, "no header"); err == nil {
		t.Error("a module without a header was assembled")
	}
	r := ptxas.AssembleAll(ptxastest.StandIn(t, "error : bad", 1), dir, []ptxas.Module{{"a", module}, {"b", module}})
	if r.Assembled != 0 || len(r.Failed) != 2 || !strings.Contains(r.Failed[1].Error(), "b: ptxas") {
		t.Errorf("AssembleAll of two rejected modules: %+v", r)
	}
}

func TestFindBadEnv(t *testing.T) {
	t.Setenv("LOOM_PTXAS", filepath.Join(t.TempDir(), "missing"))
	if p, err := ptxas.Find(); err == nil || p != "" {
		t.Errorf("Find with a missing LOOM_PTXAS = %q, %v", p, err)
	}
	good := ptxastest.StandIn(t, "", 0)
	t.Setenv("LOOM_PTXAS", good)
	if p, err := ptxas.Find(); err != nil || p != good {
		t.Errorf("Find = %q, %v; want %q", p, err, good)
	}
}
