package loom

import (
	"fmt"
	"math"
	"strings"
)

// ArgCheck is a predicate on launch, workload or config values that can be
// evaluated at dispatch: from a `where` clause or an index.assume /
// scalar.assume whose operands are (expressions of) parameters.
type ArgCheck struct {
	Pos  Pos
	Pred string  // range, mul, pow2, lt, le, gt, ge, eq, ne, min, max, finite
	Args []*Expr // the predicate's operands, in source order
	Text string  // source spelling, e.g. "range(%n, 1, 4096)"
}

// predArity is the operand count of each predicate dispatch can check.
var predArity = map[string]int{
	"range": 3, "mul": 2, "pow2": 1, "lt": 2, "le": 2, "gt": 2, "ge": 2, "eq": 2, "ne": 2, "finite": 1,
	"min": 2, "max": 2, // min(a, n): a >= n; max(a, n): a <= n
}

// ArgChecks collects the checks of k: its workload and launch where
// clauses, and the index.assume / scalar.assume ops at the top level of the
// config region and body (nested ones only hold on their path). Predicates
// over values that are not expressible from parameters, config values and
// constants are left out: they cannot be checked by the host.
func (p *Program) ArgChecks(k *Kernel) []ArgCheck {
	if k == nil {
		return nil
	}
	var out []ArgCheck
	work := newSymEval(p, "launch-config region")
	for i, v := range k.Workload {
		work.bind[v] = &Expr{Op: ExprWorkload, Type: v.Type, Arg: i, Pos: v.Pos}
	}
	launch := newSymEval(p, "kernel body")
	for i, v := range k.Launch {
		launch.bind[v] = &Expr{Op: ExprLaunch, Type: v.Type, Arg: i, Pos: v.Pos}
	}
	if k.Config != nil {
		for i, v := range k.Config.Args {
			if i < len(k.Workload) {
				work.bind[v] = work.bind[k.Workload[i]]
			}
		}
	}
	if k.Body != nil {
		for i, v := range k.Body.Args {
			if i < len(k.Launch) {
				launch.bind[v] = launch.bind[k.Launch[i]]
			}
		}
	}
	for _, pr := range k.WorkloadWhere {
		if c, ok := predCheck(work, pr); ok {
			out = append(out, c)
		}
	}
	for _, pr := range k.LaunchWhere {
		if c, ok := predCheck(launch, pr); ok {
			out = append(out, c)
		}
	}
	for _, pair := range []struct {
		r *Region
		s *symEval
	}{{k.Config, work}, {k.Body, launch}} {
		if pair.r == nil {
			continue
		}
		for _, op := range pair.r.Ops {
			if op.Name != "index.assume" && op.Name != "scalar.assume" {
				continue
			}
			for _, pr := range op.Preds {
				if c, ok := predCheck(pair.s, pr); ok {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// ConfigChecks translates the predicates of a config.decl into checks over
// the config value (ExprConfig), for Config.Validate.
func ConfigChecks(d *ConfigDecl) []ArgCheck {
	if d == nil {
		return nil
	}
	s := newSymEval(&Program{}, "config declaration")
	if d.Bind != nil {
		s.bind[d.Bind] = &Expr{Op: ExprConfig, Type: d.Type, Symbol: d.Symbol, Pos: d.Bind.Pos}
	}
	var out []ArgCheck
	for _, pr := range d.Preds {
		if c, ok := predCheck(s, pr); ok {
			out = append(out, c)
		}
	}
	return out
}

func predCheck(s *symEval, pr *Pred) (ArgCheck, bool) {
	if pr == nil {
		return ArgCheck{}, false
	}
	n, ok := predArity[pr.Name]
	if !ok || len(pr.Args) != n {
		return ArgCheck{}, false
	}
	c := ArgCheck{Pos: pr.Pos, Pred: pr.Name, Text: predText(pr)}
	var subject *Type
	for i, a := range pr.Args {
		var e *Expr
		var err error
		if a.Lit != nil {
			t := subject
			if t == nil {
				t = typeIndex
			}
			if a.Lit.Kind == LitFloat && t.Kind != TypeFloat {
				t = scalarTypeNamed("f64")
			}
			var cv Const
			cv, err = literalConst(a.Lit, t)
			e = &Expr{Op: ExprConst, Type: t, Const: cv, Pos: a.Pos}
		} else {
			e, err = s.operand(a)
		}
		if err != nil || e == nil {
			return ArgCheck{}, false
		}
		if i == 0 {
			subject = e.Type
		}
		c.Args = append(c.Args, e)
	}
	return c, true
}

func predText(pr *Pred) string {
	parts := make([]string, len(pr.Args))
	for i, a := range pr.Args {
		switch {
		case a.Lit != nil:
			parts[i] = a.Lit.Text
		default:
			parts[i] = "%" + a.Name
		}
	}
	return pr.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Eval evaluates the predicate for env: range is inclusive at both ends,
// mul(v, k) means v is a multiple of k, pow2(v) a positive power of two.
// Comparisons are signed for index and integers, unsigned for offsets.
func (c ArgCheck) Eval(env *Env) (bool, error) {
	vals := make([]Const, len(c.Args))
	for i, a := range c.Args {
		v, err := a.Eval(env)
		if err != nil {
			return false, err
		}
		vals[i] = v
	}
	if n, ok := predArity[c.Pred]; !ok || n != len(vals) {
		return false, evalErr(c.Pos, "predicate %s with %d operands cannot be checked", c.Pred, len(vals))
	}
	isFloat := vals[0].Type != nil && vals[0].Type.Kind == TypeFloat
	unsigned := vals[0].Type != nil && vals[0].Type.Kind == TypeOffset
	num := func(x Const) float64 {
		if x.Type != nil && x.Type.Kind == TypeFloat {
			return x.Float
		}
		return float64(x.Int)
	}
	cmp := func(a, b Const) int {
		if isFloat || (b.Type != nil && b.Type.Kind == TypeFloat) {
			x, y := num(a), num(b)
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
		if unsigned {
			x, y := uint64(a.Int), uint64(b.Int)
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
		switch {
		case a.Int < b.Int:
			return -1
		case a.Int > b.Int:
			return 1
		}
		return 0
	}
	v := vals[0]
	switch c.Pred {
	case "range":
		return cmp(v, vals[1]) >= 0 && cmp(v, vals[2]) <= 0, nil
	case "mul":
		k := vals[1].Int
		if k == 0 {
			return false, evalErr(c.Pos, "%s: multiple of zero", c.Text)
		}
		if unsigned {
			return uint64(v.Int)%uint64(k) == 0, nil
		}
		return v.Int%k == 0, nil
	case "pow2":
		if unsigned {
			u := uint64(v.Int)
			return u != 0 && u&(u-1) == 0, nil
		}
		return v.Int > 0 && v.Int&(v.Int-1) == 0, nil
	case "finite":
		return !math.IsInf(v.Float, 0) && !math.IsNaN(v.Float), nil
	case "lt":
		return cmp(v, vals[1]) < 0, nil
	case "le", "max":
		return cmp(v, vals[1]) <= 0, nil
	case "gt":
		return cmp(v, vals[1]) > 0, nil
	case "ge", "min":
		return cmp(v, vals[1]) >= 0, nil
	case "eq":
		return cmp(v, vals[1]) == 0, nil
	case "ne":
		return cmp(v, vals[1]) != 0, nil
	}
	return false, fmt.Errorf("%w: unknown predicate %s", ErrEval, c.Pred)
}
