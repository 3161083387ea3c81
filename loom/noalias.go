package loom

import "sort"

// NoaliasParams lists, in order, the launch parameters of k that its body
// (or a function it calls) puts under buffer.assume.noalias, directly or
// through the other buffer.assume ops. Loom's noalias is the author's
// promise that no other root reaches the buffer's memory; a backend may
// rely on it (the PTX backend reads such a buffer, when the kernel only
// reads it, through the non-coherent path), so a runtime should refuse
// bindings that break it.
func (p *Program) NoaliasParams(k *Kernel) []int {
	if k == nil || k.Body == nil {
		return nil
	}
	w := &noaliasWalk{p: p, found: map[int]bool{}, depth: map[*Func]int{}}
	roots := map[*Value]int{}
	for i, vs := range bodyArgs(k.Body.Args, k.Launch) {
		for _, v := range vs {
			roots[v] = i
		}
	}
	w.region(k.Body, roots)
	out := make([]int, 0, len(w.found))
	for i := range w.found {
		out = append(out, i)
	}
	sort.Ints(out)
	return out
}

// noaliasWalk follows launch parameters (by index) through assume ops and
// calls to the buffer.assume.noalias ops that take them.
type noaliasWalk struct {
	p     *Program
	found map[int]bool
	depth map[*Func]int // calls being walked, against recursion
}

func (w *noaliasWalk) region(r *Region, roots map[*Value]int) {
	if r == nil {
		return
	}
	for _, op := range r.Ops {
		switch op.Name {
		case "buffer.assume.noalias", "buffer.assume.alignment", "buffer.assume.memory_space", "buffer.assume.same_root":
			for i, o := range op.Operands {
				idx, ok := roots[o.Value]
				if !ok || o.Value == nil {
					continue
				}
				if op.Name == "buffer.assume.noalias" {
					w.found[idx] = true
				}
				if i < len(op.Results) {
					roots[op.Results[i]] = idx
				}
			}
		case "func.call":
			f := w.p.Func(op.Symbol)
			if f == nil || f.Body == nil || w.depth[f] > 0 {
				break
			}
			inner := map[*Value]int{}
			params := bodyArgs(f.Body.Args, f.Params)
			for i, o := range op.Operands {
				if idx, ok := roots[o.Value]; ok && o.Value != nil && i < len(params) {
					for _, v := range params[i] {
						inner[v] = idx
					}
				}
			}
			if len(inner) > 0 {
				w.depth[f]++
				w.region(f.Body, inner)
				w.depth[f]--
			}
		}
		for _, sub := range op.Regions {
			w.region(sub, roots)
		}
	}
}
