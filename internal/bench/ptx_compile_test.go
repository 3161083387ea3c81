package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

// TestMatvecsCompileToPTX compiles every mat-vec export of the suite to
// PTX, so a kernel the PTX backend refuses fails here rather than on the
// GPU machine. With LOOMBENCH_PTX_DIR set it writes the PTX there.
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
		if dir := os.Getenv("LOOMBENCH_PTX_DIR"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, k.Entry+".ptx"), []byte(k.PTX), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
