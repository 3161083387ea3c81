package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// Vectors are scalarized: a vector value is one register per component, in
// row-major lane order (LOOM.md §6.5 allows it: the vector type promises no
// particular instruction). Lane-wise ops reuse the scalar lowering once per
// component; only memory transfers may become PTX vector instructions.

// vectorShape returns the static dims of a vector type and its component
// count, refusing dynamic dims (they must specialize before lowering).
func vectorShape(op *loom.Op, t *loom.Type) ([]int64, int, error) {
	if t == nil || t.Kind != loom.TypeVector || t.Elem == nil {
		return nil, 0, invalid(op.Pos, "%s: expected a vector type, have %s", op.Name, typeName(t))
	}
	shape := make([]int64, len(t.Dims))
	n := 1
	for i, d := range t.Dims {
		if d.Value != nil {
			return nil, 0, unsupported(op, "vector with a dynamic dimension %%%s", d.Value.Name)
		}
		if d.Size < 0 || d.Size > 1024 {
			return nil, 0, unsupported(op, "vector dimension %d (at most 1024 components are scalarized)", d.Size)
		}
		shape[i] = d.Size
		n *= int(d.Size)
	}
	if n > 1024 {
		return nil, 0, unsupported(op, "vector of %d components (at most 1024 are scalarized)", n)
	}
	if err := scalarOK(op, t.Elem); err != nil {
		return nil, 0, err
	}
	return shape, n, nil
}

// vecVal wraps components as a vector value of type t.
func vecVal(t *loom.Type, shape []int64, comps []*val) *val {
	return &val{t: t, vec: comps, shape: shape}
}

// vecOperand returns an operand that must be a vector.
func (e *emitter) vecOperand(o *loom.Operand) (*val, error) {
	v, err := e.get(o)
	if err != nil {
		return nil, err
	}
	if v.vec == nil && (v.t == nil || v.t.Kind != loom.TypeVector) {
		return nil, invalid(o.Pos, "%%%s is not a vector", o.Name)
	}
	return v, nil
}

// vecResultType is the vector type a vector op produces.
func vecResultType(op *loom.Op) *loom.Type {
	if len(op.Results) > 0 && op.Results[0].Type != nil {
		return op.Results[0].Type
	}
	if len(op.ResultTypes) > 0 {
		return op.ResultTypes[len(op.ResultTypes)-1]
	}
	if len(op.Types) > 0 {
		return op.Types[len(op.Types)-1]
	}
	return nil
}

func (e *emitter) vector(op *loom.Op, rest string) error {
	switch rest {
	case "constant", "poison", "empty":
		return e.vecConstant(op, rest)
	case "splat", "broadcast":
		return e.vecBroadcast(op)
	case "from_elements":
		return e.vecFromElements(op)
	case "iota":
		return e.vecIota(op)
	case "mask.range":
		return e.vecMaskRange(op)
	case "extract":
		return e.vecExtract(op)
	case "insert":
		return e.vecInsert(op)
	case "slice":
		return e.vecSlice(op)
	case "transpose":
		return e.vecTranspose(op)
	case "select":
		return e.vecSelect(op)
	case "reduce":
		return e.vecReduce(op)
	case "dotf":
		return e.vecDot(op)
	case "dot4i":
		return e.vecDot4i(op)
	case "load", "store", "load.mask", "store.mask":
		return e.vecMemory(op, rest)
	case "fragment", "fragment.load", "fragment.store":
		return e.fragmentOp(op, rest)
	case "mma":
		return e.mma(op)
	}
	if rest == "assume" || rest == "scale" || rest == "cast" || rest == "cmp" {
		return unsupported(op, "op is not lowered to PTX")
	}
	if _, ok := intBinary[rest]; ok || floatBinary[rest] != "" || floatRound[rest] != "" || castOps[rest] || laneUnary[rest] || rest == "cmpi" || rest == "cmpf" {
		return e.laneWise(op, rest)
	}
	return unsupported(op, "op is not lowered to PTX")
}

// laneUnary lists the other scalar.* ops that have a lane-wise vector form.
var laneUnary = map[string]bool{
	"negf": true, "absf": true, "sqrtf": true, "roundf": true, "copysignf": true, "fmaf": true,
	"expf": true, "exp2f": true, "logf": true, "log2f": true, "log10f": true, "tanhf": true,
	"erff": true, "rsqrtf": true, "logisticf": true, "siluf": true, "sinf": true, "cosf": true,
	"negi": true, "absi": true, "ctpopi": true, "ctlzi": true, "cttzi": true, "madd": true, "fmai": true,
	"isnanf": true, "isinff": true, "isfinitef": true, "powf": true, "remf": true,
}

// scalarTypeOf maps a vector type to its element type; others are kept.
func scalarTypeOf(t *loom.Type) *loom.Type {
	if t != nil && t.Kind == loom.TypeVector && t.Elem != nil {
		return t.Elem
	}
	return t
}

// laneWise lowers a lane-wise op by running the scalar lowering of the
// same op once per component, on a copy of the op whose operands are
// bound to the components and whose types are the element types.
func (e *emitter) laneWise(op *loom.Op, rest string) error {
	rt := vecResultType(op)
	shape, n, err := vectorShape(op, rt)
	if err != nil {
		return err
	}
	args, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	for i, a := range args {
		if a.vec != nil && len(a.vec) != n {
			return invalid(op.Operands[i].Pos, "%s: operand %%%s has %d components, result %d", op.Name, op.Operands[i].Name, len(a.vec), n)
		}
	}
	lane := *op
	lane.Name = "scalar." + rest
	lane.Types = make([]*loom.Type, len(op.Types))
	for i, t := range op.Types {
		lane.Types[i] = scalarTypeOf(t)
	}
	lane.ResultTypes = make([]*loom.Type, len(op.ResultTypes))
	for i, t := range op.ResultTypes {
		lane.ResultTypes[i] = scalarTypeOf(t)
	}
	res := &loom.Value{Name: "lane", Type: rt.Elem, Def: &lane}
	lane.Results = []*loom.Value{res}
	lane.Operands = make([]*loom.Operand, len(op.Operands))
	tmp := make([]*loom.Value, len(op.Operands))
	for i, o := range op.Operands {
		tmp[i] = &loom.Value{Name: o.Name, Type: scalarTypeOf(args[i].t), Pos: o.Pos}
		lane.Operands[i] = &loom.Operand{Pos: o.Pos, Name: o.Name, Value: tmp[i]}
	}
	comps := make([]*val, n)
	for c := range n {
		for i, a := range args {
			if a.vec != nil {
				e.vals[tmp[i]] = a.vec[c]
			} else {
				e.vals[tmp[i]] = a
			}
		}
		if err := e.arith(&lane, rest); err != nil {
			return err
		}
		comps[c] = e.vals[res]
		if comps[c] == nil {
			return invalid(op.Pos, "%s produced no value", op.Name)
		}
	}
	for _, v := range tmp {
		delete(e.vals, v)
	}
	delete(e.vals, res)
	return e.define(op, 0, vecVal(rt, shape, comps))
}

// splat returns n references to one scalar (registers are never written
// twice, so components may share one).
func splat(x *val, n int) []*val {
	out := make([]*val, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func (e *emitter) vecConstant(op *loom.Op, rest string) error {
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	var x *val
	if rest == "constant" {
		scalar := *op
		scalar.Types = []*loom.Type{t.Elem}
		scalar.ResultTypes = nil
		res := &loom.Value{Name: "splat", Type: t.Elem, Def: &scalar}
		scalar.Results = []*loom.Value{res}
		if err := e.constant(&scalar); err != nil {
			return err
		}
		x = e.vals[res]
		delete(e.vals, res)
	} else if isFloat(t.Elem) {
		// poison/empty components are unspecified; zero keeps every
		// register defined.
		x = e.constFloat(t.Elem, 0)
	} else {
		x = e.constInt(t.Elem, 0)
	}
	return e.define(op, 0, vecVal(t, shape, splat(x, n)))
}

func (e *emitter) vecBroadcast(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	x, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	if x.vec == nil {
		if x.t == nil || classOf(x.t) != classOf(t.Elem) || !x.t.IsScalar() {
			return invalid(op.Pos, "%s of %s to %s", op.Name, typeName(x.t), t)
		}
		return e.define(op, 0, vecVal(t, shape, splat(x, n)))
	}
	m := len(x.vec)
	if m == 0 || n%m != 0 {
		return invalid(op.Pos, "%s from %d to %d components", op.Name, m, n)
	}
	comps := make([]*val, n)
	for i := range comps {
		comps[i] = x.vec[i%m]
	}
	return e.define(op, 0, vecVal(t, shape, comps))
}

func (e *emitter) vecFromElements(op *loom.Op) error {
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	xs, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	if len(xs) != n {
		return invalid(op.Pos, "vector.from_elements: %d elements for %d components", len(xs), n)
	}
	for _, x := range xs {
		if x.t == nil || !x.t.IsScalar() || classOf(x.t) != classOf(t.Elem) {
			return invalid(op.Pos, "vector.from_elements: element of type %s for %s", typeName(x.t), t)
		}
	}
	return e.define(op, 0, vecVal(t, shape, xs))
}

// vecIota is base + i*step per component; float lanes round once per
// component as the CPU executor does (base + float(i)*step, fused).
func (e *emitter) vecIota(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	base, step := a[0], a[1]
	if base.t == nil || step.t == nil || classOf(base.t) != classOf(t.Elem) || classOf(step.t) != classOf(t.Elem) {
		return invalid(op.Pos, "vector.iota operands %s, %s for %s", typeName(base.t), typeName(step.t), t)
	}
	if isHalf(t.Elem) || classOf(t.Elem) == cPred {
		return unsupported(op, "iota of %s", t.Elem)
	}
	comps := make([]*val, n)
	for i := range comps {
		out := e.newVal(t.Elem)
		switch {
		case i == 0:
			out = base
		case isFloat(t.Elem):
			k := e.constFloat(t.Elem, float64(i))
			e.ins("fma.rn.%s %s, %s, %s, %s", t.Elem.Name, out.reg, k.reg, step.reg, base.reg)
		default:
			e.ins("mad.lo.%s %s, %s, %d, %s", sType(t.Elem), out.reg, step.reg, i, base.reg)
			e.sext(out)
		}
		comps[i] = out
	}
	return e.define(op, 0, vecVal(t, shape, comps))
}

// vecMaskRange sets lane i when lo + i*step < hi (signed index compare).
func (e *emitter) vecMaskRange(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	if classOf(t.Elem) != cPred {
		return invalid(op.Pos, "vector.mask.range produces %s, want a vector of i1", t)
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	for _, x := range a {
		if x.t == nil || classOf(x.t) != cR {
			return invalid(op.Pos, "vector.mask.range bound of type %s, want index", typeName(x.t))
		}
	}
	lo, hi, step := a[0], a[1], a[2]
	comps := make([]*val, n)
	for i := range comps {
		at := lo
		if i > 0 {
			at = e.newVal(indexType)
			e.ins("mad.lo.s32 %s, %s, %d, %s", at.reg, step.reg, i, lo.reg)
		}
		p := e.newVal(t.Elem)
		e.ins("setp.lt.s32 %s, %s, %s", p.reg, at.reg, hi.reg)
		comps[i] = p
	}
	return e.define(op, 0, vecVal(t, shape, comps))
}

// flatPos turns per-axis vector positions into a component index: a known
// one, or a register when some position is dynamic.
func (e *emitter) flatPos(op *loom.Op, shape []int64, idx []*val) (int, *val, error) {
	if len(idx) != len(shape) {
		return 0, nil, invalid(op.Pos, "%s: %d positions for a rank-%d vector", op.Name, len(idx), len(shape))
	}
	known := true
	f := int64(0)
	for k, i := range idx {
		if i.t == nil || classOf(i.t) != cR {
			return 0, nil, invalid(op.Pos, "%s: position %d of type %s, want index", op.Name, k, typeName(i.t))
		}
		if !i.known {
			known = false
			continue
		}
		if i.ci < 0 || i.ci >= shape[k] {
			return 0, nil, invalid(op.Pos, "%s: position %d outside dimension %d", op.Name, i.ci, shape[k])
		}
		f = f*shape[k] + i.ci
	}
	if known {
		return int(f), nil, nil
	}
	// Out-of-range dynamic positions select nothing (the CPU executor
	// traps there; the GPU does not check).
	acc := e.newVal(indexType)
	e.ins("mov.b32 %s, 0", acc.reg)
	for k, i := range idx {
		e.ins("mad.lo.s32 %s, %s, %d, %s", acc.reg, acc.reg, shape[k], i.reg)
	}
	return -1, acc, nil
}

func (e *emitter) vecExtract(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.vecOperand(op.Operands[0])
	if err != nil {
		return err
	}
	idx, err := e.operands(op, 1)
	if err != nil {
		return err
	}
	f, reg, err := e.flatPos(op, v.shape, idx)
	if err != nil {
		return err
	}
	if reg == nil {
		return e.define(op, 0, v.vec[f])
	}
	out := &val{t: v.t.Elem, reg: e.newReg(classOf(v.t.Elem))}
	e.mov(out, v.vec[0])
	for c := 1; c < len(v.vec); c++ {
		p := e.newReg(cPred)
		e.ins("setp.eq.s32 %s, %s, %d", p, reg.reg, c)
		e.ins("@%s mov.%s %s, %s", p, movType(classOf(out.t)), out.reg, v.vec[c].reg)
	}
	return e.define(op, 0, out)
}

func (e *emitter) vecInsert(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	x, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	v, err := e.vecOperand(op.Operands[1])
	if err != nil {
		return err
	}
	idx, err := e.operands(op, 2)
	if err != nil {
		return err
	}
	if x.t == nil || !x.t.IsScalar() || classOf(x.t) != classOf(v.t.Elem) {
		return invalid(op.Pos, "inserting %s into %s", typeName(x.t), v.t)
	}
	f, reg, err := e.flatPos(op, v.shape, idx)
	if err != nil {
		return err
	}
	comps := append([]*val(nil), v.vec...)
	if reg == nil {
		comps[f] = x
		return e.define(op, 0, vecVal(v.t, v.shape, comps))
	}
	for c := range comps {
		p := &val{t: i1Type, reg: e.newReg(cPred)}
		e.ins("setp.eq.s32 %s, %s, %d", p.reg, reg.reg, c)
		s, err := e.sel(op.Pos, p, x, comps[c])
		if err != nil {
			return err
		}
		comps[c] = s
	}
	return e.define(op, 0, vecVal(v.t, v.shape, comps))
}

func (e *emitter) vecSlice(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.vecOperand(op.Operands[0])
	if err != nil {
		return err
	}
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	offs, err := e.operands(op, 1)
	if err != nil {
		return err
	}
	if len(offs) != len(v.shape) || len(shape) != len(v.shape) {
		return unsupported(op, "slice with %d offsets from rank %d to rank %d", len(offs), len(v.shape), len(shape))
	}
	for i, o := range offs {
		if !o.known {
			return unsupported(op, "slice at a non-constant offset %%%s", op.Operands[1+i].Name)
		}
	}
	comps := make([]*val, n)
	ix := make([]int64, len(shape))
	for i := range comps {
		rem := int64(i)
		for k := len(shape) - 1; k >= 0; k-- {
			ix[k] = rem%shape[k] + offs[k].ci
			rem /= shape[k]
		}
		f := int64(0)
		for k, d := range v.shape {
			if ix[k] < 0 || ix[k] >= d {
				return invalid(op.Pos, "vector.slice outside the source shape %v", v.shape)
			}
			f = f*d + ix[k]
		}
		comps[i] = v.vec[f]
	}
	return e.define(op, 0, vecVal(t, shape, comps))
}

// vecTranspose permutes the component registers; no instruction moves.
func (e *emitter) vecTranspose(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.vecOperand(op.Operands[0])
	if err != nil {
		return err
	}
	t := vecResultType(op)
	shape, n, err := vectorShape(op, t)
	if err != nil {
		return err
	}
	lanes, err := loom.TransposeLanes(op, v.shape)
	if err != nil {
		return invalid(op.Pos, "%v", err)
	}
	if len(lanes) != n || len(v.vec) != n {
		return invalid(op.Pos, "vector.transpose of %s to %s", typeName(v.t), t)
	}
	comps := make([]*val, n)
	for i, l := range lanes {
		comps[i] = v.vec[l]
	}
	return e.define(op, 0, vecVal(t, shape, comps))
}

func (e *emitter) vecSelect(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	m, x, y := a[0], a[1], a[2]
	if x.vec == nil || y.vec == nil || len(x.vec) != len(y.vec) || (m.vec != nil && len(m.vec) != len(x.vec)) {
		return invalid(op.Pos, "vector.select of differently shaped operands")
	}
	comps := make([]*val, len(x.vec))
	for i := range comps {
		c := m
		if m.vec != nil {
			c = m.vec[i]
		}
		if c.t == nil || classOf(c.t) != cPred {
			return invalid(op.Pos, "vector.select mask of type %s", typeName(c.t))
		}
		s, err := e.sel(op.Pos, c, x.vec[i], y.vec[i])
		if err != nil {
			return err
		}
		comps[i] = s
	}
	return e.define(op, 0, vecVal(x.t, x.shape, comps))
}

// vecReduce folds the components into init in component order, matching
// the CPU executor's sequence (and so its rounding) exactly.
func (e *emitter) vecReduce(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	v, err := e.vecOperand(op.Operands[0])
	if err != nil {
		return err
	}
	acc, err := e.get(op.Operands[1])
	if err != nil {
		return err
	}
	if acc.t == nil || !acc.t.IsScalar() || classOf(acc.t) != classOf(v.t.Elem) {
		return invalid(op.Pos, "vector.reduce init of type %s for %s", typeName(acc.t), v.t)
	}
	for _, c := range v.vec {
		if acc, err = e.combine(op, op.Param, acc, c); err != nil {
			return err
		}
	}
	return e.define(op, 0, acc)
}

// vecDot is a chain of fused multiply-adds into the accumulator, in
// component order, each rounded to the accumulator type.
func (e *emitter) vecDot(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	x, y, acc := a[0], a[1], a[2]
	if x.vec == nil || y.vec == nil || len(x.vec) != len(y.vec) {
		return invalid(op.Pos, "vector.dotf of differently shaped operands")
	}
	if !isFloat(acc.t) || isHalf(acc.t) || !isFloat(x.t.Elem) || !sameKind(x.t.Elem, acc.t) || !sameKind(y.t.Elem, acc.t) {
		return unsupported(op, "dot of %s with accumulator %s", x.t, typeName(acc.t))
	}
	for i := range x.vec {
		out := e.newVal(acc.t)
		e.ins("fma.rn.%s %s, %s, %s, %s", acc.t.Name, out.reg, x.vec[i].reg, y.vec[i].reg, acc.reg)
		acc = out
	}
	return e.define(op, 0, acc)
}
