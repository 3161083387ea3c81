package interp

import (
	"fmt"
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
	site := c.enterCall(op)
	code, err := c.region(inner, f.Body)
	c.site = site
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

// provider resolves a template family through loom.SelectProvider, with
// the apply's compile-time-constant arguments.
func (c *compiler) provider(b *block, op *loom.Op, fam string) (*loom.Func, error) {
	cands := c.families[fam]
	var args []*slot
	if len(cands) > 1 {
		var err error
		if args, err = c.operands(b, op); err != nil {
			return nil, err
		}
	}
	chain := make([]*loom.Func, 0, len(c.calls))
	for _, s := range c.calls {
		if f := c.funcs[s]; f != nil {
			chain = append(chain, f)
		}
	}
	f, err := loom.SelectProviderFor(fam, cands, func(i int) (int64, bool) {
		if i < len(args) && args[i].cst {
			return args[i].ci, true
		}
		return 0, false
	}, loom.SiteTarget(c.k.kernel, chain))
	if err != nil {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s: %v", op.Name, err)
	}
	if s := fmt.Sprintf("%s: %s → @%s", op.Pos, fam, f.Symbol); !slices.Contains(c.k.providers, s) {
		c.k.providers = append(c.k.providers, s) // a region compiled twice reports once
	}
	return f, nil
}
