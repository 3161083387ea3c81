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

// typ resolves the dynamic dimensions and layout value of a shaped type.
func (c *checker) typ(s *scope, t *Type) {
	if t == nil {
		return
	}
	for i := range t.Dims {
		c.use(s, t.Dims[i].Value)
	}
	c.use(s, t.LayoutValue)
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
	for _, t := range op.Types {
		c.typ(s, t)
	}
	for _, t := range op.ResultTypes {
		c.typ(s, t)
	}
	c.preds(s, op.Preds)
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
	for _, r := range op.Results {
		c.define(s, r)
	}
	if op.Name == "kernel.launch.config" {
		c.launchConfig(op)
	}
}
