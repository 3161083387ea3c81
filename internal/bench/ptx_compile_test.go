package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

// TestMatvecsCompileToPTX compiles every mat-vec export of the suite to
// PTX, so a kernel the PTX backend refuses fails here rather than on the
// GPU machine, and checks that the build the runtime launches on device
// allocations (the aligned one) issues the row prefetches ahead of the
// entry's wait for the kernel before, which is what they are for (the
// versioned build waits before its alignment branch). With
// LOOMBENCH_PTX_DIR set it writes the PTX there.
func TestMatvecsCompileToPTX(t *testing.T) {
	m, err := parseKernel("matvec_q.loom")
	if err != nil {
		t.Fatal(err)
	}
	for _, export := range matvecExports {
		k, err := ptx.Compile([]*loom.Module{m}, export, ptx.Options{})
		if err != nil {
			t.Fatalf("%s: %v", export, err)
		}
		wait := strings.Index(k.AlignedPTX, "griddepcontrol.wait")
		if pf := strings.Index(k.AlignedPTX, "prefetch.global.L2"); pf < 0 || wait < pf {
			t.Errorf("%s: the aligned build's first prefetch (at %d) is not ahead of the entry wait (at %d)", export, pf, wait)
		}
		if dir := os.Getenv("LOOMBENCH_PTX_DIR"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, k.Entry+".ptx"), []byte(k.PTX), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
