package loom

import "strings"

// Operand type rules. The checker resolves names first; then each op whose
// operands Loom constrains (its op definitions: binary, unary and ternary
// arithmetic take and give one type, casts read the type before `to`,
// memory ops take a buffer or a view and index coordinates, conditions are
// i1) has its operands' types compared with what the op states. Without
// this a kernel that adds an index to an f32, or views an index as a
// buffer, compiled and ran: the executors read the operand's bits as the
// type the op names. A rule only fires where both types are known (a
// value's type may be unstated in generic syntax) and compares what the
// syntax pins down: element kind and width, and static vector lanes.

// sameTypeOps are the arithmetic ops whose operands all have the op's type
// (the `: T` after them), by the name after the dialect; each is an op of
// both scalar and vector (lane-wise), as Loom defines them.
var sameTypeOps = setOf(
	// integer arithmetic and bits
	"addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "ceildivsi", "ceildivui",
	"floordivsi", "minsi", "maxsi", "minui", "maxui", "negi", "absi", "fmai", "signi",
	"andi", "ori", "xori", "shli", "shrsi", "shrui", "rotli", "rotri", "ctlzi", "cttzi", "ctpopi",
	// float arithmetic and math
	"addf", "subf", "mulf", "divf", "remf", "negf", "absf", "minimumf", "maximumf", "minnumf",
	"maxnumf", "copysignf", "fmaf", "clampf", "signf", "expf", "exp2f", "expm1f", "logf", "log2f",
	"log10f", "log1pf", "powf", "sqrtf", "rsqrtf", "cbrtf", "sinf", "cosf", "sinturnsf", "costurnsf",
	"tanf", "asinf", "acosf", "atanf", "atan2f", "sinhf", "coshf", "tanhf", "asinhf", "acoshf",
	"atanhf", "erff", "erfcf", "logisticf", "siluf", "softplusf", "geluf", "ceilf", "floorf",
	"roundf", "roundevenf", "truncf", "isnanf", "isinff", "isfinitef",
	// comparisons: the type names the operands (the result is i1)
	"cmpi", "cmpf",
)

// sameTypeIndexOps are the index dialect's ops whose operands all have the
// op's type (all index or all offset).
var sameTypeIndexOps = setOf(
	"add", "sub", "mul", "madd", "div", "rem", "min", "max", "andi", "ori", "xori", "shli", "shrsi",
	"shrui", "rotli", "rotri", "ctlzi", "cttzi", "ctpopi", "cmp",
)

// castOps read one operand of the type before `to`.
var castOps = setOf("sitofp", "uitofp", "fptosi", "fptoui", "extf", "fptrunc", "extsi", "extui",
	"trunci", "bitcast")

// viewFirst are the memory ops whose first operand is a view followed by
// one index per axis; viewSecond those with a value first; viewThird
// view.atomic.cmpxchg (expected, replacement, view).
var (
	viewFirst = setOf("view.load", "vector.load", "vector.load.mask", "vector.gather",
		"view.atomic.load", "vector.fragment.load", "view.prefetch", "view.subview")
	viewSecond = setOf("view.store", "vector.store", "vector.store.mask", "vector.scatter",
		"view.atomic.rmw", "view.atomic.reduce", "view.atomic.store", "vector.fragment.store")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// typeCheck reports operands whose types break op's rules.
func (c *checker) typeCheck(op *Op) {
	dialect, name, _ := strings.Cut(op.Name, ".")
	var stated *Type
	if len(op.Types) > 0 {
		stated = op.Types[0]
	}
	switch {
	case (dialect == "scalar" || dialect == "vector") && sameTypeOps[name],
		dialect == "index" && sameTypeIndexOps[name]:
		for i := range op.Operands {
			c.wantSame(op, i, stated)
		}
		return
	case (dialect == "scalar" || dialect == "vector") && castOps[name], op.Name == "index.cast":
		if len(op.Operands) > 0 {
			c.wantSame(op, 0, stated)
		}
		return
	}
	switch {
	case op.Name == "buffer.view" || op.Name == "buffer.length":
		c.wantKind(op, 0, "a buffer", TypeBuffer)
		if op.Name == "buffer.view" {
			c.wantKind(op, 1, "an index or offset", TypeIndex, TypeOffset)
		}
	case strings.HasPrefix(op.Name, "buffer.assume."):
		for i := range op.Operands {
			c.wantKind(op, i, "a buffer", TypeBuffer)
		}
		if op.Name == "buffer.assume.noalias" && len(op.Results) != len(op.Operands) {
			c.errorf(op.Pos, "buffer.assume.noalias: %d results for %d buffers (one result per buffer)", len(op.Results), len(op.Operands))
		}
	case op.Name == "view.refine":
		c.wantKind(op, 0, "a view", TypeView)
	case viewFirst[op.Name]:
		c.viewAccess(op, 0)
		if op.Name == "view.load" && len(op.Results) == 1 && len(op.ResultTypes) == 1 {
			c.elementOf(op, 0, op.ResultTypes[0], "result type")
		}
	case viewSecond[op.Name]:
		c.viewAccess(op, 1)
		if op.Name == "view.store" || op.Name == "view.atomic.store" {
			c.wantSame(op, 0, stated)
		}
		if op.Name == "view.store" {
			c.elementOf(op, 1, operandType(op, 0), "stored value of type")
		}
	case op.Name == "view.atomic.cmpxchg":
		c.viewAccess(op, 2)
	case op.Name == "scf.if", op.Name == "kernel.assert", op.Name == "kernel.exit", op.Name == "scf.condition":
		c.wantBool(op, 0)
	case op.Name == "scf.select":
		c.wantBool(op, 0)
		c.wantSame(op, 1, stated)
		c.wantSame(op, 2, stated)
	case op.Name == "scf.for":
		c.forOperands(op)
	}
}

// viewAccess checks a memory op's view operand at vi and the index
// coordinates after it, one per axis of the view, and that the view type
// written after ':' (the first written for a load, the second for a store)
// is the operand's: same rank and element type.
func (c *checker) viewAccess(op *Op, vi int) {
	if !c.wantKind(op, vi, "a view", TypeView) {
		return
	}
	t := op.Operands[vi].Value.Type
	ti := 0
	if vi > 0 {
		ti = 1
	}
	if ti < len(op.Types) {
		w := op.Types[ti]
		if w.Kind == TypeView && t.Elem != nil && w.Elem != nil && (len(w.Dims) != len(t.Dims) || !typesAgree(w.Elem, t.Elem)) {
			o := op.Operands[vi]
			c.errorf(o.Pos, "%s: %%%s has type %s, the op is written for %s", op.Name, o.Name, t, w)
		}
	}
	for i := vi + 1; i <= vi+len(t.Dims) && i < len(op.Operands); i++ {
		c.wantKind(op, i, "an index coordinate", TypeIndex)
	}
}

// elementOf reports a scalar t that a view.load or view.store moves
// from or to the view operand at vi when it is not the view's element type
// (Loom's SameElementType: an encoded view decodes through vector.decode,
// not through these ops).
func (c *checker) elementOf(op *Op, vi int, t *Type, what string) {
	v := operandType(op, vi)
	if t == nil || v == nil || v.Kind != TypeView || v.Elem == nil || !t.IsScalar() || !v.Elem.IsScalar() {
		return
	}
	if !typesAgree(t, v.Elem) {
		o := op.Operands[vi]
		c.errorf(o.Pos, "%s: %s %s, the op takes %%%s's element type %s", op.Name, what, t, o.Name, v.Elem)
	}
}

// forOperands checks that an scf.for's bounds and step share one type and
// that each loop-carried initial value has its block argument's type.
func (c *checker) forOperands(op *Op) {
	if len(op.Operands) < 3 {
		return
	}
	if lb := operandType(op, 0); lb != nil {
		c.wantSame(op, 1, lb)
		c.wantSame(op, 2, lb)
	}
	if len(op.Regions) == 0 {
		return
	}
	args := op.Regions[0].Args
	for i := 3; i < len(op.Operands) && i-2 < len(args); i++ {
		c.wantSame(op, i, args[i-2].Type)
	}
}

// operandType is the type of op's operand i, nil when unknown.
func operandType(op *Op, i int) *Type {
	if i >= len(op.Operands) || op.Operands[i].Value == nil {
		return nil
	}
	return statedType(op.Operands[i].Value)
}

// statedType is v's type where the source states it: an argument's
// declared type, a result type written after `->` or `to`, or the `: T` of
// an op whose result has the type it names (arithmetic, constants,
// comparisons' i1, ids). For other ops the parser's default (the first
// type after ':') may name an operand rather than the result, so those
// values are not checked (nil).
func statedType(v *Value) *Type {
	d := v.Def
	if v.Type == nil || d == nil || len(d.ResultTypes) > 0 {
		return v.Type
	}
	dialect, name, _ := strings.Cut(d.Name, ".")
	switch {
	case (dialect == "scalar" || dialect == "vector") && (sameTypeOps[name] || name == "constant" || name == "assume"),
		dialect == "index" && (sameTypeIndexOps[name] || name == "constant" || name == "assume"),
		d.Name == "vector.splat", d.Name == "config.get", d.Name == "scf.select",
		strings.HasPrefix(d.Name, "kernel.workitem."), strings.HasPrefix(d.Name, "kernel.workgroup.id"),
		strings.HasPrefix(d.Name, "kernel.workgroup.size"), strings.HasPrefix(d.Name, "kernel.workgroup.count"),
		d.Name == "kernel.subgroup.id", d.Name == "kernel.subgroup.lane.id", d.Name == "kernel.subgroup.size",
		d.Name == "kernel.subgroup.count", d.Name == "target.subgroup.size":
		return v.Type
	}
	return nil
}

// wantSame reports operand i when its type is known and differs from want.
func (c *checker) wantSame(op *Op, i int, want *Type) {
	got := operandType(op, i)
	if got == nil || want == nil || typesAgree(got, want) {
		return
	}
	o := op.Operands[i]
	c.errorf(o.Pos, "%s: %%%s has type %s, the op takes %s", op.Name, o.Name, got, want)
}

// wantKind reports operand i when its type is known and of none of kinds;
// it returns whether the operand is known to be of one of them.
func (c *checker) wantKind(op *Op, i int, what string, kinds ...TypeKind) bool {
	got := operandType(op, i)
	if got == nil || got.Kind == TypeOther {
		return false
	}
	for _, k := range kinds {
		if got.Kind == k {
			return true
		}
	}
	o := op.Operands[i]
	c.errorf(o.Pos, "%s: %%%s has type %s, the op takes %s", op.Name, o.Name, got, what)
	return false
}

// wantBool reports operand i when its type is known and is not i1.
func (c *checker) wantBool(op *Op, i int) {
	got := operandType(op, i)
	if got == nil || got.Kind == TypeOther || (got.Kind == TypeInt && got.Bits == 1) {
		return
	}
	if got.Kind == TypeInt {
		o := op.Operands[i]
		c.errorf(o.Pos, "%s: %%%s has type %s, the op takes an i1 condition", op.Name, o.Name, got)
		return
	}
	c.wantKind(op, i, "an i1 condition", TypeInt)
}

// typesAgree reports whether a and b are the same type as far as the syntax
// pins it down: kind, element name and width, and static vector lanes
// (dynamic dims, view shapes and encodings are left to the op's lowering).
// Types the front end does not model (TypeOther) match anything.
func typesAgree(a, b *Type) bool {
	if a.Kind == TypeOther || b.Kind == TypeOther {
		return true
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case TypeInt, TypeFloat:
		return a.Name == b.Name && a.Bits == b.Bits
	case TypeVector:
		if a.Elem == nil || b.Elem == nil || !typesAgree(a.Elem, b.Elem) || len(a.Dims) != len(b.Dims) {
			return a.Elem == nil || b.Elem == nil
		}
		for i := range a.Dims {
			if a.Dims[i].Value == nil && b.Dims[i].Value == nil && a.Dims[i].Size != b.Dims[i].Size {
				return false
			}
		}
	}
	return true
}

// yields checks the scf.yield ending each region of an scf.if or scf.for
// against the op's results: as many values, each of its result's type.
func (c *checker) yields(op *Op) {
	if op.Name != "scf.if" && op.Name != "scf.for" {
		return
	}
	if len(op.Results) > 0 && len(op.ResultTypes) > 1 && len(op.ResultTypes) != len(op.Results) {
		// %r = scf.if %c -> (f32, f32): each result needs its own name.
		c.errorf(op.Pos, "%s: %d result types for %d named results", op.Name, len(op.ResultTypes), len(op.Results))
		return
	}
	for _, r := range op.Regions {
		if len(r.Ops) == 0 {
			continue
		}
		y := r.Ops[len(r.Ops)-1]
		if y.Name != "scf.yield" {
			continue
		}
		if len(y.Operands) != len(op.Results) {
			if len(y.Operands) > 0 || len(op.Results) > 0 {
				c.errorf(y.Pos, "scf.yield: %d values for the %d results of the %s at %s", len(y.Operands), len(op.Results), op.Name, op.Pos)
			}
			continue
		}
		for i, res := range op.Results {
			c.wantSame(y, i, res.Type)
		}
	}
}

// returns checks that every func.return of f's body returns as many
// values as f's result list names. (Their types are not compared: Loom's
// verifier does not, and its own tests return an i1 for an i32.)
func (c *checker) returns(f *Func, r *Region) {
	if r == nil || f.Kind != "func.def" {
		return
	}
	for _, op := range r.Ops {
		if op.Name == "func.return" {
			if len(op.Operands) != len(f.Results) {
				c.errorf(op.Pos, "func.return: %d values; @%s returns %d", len(op.Operands), f.Symbol, len(f.Results))
			}
		}
		for _, inner := range op.Regions {
			c.returns(f, inner)
		}
	}
}

// callTypes checks a func.call of a plain function (not a template
// family) against its definition: the number and types of the arguments
// and the number of results.
func (c *checker) callTypes(op *Op) {
	var f *Func
	for _, m := range c.mods {
		for _, cand := range m.Funcs {
			if cand.Symbol == op.Symbol && (f == nil || f.Body == nil) {
				f = cand
			}
		}
	}
	if f == nil || f.Family != "" || (f.Kind != "func.def" && f.Kind != "func.decl") {
		return
	}
	if len(op.Operands) != len(f.Params) {
		c.errorf(op.Pos, "func.call @%s passes %d arguments; @%s takes %d (%s)", op.Symbol, len(op.Operands), f.Symbol, len(f.Params), f.Op.Pos)
		return
	}
	for i, p := range f.Params {
		c.wantSame(op, i, p.Type)
	}
	if len(op.Results) != len(f.Results) {
		c.errorf(op.Pos, "func.call @%s has %d results; @%s returns %d (%s)", op.Symbol, len(op.Results), f.Symbol, len(f.Results), f.Op.Pos)
	}
}
