package loom

import "strings"

// check resolves every SSA use and symbol of the modules of one package
// and reports what is invalid. The modules share one symbol table: a
// symbol defined in one file is visible in all, and a symbol defined twice
// (in one file or in two) is an error naming both positions. partial says
// that some file of the package did not parse: its symbols are missing, so
// uses of undefined symbols are not reported (the syntax error explains
// them). It runs only on modules without syntax errors.
func check(mods []*Module, partial bool) ErrorList {
	c := &checker{mods: mods, defs: map[string]*Op{}, decls: map[string]*Op{}, partial: partial}
	for _, m := range mods {
		c.collectSymbols(m)
	}
	for _, m := range mods {
		c.module(m)
	}
	c.exports()
	return c.errs
}

// module checks the SSA uses and symbol references of one module.
func (c *checker) module(m *Module) {
	c.aliases = aliasMap(m) // attribute aliases are local to their file
	top := newScope(nil)    // values defined by top-level generic ops
	for _, op := range m.Ops {
		c.topOp(top, op)
	}
	for _, k := range m.Kernels {
		c.kernel(k)
	}
	for _, f := range m.Funcs {
		if f.Op.Symbol == "" {
			continue
		}
		s := newScope(nil)
		c.args(s, f.Params)
		sig := c.resultSigs(s, f.Op)
		c.preds(sig, f.Where)
		for _, t := range f.Results {
			c.typ(sig, t)
		}
		if f.Body != nil {
			c.ops(s, f.Body.Ops)
			c.returns(f, f.Body)
		}
		if f.Family != "" && strings.HasPrefix(strings.TrimSpace(f.Op.Param), "@") {
			c.symbolUse(f.Op.Pos, f.Family)
		}
	}
	for _, d := range m.ConfigDecls {
		s := newScope(nil)
		if d.Bind != nil {
			c.define(s, d.Bind)
		}
		c.preds(s, d.Preds)
	}
	for _, g := range m.Globals {
		c.global(g)
	}
	for _, op := range m.Ops {
		c.walkSymbols(op)
	}
}

// isDeclOp reports top-level ops that declare a symbol without defining it.
func isDeclOp(op *Op) bool {
	switch op.Name {
	case "kernel.decl", "func.decl", "template.decl", "func.provider.decl", "config.def":
		return true
	}
	return op.Opaque && strings.HasSuffix(op.Name, ".decl")
}

// collectSymbols adds the symbols m defines and declares to the package's
// table; a definition already there is a duplicate.
func (c *checker) collectSymbols(m *Module) {
	for _, op := range m.Ops {
		if op.Symbol == "" || op.Name == "module.import" {
			continue
		}
		if isDeclOp(op) {
			if op.Name == "config.def" {
				if old, ok := c.decls[op.Symbol]; ok && old.Name == "config.def" {
					c.errorf(op.Pos, "duplicate config.def of @%s (first at %s)", op.Symbol, old.Pos)
				}
			}
			if _, ok := c.decls[op.Symbol]; !ok {
				c.decls[op.Symbol] = op
			}
			continue
		}
		if old, ok := c.defs[op.Symbol]; ok {
			c.errorf(op.Pos, "duplicate definition of @%s (first defined at %s)", op.Symbol, old.Pos)
			continue
		}
		c.defs[op.Symbol] = op
	}
}

// topOp checks the opaque top-level ops: their operands are the values of
// earlier top-level ops (in s), their regions are isolated.
func (c *checker) topOp(s *scope, op *Op) {
	if !op.Opaque {
		return
	}
	for _, o := range op.Operands {
		c.use(s, o)
	}
	for _, r := range op.Regions {
		c.region(r, nil)
	}
	for _, r := range op.Results {
		c.define(s, r)
	}
}

func (c *checker) kernel(k *Kernel) {
	ws := newScope(nil)
	c.args(ws, k.Workload)
	c.preds(ws, k.WorkloadWhere)
	ls := newScope(nil)
	c.args(ls, k.Launch)
	c.preds(ls, k.LaunchWhere)
	if k.Decl {
		return
	}
	c.ops(ws, k.Config.Ops)
	c.ops(ls, k.Body.Ops)
	if n := len(k.Config.Ops); n == 0 || k.Config.Ops[n-1].Name != "kernel.launch.config" {
		c.errorf(k.Config.End, "launch-config region of @%s must end with kernel.launch.config", k.Symbol)
	}
}

// launchConfig checks the clauses of kernel.launch.config and the types of
// their values: index, except the byte count of dynamic_workgroup_storage
// (offset; index is accepted too).
func (c *checker) launchConfig(op *Op) {
	cl, err := SplitLaunchConfig(op)
	if err != nil {
		e := err.(*Error)
		c.errorf(e.Pos, "%s", e.Msg)
		return
	}
	for _, o := range op.Operands {
		storage := o == cl.Storage
		switch {
		case o.Lit != nil:
			c.errorf(o.Pos, "kernel.launch.config operand must be a value, not the literal %s", o.Lit.Text)
		case o.Value == nil || o.Value.Type == nil:
		case storage && o.Value.Type.Kind != TypeOffset && o.Value.Type.Kind != TypeIndex:
			c.errorf(o.Pos, "dynamic_workgroup_storage operand %%%s has type %s, not offset", o.Name, o.Value.Type)
		case !storage && o.Value.Type.Kind != TypeIndex:
			c.errorf(o.Pos, "kernel.launch.config operand %%%s has type %s, not index", o.Name, o.Value.Type)
		}
	}
	for _, t := range op.Types {
		if t.Kind != TypeIndex {
			c.errorf(t.Pos, "kernel.launch.config is typed %s, not index", t)
		}
	}
}

// exports reports two kernel definitions of the package with the same
// export name.
func (c *checker) exports() {
	seen := map[string]*Kernel{}
	for _, m := range c.mods {
		for _, k := range m.Kernels {
			if k.Decl {
				continue
			}
			if old, ok := seen[k.Export]; ok {
				c.errorf(k.Op.Pos, "duplicate export name %q (also @%s at %s)", k.Export, old.Symbol, old.Op.Pos)
				continue
			}
			seen[k.Export] = k
		}
	}
}

func (c *checker) symbolUse(pos Pos, sym string) {
	if _, ok := c.defs[sym]; ok {
		return
	}
	if _, ok := c.decls[sym]; ok || c.partial {
		return
	}
	c.errorf(pos, "use of undefined symbol @%s", sym)
}

// walkSymbols checks the symbol references of op and everything nested.
func (c *checker) walkSymbols(op *Op) {
	switch op.Name {
	case "kernel.launch", "kernel.dispatch", "func.call", "config.get", "template.call", "global.load", "global.store":
		if op.Symbol != "" {
			c.symbolUse(op.Pos, op.Symbol)
		}
		if op.Name == "kernel.launch" {
			c.launchArity(op)
		}
		if op.Name == "func.call" {
			c.callTypes(op)
		}
	case "template.apply":
		if fam := strings.TrimSpace(op.Param); strings.HasPrefix(fam, "@") {
			c.symbolUse(op.Pos, fam[1:])
		}
	}
	if a := op.Attr("target"); a != nil && strings.HasPrefix(a.Value.Text, "@") {
		c.symbolUse(a.Pos, a.Value.Text[1:])
	}
	for _, r := range op.Regions {
		for _, inner := range r.Ops {
			c.walkSymbols(inner)
		}
	}
}

// launchArity checks that a kernel.launch passes as many workload and
// launch values as the launched kernel's two signatures declare; the
// bracketless form passes launch values only, to a kernel without workload.
func (c *checker) launchArity(op *Op) {
	var k *Kernel
	for _, m := range c.mods {
		for _, cand := range m.Kernels {
			if cand.Symbol == op.Symbol && (k == nil || k.Decl) {
				k = cand
			}
		}
	}
	if k == nil {
		return // undefined symbols are reported by symbolUse
	}
	workload := op.LaunchWorkload
	if workload < 0 {
		workload = 0
	}
	if n := len(k.Workload); workload != n {
		c.errorf(op.Pos, "kernel.launch @%s passes %d workload values; the kernel declares %d at %s", op.Symbol, workload, n, k.Op.Pos)
	}
	if got, n := len(op.Operands)-workload, len(k.Launch); got != n {
		c.errorf(op.Pos, "kernel.launch @%s passes %d launch values; the kernel declares %d at %s", op.Symbol, got, n, k.Op.Pos)
	}
}
