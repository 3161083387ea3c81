package ptx

import (
	"errors"

	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom"
)

// newCase builds inputs for kd (crosscheck.NewCase: sizes from the
// analysed extents, deterministic values); it returns an error when the
// analyses cannot size the launch (the kernel is then skipped, not
// failed).
func newCase(mods []*loom.Module, kd *loom.Kernel, cfg map[string]loom.Const, seed uint32) (*crosscheck.Case, error) {
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return nil, err
	}
	return crosscheck.NewCase(mods, prog, kd, cfg, seed, 0)
}

// compare checks buffer i as the GPU left it (got) against the CPU
// executor's (want) with crosscheck.Compare, loomdiff's comparison:
// integers and unknown bytes bit for bit, floats bit-exact (any NaN equals
// any NaN, ±0 differ) unless c.Accuracy allows ulps (Classify's, or
// exact where a test chose inputs on which every op is exact).
func compare(c *crosscheck.Case, i int, got, want []byte) error {
	if d := crosscheck.Compare(c, i, got, want); d != nil {
		return errors.New(d.Describe("gpu"))
	}
	return nil
}
