package ptx

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Copy completion across a loop's back edge.
//
// Loom completes every copy group before its block ends, so a pipelined
// loop body ends with `kernel.async.wait %last {newer_groups = 0}` and a
// barrier, although the last group fills a stage that only a later trip
// reads. Waiting for it there exposes its latency once a trip. Where the
// next trip, up to its first workgroup barrier, neither reads nor writes
// those bytes, the hardware wait moves to that barrier:
//
//   - the trip's last wait leaves the last group in flight
//     (cp.async.wait_group 1);
//   - the body's first barrier is preceded by cp.async.wait_group N, N the
//     groups the body commits before it, so the last trip's group is
//     complete (and the barrier publishes it) before anything touches it;
//   - the loop's exit waits for it and synchronizes the workgroup, when
//     the loop ran a trip.
//
// No invocation can tell: nothing touches the bytes between the two
// waits, and every read of them follows a barrier after the new wait.

// copyDeferral enables the deferral; BenchmarkCopyDeferral turns it off
// to time both forms side by side.
var copyDeferral = true

// copyDefer is one loop body's deferred wait.
type copyDefer struct {
	wait    *loom.Op // the body's last wait, lowered leaving its group in flight
	barrier *loom.Op // the body's first workgroup barrier, which waits for it
	newer   int      // the groups the body commits before that barrier
}

// planCopyDefer finds the deferred wait of scf.for body r in a kernel
// whose body is kbody, or reports none.
func planCopyDefer(r, kbody *loom.Region) (copyDefer, bool) {
	w := -1
	for i, op := range r.Ops {
		if op.Name == "kernel.async.wait" {
			w = i
		}
	}
	if w < 0 || newerGroups(r.Ops[w]) != 0 || len(r.Ops[w].Operands) != 1 {
		return copyDefer{}, false
	}
	// After the wait only barriers, index arithmetic and the yield: none
	// touches memory.
	for _, op := range r.Ops[w+1:] {
		if !(isWorkgroupBarrier(op) || op.Name == "scf.yield" || strings.HasPrefix(op.Name, "index.")) || len(op.Regions) > 0 {
			return copyDefer{}, false
		}
	}
	dst, ok := groupDestinations(r.Ops[w].Operands[0].Value, r)
	if !ok {
		return copyDefer{}, false
	}
	b := -1
	for i, op := range r.Ops[:w] {
		if isWorkgroupBarrier(op) && (op.Param == "workgroup" || op.Param == "") {
			b = i
			break
		}
	}
	if b < 0 {
		return copyDefer{}, false
	}
	d := copyDefer{wait: r.Ops[w], barrier: r.Ops[b]}
	for _, op := range r.Ops[:b] {
		if op.Name == "kernel.async.group" {
			d.newer++
		}
		ok := true
		walkOps(&loom.Region{Ops: []*loom.Op{op}}, func(_ *loom.Region, _ int, x *loom.Op) {
			ok = ok && !(x != op && x.Name == "kernel.async.group") && untouched(x, dst, kbody)
		})
		if !ok {
			return copyDefer{}, false
		}
	}
	return d, true
}

// newerGroups is a kernel.async.wait's newer_groups, or -1.
func newerGroups(op *loom.Op) int64 {
	if a := op.Attr("newer_groups"); a != nil && a.Value.Kind == loom.LitInt {
		return a.Value.Int
	}
	return -1
}

// groupDestinations returns the workgroup bytes the transfers of group g,
// committed in r itself, write, when every one of them is static.
func groupDestinations(g *loom.Value, r *loom.Region) ([]span, bool) {
	if g == nil || g.Def == nil || g.Def.Name != "kernel.async.group" || !inRegion(g.Def, r) {
		return nil, false
	}
	var dst []span
	for _, t := range g.Def.Operands {
		tr := t.Value
		if tr == nil || tr.Def == nil || !loom.IsAsyncTransfer(tr.Def.Name) || len(tr.Def.Operands) < 2 {
			return nil, false
		}
		sp, ok := staticSpan(tr.Def.Operands[1].Value)
		if !ok {
			return nil, false
		}
		dst = append(dst, sp)
	}
	return dst, len(dst) > 0
}

// inRegion reports whether op is one of r's own ops. The shared pass
// copies ops it rewrites while values keep their parsed definitions, so
// an op is known by its first result too.
func inRegion(op *loom.Op, r *loom.Region) bool {
	for _, x := range r.Ops {
		if x == op || len(x.Results) > 0 && len(op.Results) > 0 && x.Results[0] == op.Results[0] {
			return true
		}
	}
	return false
}

// untouched reports whether op certainly neither reads nor writes bytes
// of dst: no call, and every workgroup view it takes a static span
// disjoint from them.
func untouched(op *loom.Op, dst []span, kbody *loom.Region) bool {
	if strings.HasPrefix(op.Name, "func.") || strings.HasPrefix(op.Name, "template.") {
		return false
	}
	for _, o := range op.Operands {
		switch workgroupRooted(o.Value, kbody) {
		case rootUnknown:
			return false
		case rootWorkgroup:
			sp, ok := staticSpan(o.Value)
			if !ok {
				return false
			}
			for _, d := range dst {
				if d.overlaps(sp) {
					return false
				}
			}
		}
	}
	return true
}

// asyncWait lowers kernel.async.wait op leaving n newer groups in flight,
// one more for a loop's deferred wait.
func (e *emitter) asyncWait(op *loom.Op, n int64) {
	if e.deferred[op] {
		n++
	}
	e.ins("cp.async.wait_group %d", n)
}

// deferredBefore emits, before barrier op, the wait a deferred last group
// of the previous trip needs.
func (e *emitter) deferredBefore(op *loom.Op) {
	if n, ok := e.deferredAt[op]; ok {
		e.ins("cp.async.wait_group %d", n)
	}
}

// beginDefer plans body's deferred wait, returning the register that
// records a trip ran ("" for none): the body sets it (bodyRan).
func (e *emitter) beginDefer(body *loom.Region) (copyDefer, string) {
	d, ok := planCopyDefer(body, e.k.Body)
	if !ok || !copyDeferral || e.deferred[d.wait] {
		return copyDefer{}, ""
	}
	if e.deferred == nil {
		e.deferred, e.deferredAt = map[*loom.Op]bool{}, map[*loom.Op]int{}
	}
	e.deferred[d.wait], e.deferredAt[d.barrier] = true, d.newer
	ran := e.newReg(cR)
	e.ins("mov.b32 %s, 0", ran)
	return d, ran
}

// bodyRan records in ran, at a deferred loop body's top, that a trip ran.
func (e *emitter) bodyRan(ran string) {
	if ran != "" {
		e.ins("mov.b32 %s, 1", ran)
	}
}

// endDefer completes a deferred loop's last group at its exit.
func (e *emitter) endDefer(d copyDefer, ran string) {
	if ran == "" {
		return
	}
	delete(e.deferred, d.wait)
	delete(e.deferredAt, d.barrier)
	e.ins("cp.async.wait_group 0")
	if e.wgp != nil {
		e.ins("fence.proxy.async.shared::cta")
	}
	p := e.newReg(cPred)
	e.ins("setp.ne.b32 %s, %s, 0", p, ran)
	e.ins("@%s bar.sync 0", p)
}
