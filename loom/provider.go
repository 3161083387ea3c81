package loom

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoProvider is the class of errors SelectProvider returns when a
// template apply cannot be resolved to exactly one provider.
var ErrNoProvider = errors.New("template apply has no single provider")

// SelectProvider picks the provider of family that an apply resolves to:
// the only candidate, or the highest-priority one whose where clause holds
// on the apply's arguments. arg(i) returns the compile-time value of the
// apply's argument i when it is a known integer. A where clause that cannot
// be decided does not hold. Both executors resolve applies through this one
// function (SelectProviderFor), so they always run the same provider.
func SelectProvider(family string, cands []*Func, arg func(i int) (int64, bool)) (*Func, error) {
	return SelectProviderFor(family, cands, arg, "")
}

// SelectProviderFor is SelectProvider at a call site whose target in force
// is the target record @target ("" for none: see SiteTarget). A provider
// written with target(@T) is legal only on T, so:
//
//   - with a target in force, the candidates are the providers without a
//     target and those for that target;
//   - with none (our executors, CPU and NVIDIA, are no target a record
//     names), the candidates are the providers without a target; only when
//     there is none do providers for other targets run, since every
//     provider of a contract implements the same meaning and their bodies
//     are portable Loom.
//
// Among the candidates whose where clause holds the highest priority wins;
// a tie is an error, except among providers for other targets, where the
// first in source order wins so the choice is deterministic.
func SelectProviderFor(family string, cands []*Func, arg func(i int) (int64, bool), target string) (*Func, error) {
	switch len(cands) {
	case 0:
		return nil, fmt.Errorf("%w: no visible provider of %s", ErrNoProvider, family)
	case 1:
		return cands[0], nil
	}
	var own, foreign []*Func
	for _, f := range cands {
		switch t := f.TargetSymbol(); {
		case t == "" || t == target:
			own = append(own, f)
		default:
			foreign = append(foreign, f)
		}
	}
	best, tie := bestProvider(own, arg)
	if best == nil && len(foreign) > 0 {
		best, _ = bestProvider(foreign, arg)
		tie = false
	}
	if best == nil {
		return nil, fmt.Errorf("%w: none of the %d providers of %s is known to apply to these arguments", ErrNoProvider, len(cands), family)
	}
	if tie {
		return nil, fmt.Errorf("%w: several providers of %s tie at priority %d", ErrNoProvider, family, best.Priority)
	}
	return best, nil
}

// bestProvider is the first highest-priority provider whose where clause
// holds, and whether another holds at that priority.
func bestProvider(cands []*Func, arg func(i int) (int64, bool)) (best *Func, tie bool) {
	for _, f := range cands {
		if !whereHolds(f, arg) {
			continue
		}
		switch {
		case best == nil || f.Priority > best.Priority:
			best, tie = f, false
		case f.Priority == best.Priority:
			tie = true
		}
	}
	return best, tie
}

// TargetSymbol is the record named by the function's target(@T) clause,
// without '@', or "".
func (f *Func) TargetSymbol() string {
	if f == nil || f.Op == nil {
		return ""
	}
	if a := f.Op.Attr("target"); a != nil {
		return strings.TrimPrefix(a.Value.Text, "@")
	}
	return ""
}

// SiteTarget is the target in force at a template apply: that of the
// innermost function of the inline chain (outermost first) written with
// target(@T), else the kernel's target(@T), else "".
func SiteTarget(k *Kernel, chain []*Func) string {
	for i := len(chain) - 1; i >= 0; i-- {
		if t := chain[i].TargetSymbol(); t != "" {
			return t
		}
	}
	if k != nil {
		return k.Target
	}
	return ""
}

// whereHolds reports whether every predicate of f's where clause is known
// to hold on constant arguments.
func whereHolds(f *Func, arg func(i int) (int64, bool)) bool {
	params := f.Params
	if f.Body != nil && len(f.Body.Args) > 0 {
		params = f.Body.Args
	}
	value := func(o *Operand) (int64, bool) {
		if o.Lit != nil {
			return o.Lit.Int, o.Lit.Kind == LitInt
		}
		for i, p := range params {
			if p.Name == o.Name {
				return arg(i)
			}
		}
		return 0, false
	}
	for _, p := range f.Where {
		v := make([]int64, len(p.Args))
		for i, a := range p.Args {
			x, ok := value(a)
			if !ok {
				return false
			}
			v[i] = x
		}
		if holds, known := IntPredHolds(p.Name, v); !known || !holds {
			return false
		}
	}
	return true
}

// IntPredHolds evaluates an integer predicate of the shared vocabulary
// (range inclusive, mul, pow2, lt, le, gt, ge, eq, ne, min(a, n): a >= n,
// max(a, n): a <= n) on constant operands;
// known is false for an unknown name or arity.
func IntPredHolds(name string, v []int64) (holds, known bool) {
	switch {
	case name == "range" && len(v) == 3:
		return v[0] >= v[1] && v[0] <= v[2], true
	case name == "mul" && len(v) == 2:
		return v[1] != 0 && v[0]%v[1] == 0, true
	case name == "pow2" && len(v) == 1:
		return v[0] > 0 && v[0]&(v[0]-1) == 0, true
	case name == "lt" && len(v) == 2:
		return v[0] < v[1], true
	case (name == "le" || name == "max") && len(v) == 2:
		return v[0] <= v[1], true
	case name == "gt" && len(v) == 2:
		return v[0] > v[1], true
	case (name == "ge" || name == "min") && len(v) == 2:
		return v[0] >= v[1], true
	case name == "eq" && len(v) == 2:
		return v[0] == v[1], true
	case name == "ne" && len(v) == 2:
		return v[0] != v[1], true
	}
	return false, false
}
