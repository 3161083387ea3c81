package ptx

import (
	"maps"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Sweep unrolling. A loop with a run-time trip count whose small body
// loads memory (a row sweep: for c = tid·4; c < cols; c += 1024) issues
// one load per trip and waits for it before the next, so an invocation
// has one load in flight; nvcc unrolls such loops four times by default,
// and ptxas does not do it for us. The backend does the like: the body f
// times per trip while f trips remain (f = 4 or 2, as many copies as keep
// a trip's loads within maxSweepBytes), then the plain loop for the rest. Program order is kept, so results are
// exactly the loop's, but for loads of memory nothing in the kernel writes
// (sweepFront): a trip issues those of every copy first. ptxas hoists
// loads above stores only as far as its register target allows, and for a
// build it gives few registers (the aligned build, version.go) it left an
// RMS norm's second sweep one copy's loads ahead of each store, 0.96 of the
// hoisted speed (BENCHMARKS.md, "The aligned build on a GPU").

// sweepFactor is how many copies of the body a sweep trip runs at most
// (eight measured no better than four on RMS norm's sweeps).
const sweepFactor = 4

// maxSweepBytes bounds the bytes a sweep trip loads per invocation: the
// loaded registers all live at once when ptxas hoists the loads, and a
// body already unrolled by hand (four 16-byte loads and four more) copied
// four times again fell to 0.56 of copy from 0.94 as the registers ate
// the occupancy (BENCHMARKS.md, "Sweep unrolling").
const maxSweepBytes = 128

// sweepRegs is the register budget (.maxnreg) of a kernel whose sweep
// trips issue their loads first: a trip's loads (maxSweepBytes, 32
// registers) and as many again for the rest. Left to itself ptxas aims at
// full occupancy, 32 registers for 256 invocations, and then issues each
// copy's loads just before their use: the aligned RMS norm ran at 0.863 of
// its versioned build so, and at 1.030 with this budget (56 registers,
// four workgroups an SM; BENCHMARKS.md, "Registers for the sweeps").
const sweepRegs = 64

// maxSweepOps bounds the body (ops, nested regions included) worth
// copying sweepFactor+1 times.
const maxSweepOps = 48

// sweepUnroll returns the factor to unroll op by, or 0 to leave it: the
// step must be a positive constant and the trip count unknown at compile
// time, and the body must hold no call, nested loop, barrier, collective,
// asynchronous copy or matrix fragment (whose cost or convergence copies
// would change). An unroll clause with a literal factor above 1 then
// chooses it (at most 8; unroll(1) keeps the loop); otherwise the body
// must be small and load memory, and the factor is the larger of 4 and 2
// that keeps a trip's loads within maxSweepBytes.
func sweepUnroll(op *loom.Op, lb, ub, step *val) int64 {
	if !step.known || step.ci <= 0 || (lb.known && ub.known) {
		return 0
	}
	n, bytes, ok := sweepBody(op.Regions[0])
	for _, a := range op.Attrs {
		if a.Key == "unroll" {
			if a.Value.Kind == loom.LitInt && a.Value.Int > 1 && ok {
				return min(a.Value.Int, 8) // the author's factor, at most 8
			}
			return 0 // unroll(1), a bare or run-time factor, or a body not to copy
		}
	}
	if !ok || bytes == 0 || n > maxSweepOps {
		return 0
	}
	for f := int64(sweepFactor); f > 1; f /= 2 {
		if f*int64(bytes) <= maxSweepBytes {
			return f
		}
	}
	return 0
}

// workgroupQuery reports the pure kernel.workgroup ops (id, count, size):
// the others are collectives or allocations, which copies would change.
func workgroupQuery(name string) bool {
	for _, q := range []string{"kernel.workgroup.id", "kernel.workgroup.count", "kernel.workgroup.size"} {
		if name == q || strings.HasPrefix(name, q+"<") {
			return true
		}
	}
	return false
}

// loadBytes is what one load op reads per invocation (at least 1).
func loadBytes(op *loom.Op) int {
	if len(op.Results) == 0 || op.Results[0].Type == nil {
		return 4
	}
	t := op.Results[0].Type
	n := 1
	if t.Kind == loom.TypeVector {
		for _, d := range t.Dims {
			if d.Value != nil {
				return maxSweepBytes // a dynamic lane count: no unrolling
			}
			n *= int(d.Size)
		}
		t = t.Elem
	}
	return max(1, n*max(t.Bits, 8)/8)
}

// sweepBody counts r's ops and the bytes its loads read, and reports
// whether every op may be copied.
func sweepBody(r *loom.Region) (n, loads int, ok bool) {
	for _, op := range r.Ops {
		name := op.Name
		switch {
		case name == "func.call", name == "scf.for", name == "scf.while", name == "vector.mma",
			strings.HasPrefix(name, "kernel.barrier"), strings.HasPrefix(name, "kernel.subgroup."),
			strings.HasPrefix(name, "kernel.async."), strings.HasPrefix(name, "vector.fragment"),
			strings.HasPrefix(name, "kernel.workgroup.") && !workgroupQuery(name):
			return 0, 0, false
		case name == "view.load", strings.HasPrefix(name, "vector.load"), strings.HasPrefix(name, "vector.gather"):
			loads += loadBytes(op)
		}
		n++
		for _, sub := range op.Regions {
			m, l, subOK := sweepBody(sub)
			if !subOK {
				return 0, 0, false
			}
			n, loads = n+m, loads+l
		}
	}
	return n, loads, true
}

// sweepTrips emits, ahead of the plain loop that scfFor emits next, f
// copies of op's body per trip while f trips remain: trips = (ub - lb - 1)
// / step + 1 when lb < ub (no overflow for any bounds of the type), groups
// = trips / f; no trip at all branches to end. iv is the induction
// register (advanced by f·step a trip) and j the loop's joins, which hold
// the carried values between trips and into the plain loop; inside a trip
// they pass straight from one copy to the next.
func (e *emitter) sweepTrips(op *loom.Op, ub, step, iv *val, j *joins, f int64, end string) error {
	t := iv.t
	cmp, ut, st := forCompare(t), uType(t), sType(t)
	body := op.Regions[0]
	head, rest := e.newLabel("sweep"), e.newLabel("sweep_rest")
	p := e.newReg(cPred)
	e.ins("setp.ge.%s %s, %s, %s", cmp, p, iv.reg, ub.reg)
	e.ins("@%s bra %s", p, end)
	groups := e.newReg(classOf(t))
	e.ins("sub.%s %s, %s, %s", st, groups, ub.reg, iv.reg)
	e.ins("sub.%s %s, %s, 1", st, groups, groups)
	e.ins("div.%s %s, %s, %d", ut, groups, groups, step.ci)
	e.ins("add.%s %s, %s, 1", st, groups, groups)
	e.ins("div.%s %s, %s, %d", ut, groups, groups, f)
	e.label(head)
	e.ins("setp.eq.%s %s, %s, 0", ut, p, groups)
	e.ins("@%s bra %s", p, rest)
	ivs := make([]*val, f)
	copyIV := func(k int64) *val {
		if ivs[k] == nil {
			ivs[k] = iv
			if k > 0 {
				ivs[k] = e.newVal(t)
				ivs[k].p2 = iv.p2
				e.ins("add.%s %s, %s, %d", st, ivs[k].reg, iv.reg, k*step.ci)
			}
		}
		return ivs[k]
	}
	// Every copy's read-only loads first (sweepFront), each copy's
	// results kept for its turn below.
	front := e.sweepFront(body)
	early := make([]map[*loom.Value]*val, f)
	if front != nil {
		e.frontSweeps = true
		for k := range f {
			bindBody(e, body, copyIV(k), j.vals)
			early[k] = map[*loom.Value]*val{}
			for _, op := range body.Ops {
				if !front[op] {
					continue
				}
				e.cur = op
				if err := e.op(op); err != nil {
					return err
				}
				for _, r := range op.Results {
					early[k][r] = e.vals[r]
				}
			}
		}
	}
	cur := j.vals
	for k := range f {
		bindBody(e, body, copyIV(k), cur)
		maps.Copy(e.vals, early[k])
		yield := passYield(&cur)
		if k == f-1 {
			yield = func(y *loom.Op, vals []*val) error { return e.setJoins(y.Pos, j, vals, true) }
		}
		if err := e.regionSkipping(body, front, []string{"scf.yield"}, yield); err != nil {
			return err
		}
	}
	e.ins("add.%s %s, %s, %d", st, iv.reg, iv.reg, f*step.ci)
	e.ins("sub.%s %s, %s, 1", st, groups, groups)
	e.ins("bra.uni %s", head)
	e.label(rest)
	return nil
}

// sweepFront returns the ops of a sweep body that a trip issues for all
// its copies before the rest, or nil when there are none worth it: its
// top-level loads of read-only global memory (hoistable: no store of the
// kernel can alias them, so they commute with every op of the body) and
// the index arithmetic their operands need, using neither a carried value
// nor a result of any other op of the body. Only in bodies that write
// memory (elsewhere ptxas schedules the loads itself) and that no op may
// leave early or trap in (a later copy's load would have run first).
func (e *emitter) sweepFront(body *loom.Region) map[*loom.Op]bool {
	writes := false
	for _, op := range body.Ops {
		if e.mayLeave(op) {
			return nil
		}
		writes = writes || e.reaches(op, 0, func(o *loom.Op, _ int) bool {
			return strings.Contains(o.Name, "store") || strings.Contains(o.Name, "atomic")
		})
	}
	if !writes {
		return nil
	}
	ready := map[*loom.Value]bool{body.Args[0]: true}
	inBody := map[*loom.Value]bool{}
	for _, a := range body.Args {
		inBody[a] = true
	}
	for _, op := range body.Ops {
		for _, r := range op.Results {
			inBody[r] = true
		}
	}
	var front map[*loom.Op]bool
	loads := false
	for _, op := range body.Ops {
		load := isHoistCandidate(op) && e.hoistable(op)
		if len(op.Regions) > 0 || !load && !strings.HasPrefix(op.Name, "index.") {
			continue
		}
		ok := true
		for _, o := range op.Operands {
			if o.Value != nil && inBody[o.Value] && !ready[o.Value] {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if front == nil {
			front = map[*loom.Op]bool{}
		}
		front[op] = true
		loads = loads || load
		for _, r := range op.Results {
			ready[r] = true
		}
	}
	if !loads {
		return nil
	}
	return front
}
