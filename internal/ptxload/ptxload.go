// Package ptxload loads a kernel's PTX through the driver's JIT and, where
// the build spills, tries it again with more registers allowed.
//
// ptxas chooses a kernel's register count itself; given a large static
// workgroup it may stay far below what the workgroup allows and spill to
// local memory (loom/ptx Kernel.MaxRegs). Stating the bound always would
// let ptxas spend registers that kernels which do not spill need for
// occupancy, so the bound is tried only where the default build spills,
// and kept only where it spills less.
package ptxload

import (
	"github.com/loomgen/loomgen/hip"
)

// Load JIT-compiles text and returns its module and the function entry.
// When that build keeps local memory (spills) below maxRegs registers and
// capped is not empty (the same PTX with .maxnreg maxRegs), capped is
// built too, and whichever uses less local memory is kept; the other
// module is closed.
func Load(ctx *hip.Context, text, capped []byte, maxRegs int, entry string) (*hip.Module, *hip.Function, error) {
	mod, fn, err := load(ctx, text, entry)
	if err != nil {
		return nil, nil, err
	}
	if len(capped) == 0 || !worthCapping(fn.Attributes(), maxRegs) {
		return mod, fn, nil
	}
	cmod, cfn, err := load(ctx, capped, entry)
	if err != nil {
		// The default build stands; the capped one is only a try.
		return mod, fn, nil
	}
	if cfn.Attributes().LocalSizeBytes < fn.Attributes().LocalSizeBytes {
		mod.Close()
		return cmod, cfn, nil
	}
	cmod.Close()
	return mod, fn, nil
}

// worthCapping reports whether a build with attributes a spills and uses
// fewer registers than maxRegs allows.
func worthCapping(a hip.FuncAttributes, maxRegs int) bool {
	return a.LocalSizeBytes > 0 && maxRegs > 0 && a.NumRegs < maxRegs
}

func load(ctx *hip.Context, text []byte, entry string) (*hip.Module, *hip.Function, error) {
	mod, err := ctx.LoadModule(text)
	if err != nil {
		return nil, nil, err
	}
	fn, err := mod.Function(entry)
	if err != nil {
		mod.Close()
		return nil, nil, err
	}
	return mod, fn, nil
}
