package interp

import (
	"slices"

	"github.com/loomgen/loomgen/loom"
)

// A loop with carried values compiles its body assuming each value that
// starts uniform stays uniform, and compiles it again with those the
// yields made varying, until nothing changes (scfFor, scfWhile). A loop
// nested in such a loop is compiled again with each attempt of the outer
// one; restarting its own fixed point each time from its initial values
// made n nested loops whose carried values start from one uniform value
// cost 2^n compiles of the innermost body. So each loop instance records
// what its latest compile found, and the next compile of the same
// instance starts from there.
//
// That start is exact, not just safe: the same instance is compiled again
// only by a later attempt of a loop around it, whose carried values are
// at least as varying as in the earlier attempt. Uniformity only spreads
// (a value computed from varying operands is varying), so a value the
// earlier compile found varying is varying in the later one too, and the
// later compile reaches the fixed point it would have reached from
// scratch. An instance is a loop op under one chain of inlined call ops:
// the same function inlined at two call sites holds two instances, which
// may differ.

// useLoopHints turns the hints off for TestLoopHintsExact, which compares
// the two.
var useLoopHints = true

// callSite is a call op inlined within the chain of call sites parent.
type callSite struct {
	parent int
	call   *loom.Op
}

// loopInstance is a loop op within the chain of call sites site.
type loopInstance struct {
	site int
	loop *loom.Op
}

// enterCall makes call, inlined at the current chain of call sites, the
// innermost one, and returns the chain to restore when its body is done.
func (c *compiler) enterCall(call *loom.Op) (prev int) {
	if c.sites == nil {
		c.sites = map[callSite]int{}
	}
	k := callSite{c.site, call}
	id, ok := c.sites[k]
	if !ok {
		id = len(c.sites) + 1
		c.sites[k] = id
	}
	prev, c.site = c.site, id
	return prev
}

// loopHint lowers uni, whether each carried value of loop starts uniform,
// by what the latest compile of this instance of loop found.
func (c *compiler) loopHint(loop *loom.Op, uni []bool) {
	if !useLoopHints {
		return
	}
	h := c.carried[loopInstance{c.site, loop}]
	if len(h) != len(uni) {
		return
	}
	for i := range uni {
		uni[i] = uni[i] && h[i]
	}
}

// recordLoop records uni, which carried values of loop a finished compile
// found uniform, for the next compile of this instance.
func (c *compiler) recordLoop(loop *loom.Op, uni []bool) {
	if c.carried == nil {
		c.carried = map[loopInstance][]bool{}
	}
	c.carried[loopInstance{c.site, loop}] = slices.Clone(uni)
}
