package interp

import "github.com/loomgen/loomgen/loom"

// Lazy affine lanes. A lane-affine index register (work-item and dispatch
// ids along x, an affine index plus a uniform) is often read only through
// its affine facts: affineCmp turns it into a lane range, contiguous turns
// a load or store into one block. Writing its lanes is then wasted work.
//
// The producer of such a register is a candidate; every consumer that
// reads only the meta on its fast path, and writes the lanes (writeAffine)
// before any path that reads them, records its use. After the kernel is
// compiled, a candidate whose every use (counted by name in its top-level
// op, so aliases, yields, calls and type dimensions all count and block)
// is such a recorded use gets lazyAff: its producer leaves the lanes
// unwritten and marks the meta so.

// metaReg records that operand pos of op reads slot s through its meta.
// depth is how many inlined calls enclose op: names are local to their
// function, so only uses at the producer's depth are its uses by name (a
// callee's parameter may share the name of the argument's producer, and
// its uses are not the call's).
type metaReg struct {
	s     *slot
	op    *loom.Op
	pos   int
	depth int
}

// lazyCand is a producer that can leave its lanes unwritten.
type lazyCand struct {
	s     *slot
	op    *loom.Op
	name  string
	depth int
}

// metaUse records a meta-reading use of s as operand pos of op.
func (c *compiler) metaUse(s *slot, op *loom.Op, pos int) {
	if pos < len(op.Operands) {
		c.metaRegs = append(c.metaRegs, metaReg{s, op, pos, len(c.calls)})
	}
}

// lazyCandidate records r, op's first result, as a producer that may stay
// unwritten.
func (c *compiler) lazyCandidate(r *slot, op *loom.Op) {
	if len(op.Results) > 0 {
		c.lazyCands = append(c.lazyCands, lazyCand{r, op, op.Results[0].Name, len(c.calls)})
	}
}

// markLazy sets lazyAff on the candidates all of whose uses read the meta.
// The recorded uses are grouped by slot first, so that each candidate
// looks only at its own (a scan of every use per candidate was quadratic
// in the kernel's length).
func (c *compiler) markLazy() {
	bySlot := map[*slot][]metaReg{}
	for _, m := range c.metaRegs {
		bySlot[m.s] = append(bySlot[m.s], m)
	}
	for _, lc := range c.lazyCands {
		n := c.uses[lc.op][lc.name]
		seen := map[metaReg]bool{}
		for _, m := range bySlot[lc.s] {
			if m.depth == lc.depth && m.op.Operands[m.pos].Name == lc.name {
				seen[metaReg{nil, m.op, m.pos, 0}] = true
			}
		}
		if n > 0 && len(seen) == n {
			lc.s.lazyAff = true
		}
	}
}
