package loom

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
