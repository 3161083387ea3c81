package interp

import (
	"errors"
	"unsafe"
)

// A batch (batch.go) runs its workgroups' instructions interleaved, so the
// first trap it meets is in the lowest group failing at that instruction,
// not necessarily the lowest failing group: a lower group may fail at a
// later instruction. And a value uniform in a workgroup but not across
// the batch (anything computed from the workgroup id) traps at a work-item
// in the batch where the group alone reports none. Run reports what the
// workgroups run one by one report: when a batch fails, its groups up to
// the failing one run again alone and the first error among them wins;
// when none fails alone (a trap only the batch meets), the batch's other
// groups run alone too, and the dispatch goes on.
//
// Running a group again is exact only if nothing it reads was written
// during the dispatch: the compiler traces which buffer parameters each
// access reaches (a view made by buffer.view, view.subview or view.refine
// reaches what its operand does; any other view, every parameter), and a
// kernel reading no parameter it writes (atomics read and write) is
// rerunSafe, given bound buffers that do not overlap. Otherwise the
// batch's own error stands.

// paramRoot records that launch parameter i reaches itself.
func (c *compiler) paramRoot(s *slot, i int) {
	if s.kind != kView {
		return
	}
	if c.roots == nil {
		c.roots = map[*slot]uint64{}
	}
	if i < 64 {
		c.roots[s] = 1 << uint(i)
	}
}

// rootsOf is the parameters view s may reach: every one when unknown.
func (c *compiler) rootsOf(s *slot) uint64 {
	if r, ok := c.roots[s]; ok {
		return r
	}
	return ^uint64(0)
}

// derive records that view r reaches what view src does.
func (c *compiler) derive(r, src *slot) {
	if c.roots == nil {
		c.roots = map[*slot]uint64{}
	}
	// Before r is known: src of unknown origin may be workgroup memory.
	wg := c.mayWG(src)
	c.roots[r] = c.rootsOf(src)
	if wg {
		c.wgOrigin(r)
	}
}

// fresh records that view r is memory allocated by the run itself
// (workgroup or private storage, zeroed at each allocation).
func (c *compiler) fresh(r *slot) {
	if c.roots == nil {
		c.roots = map[*slot]uint64{}
	}
	c.roots[r] = 0
}

// accessed records a memory op of the given name through view v.
func (c *compiler) accessed(name string, v *slot) {
	rs := c.rootsOf(v)
	switch name {
	case "view.load", "view.atomic.load", "vector.load", "vector.load.mask":
		c.read |= rs
	case "view.store", "view.atomic.store", "vector.store", "vector.store.mask":
		c.written |= rs
	default: // read-modify-write
		c.read |= rs
		c.written |= rs
	}
}

// rerunGroups returns the workgroups [from, to) of a batch of K groups
// starting at group first, which failed with err, to run again alone;
// from == to when the batch's error stands because running again would
// not be exact. A trap without a work-item (a value uniform over the
// batch) may belong to any group the batch holds.
func (k *Kernel) rerunGroups(err error, first, K int, l *Launch, args []Arg) (from, to int) {
	var re *RunError
	if !errors.As(err, &re) || !k.rerunSafe || k.overlapping(args) {
		return 0, 0
	}
	to = first + K
	if re.HasItem {
		w := re.Workgroup
		to = min(to, w[0]+l.Workgroups[0]*(w[1]+l.Workgroups[1]*w[2])+1)
	}
	return first, to
}

// overlapping reports whether a buffer some access reads shares bytes with
// one some access writes.
func (k *Kernel) overlapping(args []Arg) bool {
	span := func(b []byte) (uintptr, uintptr) {
		if len(b) == 0 {
			return 0, 0
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return p, p + uintptr(len(b))
	}
	for i := range args {
		if i >= 64 || k.readRoots&(1<<uint(i)) == 0 {
			continue
		}
		a0, a1 := span(args[i].Buffer)
		for j := range args {
			if j >= 64 || k.writtenRoots&(1<<uint(j)) == 0 || i == j {
				continue
			}
			b0, b1 := span(args[j].Buffer)
			if a0 < b1 && b0 < a1 {
				return true
			}
		}
	}
	return false
}
