package loom

import "strings"

// This file holds what the compiling backends (loom/interp, loom/ptx)
// share: the scope of one kernel's compile and its size limit.

// MaxCompiledOps caps the operations a backend compiles for one kernel,
// counting every inlined call's body and every region compiled more than
// once (an unrolled loop, a loop body compiled again) each time. Inlining
// can grow a kernel exponentially (each function calling the next twice,
// 22 deep, is four million calls); past the cap a backend refuses the
// kernel with a positioned error instead of running out of time or
// memory. The largest kernels we know compile to a few tens of thousands.
const MaxCompiledOps = 1 << 20

// OnlyKernel returns mods with every kernel.def and kernel.decl that does
// not export export left out, from Kernels and from Ops: what a backend
// compiling that one kernel reads, since no kernel refers to another.
// Functions, templates, configs, globals and targets stay. A package's
// kernels are compiled one by one, so lowering and analysing every kernel
// of the package for each of them made compiling a package quadratic in
// its kernels. Modules with nothing to leave out are returned as they are.
func OnlyKernel(mods []*Module, export string) []*Module {
	out := make([]*Module, len(mods))
	for i, m := range mods {
		out[i] = m
		if m == nil {
			continue
		}
		drop := map[*Op]bool{}
		for _, k := range m.Kernels {
			if k != nil && k.Export != export {
				drop[k.Op] = true
			}
		}
		if len(drop) == 0 {
			continue
		}
		nm := *m
		nm.Kernels = nil
		for _, k := range m.Kernels {
			if k == nil || !drop[k.Op] {
				nm.Kernels = append(nm.Kernels, k)
			}
		}
		nm.Ops = nil
		for _, op := range m.Ops {
			if !drop[op] {
				nm.Ops = append(nm.Ops, op)
			}
		}
		out[i] = &nm
	}
	return out
}

// CallChain describes a chain of functions being inlined (symbols without
// '@', outermost first) for an error: "; inlining @a → @b → @c here", the
// middle of a long chain elided, or "" for none.
func CallChain(calls []string) string {
	if len(calls) == 0 {
		return ""
	}
	parts := make([]string, 0, 7)
	for i, c := range calls {
		switch {
		case len(calls) > 6 && i == 3:
			parts = append(parts, "…")
		case len(calls) > 6 && i > 3 && i < len(calls)-3:
		default:
			parts = append(parts, "@"+c)
		}
	}
	return "; inlining " + strings.Join(parts, " → ") + " here"
}
