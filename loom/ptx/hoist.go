package ptx

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Loads of read-only global memory issued early.
//
// A kernel that reduces across its workgroup and then reads a bias, a
// residual or a scale waits for memory twice: the reduction's barriers and
// branches end basic blocks, and ptxas does not move a load above them. A
// load through a buffer nothing in the kernel writes (the ld.global.nc
// loads of memory.go) commutes with every other op, so the emitter issues
// it as soon as its operands are defined when a barrier, a collective, an
// inlined call or an op with regions lies between; elsewhere ptxas
// schedules it itself. Only in bodies outside loops and never above one
// (the value would stay live across every trip), ≤ 16 bytes a load, and never
// above an op that may leave the body (an early exit or return, in its
// regions or a function it calls) or trap (kernel.assert), which could
// have skipped the load.

// maxHoistBytes bounds the size of one hoisted load.
const maxHoistBytes = 16

// planHoists maps an op index of r to the indices of the loads that may be
// issued just before it (each load's earliest point after its operands'
// definitions). hoistable decides at that point whether the load reads
// read-only global memory.
func (e *emitter) planHoists(r *loom.Region) map[int][]int {
	if e.loops > 0 || r == nil {
		return nil
	}
	def := map[*loom.Value]int{}
	var plan map[int][]int
	for j, op := range r.Ops {
		if isHoistCandidate(op) {
			at := 0
			for _, o := range op.Operands {
				if o.Value != nil {
					if d, ok := def[o.Value]; ok {
						at = max(at, d+1)
					}
				}
			}
			// Not above a loop: the value would stay live through
			// every trip (ptxas may spill a tight loop for it), for
			// one memory latency saved.
			for k := j - 1; k >= at; k-- {
				if e.hasLoop(r.Ops[k]) {
					at = k + 1
					break
				}
			}
			if at < j && e.worthHoisting(r.Ops[at:j]) {
				if plan == nil {
					plan = map[int][]int{}
				}
				plan[at] = append(plan[at], j)
			}
		}
		for _, v := range op.Results {
			def[v] = j
		}
	}
	return plan
}

// isHoistCandidate reports whether op is a plain load of at most
// maxHoistBytes whose view may be read-only memory.
func isHoistCandidate(op *loom.Op) bool {
	if op.Name != "view.load" && op.Name != "vector.load" || len(op.Results) != 1 || len(op.Regions) > 0 {
		return false
	}
	t := resultType(op, 0)
	if t == nil {
		return false
	}
	n := 1
	el := t
	if t.Kind == loom.TypeVector {
		for _, d := range t.Dims {
			if d.Size <= 0 {
				return false
			}
			n *= int(d.Size)
		}
		el = t.Elem
	}
	b := el.ByteSize()
	return b > 0 && n*b <= maxHoistBytes
}

// worthHoisting reports whether a load may move above ops and gains by
// it: none of them may leave the body or trap, and one of them must end a
// basic block or synchronize (else ptxas can schedule the load itself).
func (e *emitter) worthHoisting(ops []*loom.Op) bool {
	gain := false
	for _, op := range ops {
		if e.mayLeave(op) {
			return false
		}
		switch {
		case len(op.Regions) > 0, strings.Contains(op.Name, "barrier"),
			strings.HasPrefix(op.Name, "kernel.workgroup.") && op.Name != "kernel.workgroup.id" && op.Name != "kernel.workgroup.count",
			strings.HasPrefix(op.Name, "kernel.subgroup.") && op.Name != "kernel.subgroup.id",
			op.Name == "func.call", op.Name == "template.call":
			gain = true
		}
	}
	return gain
}

// mayLeave reports whether op may end the invocation's run of the body
// before the ops after it: a return or an early exit, a failed
// kernel.assert (the load it may guard would fault first), in op, its
// regions or the functions it calls, where a func.return only ends the
// call (an apply, whose provider is chosen later, counts as leaving).
func (e *emitter) mayLeave(op *loom.Op) bool {
	return e.reaches(op, 0, func(o *loom.Op, calls int) bool {
		switch o.Name {
		case "kernel.return", "kernel.exit", "kernel.assert", "func.apply", "template.apply":
			return true
		case "func.return":
			return calls == 0
		}
		return false
	})
}

// hasLoop reports whether op is or contains a loop, in its regions or the
// functions it calls.
func (e *emitter) hasLoop(op *loom.Op) bool {
	return e.reaches(op, 0, func(o *loom.Op, _ int) bool { return o.Name == "scf.for" || o.Name == "scf.while" })
}

// reaches reports whether match holds for op, an op in its regions or one
// in the body of a function it calls (calls counts the calls entered); a
// callee without a body, or a chain of calls deeper than 16, counts as a
// match.
func (e *emitter) reaches(op *loom.Op, calls int, match func(op *loom.Op, calls int) bool) bool {
	if match(op, calls) {
		return true
	}
	if op.Name == "func.call" || op.Name == "template.call" {
		f := e.prog.Func(op.Symbol)
		if f == nil || f.Body == nil || calls >= 16 {
			return true
		}
		for _, o := range f.Body.Ops {
			if e.reaches(o, calls+1, match) {
				return true
			}
		}
		return false
	}
	for _, r := range op.Regions {
		for _, o := range r.Ops {
			if e.reaches(o, calls, match) {
				return true
			}
		}
	}
	return false
}

// hoistable reports whether the candidate load op reads through a view of
// global memory that nothing in the kernel writes.
func (e *emitter) hoistable(op *loom.Op) bool {
	if len(op.Operands) == 0 || op.Operands[0].Value == nil {
		return false
	}
	v, ok := e.vals[op.Operands[0].Value]
	return ok && v.nc && v.space == "global"
}
