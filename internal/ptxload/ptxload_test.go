package ptxload

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/ptx"
)

func TestWorthCapping(t *testing.T) {
	for _, c := range []struct {
		a       hip.FuncAttributes
		maxRegs int
		want    bool
	}{
		{hip.FuncAttributes{NumRegs: 64, LocalSizeBytes: 2896}, 128, true},
		{hip.FuncAttributes{NumRegs: 64, LocalSizeBytes: 0}, 128, false},  // no spills: keep the occupancy
		{hip.FuncAttributes{NumRegs: 96, LocalSizeBytes: 120}, 96, false}, // already at the bound
		{hip.FuncAttributes{NumRegs: 40, LocalSizeBytes: 16}, 0, false},   // no bound known
	} {
		if got := worthCapping(c.a, c.maxRegs); got != c.want {
			t.Errorf("worthCapping(%+v, %d) = %v, want %v", c.a, c.maxRegs, got, c.want)
		}
	}
}

// TestLoadSpillingKernel loads a kernel of Loom's own corpus whose default
// build spills at 64 registers (ffn_gate_up_swiglu_q6q8: 512 invocations,
// so 128 are allowed) and checks that Load keeps the build with more
// registers and less local memory. It needs an NVIDIA GPU and the
// hrx-system snapshot (LOOM_HRX_DIR).
func TestLoadSpillingKernel(t *testing.T) {
	path := filepath.Join(hrxsamples.Dir, "loom/src/loom/test/corpus/authoring/ffn_gate_up_swiglu_q6q8.loom")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("Loom's corpus is not extracted under %s (%v): NOT COVERED", hrxsamples.Dir, err)
	}
	lib, err := hip.OpenVendor(hip.CUDA)
	if err != nil {
		if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
			t.Skipf("no NVIDIA GPU: %v", err)
		}
		t.Fatal(err)
	}
	ctx, err := lib.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	m, err := loom.ParseFile(path, src)
	if err != nil {
		t.Fatal(err)
	}
	maj, mnr, err := ctx.Device().ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	k, err := ptx.Compile([]*loom.Module{m}, "ffn_gate_up_swiglu_q6q8", ptx.Options{SM: 10*maj + mnr})
	if err != nil {
		t.Fatal(err)
	}
	dmod, dfn, err := load(ctx, []byte(k.PTX), k.Entry)
	if err != nil {
		t.Fatal(err)
	}
	def := dfn.Attributes()
	dmod.Close()
	mod, fn, err := Load(ctx, []byte(k.PTX), []byte(k.CappedPTX()), k.MaxRegs, k.Entry)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	got := fn.Attributes()
	t.Logf("default build: %d registers, %d bytes local; loaded: %d registers, %d bytes local (bound %d)", def.NumRegs, def.LocalSizeBytes, got.NumRegs, got.LocalSizeBytes, k.MaxRegs)
	if !worthCapping(def, k.MaxRegs) {
		t.Skipf("this driver's default build does not spill below the bound: nothing to choose")
	}
	if got.LocalSizeBytes >= def.LocalSizeBytes || got.NumRegs <= def.NumRegs {
		t.Errorf("Load kept a build with %d registers and %d bytes local, default %d and %d", got.NumRegs, got.LocalSizeBytes, def.NumRegs, def.LocalSizeBytes)
	}
}
