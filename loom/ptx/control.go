package ptx

import (
	"fmt"
	"slices"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// phiFrom makes a fresh value with the structure of src (fresh registers
// for the scalar or base, and for a view's dims and strides) so several
// control paths can assign it. Compile-time constants are dropped.
func (e *emitter) phiFrom(src *val) *val {
	out := &val{t: src.t, space: src.space, elem: src.elem, shape: src.shape, frag: src.frag}
	if src.vec != nil {
		out.vec = make([]*val, len(src.vec))
		for i, c := range src.vec {
			out.vec[i] = e.phiFrom(c)
		}
		return out
	}
	if src.t != nil && src.t.IsScalar() {
		out.reg = e.newReg(classOf(src.t))
	} else {
		out.reg = e.addrLike(src.reg)
	}
	for _, d := range src.dims {
		out.dims = append(out.dims, e.phiFrom(d))
	}
	for _, s := range src.strides {
		out.strides = append(out.strides, e.phiFrom(s))
	}
	return out
}

// assign copies src into a value made by phiFrom.
func (e *emitter) assign(pos loom.Pos, dst, src *val) error {
	if dst.frag != nil || src.frag != nil {
		var err error
		if src, err = e.joinFragment(dst, src); err != nil {
			return err
		}
	}
	if dst.space != src.space || len(dst.dims) != len(src.dims) || len(dst.strides) != len(src.strides) {
		return fmt.Errorf("%s: %w: control paths join values of different shape or memory space (%s, %s)", pos, ErrUnsupported, spaceName(dst), spaceName(src))
	}
	if dst.vec != nil || src.vec != nil {
		if len(dst.vec) != len(src.vec) || dst.vec == nil || src.vec == nil {
			return invalid(pos, "joined vectors have types %s and %s", typeName(dst.t), typeName(src.t))
		}
		for i := range dst.vec {
			if err := e.assign(pos, dst.vec[i], src.vec[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if dst.t != nil && dst.t.IsScalar() {
		if src.t == nil || classOf(src.t) != classOf(dst.t) {
			return invalid(pos, "joined values have types %s and %s", typeName(dst.t), typeName(src.t))
		}
		e.mov(dst, src)
	} else {
		e.ins("mov.%s %s, %s", addrBits(dst.reg), dst.reg, src.reg)
	}
	for i := range dst.dims {
		if err := e.assign(pos, dst.dims[i], src.dims[i]); err != nil {
			return err
		}
	}
	for i := range dst.strides {
		if err := e.assign(pos, dst.strides[i], src.strides[i]); err != nil {
			return err
		}
	}
	return nil
}

func spaceName(v *val) string {
	if v.space == "" {
		return "register"
	}
	return v.space
}

// joins is a set of values that several control paths assign.
type joins struct{ vals []*val }

// set assigns the values, creating the joins on first use. Sources are
// first copied to temporaries so that a yield may permute loop-carried
// registers (scf.yield %b, %a).
func (e *emitter) setJoins(pos loom.Pos, j *joins, srcs []*val, parallel bool) error {
	for _, s := range srcs {
		if s.wide {
			// A join register would lose the fact that its 32 bits are
			// to be read unsigned (val.wide).
			return fmt.Errorf("%s: %w: yielding an index that may exceed 2^31-1 (held unsigned in its 32-bit register) out of a region", pos, ErrUnsupported)
		}
	}
	if j.vals == nil {
		for _, s := range srcs {
			j.vals = append(j.vals, e.phiFrom(s))
		}
	}
	if len(srcs) != len(j.vals) {
		return invalid(pos, "yields %d values; want %d", len(srcs), len(j.vals))
	}
	if parallel {
		// Only a source that is itself a join register (scf.yield %b, %a)
		// can be overwritten before it is read; the others go straight in,
		// so ptxas sees one copy per loop-carried value, which it folds.
		dst := map[string]bool{}
		for _, v := range j.vals {
			joinRegs(v, dst)
		}
		srcs = slices.Clone(srcs)
		for i, s := range srcs {
			if sameRegs(s, j.vals[i]) {
				srcs[i] = nil // already in place (an accumulator updated in place)
				continue
			}
			if !readsAny(s, dst) {
				continue
			}
			tmp := e.phiFrom(s)
			if err := e.assign(pos, tmp, s); err != nil {
				return err
			}
			srcs[i] = tmp
		}
	}
	for i, s := range srcs {
		if s == nil {
			continue
		}
		if err := e.assign(pos, j.vals[i], s); err != nil {
			return err
		}
	}
	return nil
}

// sameRegs reports whether two vector values are held in the same
// registers, component by component.
func sameRegs(a, b *val) bool {
	if len(a.vec) == 0 || len(a.vec) != len(b.vec) {
		return false
	}
	for i := range a.vec {
		if a.vec[i].reg == "" || a.vec[i].reg != b.vec[i].reg {
			return false
		}
	}
	return true
}

// joinRegs adds the registers of v (components, dims, strides) to set.
func joinRegs(v *val, set map[string]bool) {
	if v.reg != "" {
		set[v.reg] = true
	}
	for _, c := range v.vec {
		joinRegs(c, set)
	}
	for _, d := range v.dims {
		joinRegs(d, set)
	}
	for _, s := range v.strides {
		joinRegs(s, set)
	}
}

// readsAny reports whether assigning from v reads a register in set.
func readsAny(v *val, set map[string]bool) bool {
	if v.reg != "" && set[v.reg] {
		return true
	}
	for _, l := range [][]*val{v.vec, v.dims, v.strides} {
		for _, c := range l {
			if readsAny(c, set) {
				return true
			}
		}
	}
	return false
}

// term lowers the region's ops, handing its terminator (scf.yield or
// scf.condition) to onTerm.
func (e *emitter) regionWith(r *loom.Region, terms []string, onTerm func(op *loom.Op, vals []*val) error) error {
	return e.regionSkipping(r, nil, terms, onTerm)
}

// regionSkipping is regionWith that leaves out the ops in skip (lowered
// already, their results bound).
func (e *emitter) regionSkipping(r *loom.Region, skip map[*loom.Op]bool, terms []string, onTerm func(op *loom.Op, vals []*val) error) error {
	inPlace := false // the body ends in a yield that leaves wgmma ops in flight
	for i := 0; i < len(r.Ops); i++ {
		op := r.Ops[i]
		if skip[op] {
			continue
		}
		if !slices.Contains(terms, op.Name) {
			e.wgmmaBefore(op) // a terminator settles in-flight wgmma below
		}
		k, err := e.reduceGroup(r.Ops[i:])
		if err != nil {
			return err
		}
		if k > 0 {
			i += k - 1
			continue
		}
		e.cur = op
		if slices.Contains(terms, op.Name) {
			vals, err := e.operands(op, 0)
			if err != nil {
				return err
			}
			if op.Name == "scf.yield" && e.wgmmaYieldInPlace(r, op, vals) {
				inPlace = true
			} else {
				e.wgmmaFlush()
			}
			if err := onTerm(op, vals); err != nil {
				return err
			}
			continue
		}
		if err := e.op(op); err != nil {
			return err
		}
	}
	if !inPlace {
		e.wgmmaFlush()
	}
	return nil
}

func (e *emitter) control(op *loom.Op, rest string) error {
	switch rest {
	case "if":
		return e.scfIf(op)
	case "for":
		e.loops++
		defer func() { e.loops-- }()
		return e.scfFor(op)
	case "while":
		e.loops++
		defer func() { e.loops-- }()
		return e.scfWhile(op)
	case "select":
		return e.scfSelect(op)
	case "switch":
		return e.scfSwitch(op)
	case "lookup":
		return e.scfLookup(op)
	case "yield", "condition":
		return invalid(op.Pos, "%s outside of its structured op", op.Name)
	case "schedule.fence":
		return nil // a scheduling hint
	}
	return unsupported(op, "op is not lowered to PTX")
}

func (e *emitter) bindJoins(op *loom.Op, j *joins) error {
	if len(op.Results) > 0 && len(j.vals) != len(op.Results) {
		return invalid(op.Pos, "%s has %d results but yields %d values", op.Name, len(op.Results), len(j.vals))
	}
	for i, r := range op.Results {
		e.vals[r] = j.vals[i]
	}
	return nil
}

func (e *emitter) pred(o *loom.Operand) (*val, error) {
	c, err := e.get(o)
	if err != nil {
		return nil, err
	}
	if c.t == nil || classOf(c.t) != cPred || !c.t.IsScalar() {
		return nil, invalid(o.Pos, "condition %%%s is %s, not i1", o.Name, typeName(c.t))
	}
	return c, nil
}

func (e *emitter) scfIf(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	c, err := e.pred(op.Operands[0])
	if err != nil {
		return err
	}
	if len(op.Regions) == 0 {
		return invalid(op.Pos, "scf.if without a region")
	}
	elseL, end := e.newLabel("else"), e.newLabel("endif")
	j := &joins{}
	yield := func(y *loom.Op, vals []*val) error { return e.setJoins(y.Pos, j, vals, false) }
	yield, shared := sharingYields(j, yield)
	e.ins("@!%s bra %s", c.reg, elseL)
	if err := e.regionWith(op.Regions[0], []string{"scf.yield"}, yield); err != nil {
		return err
	}
	if len(op.Regions) > 1 {
		e.ins("bra.uni %s", end)
		e.label(elseL)
		if err := e.regionWith(op.Regions[1], []string{"scf.yield"}, yield); err != nil {
			return err
		}
		e.label(end)
	} else {
		if len(op.Results) > 0 {
			return invalid(op.Pos, "scf.if with results needs an else region")
		}
		e.label(elseL)
	}
	shared()
	return e.bindJoins(op, j)
}

// sharingYields wraps the yield of a non-loop join (scf.if, scf.switch):
// it remembers what each branch yields, and shared then gives the join
// values the facts all of them hold (shareFacts). A loop's carried values
// are read before the back edge's yield is seen, so loops do not use it.
func sharingYields(j *joins, yield func(*loom.Op, []*val) error) (func(*loom.Op, []*val) error, func()) {
	var seen [][]*val
	wrapped := func(y *loom.Op, vals []*val) error {
		seen = append(seen, vals)
		return yield(y, vals)
	}
	shared := func() {
		for i, v := range j.vals {
			srcs := make([]*val, 0, len(seen))
			for _, vals := range seen {
				if i < len(vals) {
					srcs = append(srcs, vals[i])
				}
			}
			if len(srcs) == len(seen) {
				shareFacts(v, srcs...)
			}
		}
	}
	return wrapped, shared
}

func (e *emitter) scfFor(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	if len(op.Regions) == 0 || len(op.Regions[0].Args) == 0 || len(op.Regions[0].Args)+2 > len(a) {
		return invalid(op.Pos, "scf.for region must take the induction variable and one arg per init")
	}
	// Operands after the inits are clause arguments (pipeline(%d)):
	// scheduling hints that do not change results.
	lb, ub, step, inits := a[0], a[1], a[2], a[3:3+len(op.Regions[0].Args)-1]
	t := lb.t
	if t == nil || (t.Kind != loom.TypeIndex && t.Kind != loom.TypeOffset) {
		return invalid(op.Pos, "scf.for bounds of type %s", typeName(t))
	}
	if err := refuseWide(op, a[:3]); err != nil {
		return err
	}
	if trips, ok := unrollTrips(op, lb, ub, step); ok {
		return e.unrolledFor(op, lb, step, inits, trips)
	}
	iv := e.newVal(t)
	iv.p2 = min(pow2Of(lb), pow2Of(step))
	e.mov(iv, lb)
	if inits, err = e.fragmentInits(op, inits); err != nil {
		return err
	}
	j := &joins{}
	if err := e.setJoins(op.Pos, j, inits, false); err != nil {
		return err
	}
	body := op.Regions[0]
	head, end := e.newLabel("for"), e.newLabel("endfor")
	if f := sweepUnroll(op, lb, ub, step); f > 1 {
		// Trips of f body copies first; the loop below runs the rest.
		if err := e.sweepTrips(op, ub, step, iv, j, f, end); err != nil {
			return err
		}
	}
	bindBody(e, body, iv, j.vals)
	if e.carried == nil {
		e.carried = map[*loom.Region]bool{}
	}
	e.carried[body] = true // the join registers, the loop's own
	done := e.newReg(cPred)
	deferred, ran := e.beginDefer(body)
	e.label(head)
	e.wgmmaLoopEntry(body)
	e.ins("setp.ge.%s %s, %s, %s", forCompare(t), done, iv.reg, ub.reg)
	e.ins("@%s bra %s", done, end)
	e.bodyRan(ran)
	yield := func(y *loom.Op, vals []*val) error { return e.setJoins(y.Pos, j, vals, true) }
	if err := e.regionWith(body, []string{"scf.yield"}, yield); err != nil {
		return err
	}
	e.ins("add.%s %s, %s, %s", sType(t), iv.reg, iv.reg, step.reg)
	e.ins("bra.uni %s", head)
	e.label(end)
	e.endDefer(deferred, ran)
	return e.bindJoins(op, j)
}

// maxUnroll bounds the trip count of a loop the unroll clause expands.
const maxUnroll = 64

// unrollTrips reports whether an scf.for is expanded in full: it carries
// an unroll clause (bare, or a factor at least the trip count) and its
// bounds and step are compile-time constants giving at most maxUnroll
// trips. A smaller factor is a hint the backend leaves to ptxas.
func unrollTrips(op *loom.Op, lb, ub, step *val) (int64, bool) {
	var clause *loom.Attr
	for _, a := range op.Attrs {
		if a.Key == "unroll" {
			clause = a
		}
	}
	if clause == nil || !lb.known || !ub.known || !step.known || step.ci <= 0 {
		return 0, false
	}
	trips := max(0, (ub.ci-lb.ci+step.ci-1)/step.ci)
	if trips > maxUnroll {
		return 0, false
	}
	if f := clause.Value; f.Kind == loom.LitInt && f.Int < trips {
		return 0, false
	}
	return trips, true
}

// unrolledFor lowers the body once per trip with the induction variable a
// constant and the loop-carried values passed straight from one copy to
// the next: no branch, no copies, and constant indices the addressing
// folds.
func (e *emitter) unrolledFor(op *loom.Op, lb, step *val, inits []*val, trips int64) error {
	body := op.Regions[0]
	cur := inits
	for i := range trips {
		bindBody(e, body, e.constInt(lb.t, lb.ci+i*step.ci), cur)
		if err := e.regionWith(body, []string{"scf.yield"}, passYield(&cur)); err != nil {
			return err
		}
	}
	for i, v := range cur {
		if err := e.define(op, i, v); err != nil {
			return err
		}
	}
	return nil
}

// forCompare is the setp type that ends an scf.for of bounds type t.
func forCompare(t *loom.Type) string {
	if t.Kind == loom.TypeOffset {
		return "u64"
	}
	return "s32"
}

// bindBody gives an scf.for body its induction variable and carried values.
func bindBody(e *emitter, body *loom.Region, iv *val, carried []*val) {
	e.vals[body.Args[0]] = iv
	for i, arg := range body.Args[1:] {
		e.vals[arg] = carried[i]
	}
}

// passYield is the scf.yield of a body copy whose values go straight to
// the next copy: it replaces *cur with them.
func passYield(cur *[]*val) func(*loom.Op, []*val) error {
	return func(y *loom.Op, vals []*val) error {
		if len(vals) != len(*cur) {
			return invalid(y.Pos, "yields %d values; want %d", len(vals), len(*cur))
		}
		*cur = vals
		return nil
	}
}

func (e *emitter) scfWhile(op *loom.Op) error {
	inits, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	if len(op.Regions) != 2 {
		return invalid(op.Pos, "scf.while needs a before and a do region")
	}
	before, after := op.Regions[0], op.Regions[1]
	if len(before.Args) != len(inits) {
		return invalid(op.Pos, "scf.while before region takes %d args, given %d inits", len(before.Args), len(inits))
	}
	bj := &joins{}
	if err := e.setJoins(op.Pos, bj, inits, false); err != nil {
		return err
	}
	for i, arg := range before.Args {
		e.vals[arg] = bj.vals[i]
	}
	head, end := e.newLabel("while"), e.newLabel("endwhile")
	aj := &joins{}
	e.label(head)
	cond := func(c *loom.Op, vals []*val) error {
		if len(vals) == 0 || vals[0].t == nil || classOf(vals[0].t) != cPred {
			return invalid(c.Pos, "scf.condition needs an i1 first operand")
		}
		if err := e.setJoins(c.Pos, aj, vals[1:], false); err != nil {
			return err
		}
		e.ins("@!%s bra %s", vals[0].reg, end)
		return nil
	}
	if err := e.regionWith(before, []string{"scf.condition"}, cond); err != nil {
		return err
	}
	if aj.vals == nil && len(after.Args) > 0 {
		return invalid(op.Pos, "scf.while before region has no scf.condition")
	}
	for i, arg := range after.Args {
		if i < len(aj.vals) {
			e.vals[arg] = aj.vals[i]
		}
	}
	yield := func(y *loom.Op, vals []*val) error { return e.setJoins(y.Pos, bj, vals, true) }
	if err := e.regionWith(after, []string{"scf.yield"}, yield); err != nil {
		return err
	}
	e.ins("bra.uni %s", head)
	e.label(end)
	return e.bindJoins(op, aj)
}

// sel emits d = c ? a : b for values of any supported shape.
func (e *emitter) sel(pos loom.Pos, c, a, b *val) (*val, error) {
	if a.space != b.space || len(a.dims) != len(b.dims) || len(a.strides) != len(b.strides) {
		return nil, fmt.Errorf("%s: %w: selecting between values of different shape or memory space", pos, ErrUnsupported)
	}
	out := &val{t: a.t, space: a.space, elem: a.elem, shape: a.shape}
	if a.vec != nil || b.vec != nil {
		if len(a.vec) != len(b.vec) || a.vec == nil || b.vec == nil {
			return nil, invalid(pos, "selecting between %s and %s", typeName(a.t), typeName(b.t))
		}
		out.vec = make([]*val, len(a.vec))
		for i := range a.vec {
			s, err := e.sel(pos, c, a.vec[i], b.vec[i])
			if err != nil {
				return nil, err
			}
			out.vec[i] = s
		}
		return out, nil
	}
	scalar := a.t != nil && a.t.IsScalar()
	switch {
	case scalar && classOf(a.t) == cPred:
		out.reg = e.newReg(cPred)
		e.ins("mov.pred %s, %s", out.reg, b.reg)
		e.ins("@%s mov.pred %s, %s", c.reg, out.reg, a.reg)
	case scalar:
		out.reg = e.newReg(classOf(a.t))
		e.ins("selp.%s %s, %s, %s, %s", movType(classOf(a.t)), out.reg, a.reg, b.reg, c.reg)
	default:
		out.reg = e.addrLike(a.reg)
		e.ins("selp.%s %s, %s, %s, %s", addrBits(a.reg), out.reg, a.reg, b.reg, c.reg)
	}
	for i := range a.dims {
		d, err := e.sel(pos, c, a.dims[i], b.dims[i])
		if err != nil {
			return nil, err
		}
		out.dims = append(out.dims, d)
	}
	for i := range a.strides {
		s, err := e.sel(pos, c, a.strides[i], b.strides[i])
		if err != nil {
			return nil, err
		}
		out.strides = append(out.strides, s)
	}
	return out, nil
}

func (e *emitter) scfSelect(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	c, err := e.pred(op.Operands[0])
	if err != nil {
		return err
	}
	a, err := e.operands(op, 1)
	if err != nil {
		return err
	}
	out, err := e.sel(op.Pos, c, a[0], a[1])
	if err != nil {
		return err
	}
	out.wide = a[0].wide || a[1].wide // a select reads neither signed
	shareFacts(out, a[0], a[1])
	return e.define(op, 0, out)
}

// shareFacts gives v, which holds one of srcs (a select's operands, or
// what every branch of an if or switch yields), the facts that hold for
// all of them: the smallest power of two dividing an integer, its sign and
// magnitude where all have them, a buffer's or view's alignment under the
// same run-time predicate, and the same of a view's extents and strides
// and of a vector's components. A row or column chosen between two
// multiples of 16 bytes then still takes a 16-byte access.
func shareFacts(v *val, srcs ...*val) {
	if len(srcs) == 0 {
		return
	}
	if v.vec != nil {
		shareParts(v.vec, srcs, func(x *val) []*val { return x.vec })
		return
	}
	if v.t != nil && v.t.IsScalar() {
		if isFloat(v.t) || classOf(v.t) == cPred {
			return
		}
		v.p2, v.nonneg, v.mag = 1<<30, true, 0
		mag := 0
		for _, s := range srcs {
			v.p2 = min(v.p2, pow2Of(s))
			v.nonneg = v.nonneg && (s.nonneg || s.known && s.ci >= 0)
			if s.mag <= 0 {
				mag = -1
			} else if mag >= 0 {
				mag = max(mag, s.mag)
			}
		}
		if v.p2 <= 1 {
			v.p2 = 0
		}
		v.mag = max(mag, 0)
		return
	}
	v.align, v.alignPred, v.nat, v.nc = srcs[0].align, srcs[0].alignPred, srcs[0].nat, srcs[0].nc
	for _, s := range srcs[1:] {
		if s.alignPred != v.alignPred {
			v.align, v.alignPred = 0, ""
		}
		v.align, v.nat, v.nc = min(v.align, s.align), min(v.nat, s.nat), v.nc && s.nc
	}
	shareParts(v.dims, srcs, func(x *val) []*val { return x.dims })
	shareParts(v.strides, srcs, func(x *val) []*val { return x.strides })
}

// shareParts applies shareFacts to each of parts (a vector's components, a
// view's extents or strides) and the same part of every source.
func shareParts(parts, srcs []*val, of func(*val) []*val) {
	for i, p := range parts {
		same := make([]*val, len(srcs))
		for k, s := range srcs {
			if i >= len(of(s)) {
				return
			}
			same[k] = of(s)[i]
		}
		shareFacts(p, same...)
	}
}

func (e *emitter) scfSwitch(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	s, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	if s.t == nil || !s.t.IsScalar() || isFloat(s.t) || classOf(s.t) == cPred {
		return unsupported(op, "selector of type %s", typeName(s.t))
	}
	end := e.newLabel("endswitch")
	j := &joins{}
	yield := func(y *loom.Op, vals []*val) error { return e.setJoins(y.Pos, j, vals, false) }
	yield, shared := sharingYields(j, yield)
	hasDefault := false
	for _, r := range op.Regions {
		next := e.newLabel("case")
		if r.Label == "default" {
			hasDefault = true
		} else {
			p := e.newReg(cPred)
			e.ins("setp.ne.%s %s, %s, %d", bType(s.t), p, s.reg, r.Case)
			e.ins("@%s bra %s", p, next)
		}
		if err := e.regionWith(r, []string{"scf.yield"}, yield); err != nil {
			return err
		}
		e.ins("bra.uni %s", end)
		e.label(next)
	}
	if !hasDefault && len(op.Results) > 0 {
		return invalid(op.Pos, "scf.switch with results needs a default region")
	}
	e.label(end)
	shared()
	return e.bindJoins(op, j)
}

func (e *emitter) scfLookup(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	s, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	if s.t == nil || !s.t.IsScalar() || isFloat(s.t) || classOf(s.t) == cPred {
		return unsupported(op, "selector of type %s", typeName(s.t))
	}
	var def *loom.LookupCase
	for _, c := range op.Cases {
		if c.Default {
			def = c
		}
	}
	if def == nil {
		return invalid(op.Pos, "scf.lookup without a default row")
	}
	cur := make([]*val, len(def.Values))
	for i, o := range def.Values {
		if cur[i], err = e.get(o); err != nil {
			return err
		}
	}
	for _, c := range op.Cases {
		if c.Default {
			continue
		}
		if len(c.Values) != len(cur) {
			return invalid(c.Pos, "scf.lookup row has %d values; want %d", len(c.Values), len(cur))
		}
		p := &val{t: i1Type, reg: e.newReg(cPred)}
		e.ins("setp.eq.%s %s, %s, %d", bType(s.t), p.reg, s.reg, c.Key)
		for i, o := range c.Values {
			v, err := e.get(o)
			if err != nil {
				return err
			}
			if cur[i], err = e.sel(c.Pos, p, v, cur[i]); err != nil {
				return err
			}
		}
	}
	for i := range op.Results {
		if i < len(cur) {
			e.vals[op.Results[i]] = cur[i]
		}
	}
	return nil
}

// call inlines func.call, template.apply, func.apply and template.call.
func (e *emitter) call(op *loom.Op, rest string) error {
	var f *loom.Func
	switch {
	case op.Name == "func.call" || op.Name == "template.call":
		f = e.prog.Func(op.Symbol)
		if f == nil {
			return invalid(op.Pos, "%s: no function @%s", op.Name, op.Symbol)
		}
	case op.Name == "template.apply" || op.Name == "func.apply":
		var err error
		if f, err = e.provider(op); err != nil {
			return err
		}
	case rest == "return":
		return e.funcReturn(op)
	default:
		return unsupported(op, "op is not lowered to PTX")
	}
	if f.Body == nil {
		return unsupported(op, "@%s is only declared; inlining needs its body", f.Symbol)
	}
	if slices.Contains(e.calls, f.Symbol) || len(e.calls) > 64 {
		return unsupported(op, "recursion through @%s (%s) cannot be inlined", f.Symbol, strings.Join(e.calls, " → "))
	}
	args, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	params := f.Body.Args
	if len(params) == 0 {
		params = f.Params
	}
	if len(params) != len(args) {
		return invalid(op.Pos, "@%s takes %d arguments, given %d", f.Symbol, len(params), len(args))
	}
	for i, p := range params {
		e.vals[p] = args[i]
		if i < len(f.Params) {
			e.vals[f.Params[i]] = args[i]
		}
	}
	outer := e.frame
	fr := &inlineFrame{done: e.newLabel("ret_" + entryName(f.Symbol)), tail: tailReturn(f.Body)}
	e.frame = fr
	e.calls = append(e.calls, f.Symbol)
	err = e.region(f.Body)
	e.calls = e.calls[:len(e.calls)-1]
	e.frame = outer
	e.cur = op
	if err != nil {
		return err
	}
	e.label(fr.done)
	if len(op.Results) > len(fr.results) {
		return invalid(op.Pos, "@%s returns %d values; the call expects %d", f.Symbol, len(fr.results), len(op.Results))
	}
	for i, r := range op.Results {
		e.vals[r] = fr.results[i]
	}
	return nil
}

func (e *emitter) funcReturn(op *loom.Op) error {
	if e.frame == nil {
		return invalid(op.Pos, "%s outside of a function", op.Name)
	}
	vals, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	if op == e.frame.tail {
		e.frame.results = vals
		return nil
	}
	j := &joins{vals: e.frame.results}
	if err := e.setJoins(op.Pos, j, vals, false); err != nil {
		return err
	}
	e.frame.results = j.vals
	e.ins("bra.uni %s", e.frame.done)
	return nil
}

// tailReturn is body's func.return when it is the body's last op and its
// only return, else nil.
func tailReturn(body *loom.Region) *loom.Op {
	if body == nil || len(body.Ops) == 0 {
		return nil
	}
	last := body.Ops[len(body.Ops)-1]
	if last.Name != "func.return" || countReturns(body) != 1 {
		return nil
	}
	return last
}

func countReturns(r *loom.Region) int {
	n := 0
	for _, op := range r.Ops {
		if op.Name == "func.return" {
			n++
		}
		for _, sub := range op.Regions {
			n += countReturns(sub)
		}
	}
	return n
}

// provider picks the template provider for an apply through
// loom.SelectProvider, with the apply's compile-time-constant arguments.
func (e *emitter) provider(op *loom.Op) (*loom.Func, error) {
	fam := strings.TrimPrefix(op.Param, "@")
	cands := e.prog.Providers(fam)
	var args []*val
	if len(cands) > 1 {
		var err error
		if args, err = e.operands(op, 0); err != nil {
			return nil, err
		}
	}
	chain := make([]*loom.Func, 0, len(e.calls))
	for _, s := range e.calls {
		if f := e.prog.Func(s); f != nil {
			chain = append(chain, f)
		}
	}
	f, err := loom.SelectProviderFor(fam, cands, func(i int) (int64, bool) {
		if i < len(args) && args[i].known {
			return args[i].ci, true
		}
		return 0, false
	}, loom.SiteTarget(e.k, chain))
	if err != nil {
		return nil, unsupported(op, "%v", err)
	}
	if s := fmt.Sprintf("%s: %s → @%s", op.Pos, fam, f.Symbol); !slices.Contains(e.providers, s) {
		e.providers = append(e.providers, s)
	}
	e.ins("// %s resolves to provider @%s", op.Name, f.Symbol)
	return f, nil
}
