package checkrun

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loomgen/loomgen/loom"
	loomrt "github.com/loomgen/loomgen/runtime"
)

// Suite is the check cases and benchmarks of a set of Loom sources.
type Suite struct {
	Sources    []loomrt.Source
	Modules    []*loom.Module
	Program    *loom.Program
	Cases      []*Case
	Benchmarks []*Bench
}

// Case is one check.case.
type Case struct {
	Name   string // without '@'
	Pos    loom.Pos
	Op     *loom.Op
	Params []*Param // the case's sweeps in body order
}

// Param is one check.param.choice / range / seed of a case: a dimension
// of its sub-cases.
type Param struct {
	Name   string // name("…"), else the SSA name
	Value  string // the SSA name the op defines
	Type   *loom.Type
	Values []loom.Const
}

// Bench is one check.benchmark<@case>: the case at the parameter values it
// names (the others take every value).
type Bench struct {
	Name  string
	Pos   loom.Pos
	Case  *Case
	Fixed map[string]loom.Const // by Param.Name
}

// Instance is one sub-case: a case with a value for each of its params.
type Instance struct {
	Case   *Case
	Values []loom.Const // parallel to Case.Params
}

// Name is the case name followed by its parameter values:
// scale_case[n=17,m=4].
func (in *Instance) Name() string {
	if p := in.ParamString(); p != "" {
		return in.Case.Name + "[" + p + "]"
	}
	return in.Case.Name
}

// ParamString lists the parameter values as name=value pairs.
func (in *Instance) ParamString() string {
	parts := make([]string, len(in.Values))
	for i, v := range in.Values {
		parts[i] = in.Case.Params[i].Name + "=" + constString(v)
	}
	return strings.Join(parts, ",")
}

func constString(c loom.Const) string {
	if c.Type != nil && c.Type.Kind == loom.TypeFloat {
		return strconv.FormatFloat(c.Float, 'g', -1, 64)
	}
	return strconv.FormatInt(c.Int, 10)
}

// LoadFiles reads and loads .loom files.
func LoadFiles(paths []string) (*Suite, error) {
	var srcs []loomrt.Source
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, loomrt.Source{Name: filepath.ToSlash(p), Text: b})
	}
	return Load(srcs)
}

// Load parses the sources (one package: every file sees every other's
// kernels and functions) and collects their check cases and benchmarks.
// Errors carry file:line:col.
func Load(sources []loomrt.Source) (*Suite, error) {
	s := &Suite{Sources: sources}
	files := make([]loom.File, len(sources))
	for i, src := range sources {
		files[i] = loom.File{Name: src.Name, Src: src.Text}
	}
	mods, err := loom.ParsePackage(files...)
	if err != nil {
		return nil, err
	}
	s.Modules = mods
	var errs []error
	p, err := loom.NewProgram(s.Modules...)
	if err != nil {
		return nil, err
	}
	s.Program = p
	byName := map[string]*Case{}
	for _, m := range s.Modules {
		for _, op := range m.Ops {
			if op.Name != "check.case" {
				continue
			}
			c, err := newCase(op)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev := byName[c.Name]; prev != nil {
				errs = append(errs, fmt.Errorf("%s: check.case @%s is also defined at %s", op.Pos, c.Name, prev.Pos))
				continue
			}
			byName[c.Name] = c
			s.Cases = append(s.Cases, c)
		}
	}
	benchNames := map[string]loom.Pos{}
	for _, m := range s.Modules {
		for _, op := range m.Ops {
			if op.Name != "check.benchmark" {
				continue
			}
			b, err := newBench(op, byName)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if prev, ok := benchNames[b.Name]; ok {
				errs = append(errs, fmt.Errorf("%s: check.benchmark @%s is also defined at %s", op.Pos, b.Name, prev))
				continue
			}
			benchNames[b.Name] = op.Pos
			s.Benchmarks = append(s.Benchmarks, b)
		}
	}
	if len(errs) > 0 {
		return nil, joinErrs(errs)
	}
	return s, nil
}

func joinErrs(errs []error) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return fmt.Errorf("%s", strings.Join(msgs, "\n"))
}

func newCase(op *loom.Op) (*Case, error) {
	if op.Symbol == "" || len(op.Regions) != 1 {
		return nil, fmt.Errorf("%s: check.case needs a @name and a body", op.Pos)
	}
	c := &Case{Name: op.Symbol, Pos: op.Pos, Op: op}
	for _, o := range op.Regions[0].Ops {
		if !strings.HasPrefix(o.Name, "check.param.") {
			continue
		}
		p, err := newParam(o)
		if err != nil {
			return nil, err
		}
		for _, q := range c.Params {
			if q.Name == p.Name {
				return nil, fmt.Errorf("%s: parameter %q is also swept at an earlier op of @%s", o.Pos, p.Name, c.Name)
			}
		}
		c.Params = append(c.Params, p)
	}
	n := 1
	for _, p := range c.Params {
		if n *= len(p.Values); n > maxInstances {
			return nil, fmt.Errorf("%s: check.case @%s sweeps more than %d sub-cases", op.Pos, c.Name, maxInstances)
		}
	}
	return c, nil
}

// maxInstances bounds the sub-cases of one case.
const maxInstances = 1 << 16

// newParam reads a sweep: check.param.choice values([…]), check.param.range
// linear|po2 bounds(lo to hi) [step(s)], check.param.seed base(b) count(n).
func newParam(op *loom.Op) (*Param, error) {
	if len(op.Results) != 1 || resultType(op) == nil {
		return nil, fmt.Errorf("%s: %s needs one typed result", op.Pos, op.Name)
	}
	t := resultType(op)
	p := &Param{Name: op.Results[0].Name, Value: op.Results[0].Name, Type: t}
	if l := attr(op, "name"); l != nil && l.Str != "" {
		p.Name = l.Str
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s: %s", op.Pos, op.Name, fmt.Sprintf(format, args...))
	}
	switch op.Name {
	case "check.param.choice":
		l := attr(op, "values")
		if l == nil {
			return nil, bad("values([…]) is missing")
		}
		v, err := litValue(l)
		if err != nil {
			return nil, bad("%v", err)
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return nil, bad("values must be a non-empty list of integers")
		}
		for _, e := range list {
			n, ok := e.(int64)
			if !ok {
				return nil, bad("value %v is not an integer", e)
			}
			p.Values = append(p.Values, loom.Const{Type: t, Int: n})
		}
	case "check.param.seed":
		base, count := attr(op, "base"), attr(op, "count")
		if base == nil || count == nil || base.Kind != loom.LitInt || count.Kind != loom.LitInt || count.Int < 1 || count.Int > 4096 {
			return nil, bad("needs base(integer) and count(1..4096)")
		}
		for i := range count.Int {
			p.Values = append(p.Values, loom.Const{Type: t, Int: base.Int + i})
		}
	case "check.param.range":
		vals, err := rangeValues(op, t)
		if err != nil {
			return nil, bad("%v", err)
		}
		p.Values = vals
	default:
		return nil, bad("unknown parameter op")
	}
	return p, nil
}

// rangeValues samples check.param.range: linear steps from lower to upper
// (step defaults to 1), or po2: the powers of two in [lower, upper].
func rangeValues(op *loom.Op, t *loom.Type) ([]loom.Const, error) {
	policy := ""
	if slices.Contains(op.Words, "po2") {
		policy = "po2"
	} else if slices.Contains(op.Words, "linear") {
		policy = "linear"
	} else if l := attr(op, "policy"); l != nil {
		policy = l.Str
	}
	var step float64 = 1
	lo, hi, err := interval(op, "bounds")
	if err != nil {
		return nil, err
	}
	if s := attr(op, "step"); s != nil {
		v, err := litValue(s)
		if err != nil {
			return nil, err
		}
		if step, _ = number(v); step <= 0 {
			return nil, fmt.Errorf("step must be positive")
		}
	}
	isFloat := t.Kind == loom.TypeFloat
	var out []loom.Const
	add := func(x float64) {
		if isFloat {
			out = append(out, loom.Const{Type: t, Float: x})
		} else {
			out = append(out, loom.Const{Type: t, Int: int64(x)})
		}
	}
	switch policy {
	case "po2":
		for x := 1.0; x <= hi && len(out) < 64; x *= 2 {
			if x >= lo {
				add(x)
			}
		}
	case "linear":
		for i := 0; ; i++ {
			x := lo + float64(i)*step
			if x > hi+1e-9*math.Abs(hi) || len(out) >= 4096 {
				break
			}
			add(x)
		}
	default:
		return nil, fmt.Errorf("policy must be linear or po2")
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("samples no value")
	}
	return out, nil
}

func newBench(op *loom.Op, cases map[string]*Case) (*Bench, error) {
	ref := strings.TrimPrefix(strings.TrimSpace(op.Param), "@")
	c := cases[ref]
	if c == nil {
		return nil, fmt.Errorf("%s: check.benchmark<@%s>: no check.case @%s", op.Pos, ref, ref)
	}
	b := &Bench{Name: op.Symbol, Pos: op.Pos, Case: c, Fixed: map[string]loom.Const{}}
	if b.Name == "" {
		b.Name = c.Name
	}
	for _, a := range op.Attrs {
		var p *Param
		for _, q := range c.Params {
			if q.Name == a.Key {
				p = q
			}
		}
		if p == nil {
			return nil, fmt.Errorf("%s: check.benchmark @%s: @%s has no parameter %q", a.Pos, b.Name, c.Name, a.Key)
		}
		raw, err := litValue(&a.Value)
		f, isNum := number(raw)
		if err != nil || !isNum {
			return nil, fmt.Errorf("%s: check.benchmark @%s: %s = %s is not a number", a.Pos, b.Name, a.Key, a.Value.Text)
		}
		v := loom.Const{Type: p.Type, Float: f}
		if p.Type.Kind != loom.TypeFloat {
			v.Int, v.Float = int64(f), 0
		}
		found := false
		for _, x := range p.Values {
			if x.Int == v.Int && x.Float == v.Float {
				found = true
				v = x
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: check.benchmark @%s: %s = %s is not one of the values @%s sweeps", a.Pos, b.Name, a.Key, a.Value.Text, c.Name)
		}
		b.Fixed[a.Key] = v
	}
	return b, nil
}

// Instances expands the case into its sub-cases, the first parameter
// varying slowest.
func (c *Case) Instances() []*Instance {
	return c.instances(nil)
}

func (c *Case) instances(fixed map[string]loom.Const) []*Instance {
	out := []*Instance{{Case: c}}
	for _, p := range c.Params {
		vals := p.Values
		if v, ok := fixed[p.Name]; ok {
			vals = []loom.Const{v}
		}
		var next []*Instance
		for _, in := range out {
			for _, v := range vals {
				next = append(next, &Instance{Case: c, Values: append(slices.Clone(in.Values), v)})
			}
		}
		out = next
	}
	return out
}

// Instances lists the sub-cases the benchmark times.
func (b *Bench) Instances() []*Instance { return b.Case.instances(b.Fixed) }

// resultType is the type of op's (first) result as written.
func resultType(op *loom.Op) *loom.Type {
	if len(op.ResultTypes) > 0 {
		return op.ResultTypes[len(op.ResultTypes)-1]
	}
	if len(op.Results) > 0 && op.Results[0].Type != nil {
		return op.Results[0].Type
	}
	if len(op.Types) > 0 {
		return op.Types[len(op.Types)-1]
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// interval reads a `clause(lo to hi)` of op, kept as raw text, or its
// lower and upper attributes.
func interval(op *loom.Op, clause string) (lo, hi float64, err error) {
	if b := attr(op, clause); b != nil {
		f := strings.Fields(strings.ReplaceAll(b.Text, " to ", " "))
		var e1, e2 error
		if len(f) == 2 {
			lo, e1 = strconv.ParseFloat(f[0], 64)
			hi, e2 = strconv.ParseFloat(f[1], 64)
		}
		if len(f) != 2 || e1 != nil || e2 != nil || hi < lo {
			return 0, 0, fmt.Errorf("%s(%s) is not lo to hi", clause, b.Text)
		}
		return lo, hi, nil
	}
	l, u := attr(op, "lower"), attr(op, "upper")
	if l == nil || u == nil {
		return 0, 0, fmt.Errorf("%s(lo to hi) is missing", clause)
	}
	lv, e1 := litValue(l)
	uv, e2 := litValue(u)
	lo, ok1 := number(lv)
	hi, ok2 := number(uv)
	if e1 != nil || e2 != nil || !ok1 || !ok2 || hi < lo {
		return 0, 0, fmt.Errorf("%s(%s to %s) is not lo to hi", clause, l.Text, u.Text)
	}
	return lo, hi, nil
}
