package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom/ptx"
)

// TestPTXRefusalNamesKernelAndOp: a kernel loom/ptx does not lower fails
// with the op and its position, and says how to run it on the CPU; the
// request's SM reaches the compiler.
func TestPTXRefusalNamesKernelAndOp(t *testing.T) {
	if ptxCompiler == nil {
		t.Skip("no PTX compiler registered")
	}
	src := []byte(`kernel.def export("opaque") @opaque(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index) {
  %i = kernel.workitem.dispatch.id<x> : index
  vendor.thing %i : index
  kernel.return
}
`)
	p, err := parseSources([]Source{{Name: "opaque.loom", Text: src}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ptxCompiler(&kernelRequest{Modules: p.mods, Export: "opaque"})
	if !errors.Is(err, ptx.ErrUnsupported) {
		t.Fatalf("got %v, want ptx.ErrUnsupported", err)
	}
	for _, want := range []string{"opaque.loom:6:", "vendor.thing", `Backend "cpu"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The device's compute capability is the target; below sm_80 is refused.
	nop := []byte(`kernel.def export("nop") @nop() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%buf: buffer) {
  kernel.return
}
`)
	p, err = parseSources([]Source{{Name: "nop.loom", Text: nop}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ptxCompiler(&kernelRequest{Modules: p.mods, Export: "nop", SM: 89})
	if err != nil || !strings.Contains(string(c.text), ".target sm_89") {
		t.Errorf("SM 89: %v", err)
	}
	// One invocation a workgroup allows 255 registers: nothing to cap.
	if len(c.capped) > 0 || c.maxRegs != 0 {
		t.Errorf("a one-invocation workgroup got a register cap of %d", c.maxRegs)
	}
	if _, err := ptxCompiler(&kernelRequest{Modules: p.mods, Export: "nop", SM: 75}); !errors.Is(err, ptx.ErrUnsupported) {
		t.Errorf("SM 75: %v", err)
	}
}
