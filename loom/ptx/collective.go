package ptx

import (
	"fmt"
	"math"

	"github.com/loomgen/loomgen/loom"
)

// Subgroups are warps of 32: 32-lane chunks of the linear invocation id,
// like the CPU executor's. When the workgroup size is not a multiple of 32
// (or not static) the last warp is partial: its collectives name only the
// lanes that exist in their member masks (warpLanes), and shuffles,
// broadcasts and reductions treat the missing lanes as the CPU executor
// treats lanes outside the workgroup — a source that does not exist is
// invalid, a reduction combines the lanes that do. Shuffles whose source
// shfl's own lane arithmetic would compute differently take the same
// exact path in full warps (nativeShuffle).

const fullMask = "0xffffffff"

// collScratch is the name of the shared array collectives exchange
// partial results through; its size is the largest any collective needs.
const collScratch = "__loom_coll"

func (e *emitter) needScratch(bytes int) string {
	if bytes > e.scratchBytes {
		e.scratchBytes = bytes
	}
	r := e.newReg(cRd)
	e.ins("mov.u64 %s, %s", r, collScratch)
	return r
}

// warpLanes names the lanes of the invocation's warp that exist.
type warpLanes struct {
	mask  string // member mask of the .sync instructions (register or immediate)
	count string // register holding the number of lanes; "" when the warp is full
}

// lanesOfWarp computes warpLanes: every warp is full when the static
// workgroup size is a multiple of 32; otherwise the warp starting at linear
// id b has min(32, size − b) lanes.
func (e *emitter) lanesOfWarp() warpLanes {
	n := e.wgTotal()
	if n > 0 && n%32 == 0 {
		return warpLanes{mask: fullMask}
	}
	count := e.newReg(cR)
	if n > 0 && n < 32 {
		e.ins("mov.u32 %s, %d", count, n)
		return warpLanes{mask: fmt.Sprintf("0x%08x", uint32(1)<<n-1), count: count}
	}
	total := e.newReg(cR)
	if n > 0 {
		e.ins("mov.u32 %s, %d", total, n)
	} else {
		x, y, z := e.special("%ntid.x"), e.special("%ntid.y"), e.special("%ntid.z")
		e.ins("mul.lo.u32 %s, %s, %s", total, x.reg, y.reg)
		e.ins("mul.lo.u32 %s, %s, %s", total, total, z.reg)
	}
	base := e.newReg(cR)
	e.ins("and.b32 %s, %s, -32", base, e.linearTid().reg)
	e.ins("sub.u32 %s, %s, %s", count, total, base)
	e.ins("min.u32 %s, %s, 32", count, count)
	// 1 << 32 is 0 in PTX (shift amounts clamp), so a full warp gets ~0.
	mask := e.newReg(cR)
	e.ins("shl.b32 %s, 1, %s", mask, count)
	e.ins("sub.u32 %s, %s, 1", mask, mask)
	return warpLanes{mask: mask, count: count}
}

// shfl shuffles v across the lanes of mask; b and c are register or
// immediate operands of shfl.sync. It returns the value and the in-range
// predicate.
func (e *emitter) shfl(mode string, v *val, b, c, mask string) (*val, string) {
	p := e.newReg(cPred)
	one := func(src string) string {
		d := e.newReg(cR)
		e.ins("shfl.sync.%s.b32 %s|%s, %s, %s, %s, %s", mode, d, p, src, b, c, mask)
		return d
	}
	out := e.newVal(v.t)
	switch classOf(v.t) {
	case cR, cF:
		e.ins("shfl.sync.%s.b32 %s|%s, %s, %s, %s, %s", mode, out.reg, p, v.reg, b, c, mask)
	case cH:
		w := e.newReg(cR)
		e.ins("cvt.u32.u16 %s, %s", w, v.reg)
		e.ins("cvt.u16.u32 %s, %s", out.reg, one(w))
	case cPred:
		w := e.newReg(cR)
		e.ins("selp.u32 %s, 1, 0, %s", w, v.reg)
		e.ins("setp.ne.b32 %s, %s, 0", out.reg, one(w))
	default: // 64-bit: two halves
		lo, hi := e.newReg(cR), e.newReg(cR)
		e.ins("mov.b64 {%s, %s}, %s", lo, hi, v.reg)
		lo2, hi2 := one(lo), one(hi)
		e.ins("mov.b64 %s, {%s, %s}", out.reg, lo2, hi2)
	}
	return out, p
}

// combine applies a combining kind to two values of one type.
func (e *emitter) combine(op *loom.Op, kind string, a, b *val) (*val, error) {
	t := a.t
	if isFloat(t) {
		m := map[string]string{"addf": "add.rn", "mulf": "mul.rn", "maximumf": "max.NaN", "minimumf": "min.NaN", "maxnumf": "max", "minnumf": "min"}[kind]
		if m == "" || (t.Name == "f64" && (kind == "maximumf" || kind == "minimumf")) {
			return nil, unsupported(op, "combining kind %s on %s", kind, t)
		}
		x, y := e.toF32(a), e.toF32(b)
		out := e.newVal(x.t)
		e.ins("%s.%s %s, %s, %s", m, fType(t), out.reg, x.reg, y.reg)
		return e.fromF32(out, t), nil
	}
	out := e.newVal(t)
	if classOf(t) == cPred {
		m := map[string]string{"andi": "and", "ori": "or", "xori": "xor", "minui": "and", "maxui": "or"}[kind]
		if m == "" {
			return nil, unsupported(op, "combining kind %s on i1", kind)
		}
		e.ins("%s.pred %s, %s, %s", m, out.reg, a.reg, b.reg)
		return out, nil
	}
	ib, ok := map[string]intOp{
		"addi": {"add", 's'}, "muli": {"mul.lo", 's'}, "minsi": {"min", 's'}, "maxsi": {"max", 's'},
		"minui": {"min", 'u'}, "maxui": {"max", 'u'}, "andi": {"and", 'b'}, "ori": {"or", 'b'}, "xori": {"xor", 'b'},
	}[kind]
	if !ok {
		return nil, unsupported(op, "combining kind %s on %s", kind, t)
	}
	x, y := a, b
	suffix := sType(t)
	switch ib.sign {
	case 'u':
		suffix = uType(t)
		x, y = e.zext(x), e.zext(y)
	case 'b':
		suffix = bType(t)
	}
	e.ins("%s.%s %s, %s, %s", ib.mnem, suffix, out.reg, x.reg, y.reg)
	e.sext(out)
	return out, nil
}

// identity is the neutral element of a combining kind.
func (e *emitter) identity(op *loom.Op, kind string, t *loom.Type) (*val, error) {
	if isFloat(t) {
		switch kind {
		case "addf":
			return e.constFloat(t, math.Copysign(0, -1)), nil
		case "mulf":
			return e.constFloat(t, 1), nil
		case "maximumf", "maxnumf":
			return e.constFloat(t, math.Inf(-1)), nil
		case "minimumf", "minnumf":
			return e.constFloat(t, math.Inf(1)), nil
		}
		return nil, unsupported(op, "combining kind %s on %s", kind, t)
	}
	bits := intBits(t)
	switch kind {
	case "addi", "ori", "xori", "maxui":
		return e.constInt(t, 0), nil
	case "muli":
		return e.constInt(t, 1), nil
	case "andi", "minui":
		return e.constInt(t, -1), nil
	case "minsi":
		return e.constInt(t, int64(uint64(1)<<(bits-1)-1)), nil
	case "maxsi":
		return e.constInt(t, -int64(uint64(1)<<(bits-1))), nil
	}
	return nil, unsupported(op, "combining kind %s on %s", kind, t)
}

// warpReduce combines v over clusters of size lanes by a butterfly; every
// lane ends with the same value because each step combines the same two
// partial results (the kinds are commutative).
func (e *emitter) warpReduce(op *loom.Op, kind string, v *val, size int) (*val, error) {
	acc := v
	for off := size / 2; off >= 1; off /= 2 {
		s, _ := e.shfl("bfly", acc, fmt.Sprint(off), "0x1f", fullMask)
		var err error
		if acc, err = e.combine(op, kind, acc, s); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// clusterReduce combines v over clusters of size lanes spaced stride
// apart (size·stride a power of two up to 32) in a warp that may be
// partial: a tree of shfl.down steps (stride·size/2 … stride) gathers each
// cluster's existing lanes into its first lane — a step whose source lane
// does not exist or lies in another cluster block keeps the partial
// result — which then broadcasts it to the cluster. A cluster's first lane
// exists whenever any of its lanes does.
func (e *emitter) clusterReduce(op *loom.Op, kind string, v *val, size, stride int, w warpLanes) (*val, error) {
	span := size * stride
	lane, block := e.newReg(cR), e.newReg(cR)
	e.ins("mov.u32 %s, %%laneid", lane)
	e.ins("and.b32 %s, %s, %d", block, lane, -span)
	acc := v
	for off := span / 2; off >= stride; off /= 2 {
		s, _ := e.shfl("down", acc, fmt.Sprint(off), "0x1f", w.mask)
		src, sb, ok := e.newReg(cR), e.newReg(cR), e.newReg(cPred)
		e.ins("add.u32 %s, %s, %d", src, lane, off)
		e.ins("and.b32 %s, %s, %d", sb, src, -span)
		e.ins("setp.lt.u32 %s, %s, %s", ok, src, w.count)
		e.ins("setp.eq.and.u32 %s, %s, %s, %s", ok, sb, block, ok)
		comb, err := e.combine(op, kind, acc, s)
		if err != nil {
			return nil, err
		}
		if acc, err = e.sel(op.Pos, &val{t: i1Type, reg: ok}, comb, acc); err != nil {
			return nil, err
		}
	}
	leader := e.newReg(cR)
	e.ins("and.b32 %s, %s, %d", leader, lane, stride-1)
	e.ins("or.b32 %s, %s, %s", leader, leader, block)
	out, _ := e.shfl("idx", acc, leader, "0x1f", w.mask)
	return out, nil
}

// fullWarps refuses an op that needs every warp full (matrix fragments)
// in a known partial warp.
func (e *emitter) fullWarps(op *loom.Op) error {
	if n := e.wgTotal(); n > 0 && n%32 != 0 {
		return unsupported(op, "workgroup size %d is not a multiple of the subgroup size 32", n)
	}
	return nil
}

func (e *emitter) collectiveValue(op *loom.Op) (*val, error) {
	if err := need(op, 1); err != nil {
		return nil, err
	}
	v, err := e.get(op.Operands[0])
	if err != nil {
		return nil, err
	}
	if v.t == nil || !supportedScalar(v.t) {
		return nil, unsupported(op, "operand of type %s", typeName(v.t))
	}
	return v, nil
}

func (e *emitter) subgroupReduce(op *loom.Op) error {
	v, err := e.collectiveValue(op)
	if err != nil {
		return err
	}
	size := 32
	if a := op.Attr("cluster_size"); a != nil {
		if a.Value.Kind != loom.LitInt || a.Value.Int < 1 || a.Value.Int > 32 || a.Value.Int&(a.Value.Int-1) != 0 {
			return unsupported(op, "cluster_size %s", a.Value.Text)
		}
		size = int(a.Value.Int)
	}
	stride := 1
	if a := op.Attr("cluster_stride"); a != nil {
		if a.Value.Kind != loom.LitInt || a.Value.Int < 1 || a.Value.Int&(a.Value.Int-1) != 0 || a.Value.Int*int64(size) > 32 {
			return unsupported(op, "cluster_stride %s with cluster_size %d (a power of two whose clusters fit a warp)", a.Value.Text, size)
		}
		stride = int(a.Value.Int)
	}
	var r *val
	if w := e.lanesOfWarp(); w.count != "" || stride > 1 {
		if w.count == "" {
			w.count = "32"
		}
		r, err = e.clusterReduce(op, op.Param, v, size, stride, w)
	} else {
		r, err = e.warpReduce(op, op.Param, v, size)
	}
	if err != nil {
		return err
	}
	return e.define(op, 0, r)
}

var shflMode = map[string]string{"xor": "bfly", "up": "up", "down": "down", "index": "idx"}

func (e *emitter) subgroupShuffle(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	mode, ok := shflMode[op.Param]
	if !ok {
		return unsupported(op, "shuffle mode %q", op.Param)
	}
	if !supportedScalar(a[0].t) || classOf(a[1].t) != cR || classOf(a[2].t) != cR {
		return unsupported(op, "operand types %s, %s, %s", typeName(a[0].t), typeName(a[1].t), typeName(a[2].t))
	}
	w := e.lanesOfWarp()
	if w.count != "" || !nativeShuffle(op.Param, a[1], a[2]) {
		if w.count == "" {
			w.count = "32"
		}
		return e.exactShuffle(op, a, w)
	}
	// c packs the segment mask (32 − width) << 8 and, except for up,
	// the clamp lane 31 within the segment.
	c := e.newReg(cR)
	e.ins("sub.s32 %s, 32, %s", c, a[2].reg)
	e.ins("shl.b32 %s, %s, 8", c, c)
	if mode != "up" {
		e.ins("or.b32 %s, %s, 31", c, c)
	}
	out, p := e.shfl(mode, a[0], a[1].reg, c, fullMask)
	if err := e.define(op, 0, out); err != nil {
		return err
	}
	if len(op.Results) > 1 {
		return e.define(op, 1, &val{t: i1Type, reg: p})
	}
	return nil
}

// nativeShuffle reports whether shfl.sync's own lane arithmetic gives
// Loom's result: constant width (a power of two up to 32) and offset,
// the offset below 32 (shfl reads 5 bits of it) and, for xor and index,
// below the width (shfl would wrap inside the segment where Loom's source
// leaves it).
func nativeShuffle(mode string, off, width *val) bool {
	if !off.known || !width.known {
		return false
	}
	o, w := off.ci, width.ci
	if w < 1 || w > 32 || w&(w-1) != 0 || o < 0 || o >= 32 {
		return false
	}
	return mode == "up" || mode == "down" || o < w
}

// exactShuffle is kernel.subgroup.shuffle with the source lane computed
// as the CPU executor does (inside the lane's width-aligned segment, and
// an existing lane of a warp that may be partial), read with shfl.idx; a
// lane whose source is invalid keeps its own value.
func (e *emitter) exactShuffle(op *loom.Op, a []*val, w warpLanes) error {
	lane, seg, end, src := e.newReg(cR), e.newReg(cR), e.newReg(cR), e.newReg(cR)
	e.ins("mov.u32 %s, %%laneid", lane)
	e.ins("neg.s32 %s, %s", seg, a[2].reg)
	e.ins("and.b32 %s, %s, %s", seg, seg, lane)
	e.ins("add.s32 %s, %s, %s", end, seg, a[2].reg)
	e.ins("min.s32 %s, %s, %s", end, end, w.count)
	switch op.Param {
	case "xor":
		e.ins("xor.b32 %s, %s, %s", src, lane, a[1].reg)
	case "up":
		e.ins("sub.s32 %s, %s, %s", src, lane, a[1].reg)
	case "down":
		e.ins("add.s32 %s, %s, %s", src, lane, a[1].reg)
	default: // index
		e.ins("add.s32 %s, %s, %s", src, seg, a[1].reg)
	}
	ok := e.newReg(cPred)
	e.ins("setp.lt.s32 %s, %s, %s", ok, src, end)
	e.ins("setp.ge.and.s32 %s, %s, %s, %s", ok, src, seg, ok)
	e.ins("selp.b32 %s, %s, %s, %s", src, src, lane, ok)
	out, _ := e.shfl("idx", a[0], src, "0x1f", w.mask)
	if err := e.define(op, 0, out); err != nil {
		return err
	}
	if len(op.Results) > 1 {
		return e.define(op, 1, &val{t: i1Type, reg: ok})
	}
	return nil
}

func (e *emitter) subgroupBroadcast(op *loom.Op, first bool) error {
	v, err := e.collectiveValue(op)
	if err != nil {
		return err
	}
	var lane string
	if first {
		m := e.newReg(cR)
		e.ins("activemask.b32 %s", m)
		e.ins("brev.b32 %s, %s", m, m)
		e.ins("clz.b32 %s, %s", m, m)
		lane = m
	} else {
		if err := need(op, 2); err != nil {
			return err
		}
		l, err := e.get(op.Operands[1])
		if err != nil {
			return err
		}
		if classOf(l.t) != cR {
			return unsupported(op, "lane of type %s", typeName(l.t))
		}
		lane = l.reg
	}
	w := e.lanesOfWarp()
	if w.count != "" && !first {
		// A lane that does not exist leaves every value as it is.
		own, ok, sel := e.newReg(cR), e.newReg(cPred), e.newReg(cR)
		e.ins("mov.u32 %s, %%laneid", own)
		e.ins("setp.lt.u32 %s, %s, %s", ok, lane, w.count)
		e.ins("selp.b32 %s, %s, %s, %s", sel, lane, own, ok)
		lane = sel
	}
	out, _ := e.shfl("idx", v, lane, "0x1f", w.mask)
	return e.define(op, 0, out)
}

func (e *emitter) subgroupVote(op *loom.Op, kind string) error {
	if err := need(op, 1); err != nil {
		return err
	}
	p, err := e.pred(op.Operands[0])
	if err != nil {
		return err
	}
	mask := e.lanesOfWarp().mask
	if kind == "ballot" {
		t := resultType(op, 0)
		if t == nil || t.IsScalar() == false || isFloat(t) {
			return unsupported(op, "ballot into %s", typeName(t))
		}
		r := &val{t: i32Type, reg: e.newReg(cR)}
		e.ins("vote.sync.ballot.b32 %s, %s, %s", r.reg, p.reg, mask)
		if classOf(t) == cRd {
			return e.define(op, 0, e.widen64(r, false))
		}
		return e.define(op, 0, r)
	}
	out := e.newVal(i1Type)
	e.ins("vote.sync.%s.pred %s, %s, %s", kind, out.reg, p.reg, mask)
	return e.define(op, 0, out)
}

func (e *emitter) workgroupVote(op *loom.Op, kind string) error {
	if err := need(op, 1); err != nil {
		return err
	}
	p, err := e.pred(op.Operands[0])
	if err != nil {
		return err
	}
	switch kind {
	case "count":
		t := resultType(op, 0)
		if t == nil || isFloat(t) || !t.IsScalar() || classOf(t) == cPred {
			return unsupported(op, "count into %s", typeName(t))
		}
		r := &val{t: i32Type, reg: e.newReg(cR)}
		e.ins("bar.red.popc.u32 %s, 0, %s", r.reg, p.reg)
		if classOf(t) == cRd {
			return e.define(op, 0, e.widen64(r, false))
		}
		r.t = t
		return e.define(op, 0, r)
	case "any", "all":
		out := e.newVal(i1Type)
		m := map[string]string{"any": "or", "all": "and"}[kind]
		e.ins("bar.red.%s.pred %s, 0, %s", m, out.reg, p.reg)
		return e.define(op, 0, out)
	}
	return unsupported(op, "vote %s", kind)
}

// storeWarpResults has lane 0 of each of the nw warps store its warp's
// results rs (of types ts) to 8-byte slots of workgroup scratch, value i
// of warp w at slot i·nw + w, then waits for all of them at a barrier. It
// returns the scratch's base address and the invocation's lane register
// (linear id lin mod 32).
func (e *emitter) storeWarpResults(ts []*loom.Type, lin string, rs []*val, nw int64) (base, lane string) {
	base = e.needScratch(int(8 * nw * int64(len(rs))))
	lane, warp := e.newReg(cR), e.newReg(cR)
	e.ins("and.b32 %s, %s, 31", lane, lin)
	e.ins("shr.u32 %s, %s, 5", warp, lin)
	lead := e.newReg(cPred)
	e.ins("setp.eq.u32 %s, %s, 0", lead, lane)
	skip := e.newLabel("wgred_skip")
	e.ins("@!%s bra %s", lead, skip)
	wa := e.newReg(cRd)
	e.ins("mad.wide.u32 %s, %s, 8, %s", wa, warp, base)
	for i, r := range rs {
		e.storeFrom(ts[i], "shared", "", slot(wa, 8*nw*int64(i)), r)
	}
	e.label(skip)
	e.workgroupBarrier(nil)
	return base, lane
}

// slot is the address reg+off (reg alone for off 0).
func slot(reg string, off int64) string {
	if off == 0 {
		return reg
	}
	return fmt.Sprintf("%s+%d", reg, off)
}

// workgroupReduce combines one value per invocation: a butterfly per warp,
// the warps' results through shared memory, then every warp reduces those
// (so no broadcast step is needed). The trailing barrier lets the next
// collective reuse the scratch. Sizes that are not a multiple of 32 gather
// each warp's existing lanes instead of the butterfly.
func (e *emitter) workgroupReduce(op *loom.Op) error {
	return e.workgroupReduces([]*loom.Op{op})
}

// fusableReduces is the number of ops from ops[0] on that workgroupReduces
// may lower together: adjacent workgroup reductions of scalars, none
// reading another's result, in a workgroup of more than one warp (two
// reductions then share their two barriers). 1 when there is nothing to
// fuse.
func (e *emitter) fusableReduces(ops []*loom.Op) int {
	if len(ops) < 2 || ops[0].Name != "kernel.workgroup.reduce" || ops[1].Name != "kernel.workgroup.reduce" || e.wgTotal() <= 32 {
		return 1
	}
	results := map[*loom.Value]bool{}
	k := 0
	for _, op := range ops {
		if op.Name != "kernel.workgroup.reduce" || len(op.Operands) != 1 || len(op.Results) != 1 {
			break
		}
		t := resultType(op, 0)
		if t == nil || t.Kind != loom.TypeInt && t.Kind != loom.TypeFloat || t.Bits > 64 || t.Bits == 1 {
			break
		}
		if v := op.Operands[0].Value; v != nil && results[v] {
			break
		}
		results[op.Results[0]] = true
		k++
	}
	return max(k, 1)
}

// reduceGroup lowers the adjacent workgroup reductions at the start of
// ops together when fusableReduces allows, and returns how many ops it
// lowered (0: none, the caller lowers ops[0] alone).
func (e *emitter) reduceGroup(ops []*loom.Op) (int, error) {
	k := e.fusableReduces(ops)
	if k < 2 {
		return 0, nil
	}
	return k, e.workgroupReduces(ops[:k])
}

// workgroupReduces lowers the workgroup reductions ops together: each
// warp reduces every value, lane 0 of each warp stores all of its
// results, one barrier, each value's second level, one trailing barrier
// (fusableReduces says which ops may be grouped).
func (e *emitter) workgroupReduces(ops []*loom.Op) error {
	n := e.wgTotal()
	if n == 0 {
		return unsupported(ops[0], "the workgroup size depends on workload arguments; workgroup collectives need a static size")
	}
	vs := make([]*val, len(ops))
	ts := make([]*loom.Type, len(ops))
	for i, op := range ops {
		e.cur = op
		v, err := e.collectiveValue(op)
		if err != nil {
			return err
		}
		if _, err := e.identity(op, op.Param, v.t); err != nil {
			return err
		}
		vs[i], ts[i] = v, v.t
	}
	lin := e.linearTid()
	full := n%32 == 0
	rs := make([]*val, len(ops))
	for i, op := range ops {
		e.cur = op
		var err error
		if full {
			rs[i], err = e.warpReduce(op, op.Param, vs[i], 32)
		} else {
			// A partial last warp: each warp gathers its existing
			// lanes (a tree of shfl.down steps that skip absent
			// lanes). (Before, every invocation combined all n values
			// from shared memory one by one: Loom's corpus bf16 down
			// projection, 592 invocations and two reductions a
			// workgroup, spent most of its time there.)
			rs[i], err = e.clusterReduce(op, op.Param, vs[i], 32, 1, e.lanesOfWarp())
		}
		if err != nil {
			return err
		}
	}
	if n == 32 {
		for i, op := range ops {
			if err := e.define(op, 0, rs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	nw := (n + 31) / 32
	base, lane := e.storeWarpResults(ts, lin.reg, rs, nw)
	totals := make([]*val, len(ops))
	if full {
		// Every warp reduces the nw results again, lane l taking warp
		// l's.
		in := e.newReg(cPred)
		e.ins("setp.lt.u32 %s, %s, %d", in, lane, nw)
		accs := make([]*val, len(ops))
		for i, op := range ops {
			x, err := e.identity(op, op.Param, ts[i])
			if err != nil {
				return err
			}
			accs[i] = e.phiFrom(x)
			e.mov(accs[i], x)
		}
		la := e.newReg(cRd)
		e.ins("mad.wide.u32 %s, %s, 8, %s", la, lane, base)
		skip := e.newLabel("wgred_id")
		e.ins("@!%s bra %s", in, skip)
		for i := range ops {
			e.mov(accs[i], e.loadInto(ts[i], "shared", "", slot(la, 8*nw*int64(i))))
		}
		e.label(skip)
		for i, op := range ops {
			e.cur = op
			var err error
			if totals[i], err = e.warpReduce(op, op.Param, accs[i], 32); err != nil {
				return err
			}
		}
	} else {
		// Every invocation combines the ⌈n/32⌉ results in warp order,
		// the same on every invocation.
		for i, op := range ops {
			e.cur = op
			acc := e.loadInto(ts[i], "shared", "", slot(base, 8*nw*int64(i)))
			for w := int64(1); w < nw; w++ {
				x := e.loadInto(ts[i], "shared", "", slot(base, 8*(nw*int64(i)+w)))
				var err error
				if acc, err = e.combine(op, op.Param, acc, x); err != nil {
					return err
				}
			}
			totals[i] = acc
		}
	}
	// The trailing barrier keeps a later collective's stores off the
	// scratch until every warp has read it; dropTrailingBarriers removes
	// it where nothing later can reuse the scratch.
	e.body.WriteString(trailingMark)
	e.workgroupBarrier(nil)
	for i, op := range ops {
		if err := e.define(op, 0, totals[i]); err != nil {
			return err
		}
	}
	return nil
}
