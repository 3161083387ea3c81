package loom

import (
	"fmt"
	"strings"
)

// symEval translates SSA values into Exprs by walking their def chains
// lazily: only what a query needs is translated, so an unsupported op that
// feeds nothing of interest is not an error. Values bound in bind (kernel
// signature arguments, or a callee's parameters) are the leaves.
type symEval struct {
	p     *Program
	bind  map[*Value]*Expr
	memo  map[*Value]symResult
	depth int    // call-inlining depth
	where string // "launch-config region", "kernel body": for messages
	// geom, when set, lets device queries of the launch geometry
	// (kernel.workgroup.count / kernel.workgroup.size) evaluate to the
	// launch-config expressions.
	geom *LaunchExprs
}

type symResult struct {
	e   *Expr
	err error
}

const maxInlineDepth = 16

func newSymEval(p *Program, where string) *symEval {
	return &symEval{p: p, bind: map[*Value]*Expr{}, memo: map[*Value]symResult{}, where: where}
}

func notEvaluable(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Class: ErrNotEvaluable, Msg: fmt.Sprintf(format, args...)}
}

// operand translates an operand: an inline literal becomes an index constant.
func (s *symEval) operand(o *Operand) (*Expr, error) {
	if o == nil {
		return nil, notEvaluable(Pos{}, "missing operand")
	}
	if o.Lit != nil {
		c, err := literalConst(o.Lit, typeIndex)
		if err != nil {
			return nil, notEvaluable(o.Pos, "%v", err)
		}
		return &Expr{Op: ExprConst, Type: typeIndex, Const: c, Pos: o.Pos}, nil
	}
	if o.Value == nil {
		return nil, notEvaluable(o.Pos, "%%%s is not defined", o.Name)
	}
	return s.value(o.Value, o.Pos)
}

func (s *symEval) value(v *Value, use Pos) (*Expr, error) {
	if e, ok := s.bind[v]; ok {
		return e, nil
	}
	if r, ok := s.memo[v]; ok {
		return r.e, r.err
	}
	// Mark before recursing: a cycle through the def chain (only possible in
	// a malformed tree) reads as not evaluable instead of looping.
	s.memo[v] = symResult{err: notEvaluable(use, "%%%s depends on itself", v.Name)}
	var r symResult
	switch {
	case v.Def == nil:
		r.err = notEvaluable(use, "%%%s is a region argument (loop variable or block argument) and has no value on the host", v.Name)
	case isBlockLabel(v.Def):
		r.err = notEvaluable(use, "%%%s is an argument of block %s and has no value on the host", v.Name, v.Def.Name)
	default:
		r.e, r.err = s.translate(v.Def, v.Index, v)
	}
	s.memo[v] = r
	return r.e, r.err
}

var binaryExprOps = map[string]ExprOp{
	"index.add": ExprAdd, "index.sub": ExprSub, "index.mul": ExprMul, "index.div": ExprDiv,
	"index.rem": ExprRem, "index.min": ExprMin, "index.max": ExprMax, "index.andi": ExprAnd,
	"index.ori": ExprOr, "index.xori": ExprXor, "index.shli": ExprShl, "index.shrsi": ExprShrS,
	"index.shrui": ExprShrU,
	"scalar.addi": ExprAdd, "scalar.subi": ExprSub, "scalar.muli": ExprMul, "scalar.divsi": ExprDiv,
	"scalar.divui": ExprDivU, "scalar.remsi": ExprRem, "scalar.remui": ExprRemU,
	"scalar.ceildivsi": ExprCeilDiv, "scalar.ceildivui": ExprCeilDivU,
	"scalar.minsi": ExprMin, "scalar.maxsi": ExprMax, "scalar.minui": ExprMinU, "scalar.maxui": ExprMaxU,
	"scalar.andi": ExprAnd, "scalar.ori": ExprOr, "scalar.xori": ExprXor, "scalar.shli": ExprShl,
	"scalar.shrsi": ExprShrS, "scalar.shrui": ExprShrU,
	"scalar.addf": ExprAdd, "scalar.subf": ExprSub, "scalar.mulf": ExprMul, "scalar.divf": ExprDiv,
	"scalar.minimumf": ExprMin, "scalar.maximumf": ExprMax,
}

var castExprKinds = map[string]string{
	"index.cast": "index", "scalar.extsi": "extsi", "scalar.extui": "extui", "scalar.trunci": "trunci",
	"scalar.sitofp": "sitofp", "scalar.uitofp": "uitofp", "scalar.fptosi": "fptosi",
	"scalar.fptoui": "fptoui", "scalar.extf": "extf", "scalar.fptrunc": "fptrunc",
	"scalar.bitcast": "bitcast",
}

// resultType is the type of result i of op, as the parser recorded it.
func resultType(op *Op, v *Value) *Type {
	if v != nil && v.Type != nil {
		return v.Type
	}
	if len(op.ResultTypes) > 0 {
		return op.ResultTypes[0]
	}
	if len(op.Types) > 0 {
		return op.Types[0]
	}
	return nil
}

func (s *symEval) operands(op *Op, n int) ([]*Expr, error) {
	if len(op.Operands) < n {
		return nil, notEvaluable(op.Pos, "%s expects %d operands, has %d", op.Name, n, len(op.Operands))
	}
	out := make([]*Expr, n)
	for i := 0; i < n; i++ {
		e, err := s.operand(op.Operands[i])
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (s *symEval) translate(op *Op, idx int, v *Value) (*Expr, error) {
	ty := resultType(op, v)
	mk := func(o ExprOp, t *Type, args ...*Expr) *Expr {
		return foldExpr(&Expr{Op: o, Type: t, Args: args, Pos: op.Pos})
	}
	if o, ok := binaryExprOps[op.Name]; ok {
		a, err := s.operands(op, 2)
		if err != nil {
			return nil, err
		}
		return mk(o, ty, a...), nil
	}
	if kind, ok := castExprKinds[op.Name]; ok {
		a, err := s.operands(op, 1)
		if err != nil {
			return nil, err
		}
		to := ty
		if len(op.ResultTypes) > 0 {
			to = op.ResultTypes[0]
		}
		e := mk(ExprCast, to, a[0])
		e.Pred = kind
		return foldExpr(e), nil
	}
	switch op.Name {
	case "index.constant", "scalar.constant":
		if op.Literal == nil || ty == nil {
			return nil, notEvaluable(op.Pos, "%s without a literal and type", op.Name)
		}
		c, err := literalConst(op.Literal, ty)
		if err != nil {
			return nil, notEvaluable(op.Pos, "%s: %v", op.Name, err)
		}
		return &Expr{Op: ExprConst, Type: ty, Const: c, Pos: op.Pos}, nil
	case "config.get":
		return &Expr{Op: ExprConfig, Type: ty, Symbol: op.Symbol, Pos: op.Pos}, nil
	case "target.subgroup.size":
		return &Expr{Op: ExprSubgroupSize, Type: typeIndex, Pos: op.Pos}, nil
	case "index.madd":
		a, err := s.operands(op, 3)
		if err != nil {
			return nil, err
		}
		return mk(ExprAdd, ty, mk(ExprMul, ty, a[0], a[1]), a[2]), nil
	case "index.scale":
		a, err := s.operands(op, 2)
		if err != nil {
			return nil, err
		}
		c := mk(ExprCast, typeOffset, a[0])
		c.Pred = "index"
		return mk(ExprMul, typeOffset, foldExpr(c), a[1]), nil
	case "scalar.negf", "scalar.negi":
		a, err := s.operands(op, 1)
		if err != nil {
			return nil, err
		}
		return mk(ExprNeg, ty, a[0]), nil
	case "index.cmp", "scalar.cmpi", "scalar.cmpf":
		a, err := s.operands(op, 2)
		if err != nil {
			return nil, err
		}
		e := &Expr{Op: ExprCmp, Type: typeBool, Pred: op.Pred, Args: a, Pos: op.Pos}
		return foldExpr(e), nil
	case "index.assume", "scalar.assume":
		if idx >= len(op.Operands) {
			return nil, notEvaluable(op.Pos, "%s has no operand for result %d", op.Name, idx)
		}
		return s.operand(op.Operands[idx])
	case "scf.select":
		a, err := s.operands(op, 3)
		if err != nil {
			return nil, err
		}
		return mk(ExprSelect, ty, a...), nil
	case "func.call":
		return s.call(op, idx)
	case "test.fact_buffer_memory_space", "test.fact_view_memory_space":
		// The config region sees the kernel's signature (bound to
		// workload or launch arguments) as global memory.
		if len(op.Operands) != 1 || ty == nil {
			return nil, notEvaluable(op.Pos, "%s takes one operand and one result", op.Name)
		}
		code := MemorySpaceFact(op.Operands[0].Value, func(a *Value) bool {
			e := s.bind[a]
			return e != nil && (e.Op == ExprWorkload || e.Op == ExprLaunch)
		})
		return &Expr{Op: ExprConst, Type: ty, Const: Const{Type: ty, Int: code}, Pos: op.Pos}, nil
	case "kernel.workgroup.count", "kernel.workgroup.size":
		if s.geom != nil {
			axis := strings.Index("xyz", strings.TrimSpace(op.Param))
			if axis >= 0 && len(strings.TrimSpace(op.Param)) == 1 {
				if op.Name == "kernel.workgroup.count" {
					return s.geom.Workgroups[axis], nil
				}
				return s.geom.WorkgroupSize[axis], nil
			}
		}
	}
	return nil, notEvaluable(op.Pos, "%s cannot be evaluated in the %s (only index/scalar arithmetic, scf.select, config.get, target.subgroup.size and pure calls can)", op.Name, s.where)
}

// call inlines a pure function call: the callee's func.return operand idx,
// with the callee's parameters bound to the call's argument expressions.
func (s *symEval) call(op *Op, idx int) (*Expr, error) {
	f := s.p.Func(op.Symbol)
	if f == nil || f.Body == nil {
		return nil, notEvaluable(op.Pos, "call to @%s cannot be evaluated: no function body is visible", op.Symbol)
	}
	if !op.HasWord("pure") && !f.HasModifier("pure") {
		return nil, notEvaluable(op.Pos, "call to @%s cannot be evaluated: neither the call nor the function is marked pure", op.Symbol)
	}
	if s.depth >= maxInlineDepth {
		return nil, notEvaluable(op.Pos, "call to @%s nests deeper than %d calls (recursion?)", op.Symbol, maxInlineDepth)
	}
	var ret *Op
	for _, o := range f.Body.Ops {
		if o.Name == "func.return" {
			ret = o
		}
	}
	if ret == nil || idx >= len(ret.Operands) {
		return nil, notEvaluable(op.Pos, "@%s has no func.return value %d at its top level", op.Symbol, idx)
	}
	inner := newSymEval(s.p, s.where)
	inner.depth = s.depth + 1
	inner.geom = s.geom
	params := f.Body.Args
	if len(params) == 0 {
		params = f.Params
	}
	for i, prm := range params {
		if i >= len(op.Operands) {
			break
		}
		a, err := s.operand(op.Operands[i])
		if err != nil {
			inner.bind[prm] = nil
			inner.memo[prm] = symResult{err: err}
			continue
		}
		inner.bind[prm] = a
	}
	// Params listed on the Func may be distinct Values from the region args.
	if len(f.Params) == len(f.Body.Args) {
		for i, prm := range f.Params {
			if e, ok := inner.bind[f.Body.Args[i]]; ok {
				inner.bind[prm] = e
			}
		}
	}
	for k, e := range inner.bind {
		if e == nil {
			delete(inner.bind, k)
		}
	}
	e, err := inner.operand(ret.Operands[idx])
	if err != nil {
		return nil, fmt.Errorf("%s: in call to @%s: %w", op.Pos, op.Symbol, err)
	}
	return e, nil
}

// literalConst converts a source literal to a constant of type t.
func literalConst(l *Literal, t *Type) (Const, error) {
	c := Const{Type: t}
	if t == nil {
		return c, fmt.Errorf("literal %s has no type", l.Text)
	}
	switch l.Kind {
	case LitInt, LitBool:
		if t.Kind == TypeFloat {
			c.Float = roundFloat(float64(l.Int), t)
			return c, nil
		}
		c.Int = l.Int
		if t.Kind == TypeInt {
			c.Int = wrapSigned(l.Int, t.Bits)
		}
		return c, nil
	case LitFloat:
		if t.Kind != TypeFloat {
			return c, fmt.Errorf("float literal %s for type %s", l.Text, t)
		}
		c.Float = roundFloat(l.Float, t)
		return c, nil
	}
	return ParseConst(t, l.Text)
}

// foldExpr replaces a node whose operands are all constants by its value,
// evaluated for TargetGPU; a node that fails to evaluate stays symbolic so
// that the failure is reported, with its position, when it is evaluated.
func foldExpr(e *Expr) *Expr {
	if e == nil || len(e.Args) == 0 {
		return e
	}
	if s := simplifyIdentity(e); s != e {
		return s
	}
	for _, a := range e.Args {
		if a == nil || a.Op != ExprConst {
			return e
		}
	}
	c, err := e.Eval(&Env{Target: TargetGPU})
	if err != nil {
		return e
	}
	t := e.Type
	if t == nil {
		t = c.Type
	}
	c.Type = t
	return &Expr{Op: ExprConst, Type: t, Const: c, Pos: e.Pos}
}

// simplifyIdentity drops additions of zero and multiplications by one on
// integer-like types, so printed expressions stay readable.
func simplifyIdentity(e *Expr) *Expr {
	if len(e.Args) != 2 || e.Type == nil || e.Type.Kind == TypeFloat {
		return e
	}
	a, b := e.Args[0], e.Args[1]
	same := func(x *Expr) bool {
		return x != nil && x.Type != nil && x.Type.Kind == e.Type.Kind && x.Type.Bits == e.Type.Bits
	}
	isK := func(x *Expr, k int64) bool { return x.IsConst() && x.Const.Int == k }
	switch e.Op {
	case ExprAdd:
		if isK(a, 0) && same(b) {
			return b
		}
		if isK(b, 0) && same(a) {
			return a
		}
	case ExprSub:
		if isK(b, 0) && same(a) {
			return a
		}
	case ExprMul:
		if isK(a, 1) && same(b) {
			return b
		}
		if isK(b, 1) && same(a) {
			return a
		}
	}
	return e
}
