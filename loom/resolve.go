package loom

import "fmt"

// scope maps SSA names to their definitions. Regions nest scopes;
// kernel.def and func.def bodies start a scope with no parent, which is how
// they are isolated from above.
type scope struct {
	vars   map[string]*Value
	parent *scope
}

func newScope(parent *scope) *scope {
	return &scope{vars: make(map[string]*Value, 8), parent: parent}
}

func (s *scope) lookup(name string) *Value {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v
		}
	}
	return nil
}

// checker resolves SSA uses and symbols and reports ErrInvalid errors.
type checker struct {
	mods []*Module // the package's files
	errs ErrorList
	// defs and decls map a symbol of the package to the op that defines or
	// declares it.
	defs  map[string]*Op
	decls map[string]*Op
	// partial: a file of the package did not parse (see check).
	partial bool
	// aliases maps the attribute aliases (#q8) of the module being checked
	// to what they stand for.
	aliases map[string]string
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	c.errs.Add(pos, ErrInvalid, fmt.Sprintf(format, args...))
}

// define adds v to s. A name may not be redefined anywhere in the chain of
// enclosing scopes up to the isolation boundary, as in MLIR.
func (c *checker) define(s *scope, v *Value) {
	if v.Name == "" {
		return
	}
	if old := s.lookup(v.Name); old != nil {
		c.errorf(v.Pos, "%%%s redefined (first defined at %s)", v.Name, old.Pos)
		return
	}
	s.vars[v.Name] = v
}

func (c *checker) use(s *scope, o *Operand) {
	if o == nil || o.Name == "" {
		return
	}
	v := s.lookup(o.Name)
	if v == nil {
		c.errorf(o.Pos, "use of undefined value %%%s", o.Name)
		return
	}
	o.Value = v
}

// typ resolves the dynamic dimensions and layout value of a type (of the
// argument and result types of a function type) and replaces an attribute
// alias attachment by what it stands for, keeping the alias name.
func (c *checker) typ(s *scope, t *Type) {
	if t == nil {
		return
	}
	for i := range t.Dims {
		c.use(s, t.Dims[i].Value)
	}
	c.use(s, t.LayoutValue)
	if v, ok := c.aliases[t.Layout]; ok && t.Alias == "" {
		t.Alias, t.Layout = t.Layout, v
	}
	for _, p := range t.Params {
		c.typ(s, p)
	}
	for _, r := range t.Results {
		c.typ(s, r)
	}
}

// aliasMap indexes a module's attribute aliases; an alias may name an
// earlier alias, which is followed (a cycle is impossible: each alias is
// defined once, in order, and may only name earlier ones).
func aliasMap(m *Module) map[string]string {
	out := make(map[string]string, len(m.Aliases))
	for _, a := range m.Aliases {
		v := a.Value
		if prev, ok := out[v]; ok {
			v = prev
		}
		out[a.Name] = v
	}
	return out
}

// resultSigs resolves the tied entries of op's `-> (…)` list in s and
// returns the scope its result types and where clause see: s plus the named
// results, which are visible nowhere else.
func (c *checker) resultSigs(s *scope, op *Op) *scope {
	if len(op.ResultSigs) == 0 {
		return s
	}
	sig := newScope(s)
	for _, rs := range op.ResultSigs {
		if rs.Value != nil {
			c.define(sig, rs.Value)
		}
		c.use(s, rs.Tied)
	}
	return sig
}

// global checks a global.constant/variable: the names its type's dynamic
// dimensions and encoding use are bound by the declaration itself (index
// and encoding values), for its predicates.
func (c *checker) global(g *Global) {
	s := newScope(nil)
	bind := func(o *Operand, t *Type) {
		if o == nil || s.lookup(o.Name) != nil {
			return
		}
		v := &Value{Name: o.Name, Pos: o.Pos, Type: t, Index: len(g.Dims)}
		g.Dims = append(g.Dims, v)
		s.vars[o.Name] = v
	}
	if t := g.Type; t != nil {
		for _, d := range t.Dims {
			if d.Value != nil {
				bind(d.Value, &Type{Pos: d.Value.Pos, Kind: TypeIndex, Name: "index"})
			}
		}
		bind(t.LayoutValue, &Type{Pos: t.Pos, Kind: TypeOther, Name: "encoding"})
	}
	c.typ(s, g.Type)
	c.preds(s, g.Preds)
}

func (c *checker) preds(s *scope, preds []*Pred) {
	for _, pr := range preds {
		for _, a := range pr.Args {
			c.use(s, a)
		}
	}
}

// args defines a signature or region-argument list in s, then resolves the
// argument types, which may name earlier arguments (view<[%n]xf32>).
func (c *checker) args(s *scope, args []*Value) {
	for _, a := range args {
		c.define(s, a)
	}
	for _, a := range args {
		c.typ(s, a.Type)
	}
}

// region walks r in a scope nested in parent (nil: isolated).
func (c *checker) region(r *Region, parent *scope) {
	s := newScope(parent)
	c.args(s, r.Args)
	c.ops(s, r.Ops)
}

func (c *checker) ops(s *scope, ops []*Op) {
	for _, op := range ops {
		c.op(s, op)
	}
}

func (c *checker) op(s *scope, op *Op) {
	for _, o := range op.Operands {
		c.use(s, o)
	}
	if op.Name == "global.load" {
		// The type names the op's own co-results: the dynamic dimensions
		// and encoding loaded with the value.
		for _, r := range op.Results {
			c.define(s, r)
		}
	}
	for _, t := range op.Types {
		c.typ(s, t)
	}
	rs := c.resultSigs(s, op)
	if len(op.ResultTypes) > 0 {
		// A result type may name the op's own results: the encoding of
		// a view yielded with it (%l, %v = scf.if … -> (encoding<layout>,
		// view<4xf32, %l>)), a block argument's earlier arguments.
		own := newScope(rs)
		for _, r := range op.Results {
			if r.Name != "" {
				own.vars[r.Name] = r
			}
		}
		rs = own
	}
	for _, t := range op.ResultTypes {
		c.typ(rs, t)
	}
	c.preds(s, op.Preds)
	if acc, ok := CacheAccessOf(op); ok {
		if _, _, err := CachePolicyOf(op, acc); err != nil {
			e := err.(*Error)
			c.errorf(e.Pos, "%s", e.Msg)
		}
	}
	for _, lc := range op.Cases {
		for _, o := range lc.Values {
			c.use(s, o)
		}
	}
	if op.Name == "scf.for" && len(op.Regions) > 0 && len(op.Regions[0].Args) > 0 {
		iv := op.Regions[0].Args[0]
		if iv.Type == nil && len(op.Operands) > 0 {
			if lb := op.Operands[0]; lb.Value != nil {
				iv.Type = lb.Value.Type
			} else {
				iv.Type = &Type{Pos: iv.Pos, Kind: TypeIndex, Name: "index"}
			}
		}
	}
	for _, r := range op.Regions {
		c.region(r, s)
	}
	if op.Name != "global.load" {
		for _, r := range op.Results {
			c.define(s, r)
		}
	}
	if op.Name == "kernel.launch.config" {
		c.launchConfig(op)
	}
	c.typeCheck(op)
	c.yields(op)
}
