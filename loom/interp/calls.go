package interp

import (
	"slices"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// callOp inlines func.call, template.apply, func.apply and template.call.
func (c *compiler) callOp(b *block, op *loom.Op, rest string) (instr, error) {
	var f *loom.Func
	switch rest {
	case "call":
		f = c.funcs[op.Symbol]
		if f == nil {
			return nil, compileErr(op.Pos, ErrInvalid, "func.call: no function @%s", op.Symbol)
		}
	case "apply", "call.template":
		fam := strings.TrimPrefix(op.Param, "@")
		var err error
		if f, err = c.provider(b, op, fam); err != nil {
			return nil, err
		}
	default:
		if op.Name == "template.call" {
			f = c.funcs[op.Symbol]
			if f == nil {
				return nil, compileErr(op.Pos, ErrInvalid, "template.call: no provider @%s", op.Symbol)
			}
			break
		}
		return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
	}
	if f.Body == nil {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s @%s: the callee is only declared (%s); the CPU executor needs its body", op.Name, f.Symbol, f.Op.Pos)
	}
	if slices.Contains(c.calls, f.Symbol) {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s @%s: recursion (%s → %s) cannot be inlined", op.Name, f.Symbol, strings.Join(c.calls, " → "), f.Symbol)
	}
	args, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	params := f.Body.Args
	if len(params) == 0 {
		params = f.Params
	}
	if len(params) != len(args) {
		return nil, compileErr(op.Pos, ErrInvalid, "%s @%s takes %d arguments, given %d", op.Name, f.Symbol, len(params), len(args))
	}
	sc := newScope(nil)
	for i, p := range params {
		if p.Type != nil && !sameKind(p.Type, args[i]) {
			return nil, compileErr(op.Operands[i].Pos, ErrInvalid, "%s @%s: argument %d is %s, parameter %%%s is %s", op.Name, f.Symbol, i, args[i].typ, p.Name, p.Type)
		}
		sc.vals[p.Name] = args[i]
	}
	var rets []*slot
	inner := &block{sc: sc, depth: b.depth, inFunc: true}
	inner.term = func(r *loom.Op, vals []*slot) (instr, error) {
		if r.Name != "func.return" && r.Name != "template.return" {
			return nil, compileErr(r.Pos, ErrInvalid, "%s at the end of a function body", r.Name)
		}
		rets = vals
		return nil, nil
	}
	c.calls = append(c.calls, f.Symbol)
	code, err := c.region(inner, f.Body)
	c.calls = c.calls[:len(c.calls)-1]
	if err != nil {
		return nil, err
	}
	if len(rets) < len(op.Results) {
		return nil, compileErr(op.Pos, ErrInvalid, "%s @%s returns %d values, %d expected", op.Name, f.Symbol, len(rets), len(op.Results))
	}
	for i := range op.Results {
		b.sc.vals[op.Results[i].Name] = rets[i]
	}
	if len(code) == 0 {
		return nil, nil
	}
	return func(fr *frame) error { return runCode(fr, code) }, nil
}

func sameKind(t *loom.Type, s *slot) bool {
	switch t.Kind {
	case loom.TypeBuffer, loom.TypeView:
		return s.kind == kView
	case loom.TypeFloat:
		return s.kind == kFloat
	case loom.TypeInt, loom.TypeIndex, loom.TypeOffset:
		return s.kind == kInt
	case loom.TypeVector:
		return t.Elem != nil && sameKind(t.Elem, s)
	}
	return true
}

// provider resolves a template family: the single visible provider, or
// the highest-priority one whose where clause holds on the apply's
// compile-time-known arguments. Anything else is refused.
func (c *compiler) provider(b *block, op *loom.Op, fam string) (*loom.Func, error) {
	cands := c.families[fam]
	if len(cands) == 0 {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s: no visible provider of %s", op.Name, fam)
	}
	if len(cands) == 1 {
		return cands[0], nil
	}
	args, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	var best *loom.Func
	tie := false
	for _, f := range cands {
		ok, known := whereHolds(f, args)
		if !known || !ok {
			continue
		}
		switch {
		case best == nil || f.Priority > best.Priority:
			best, tie = f, false
		case f.Priority == best.Priority:
			tie = true
		}
	}
	if best == nil {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s: none of the %d providers of %s is known to apply to these arguments", op.Name, len(cands), fam)
	}
	if tie {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s: several providers of %s tie at priority %d", op.Name, fam, best.Priority)
	}
	return best, nil
}

// whereHolds evaluates a provider's where clause on compile-time constants;
// known is false when an operand is not a constant or a predicate unknown.
func whereHolds(f *loom.Func, args []*slot) (ok, known bool) {
	params := f.Params
	if f.Body != nil && len(f.Body.Args) > 0 {
		params = f.Body.Args
	}
	val := func(o *loom.Operand) (int64, bool) {
		if o.Lit != nil {
			return o.Lit.Int, o.Lit.Kind == loom.LitInt
		}
		for i, p := range params {
			if p.Name == o.Name && i < len(args) && args[i].cst {
				return args[i].ci, true
			}
		}
		return 0, false
	}
	for _, p := range f.Where {
		vs := make([]int64, len(p.Args))
		for i, a := range p.Args {
			v, ok := val(a)
			if !ok {
				return false, false
			}
			vs[i] = v
		}
		holds, ok := evalPred(p.Name, vs)
		if !ok {
			return false, false
		}
		if !holds {
			return false, true
		}
	}
	return true, true
}

func evalPred(name string, v []int64) (holds, known bool) {
	switch {
	case name == "range" && len(v) == 3:
		return v[0] >= v[1] && v[0] <= v[2], true
	case name == "mul" && len(v) == 2:
		return v[1] != 0 && v[0]%v[1] == 0, true
	case name == "pow2" && len(v) == 1:
		return v[0] > 0 && v[0]&(v[0]-1) == 0, true
	case name == "lt" && len(v) == 2:
		return v[0] < v[1], true
	case name == "le" && len(v) == 2:
		return v[0] <= v[1], true
	case name == "gt" && len(v) == 2:
		return v[0] > v[1], true
	case name == "ge" && len(v) == 2:
		return v[0] >= v[1], true
	case name == "eq" && len(v) == 2:
		return v[0] == v[1], true
	case name == "ne" && len(v) == 2:
		return v[0] != v[1], true
	}
	return false, false
}
