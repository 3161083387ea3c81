package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// axis maps <x|y|z> to a PTX special-register suffix.
func axis(op *loom.Op) (string, error) {
	switch op.Param {
	case "x", "y", "z":
		return op.Param, nil
	case "":
		return "x", nil
	}
	return "", unsupported(op, "axis %q", op.Param)
}

// special reads a special register (%tid.x, …) into a fresh index value.
func (e *emitter) special(name string) *val {
	out := e.newVal(indexType)
	out.nonneg = true // ids, sizes and counts are below 2^31
	e.ins("mov.u32 %s, %s", out.reg, name)
	return out
}

// linearTid is the work-item's linear id within the workgroup; warps are
// formed from it, so it also orders subgroups.
func (e *emitter) linearTid() *val {
	tx := e.special("%tid.x")
	if e.wgKnown && e.wg[1] == 1 && e.wg[2] == 1 {
		return tx
	}
	ty, tz := e.special("%tid.y"), e.special("%tid.z")
	nx, ny := e.special("%ntid.x"), e.special("%ntid.y")
	out := e.newVal(indexType)
	e.ins("mad.lo.s32 %s, %s, %s, %s", out.reg, tz.reg, ny.reg, ty.reg)
	e.ins("mad.lo.s32 %s, %s, %s, %s", out.reg, out.reg, nx.reg, tx.reg)
	return out
}

// wgTotal is the static number of invocations per workgroup, or 0.
func (e *emitter) wgTotal() int64 {
	if !e.wgKnown {
		return 0
	}
	return e.wg[0] * e.wg[1] * e.wg[2]
}

func (e *emitter) kernelOp(op *loom.Op, rest string) error {
	switch rest {
	case "workgroup.storage":
		return e.workgroupStorage(op)
	case "workitem.id", "workgroup.id", "workgroup.size", "workgroup.count":
		ax, err := axis(op)
		if err != nil {
			return err
		}
		reg := map[string]string{"workitem.id": "%tid", "workgroup.id": "%ctaid", "workgroup.size": "%ntid", "workgroup.count": "%nctaid"}[rest]
		if rest == "workgroup.size" && e.wgKnown {
			i := map[string]int{"x": 0, "y": 1, "z": 2}[ax]
			return e.define(op, 0, e.constInt(indexType, e.wg[i]))
		}
		return e.define(op, 0, e.special(reg+"."+ax))
	case "workitem.dispatch.id":
		ax, err := axis(op)
		if err != nil {
			return err
		}
		c, n, t := e.special("%ctaid."+ax), e.special("%ntid."+ax), e.special("%tid."+ax)
		out := e.newVal(indexType)
		e.ins("mad.lo.s32 %s, %s, %s, %s", out.reg, c.reg, n.reg, t.reg)
		return e.define(op, 0, out)
	case "subgroup.lane.id":
		return e.define(op, 0, e.special("%laneid"))
	case "subgroup.active.mask":
		// The warp's lanes that execute this instruction (a ballot would
		// need them all: active.mask is meant for divergent code).
		m := e.newReg(cR)
		e.ins("activemask.b32 %s", m)
		out := e.newVal(resultType(op, 0))
		if classOf(out.t) == cRd {
			e.ins("cvt.u64.u32 %s, %s", out.reg, m)
		} else {
			e.ins("mov.b32 %s, %s", out.reg, m)
		}
		return e.define(op, 0, out)
	case "subgroup.size":
		return e.define(op, 0, e.constInt(indexType, 32))
	case "subgroup.id":
		l := e.linearTid()
		out := e.newVal(indexType)
		e.ins("shr.u32 %s, %s, 5", out.reg, l.reg)
		return e.define(op, 0, out)
	case "subgroup.count":
		if n := e.wgTotal(); n > 0 {
			return e.define(op, 0, e.constInt(indexType, (n+31)/32))
		}
		x, y, z := e.special("%ntid.x"), e.special("%ntid.y"), e.special("%ntid.z")
		out := e.newVal(indexType)
		e.ins("mul.lo.s32 %s, %s, %s", out.reg, x.reg, y.reg)
		e.ins("mul.lo.s32 %s, %s, %s", out.reg, out.reg, z.reg)
		e.ins("add.s32 %s, %s, 31", out.reg, out.reg)
		e.ins("shr.u32 %s, %s, 5", out.reg, out.reg)
		return e.define(op, 0, out)
	case "barrier":
		e.deferredBefore(op)
		switch op.Param {
		case "workgroup", "":
			e.workgroupBarrier(op)
		case "global":
			e.ins("fence.acq_rel.gpu")
			e.workgroupBarrier(op)
		default:
			return unsupported(op, "barrier on %q", op.Param)
		}
		return nil
	case "return":
		if e.frame != nil {
			return unsupported(op, "kernel.return inside an inlined function")
		}
		e.ins("ret")
		return nil
	case "exit":
		if err := need(op, 1); err != nil {
			return err
		}
		c, err := e.pred(op.Operands[0])
		if err != nil {
			return err
		}
		skip := e.newLabel("noexit")
		e.ins("@!%s bra %s", c.reg, skip)
		for _, r := range op.Regions {
			if err := e.region(r); err != nil {
				return err
			}
		}
		e.cur = op
		e.ins("ret")
		e.label(skip)
		return nil
	case "assert":
		if err := need(op, 1); err != nil {
			return err
		}
		c, err := e.pred(op.Operands[0])
		if err != nil {
			return err
		}
		// The device has no message channel: a failed assert traps, which
		// the runtime reports as a launch failure.
		e.ins("@!%s trap", c.reg)
		return nil
	case "subgroup.reduce":
		return e.subgroupReduce(op)
	case "subgroup.shuffle":
		return e.subgroupShuffle(op)
	case "subgroup.broadcast", "subgroup.broadcast.first":
		return e.subgroupBroadcast(op, rest == "subgroup.broadcast.first")
	case "subgroup.vote.any", "subgroup.vote.all", "subgroup.vote.ballot":
		return e.subgroupVote(op, rest[len("subgroup.vote."):])
	case "workgroup.reduce":
		return e.workgroupReduce(op)
	case "workgroup.vote.any", "workgroup.vote.all", "workgroup.vote.count":
		return e.workgroupVote(op, rest[len("workgroup.vote."):])
	}
	return unsupported(op, "op is not lowered to PTX")
}

// dynSmem is the dynamic shared memory of an entry: the bytes each launch
// gives (sharedMemBytes of cuLaunchKernel), placed by the driver after the
// entry's static .shared arrays.
const dynSmem = "__loom_dyn_smem"

// workgroupStorage lowers kernel.workgroup.storage to the address of the
// dynamic shared memory. Its byte count bounds the views over it on the
// CPU executor; here the dispatch checks it against the launch's
// dynamic_workgroup_storage before launching.
func (e *emitter) workgroupStorage(op *loom.Op) error {
	align := int64(16)
	if a := op.Attr("align"); a != nil && a.Value.Kind == loom.LitInt && a.Value.Int > align {
		align = a.Value.Int
	}
	e.dynAlign = max(e.dynAlign, align)
	out := &val{t: resultType(op, 0), reg: e.addrSymbol("shared", dynSmem), space: "shared", align: align, nat: align}
	return e.define(op, 0, out)
}
