package ptx

import (
	"errors"

	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// A case is one kernel with deterministic inputs: workload values, launch
// arguments (scalars at carrier width, buffers as bytes), the geometry from
// the kernel's own launch config, and the element type of each buffer.
type kcase struct {
	name   string
	mods   []*loom.Module
	kd     *loom.Kernel
	cfg    map[string]loom.Const
	args   []interp.Arg
	elems  []*loom.Type // per launch param: buffer element type or nil
	launch interp.Launch
	// acc is how far GPU floats may lie from the CPU executor's: the
	// accuracy crosscheck.Classify gives the kernel (what loomdiff holds it
	// to), or exact where a test chose inputs on which every op is exact.
	acc crosscheck.Accuracy
}

// newCase builds inputs for kd (crosscheck.NewCase: sizes from the
// analysed extents, deterministic values); it returns an error when the
// analyses cannot size the launch (the kernel is then skipped, not
// failed).
func newCase(mods []*loom.Module, kd *loom.Kernel, cfg map[string]loom.Const, seed uint32) (*kcase, error) {
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil, err
	}
	cc, err := crosscheck.NewCase(mods, prog, kd, cfg, seed, 0)
	if err != nil {
		return nil, err
	}
	return &kcase{name: kd.Export, mods: mods, kd: kd, cfg: cfg, args: cc.Args, elems: cc.Elems, launch: cc.Launch, acc: cc.Accuracy}, nil
}

// compare checks buffer i as the GPU left it (got) against the CPU
// executor's (want) with crosscheck.Compare, loomdiff's comparison:
// integers and unknown bytes bit for bit, floats bit-exact (any NaN equals
// any NaN, ±0 differ) unless c.acc allows ulps.
func compare(c *kcase, i int, got, want []byte) error {
	cc := &crosscheck.Case{Kernel: c.kd, Elems: c.elems, Accuracy: c.acc}
	if d := crosscheck.Compare(cc, i, got, want); d != nil {
		return errors.New(d.Describe("gpu"))
	}
	return nil
}
