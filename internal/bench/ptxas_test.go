package bench

import (
	"io/fs"
	"testing"

	"github.com/loomgen/loomgen/internal/ptxas"
	"github.com/loomgen/loomgen/internal/ptxas/ptxastest"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

// TestSuiteAssembles gives every build of every kernel of the suite (as
// the GPU part compiles them) to NVIDIA's assembler, where one is
// installed: a kernel ptxas rejects fails here, not on a GPU machine.
// Skipped without ptxas ($LOOM_PTXAS or on PATH).
func TestSuiteAssembles(t *testing.T) {
	path := ptxastest.ForTest(t)
	files, err := fs.Glob(kernelFS, "kernels/*.loom")
	if err != nil || len(files) == 0 {
		t.Fatalf("no embedded kernels (%v)", err)
	}
	var mods []ptxas.Module
	for _, f := range files {
		m, err := parseKernel(f[len("kernels/"):])
		if err != nil {
			t.Fatal(err)
		}
		for _, kd := range m.Kernels {
			k, err := ptx.Compile([]*loom.Module{m}, kd.Export, ptx.Options{})
			if err != nil {
				t.Fatalf("%s: %v", kd.Export, err)
			}
			mods = append(mods, ptxas.Builds(kd.Export, [4]string{k.PTX, k.AlignedPTX, k.CappedPTX(), k.CappedAlignedPTX()})...)
		}
	}
	ptxastest.Test(t, path, mods)
}
