package gen

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loomgen/loomgen/loom"
)

// goVal is a Loom expression printed as a Go expression.
type goVal struct {
	src  string
	typ  string // the Go carrier type: int64 (index), uint64 (offset), intN, bool, float32, float64
	prec int    // precedence of the outermost operator; precPrimary when none
	c    *loom.Const
	// base is set for a Go int parameter or field widened to int64: it lets
	// a further conversion start from the int instead of the int64.
	base string
}

// Go operator precedences, as in the spec; precPrimary covers operands,
// calls, conversions and unary expressions.
const (
	precOr      = 1
	precAnd     = 2
	precCmp     = 3
	precAdd     = 4
	precMul     = 5
	precPrimary = 6
)

// guard is a divisor that must be checked for zero before the expression
// that divides by it is evaluated, because Go panics where Loom reports.
type guard struct {
	divisor string
	pos     loom.Pos
}

// exprPrinter translates loom.Expr trees into Go. Leaves name Dispatch
// parameters (workload and launch arguments) and Config fields; the
// expression semantics follow Expr.Eval: index arithmetic in int64, offsets
// in uint64, iN in the Go type of that width (which wraps the same way).
type exprPrinter struct {
	kernel  *Kernel                 // nil outside Dispatch
	config  map[string]*ConfigField // by key
	cfgRecv string                  // Go expression of the Config value: "k.cfg" or "c"
	guards  []guard
	helpers map[string]bool // generated helper functions the output needs
	// exact is set for buffer extents: index and offset additions,
	// subtractions and multiplications, and index-to-offset casts, go
	// through the loomExtent helpers held in the local named by extentVar,
	// which flag overflow and negative byte counts instead of wrapping, so
	// a length check cannot pass by wrap-around.
	exact bool
}

// extentVar is the Dispatch local of type loomExtent that exact
// expressions use.
const extentVar = "span"

// exactOp spells an overflow-checked add, sub or mul through loomExtent,
// or reports false when typ is not a 64-bit integer carrier.
func (p *exprPrinter) exactOp(name string, a, b goVal, typ string) (goVal, bool) {
	if !p.exact {
		return goVal{}, false
	}
	var suffix string
	switch typ {
	case "int64":
		suffix = "S"
	case "uint64":
		suffix = "U"
	default:
		return goVal{}, false
	}
	p.helpers["loomExtent"] = true
	return goVal{src: extentVar + "." + name + suffix + "(" + a.src + ", " + b.src + ")", typ: typ, prec: precPrimary}, true
}

// exactOffset converts an int64 value to a byte count, flagging a negative
// one when the printer is exact.
func (p *exprPrinter) exactOffset(a goVal) goVal {
	p.helpers["loomExtent"] = true
	return goVal{src: extentVar + ".offset(" + a.src + ")", typ: "uint64", prec: precPrimary}
}

// carrierType is the Go type an expression of Loom type t computes in.
func carrierType(t *loom.Type) (string, bool) {
	if t == nil {
		return "", false
	}
	switch t.Kind {
	case loom.TypeIndex:
		return "int64", true
	case loom.TypeOffset:
		return "uint64", true
	case loom.TypeInt:
		switch t.Bits {
		case 1:
			return "bool", true
		case 8, 16, 32, 64:
			return "int" + strconv.Itoa(t.Bits), true
		}
	case loom.TypeFloat:
		switch t.Name {
		case "f32":
			return "float32", true
		case "f64":
			return "float64", true
		}
	}
	return "", false
}

func bitsOf(goType string) int {
	switch goType {
	case "int8", "uint8":
		return 8
	case "int16", "uint16":
		return 16
	case "int32", "uint32":
		return 32
	}
	return 64
}

func unsignedOf(goType string) string {
	switch goType {
	case "int8", "int16", "int32", "int64":
		return "u" + goType
	}
	return goType
}

func isFloatGo(goType string) bool { return goType == "float32" || goType == "float64" }

func isUnsignedGo(goType string) bool { return len(goType) > 0 && goType[0] == 'u' }

func unsupportedExpr(e *loom.Expr, format string, args ...any) error {
	return errAt(e.Pos, ErrUnsupported, "cannot translate to Go: "+format, args...)
}

// print translates e. A subtree that depends on no argument, config value
// or target property is folded here, so constants reach Go as literals.
func (p *exprPrinter) print(e *loom.Expr) (goVal, error) {
	if e == nil {
		return goVal{}, errAt(loom.Pos{}, ErrUnsupported, "missing expression")
	}
	if e.Op != loom.ExprConst && foldable(e) {
		c, err := e.Eval(&loom.Env{Target: loom.TargetGPU})
		if err != nil {
			return goVal{}, err
		}
		if c.Type == nil {
			c.Type = e.Type
		}
		return p.constant(e, c)
	}
	switch e.Op {
	case loom.ExprConst:
		c := e.Const
		if c.Type == nil {
			c.Type = e.Type
		}
		return p.constant(e, c)
	case loom.ExprWorkload, loom.ExprLaunch:
		if p.kernel == nil {
			return goVal{}, unsupportedExpr(e, "a kernel argument outside a kernel")
		}
		var par *Param
		if e.Op == loom.ExprWorkload {
			par = p.kernel.paramForWorkload(e.Arg)
		} else {
			par = p.kernel.paramForLaunch(e.Arg)
		}
		if par == nil {
			return goVal{}, unsupportedExpr(e, "argument %d of kernel %s has no parameter", e.Arg, p.kernel.Export)
		}
		return p.leaf(e, par.GoName, par.Type)
	case loom.ExprConfig:
		f := p.config[e.Symbol]
		if f == nil {
			return goVal{}, unsupportedExpr(e, "config @%s is used but not declared (add a config.decl)", e.Symbol)
		}
		return p.leaf(e, p.cfgRecv+"."+f.GoName, f.Type)
	case loom.ExprSubgroupSize:
		// Every backend runs the GPU target's subgroup size (the CPU
		// executor emulates it), so it is a constant of the bindings.
		return goVal{src: strconv.Itoa(loom.TargetGPU.SubgroupSize), typ: "int64", prec: precPrimary,
			c: &loom.Const{Type: e.Type, Int: int64(loom.TargetGPU.SubgroupSize)}}, nil
	}
	args := make([]goVal, len(e.Args))
	for i, a := range e.Args {
		v, err := p.print(a)
		if err != nil {
			return goVal{}, err
		}
		args[i] = v
	}
	want := 2
	switch e.Op {
	case loom.ExprNeg, loom.ExprCast:
		want = 1
	case loom.ExprSelect:
		want = 3
	}
	if len(args) != want {
		return goVal{}, unsupportedExpr(e, "%s with %d operands", e.Op, len(args))
	}
	switch e.Op {
	case loom.ExprCast:
		return p.cast(e, args[0])
	case loom.ExprCmp:
		return p.cmp(e, args[0], args[1])
	case loom.ExprSelect:
		a, b := args[1], p.convert(args[2], args[1].typ)
		if args[0].typ != "bool" {
			return goVal{}, unsupportedExpr(e, "select on a %s condition", args[0].typ)
		}
		p.helpers["loomSelect"] = true
		return goVal{src: "loomSelect(" + args[0].src + ", " + a.src + ", " + b.src + ")", typ: a.typ, prec: precPrimary}, nil
	case loom.ExprNeg:
		a := args[0]
		if a.typ == "bool" {
			return goVal{}, unsupportedExpr(e, "negation of an i1")
		}
		return goVal{src: "-" + paren(a, precPrimary), typ: a.typ, prec: precPrimary}, nil
	}
	typ, ok := carrierType(e.Type)
	if !ok {
		typ = args[0].typ
	}
	a, b := p.convert(args[0], typ), p.convert(args[1], typ)
	switch e.Op {
	case loom.ExprAdd, loom.ExprSub, loom.ExprMul:
		name := map[loom.ExprOp]string{loom.ExprAdd: "add", loom.ExprSub: "sub", loom.ExprMul: "mul"}[e.Op]
		if v, ok := p.exactOp(name, a, b, typ); ok {
			return v, nil
		}
	}
	switch e.Op {
	case loom.ExprAdd:
		return binary("+", precAdd, a, b, typ), nil
	case loom.ExprSub:
		return binary("-", precAdd, a, b, typ), nil
	case loom.ExprMul:
		return binary("*", precMul, a, b, typ), nil
	case loom.ExprDiv, loom.ExprRem:
		if err := p.divisor(e, b); err != nil {
			return goVal{}, err
		}
		op := "/"
		if e.Op == loom.ExprRem {
			if isFloatGo(typ) {
				return goVal{}, unsupportedExpr(e, "float remainder")
			}
			op = "%"
		}
		if isUnsignedGo(typ) {
			// Signed division of an offset reinterprets its bits.
			return p.viaType(e, "int64", a, b, typ, func(x, y goVal) goVal { return binary(op, precMul, x, y, "int64") })
		}
		return binary(op, precMul, a, b, typ), nil
	case loom.ExprDivU, loom.ExprRemU:
		if err := p.divisor(e, b); err != nil {
			return goVal{}, err
		}
		op := "/"
		if e.Op == loom.ExprRemU {
			op = "%"
		}
		u := unsignedOf(typ)
		return p.viaType(e, u, a, b, typ, func(x, y goVal) goVal { return binary(op, precMul, x, y, u) })
	case loom.ExprCeilDiv, loom.ExprCeilDivU:
		if err := p.divisor(e, b); err != nil {
			return goVal{}, err
		}
		via, helper := typ, "loomCeilDiv"
		if e.Op == loom.ExprCeilDivU || isUnsignedGo(typ) {
			via, helper = unsignedOf(typ), "loomCeilDivU"
		}
		if isFloatGo(typ) {
			return goVal{}, unsupportedExpr(e, "float ceildiv")
		}
		p.helpers[helper] = true
		return p.viaType(e, via, a, b, typ, func(x, y goVal) goVal {
			return goVal{src: helper + "(" + x.src + ", " + y.src + ")", typ: via, prec: precPrimary}
		})
	case loom.ExprMin, loom.ExprMax:
		fn := "min"
		if e.Op == loom.ExprMax {
			fn = "max"
		}
		if isUnsignedGo(typ) {
			return p.viaType(e, "int64", a, b, typ, func(x, y goVal) goVal {
				return goVal{src: fn + "(" + x.src + ", " + y.src + ")", typ: "int64", prec: precPrimary}
			})
		}
		return goVal{src: fn + "(" + a.src + ", " + b.src + ")", typ: typ, prec: precPrimary}, nil
	case loom.ExprMinU, loom.ExprMaxU:
		fn := "min"
		if e.Op == loom.ExprMaxU {
			fn = "max"
		}
		u := unsignedOf(typ)
		return p.viaType(e, u, a, b, typ, func(x, y goVal) goVal {
			return goVal{src: fn + "(" + x.src + ", " + y.src + ")", typ: u, prec: precPrimary}
		})
	case loom.ExprAnd, loom.ExprOr, loom.ExprXor:
		if typ == "bool" {
			switch e.Op {
			case loom.ExprAnd:
				return binary("&&", precAnd, a, b, "bool"), nil
			case loom.ExprOr:
				return binary("||", precOr, a, b, "bool"), nil
			}
			return binary("!=", precCmp, a, b, "bool"), nil
		}
		if isFloatGo(typ) {
			return goVal{}, unsupportedExpr(e, "bitwise %s on floats", e.Op)
		}
		op := map[loom.ExprOp]string{loom.ExprAnd: "&", loom.ExprOr: "|", loom.ExprXor: "^"}[e.Op]
		prec := precAdd
		if op == "&" {
			prec = precMul
		}
		return binary(op, prec, a, b, typ), nil
	case loom.ExprShl, loom.ExprShrS, loom.ExprShrU:
		if typ == "bool" || isFloatGo(typ) {
			return goVal{}, unsupportedExpr(e, "shift of a %s", typ)
		}
		// Go panics on a negative shift count; Loom leaves counts past the
		// width undefined, so the count is taken modulo the width.
		count := p.shiftCount(args[1], bitsOf(typ))
		switch e.Op {
		case loom.ExprShl:
			// An untyped constant shifted by a variable count takes its type
			// from the context, which a generic call may not fix: type it.
			return binary("<<", precMul, typedConst(a), count, typ), nil
		case loom.ExprShrS:
			if isUnsignedGo(typ) {
				return p.viaType(e, "int64", a, a, typ, func(x, _ goVal) goVal { return binary(">>", precMul, typedConst(x), count, "int64") })
			}
			return binary(">>", precMul, typedConst(a), count, typ), nil
		}
		u := unsignedOf(typ)
		return p.viaType(e, u, a, a, typ, func(x, _ goVal) goVal { return binary(">>", precMul, typedConst(x), count, u) })
	}
	return goVal{}, unsupportedExpr(e, "operation %s", e.Op)
}

// typedConst gives a constant operand an explicit Go type.
func typedConst(v goVal) goVal {
	if v.c == nil {
		return v
	}
	return goVal{src: v.typ + "(" + v.src + ")", typ: v.typ, prec: precPrimary}
}

// foldable reports whether e depends on nothing a dispatch supplies.
func foldable(e *loom.Expr) bool {
	d := e.Deps()
	return len(d.Workload) == 0 && len(d.Launch) == 0 && len(d.Config) == 0
}

func (p *exprPrinter) leaf(e *loom.Expr, src string, declared *loom.Type) (goVal, error) {
	typ, ok := carrierType(e.Type)
	if !ok {
		typ, ok = carrierType(declared)
	}
	if !ok {
		return goVal{}, unsupportedExpr(e, "a value of type %s", e.Type)
	}
	// index parameters and fields are Go ints; the arithmetic is int64.
	if declared != nil && declared.Kind == loom.TypeIndex {
		return goVal{src: typ + "(" + src + ")", typ: typ, prec: precPrimary, base: src}, nil
	}
	return goVal{src: src, typ: typ, prec: precPrimary}, nil
}

func (p *exprPrinter) constant(e *loom.Expr, c loom.Const) (goVal, error) {
	typ, ok := carrierType(c.Type)
	if !ok {
		typ, ok = carrierType(e.Type)
	}
	if !ok {
		return goVal{}, unsupportedExpr(e, "a constant of type %s", c.Type)
	}
	return literal(c, typ)
}

// literal spells c in Go as an untyped constant of Go type typ; it adapts
// to the operand beside it, which always has type typ.
func literal(c loom.Const, typ string) (goVal, error) {
	cc := c
	v := goVal{typ: typ, prec: precPrimary, c: &cc}
	switch {
	case typ == "bool":
		v.src = strconv.FormatBool(c.Int&1 != 0)
	case isFloatGo(typ):
		if math.IsNaN(c.Float) || math.IsInf(c.Float, 0) {
			return goVal{}, errAt(loom.Pos{}, ErrUnsupported, "cannot translate to Go: non-finite constant %v", c.Float)
		}
		bits := 64
		if typ == "float32" {
			bits = 32
		}
		v.src = strconv.FormatFloat(c.Float, 'g', -1, bits)
	case isUnsignedGo(typ):
		v.src = strconv.FormatUint(truncU(uint64(c.Int), bitsOf(typ)), 10)
	default:
		v.src = strconv.FormatInt(truncS(c.Int, bitsOf(typ)), 10)
	}
	return v, nil
}

func truncU(x uint64, bits int) uint64 {
	if bits >= 64 {
		return x
	}
	return x & (1<<bits - 1)
}

func truncS(x int64, bits int) int64 {
	if bits >= 64 {
		return x
	}
	sh := uint(64 - bits)
	return x << sh >> sh
}

// convert changes v to Go type to. Constants are converted here (with the
// wrap-around of a bit reinterpretation), so no Go constant conversion can
// overflow at compile time.
func (p *exprPrinter) convert(v goVal, to string) goVal {
	if v.typ == to || to == "" {
		return v
	}
	if v.c != nil && !isFloatGo(to) && !isFloatGo(v.typ) && to != "bool" && v.typ != "bool" {
		c := *v.c
		if isUnsignedGo(v.typ) {
			c.Int = int64(truncU(uint64(c.Int), bitsOf(v.typ)))
		}
		out, err := literal(c, to)
		if err == nil {
			return out
		}
	}
	if v.base != "" && !isFloatGo(to) && to != "bool" {
		return goVal{src: to + "(" + v.base + ")", typ: to, prec: precPrimary}
	}
	return goVal{src: to + "(" + v.src + ")", typ: to, prec: precPrimary}
}

// viaType computes op on a and b converted to type via, then converts the
// result back to typ.
func (p *exprPrinter) viaType(e *loom.Expr, via string, a, b goVal, typ string, op func(x, y goVal) goVal) (goVal, error) {
	r := op(p.convert(a, via), p.convert(b, via))
	return p.convert(r, typ), nil
}

func (p *exprPrinter) shiftCount(v goVal, width int) goVal {
	if v.c != nil {
		return goVal{src: strconv.FormatUint(uint64(v.c.Int)&uint64(width-1), 10), typ: "uint64", prec: precPrimary}
	}
	u := p.convert(v, unsignedOf(v.typ))
	return goVal{src: "(" + paren(u, precMul) + " & " + strconv.Itoa(width-1) + ")", typ: u.typ, prec: precPrimary}
}

// divisor records a zero check for a divisor that is not a constant, and
// rejects a constant zero.
func (p *exprPrinter) divisor(e *loom.Expr, b goVal) error {
	if b.c != nil {
		if b.c.Int == 0 && b.c.Float == 0 && !isFloatGo(b.typ) {
			return errAt(e.Pos, ErrUnsupported, "division by the constant zero")
		}
		return nil
	}
	if isFloatGo(b.typ) {
		return nil // IEEE division by zero is defined
	}
	p.guards = append(p.guards, guard{divisor: b.src, pos: e.Pos})
	return nil
}

func (p *exprPrinter) cmp(e *loom.Expr, a, b goVal) (goVal, error) {
	if a.c != nil && b.c == nil {
		a = p.convert(a, b.typ)
	} else {
		b = p.convert(b, a.typ)
	}
	typ := a.typ
	if isFloatGo(typ) {
		return floatCmp(e, a, b)
	}
	signed := func(op string) goVal {
		if isUnsignedGo(typ) {
			s := "int" + strconv.Itoa(bitsOf(typ))
			return binary(op, precCmp, p.convert(a, s), p.convert(b, s), "bool")
		}
		return binary(op, precCmp, a, b, "bool")
	}
	unsigned := func(op string) goVal {
		u := unsignedOf(typ)
		return binary(op, precCmp, p.convert(a, u), p.convert(b, u), "bool")
	}
	switch e.Pred {
	case "eq":
		return binary("==", precCmp, a, b, "bool"), nil
	case "ne":
		return binary("!=", precCmp, a, b, "bool"), nil
	case "slt":
		return signed("<"), nil
	case "sle":
		return signed("<="), nil
	case "sgt":
		return signed(">"), nil
	case "sge":
		return signed(">="), nil
	case "ult":
		return unsigned("<"), nil
	case "ule":
		return unsigned("<="), nil
	case "ugt":
		return unsigned(">"), nil
	case "uge":
		return unsigned(">="), nil
	}
	return goVal{}, unsupportedExpr(e, "integer comparison %q", e.Pred)
}

func floatCmp(e *loom.Expr, a, b goVal) (goVal, error) {
	ordered := map[string]string{"oeq": "==", "ogt": ">", "oge": ">=", "olt": "<", "ole": "<="}
	// An unordered predicate holds when the opposite ordered one fails.
	unordered := map[string]string{"ugt": "<=", "uge": "<", "ult": ">=", "ule": ">"}
	if op, ok := ordered[e.Pred]; ok {
		return binary(op, precCmp, a, b, "bool"), nil
	}
	if op, ok := unordered[e.Pred]; ok {
		return goVal{src: "!(" + binary(op, precCmp, a, b, "bool").src + ")", typ: "bool", prec: precPrimary}, nil
	}
	switch e.Pred {
	case "une":
		return binary("!=", precCmp, a, b, "bool"), nil
	case "one":
		return goVal{src: "(" + binary("<", precCmp, a, b, "bool").src + " || " + binary(">", precCmp, a, b, "bool").src + ")", typ: "bool", prec: precPrimary}, nil
	case "ueq":
		return goVal{src: "!(" + binary("<", precCmp, a, b, "bool").src + " || " + binary(">", precCmp, a, b, "bool").src + ")", typ: "bool", prec: precPrimary}, nil
	case "ord":
		return goVal{src: "(" + a.src + " == " + a.src + " && " + b.src + " == " + b.src + ")", typ: "bool", prec: precPrimary}, nil
	case "uno":
		return goVal{src: "(" + a.src + " != " + a.src + " || " + b.src + " != " + b.src + ")", typ: "bool", prec: precPrimary}, nil
	}
	return goVal{}, unsupportedExpr(e, "float comparison %q", e.Pred)
}

func (p *exprPrinter) cast(e *loom.Expr, a goVal) (goVal, error) {
	to, ok := carrierType(e.Type)
	if !ok {
		return goVal{}, unsupportedExpr(e, "a cast to %s", e.Type)
	}
	from := a.typ
	switch e.Pred {
	case "bitcast":
		return goVal{}, unsupportedExpr(e, "bitcast")
	case "extui", "uitofp", "fptoui":
		if from == "bool" {
			p.helpers["loomBoolTo"] = true
			return goVal{src: "loomBoolTo[" + to + "](" + a.src + ", 1)", typ: to, prec: precPrimary}, nil
		}
		if e.Pred == "fptoui" {
			return p.convert(p.convert(a, unsignedOf(to)), to), nil
		}
		return p.convert(p.convert(a, unsignedOf(from)), to), nil
	}
	if from == "bool" {
		// extsi of an i1 gives all ones for true.
		p.helpers["loomBoolTo"] = true
		one := "-1"
		if isUnsignedGo(to) || e.Pred == "index" {
			one = "1"
		}
		if isFloatGo(to) {
			one = "1"
		}
		return goVal{src: "loomBoolTo[" + to + "](" + a.src + ", " + one + ")", typ: to, prec: precPrimary}, nil
	}
	if p.exact && from == "int64" && to == "uint64" && (e.Pred == "index" || e.Pred == "extsi") && a.c == nil {
		return p.exactOffset(a), nil
	}
	if to == "bool" {
		// trunci to i1 keeps the low bit.
		return goVal{src: paren(a, precMul) + "&1 != 0", typ: "bool", prec: precCmp}, nil
	}
	return p.convert(a, to), nil
}

// binary joins a and b with op, parenthesizing by precedence (operators of
// one level associate to the left).
func binary(op string, prec int, a, b goVal, typ string) goVal {
	return goVal{src: paren(a, prec) + " " + op + " " + paren(b, prec+1), typ: typ, prec: prec}
}

func paren(v goVal, prec int) string {
	if v.prec < prec {
		return "(" + v.src + ")"
	}
	return v.src
}

// helperSources are the generic helpers generated code may call, emitted
// only when used.
var helperSources = map[string]string{
	"loomSelect": `// loomSelect is Loom's select: both operands are already computed.
func loomSelect[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}`,
	"loomCeilDiv": `// loomCeilDiv divides rounding towards positive infinity (b != 0).
func loomCeilDiv[T int8 | int16 | int32 | int64](a, b T) T {
	q := a / b
	if a%b != 0 && (a < 0) == (b < 0) {
		q++
	}
	return q
}`,
	"loomCeilDivU": `// loomCeilDivU divides unsigned values rounding up (b != 0).
func loomCeilDivU[T uint8 | uint16 | uint32 | uint64](a, b T) T {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}`,
	"loomExtent": `// loomExtent evaluates a buffer's extent in exact arithmetic: a step that
// overflows 64 bits, or a negative count taken as bytes, sets invalid where
// Go arithmetic would wrap, so a length check cannot pass by wrap-around.
type loomExtent struct{ invalid bool }

func (x *loomExtent) addS(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		x.invalid = true
	}
	return s
}

func (x *loomExtent) subS(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		x.invalid = true
	}
	return d
}

func (x *loomExtent) mulS(a, b int64) int64 {
	p := a * b
	if a != 0 && (p/a != b || (a == -1 && b == -1<<63)) {
		x.invalid = true
	}
	return p
}

func (x *loomExtent) addU(a, b uint64) uint64 {
	s := a + b
	if s < a {
		x.invalid = true
	}
	return s
}

func (x *loomExtent) subU(a, b uint64) uint64 {
	if b > a {
		x.invalid = true
	}
	return a - b
}

func (x *loomExtent) mulU(a, b uint64) uint64 {
	p := a * b
	if a != 0 && p/a != b {
		x.invalid = true
	}
	return p
}

func (x *loomExtent) offset(a int64) uint64 {
	if a < 0 {
		x.invalid = true
	}
	return uint64(a)
}`,
	"loomBoolTo": `// loomBoolTo widens an i1: one for true, zero for false.
func loomBoolTo[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](b bool, one T) T {
	if b {
		return one
	}
	return 0
}`,
}

// generatedHelpers are the top-level names of the helpers and of the other
// unexported declarations of the generated file.
var generatedHelpers = []string{"loomExtent", "loomSelect", "loomCeilDiv", "loomCeilDivU", "loomBoolTo", "loomSources"}

// guardError formats the error a failed division guard returns.
func guardError(export string, pos loom.Pos) string {
	return fmt.Sprintf("%%w: %s: division by zero at %s for these arguments", export, pos)
}
