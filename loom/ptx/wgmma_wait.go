package ptx

import (
	"slices"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// wgmmaBatch is the workgroup tiles (rhs, and lhs read through a
// descriptor) of committed wgmma ops still possibly in flight; all marks
// the unknown ops a loop body may find in flight from its previous trip.
type wgmmaBatch struct {
	tiles []*loom.Value
	all   bool
	// except are bytes an all batch does not read: the previous trip's
	// last barrier waited for every group reading them (wgmmaPlan.entry).
	except []span
}

// reads reports whether the batch may read bytes of dst.
func (b wgmmaBatch) reads(dst span) bool {
	if b.all {
		for _, x := range b.except {
			if x.buf == dst.buf && x.lo <= dst.lo && dst.hi <= x.hi {
				return false
			}
		}
		return true
	}
	for _, t := range b.tiles {
		if src, ok := staticSpan(t); !ok || src.overlaps(dst) {
			return true
		}
	}
	return false
}

// readsAny reports whether the batch may read bytes of any of spans.
func (b wgmmaBatch) readsAny(spans []span) bool {
	for _, s := range spans {
		if b.reads(s) {
			return true
		}
	}
	return false
}

// wgmmaCommit closes the wgmma ops issued since the last commit into a
// group (wgmma.commit_group) that later waits can count.
func (e *emitter) wgmmaCommit() {
	if !e.wgPending {
		return
	}
	e.ins("wgmma.commit_group.sync.aligned")
	e.wgGroups = append(e.wgGroups, wgmmaBatch{tiles: e.wgTiles})
	e.wgTiles = nil
	e.wgPending = false
}

// wgmmaFlush waits for every wgmma op in flight, before an op that may
// read their accumulators or write their operands.
func (e *emitter) wgmmaFlush() {
	e.wgmmaCommit()
	if len(e.wgGroups) > 0 {
		e.ins("wgmma.wait_group.sync.aligned 0")
		e.wgGroups = nil
	}
}

// wgmmaBefore makes op safe to run after the wgmma ops issued so far:
// nothing for ops that touch neither their registers nor the tiles they
// read (wgmmaKeeps), a wait for just the groups reading the bytes an
// asynchronous copy overwrites (wgmma.wait_group N leaves the N newest in
// flight), and a wait for all of them before anything else.
func (e *emitter) wgmmaBefore(op *loom.Op) {
	if !e.wgPending && len(e.wgGroups) == 0 || e.wgmmaKeeps(op) {
		return
	}
	if op.Name == "kernel.async.copy" && len(op.Operands) >= 2 {
		if dst, ok := staticSpan(op.Operands[1].Value); ok && !(wgmmaBatch{tiles: e.wgTiles}).reads(dst) {
			e.wgmmaWaitReaders(workgroupWrites{spans: []span{dst}})
			return
		}
	}
	e.wgmmaFlush()
}

// wgmmaWaitReaders commits the wgmma ops issued so far and waits for the
// groups that may read bytes w writes, and for those older than them
// (groups complete in order), leaving the newer ones in flight.
func (e *emitter) wgmmaWaitReaders(w workgroupWrites) {
	e.wgmmaCommit()
	for i := len(e.wgGroups) - 1; i >= 0; i-- {
		if w.unknown || e.wgGroups[i].readsAny(w.spans) {
			e.ins("wgmma.wait_group.sync.aligned %d", len(e.wgGroups)-1-i)
			e.wgGroups = append([]wgmmaBatch(nil), e.wgGroups[i+1:]...)
			return
		}
	}
}

// wgmmaLazy reports whether wgmma ops may stay in flight across a
// workgroup barrier whatever follows it: when the workgroup is one
// warpgroup, its own waits before it overwrites a tile order every wgmma
// read of that tile before the write.
func (e *emitter) wgmmaLazy() bool {
	return e.wgp != nil && e.wgKnown && e.wg[0]*e.wg[1]*e.wg[2] == 128
}

// workgroupBarrier synchronizes the workgroup at barrier op (nil for a
// collective's own barriers). In a kernel with wgmma groups, the
// workgroup-memory writes before it are first made visible to the async
// proxy wgmma reads through. With several warpgroups another warpgroup
// may overwrite a tile once past the barrier, so each one first waits for
// its groups that read bytes any op may write between op and the next
// barrier (wgmmaPlan.after); a collective's barrier waits for all.
func (e *emitter) workgroupBarrier(op *loom.Op) {
	switch w, ok := e.wgmmaAfter(op); {
	case e.wgmmaLazy():
		e.wgmmaCommit()
	case ok:
		e.wgmmaWaitReaders(w)
	default:
		e.wgmmaFlush()
	}
	if e.wgp != nil {
		e.ins("fence.proxy.async.shared::cta")
	}
	e.ins("bar.sync 0")
}

// wgmmaAfter is what the ops after barrier op may write before the next
// barrier, when the plan knows.
func (e *emitter) wgmmaAfter(op *loom.Op) (workgroupWrites, bool) {
	if e.wgp == nil || op == nil {
		return workgroupWrites{}, false
	}
	w, ok := e.wgp.after[op]
	return w, ok
}

// wgmmaCarried reports whether groups of a loop's previous trip may be in
// flight.
func (e *emitter) wgmmaCarried() bool {
	for _, b := range e.wgGroups {
		if b.all {
			return true
		}
	}
	return false
}

// wgmmaLoopEntry marks, at the top of loop body r, that wgmma ops of
// the previous trip may be in flight: the first op that writes workgroup
// memory they may read waits for them.
func (e *emitter) wgmmaLoopEntry(r *loom.Region) {
	if e.wgp != nil {
		e.wgGroups = append(e.wgGroups, wgmmaBatch{all: true, except: e.wgp.entry[r]})
	}
}

// wgmmaYieldInPlace reports whether a loop body's scf.yield y leaves the
// registers of the wgmma ops in flight alone: every accumulator a group
// wrote is passed in the registers it arrived in (updated in place), and
// the other carried values are not wgmma registers. Those ops may then
// stay in flight into the next trip; they are committed, so that trip's
// waits count them.
func (e *emitter) wgmmaYieldInPlace(r *loom.Region, y *loom.Op, vals []*val) bool {
	if !e.wgPending && len(e.wgGroups) == 0 || !e.carried[r] || len(vals) != len(r.Args)-1 || len(y.Operands) != len(vals) {
		return false
	}
	for i, v := range vals {
		src := y.Operands[i].Value
		fromGroup := src != nil && src.Def != nil && e.wgp.group[src.Def] != nil
		if in := e.vals[r.Args[i+1]]; fromGroup && (in == nil || !sameRegs(v, in)) {
			return false
		}
	}
	e.wgmmaCommit()
	return true
}

// wgmmaKeeps reports whether op may run while wgmma ops are in flight:
// another group's member, a dropped fragment load, an lhs fragment load
// (into new registers) unless groups of a loop's last trip may be in
// flight, index arithmetic, a subview, an asynchronous copy's group or
// wait, or a workgroup barrier (workgroupBarrier waits for what it must).
func (e *emitter) wgmmaKeeps(op *loom.Op) bool {
	switch {
	case e.wgp == nil:
		return false
	case e.wgp.group[op] != nil || e.wgp.skip[op]:
		return true
	case op.Name == "vector.fragment.load" && op.Param == "lhs":
		// Its registers are new within a trip, but a loop's next trip
		// overwrites the ones a group of the last trip may still read.
		return !e.wgmmaCarried()
	case op.Name == "view.subview" || op.Name == "kernel.async.group" || op.Name == "kernel.async.wait":
		return true
	case op.Name == "kernel.barrier" && (op.Param == "workgroup" || op.Param == ""):
		return true // workgroupBarrier waits as it needs
	}
	return strings.HasPrefix(op.Name, "index.")
}

// span is a byte range of a workgroup buffer.
type span struct {
	buf    *loom.Value
	lo, hi int64
}

// overlaps reports whether two spans may share a byte.
func (s span) overlaps(t span) bool { return s.buf == t.buf && s.lo < t.hi && t.lo < s.hi }

// staticSpan bounds the bytes a view may address: a buffer.view of a
// workgroup buffer at a constant offset with a static type, or a subview
// of one (within its parent's bytes).
func staticSpan(v *loom.Value) (span, bool) {
	for v != nil && v.Def != nil && v.Def.Name == "view.subview" && len(v.Def.Operands) > 0 {
		v = v.Def.Operands[0].Value
	}
	if v == nil || v.Def == nil || v.Def.Name != "buffer.view" || len(v.Def.Operands) < 2 {
		return span{}, false
	}
	buf := v.Def.Operands[0].Value
	if buf == nil || buf.Def == nil || (buf.Def.Name != "kernel.workgroup.storage" && !workgroupAlloca(buf.Def)) {
		return span{}, false
	}
	off, ok := constIndex(v.Def.Operands[1].Value)
	t := v.Type
	if t == nil && len(v.Def.ResultTypes) > 0 {
		t = v.Def.ResultTypes[0]
	}
	if !ok || t == nil || t.Kind != loom.TypeView || t.Elem == nil {
		return span{}, false
	}
	n := int64(carrierBytes(t.Elem))
	for _, d := range t.Dims {
		if d.Value != nil || d.Size <= 0 {
			return span{}, false
		}
		n *= d.Size
	}
	return span{buf, off, off + n}, true
}

// workgroupWrites is what a stretch of ops may write to workgroup memory:
// static byte spans, or unknown bytes.
type workgroupWrites struct {
	spans   []span
	unknown bool
}

// mayWrite reports whether an op may write memory through a view
// operand: stores, copies, gathers, scatters and atomics of every dialect
// (loads among the atomics too, which only costs waits).
func mayWrite(name string) bool {
	for _, w := range []string{"store", "copy", "gather", "scatter", "atomic"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// add records what op itself may write (not its regions) in a kernel
// whose body is body. A collective's own scratch is never a kernel's
// view, so collectives write nothing here.
func (w *workgroupWrites) add(op *loom.Op, body *loom.Region) {
	switch {
	case strings.HasPrefix(op.Name, "func.") || strings.HasPrefix(op.Name, "template."):
		w.unknown = true // a call
	case mayWrite(op.Name):
		for _, o := range op.Operands {
			switch workgroupRooted(o.Value, body) {
			case rootWorkgroup:
				if sp, ok := staticSpan(o.Value); ok {
					w.spans = append(w.spans, sp)
				} else {
					w.unknown = true
				}
			case rootUnknown:
				w.unknown = true
			}
		}
	}
}

// addAll records what the ops of r, nested regions included, may write.
func (w *workgroupWrites) addAll(r *loom.Region, body *loom.Region) {
	walkOps(r, func(_ *loom.Region, _ int, op *loom.Op) { w.add(op, body) })
}

// addNested records what op and its regions may write.
func (w *workgroupWrites) addNested(op *loom.Op, body *loom.Region) {
	w.add(op, body)
	for _, sub := range op.Regions {
		w.addAll(sub, body)
	}
}

// viewRoot classifies where an operand's bytes may lie.
type viewRoot int

const (
	rootElsewhere viewRoot = iota // a kernel parameter, or not a view at all
	rootWorkgroup                 // workgroup memory
	rootUnknown                   // a view from a region argument or a call
)

// workgroupRooted follows v through the ops that derive views to where it
// comes from. A value of a stated type other than view or buffer is
// neither; views are made only by buffer.* and view.* ops, so a value any
// other op defines is not one; a view carried by a loop or an if, or
// returned by a call, may be anything.
func workgroupRooted(v *loom.Value, body *loom.Region) viewRoot {
	if t := valueType(v); t != nil && t.Kind != loom.TypeView && t.Kind != loom.TypeBuffer {
		return rootElsewhere
	}
	for v != nil && v.Def != nil {
		d := v.Def
		switch {
		case d.Name == "kernel.workgroup.storage" || workgroupAlloca(d):
			return rootWorkgroup
		case d.Name == "buffer.alloca":
			return rootElsewhere // private memory
		case (d.Name == "view.subview" || d.Name == "buffer.view" || d.Name == "view.refine" || strings.HasPrefix(d.Name, "buffer.assume.")) && len(d.Operands) > 0:
			v = d.Operands[0].Value
		case strings.HasPrefix(d.Name, "view.") || strings.HasPrefix(d.Name, "buffer.") || strings.HasPrefix(d.Name, "scf.") || strings.HasPrefix(d.Name, "func.") || strings.HasPrefix(d.Name, "template."):
			return rootUnknown
		default:
			return rootElsewhere
		}
	}
	// A region argument other than the kernel's own (a launch buffer:
	// global memory) may be anything. The lowered body is a new region
	// with the same arguments, so they are known by identity, not owner.
	if v != nil && v.Owner != nil && !slices.Contains(body.Args, v) {
		return rootUnknown
	}
	return rootElsewhere
}

// workgroupAlloca reports a buffer.alloca of workgroup memory, in either
// spelling: a value's defining op is the alloca as parsed, which the
// shared pass's rewrite to `<workgroup>` does not replace.
func workgroupAlloca(op *loom.Op) bool {
	return op.Name == "buffer.alloca" && loom.AllocaSpace(op) == "workgroup"
}

// valueType is v's type where the syntax states it, or nil.
func valueType(v *loom.Value) *loom.Type {
	switch {
	case v == nil:
		return nil
	case v.Type != nil:
		return v.Type
	case v.Def != nil && v.Index < len(v.Def.ResultTypes):
		return v.Def.ResultTypes[v.Index]
	}
	return nil
}

// isWorkgroupBarrier reports whether op is a barrier of the workgroup.
func isWorkgroupBarrier(op *loom.Op) bool {
	return op.Name == "kernel.barrier"
}

// loopEntries maps each scf.for body of body to the bytes no wgmma op of
// its previous trip can read at its top, given barrierWrites' waits: the
// writes after its last barrier, when no group member follows that
// barrier (each group in flight then waited at it for those bytes).
func loopEntries(body *loom.Region, after map[*loom.Op]workgroupWrites, group map[*loom.Op]*wgmmaGroup) map[*loom.Region][]span {
	entry := map[*loom.Region][]span{}
	walkOps(body, func(_ *loom.Region, _ int, op *loom.Op) {
		if op.Name != "scf.for" || len(op.Regions) != 1 {
			return
		}
		r := op.Regions[0]
		last := -1
		for i, x := range r.Ops {
			if isWorkgroupBarrier(x) {
				last = i
			}
		}
		if last < 0 || after[r.Ops[last]].unknown {
			return
		}
		for _, x := range r.Ops[last+1:] {
			issues := false
			walkOps(&loom.Region{Ops: []*loom.Op{x}}, func(_ *loom.Region, _ int, y *loom.Op) { issues = issues || group[y] != nil })
			if issues {
				return
			}
		}
		entry[r] = after[r.Ops[last]].spans
	})
	return entry
}

// barrierWrites maps each barrier of body to what the ops after it may
// write to workgroup memory before the next barrier any path reaches:
// the rest of its region; at the end of an scf.for body, both the body
// from its start (the next trip) and the ops after the loop; at the end
// of an if's region, the ops after the if; at the end of another op's
// region, all its regions and the ops after it. Nested regions count whole, barriers or not
// (more writes only cost waits).
func barrierWrites(body *loom.Region) map[*loom.Op]workgroupWrites {
	type frame struct {
		owner  *loom.Op
		parent *loom.Region
		index  int
	}
	up := map[*loom.Region]frame{}
	var barriers []frame
	walkOps(body, func(r *loom.Region, i int, op *loom.Op) {
		for _, sub := range op.Regions {
			up[sub] = frame{op, r, i}
		}
		if isWorkgroupBarrier(op) {
			barriers = append(barriers, frame{op, r, i})
		}
	})
	// scan adds ops[from:] up to a barrier, reporting whether it met one.
	scan := func(w *workgroupWrites, ops []*loom.Op) bool {
		for _, op := range ops {
			if isWorkgroupBarrier(op) {
				return true
			}
			w.addNested(op, body)
		}
		return false
	}
	after := map[*loom.Op]workgroupWrites{}
	for _, b := range barriers {
		var w workgroupWrites
		r, from := b.parent, b.index+1
		for !scan(&w, r.Ops[from:]) {
			f, ok := up[r]
			if !ok {
				break // the kernel's end
			}
			switch f.owner.Name {
			case "scf.for":
				scan(&w, r.Ops) // the next trip, up to its first barrier
			case "scf.if", "scf.switch":
			default: // another loop: its regions run again in some order
				for _, sub := range f.owner.Regions {
					w.addAll(sub, body)
				}
			}
			r, from = f.parent, f.index+1
		}
		after[b.owner] = w
	}
	return after
}
