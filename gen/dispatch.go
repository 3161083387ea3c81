package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/loomgen/loomgen/loom"
)

// runtimePath is the import path of the runtime generated code calls,
// always under the alias loomrt (jennifer would otherwise rename a package
// called runtime to avoid the standard library's).
const runtimePath = "github.com/loomgen/loomgen/runtime"

func rt(name string) *jen.Statement { return jen.Qual(runtimePath, name) }

// typeCode turns a Go type spelling of the model ("float32",
// "loomrt.F16") into jennifer code that imports what it names.
func typeCode(s string) *jen.Statement {
	if rest, ok := strings.CutPrefix(s, "["); ok { // an array: [N]T
		n, elem, _ := strings.Cut(rest, "]")
		return jen.Index(jen.Id(n)).Add(typeCode(elem))
	}
	if rest, ok := strings.CutPrefix(s, "loomrt."); ok {
		return rt(rest)
	}
	return jen.Id(s)
}

// dispatchWriter writes the body of one kernel's Dispatch method.
type dispatchWriter struct {
	k       *Kernel
	p       *exprPrinter
	body    []jen.Code
	skipped []string // checks Dispatch cannot evaluate, for the doc comment
	spanVar bool     // the loomExtent local of exact extents is declared
}

func newDispatchWriter(k *Kernel, config map[string]*ConfigField, helpers map[string]bool) *dispatchWriter {
	return &dispatchWriter{k: k, p: &exprPrinter{kernel: k, config: config, cfgRecv: "k.cfg", helpers: helpers}}
}

// fail returns `return loomrt.Dispatch{}, fmt.Errorf(format, loomrt.ErrArgument, args...)`.
func (w *dispatchWriter) fail(format string, args ...jen.Code) jen.Code {
	all := append([]jen.Code{jen.Lit(format), rt("ErrArgument")}, args...)
	return jen.Return(rt("Dispatch").Values(), jen.Qual("fmt", "Errorf").Call(all...))
}

// flushGuards emits the zero checks the printed expressions need.
func (w *dispatchWriter) flushGuards() {
	seen := map[string]bool{}
	for _, g := range w.p.guards {
		if seen[g.divisor] {
			continue
		}
		seen[g.divisor] = true
		w.body = append(w.body, jen.If(jen.Id(g.divisor).Op("==").Lit(0)).Block(
			w.fail(guardError(w.k.Export, g.pos)),
		))
	}
	w.p.guards = nil
}

// escapePercent makes source text safe inside a format string.
func escapePercent(s string) string { return strings.ReplaceAll(s, "%", "%%") }

func (w *dispatchWriter) write() ([]jen.Code, error) {
	k := w.k
	w.body = append(w.body, jen.If(jen.Id("k").Dot("cfg").Op("==").Nil()).Block(
		w.fail("%w: "+k.Export+": kernel not loaded (take it from the Kernels that Load returns)"),
	))
	for _, c := range k.Checks {
		if err := w.check(c); err != nil {
			return nil, err
		}
	}
	// Loom lets a launch config ask for zero workgroups, but the runtime
	// launches at least one per axis and would refuse such a dispatch later,
	// away from its arguments; Dispatch refuses it here and says why.
	groups, err := w.axes(k.Geometry.Workgroups, "groups", "workgroups", 1)
	if err != nil {
		return nil, err
	}
	sizes, err := w.axes(k.Geometry.WorkgroupSize, "size", "invocations per workgroup", 1)
	if err != nil {
		return nil, err
	}
	// The grid, workgroup size and storage were computed to refuse bad
	// arguments here, next to them, in the caller's terms; the runtime
	// computes and checks them again from the compiled kernel and seals
	// the dispatch (Session.NewDispatch), so nothing generated code gets
	// wrong, or a caller changes afterwards, reaches a launch.
	if _, err := w.storage(); err != nil {
		return nil, err
	}
	_, _ = groups, sizes
	for _, b := range k.Buffers {
		w.extent(b)
	}
	var workload, args []jen.Code
	for _, p := range k.Params {
		if p.Workload >= 0 {
			workload = append(workload, argCode(p))
		}
	}
	for _, p := range k.Launch {
		args = append(args, argCode(p))
	}
	list := func(items []jen.Code) jen.Code {
		if len(items) == 0 {
			return jen.Nil()
		}
		return jen.Index().Add(rt("Arg")).ValuesFunc(func(g *jen.Group) { multiline(g, items) })
	}
	w.body = append(w.body, jen.Return(jen.Id("k").Dot("sess").Dot("NewDispatch").Call(jen.Id("k").Dot("kernel"), list(workload), list(args))))
	return w.body, nil
}

// multiline puts each element on its own line once a list is long enough
// that one line would not read well.
func multiline(g *jen.Group, items []jen.Code) {
	if len(items) <= 3 {
		for _, it := range items {
			g.Add(it)
		}
		return
	}
	for _, it := range items {
		g.Line().Add(it)
	}
	g.Line()
}

// argCode packs one launch argument: a binding with the inferred access for
// buffers, a typed scalar otherwise.
func argCode(p *Param) jen.Code {
	if b := p.Buffer; b != nil {
		region := jen.Id(p.GoName)
		if b.ElemGo != "" {
			region = jen.Id(p.GoName).Dot("Region").Call()
		}
		var bind *jen.Statement
		switch b.Access {
		case loom.AccessRead:
			bind = region.Dot("Read").Call()
		case loom.AccessWrite:
			bind = region.Dot("Write").Call()
		case loom.AccessReadWrite:
			bind = region.Dot("ReadWrite").Call()
		default:
			bind = region.Dot("Bind").Call(rt("AccessNone"))
		}
		return rt("Buffer").Call(bind)
	}
	_, ctor, _, _ := launchGoType(p.Type)
	if ctor == "Vector" {
		return rt(ctor).Call(jen.Id(p.GoName).Index(jen.Empty(), jen.Empty()).Op("..."))
	}
	return rt(ctor).Call(jen.Id(p.GoName))
}

// axes computes the three components of a launch triple. Constant
// components become literals; the others are computed once into a local
// and checked to fit a launch dimension.
func (w *dispatchWriter) axes(exprs [3]*loom.Expr, local, what string, least int64) ([]jen.Code, error) {
	out := make([]jen.Code, 3)
	for i, e := range exprs {
		axis := "xyz"[i : i+1]
		if e == nil {
			out[i] = jen.Lit(1)
			continue
		}
		v, err := w.p.print(e)
		if err != nil {
			return nil, err
		}
		v = w.p.convert(v, "int64")
		if v.c != nil {
			if v.c.Int < least || v.c.Int > maxDim {
				return nil, errAt(e.Pos, ErrUnsupported, "kernel %s: %d %s along %s is outside [%d, %d]", w.k.Export, v.c.Int, what, axis, least, maxDim)
			}
			out[i] = jen.Lit(int(v.c.Int))
			continue
		}
		w.flushGuards()
		name := local + strings.ToUpper(axis)
		w.body = append(w.body,
			jen.Id(name).Op(":=").Id(v.src),
			jen.If(jen.Id(name).Op("<").Lit(int(least)).Op("||").Id(name).Op(">").Lit(maxDim)).Block(
				w.fail(fmt.Sprintf("%%w: %s: %%d %s along %s for these arguments (launch config at %s); a dispatch needs %d to %d%s",
					w.k.Export, what, axis, e.Pos, least, maxDim, emptyHint(local)), jen.Id(name)),
			))
		out[i] = jen.Int().Call(jen.Id(name))
	}
	return out, nil
}

// maxStorage bounds the dynamic workgroup storage of a dispatch before the
// runtime applies its backend's own limit.
const maxStorage = 1<<31 - 1

// storage computes the launch's dynamic workgroup storage (the
// dynamic_workgroup_storage clause, nil code without one) and checks that
// each kernel.workgroup.storage of the body whose byte count Dispatch can
// compute fits in it; the others are listed with the skipped checks.
func (w *dispatchWriter) storage() (jen.Code, error) {
	k := w.k
	e := k.Geometry.DynamicWorkgroupStorage
	if e == nil {
		return nil, nil
	}
	// Exact arithmetic: a byte count that overflows must not wrap into a
	// plausible size.
	w.p.exact = true
	v, err := w.p.print(e)
	w.p.exact = false
	if err != nil {
		return nil, errAt(e.Pos, ErrUnsupported, "kernel %s: dynamic_workgroup_storage has no Go translation: %v", k.Export, err)
	}
	v = w.p.convert(v, "int64")
	var have *jen.Statement
	if v.c != nil {
		if v.c.Int < 0 || v.c.Int > maxStorage {
			return nil, errAt(e.Pos, ErrUnsupported, "kernel %s: dynamic_workgroup_storage of %d bytes is outside [0, %d]", k.Export, v.c.Int, maxStorage)
		}
		have = jen.Lit(int(v.c.Int))
	} else {
		w.flushGuards()
		bad := jen.Id("storage").Op("<").Lit(0).Op("||").Id("storage").Op(">").Lit(maxStorage)
		if strings.Contains(v.src, extentVar+".") {
			if !w.spanVar {
				w.spanVar = true
				w.body = append(w.body, jen.Var().Id(extentVar).Id("loomExtent"))
			}
			bad = jen.Id(extentVar).Dot("invalid").Op("||").Add(bad)
		}
		w.body = append(w.body,
			jen.Id("storage").Op(":=").Id(v.src),
			jen.If(bad).Block(
				w.fail(fmt.Sprintf("%%w: %s: %%d bytes of dynamic workgroup storage for these arguments (launch config at %s); a dispatch needs 0 to %d",
					k.Export, e.Pos, maxStorage), jen.Id("storage")),
			))
		have = jen.Int().Call(jen.Id("storage"))
	}
	for _, u := range k.Storage {
		w.storageCheck(u.Op.Pos, "kernel.workgroup.storage", "takes", u.Bytes, u.Reason, e, v, u.Whole)
		if u.Views == nil || u.Bytes == nil || prettyExpr(u.Views, k, nil) != prettyExpr(u.Bytes, k, nil) {
			w.storageCheck(u.Op.Pos, "the views over kernel.workgroup.storage", "span", u.Views, u.ViewsReason, e, v, false)
		}
	}
	return have, nil
}

// storageCheck emits the check that what (at pos) needs at most the
// launch's dynamic workgroup storage: need bytes, given by the clause's
// expression clause printed as have; a need Dispatch cannot compute is
// listed with the skipped checks (reason), none when whole is set (the
// buffer is all the launch gives) or need is the clause itself.
func (w *dispatchWriter) storageCheck(pos loom.Pos, what, verb string, need *loom.Expr, reason string, clause *loom.Expr, have goVal, whole bool) {
	k := w.k
	if whole || (need != nil && prettyExpr(need, k, nil) == prettyExpr(clause, k, nil)) {
		return
	}
	skip := func(why string) {
		w.skipped = append(w.skipped, fmt.Sprintf("%s at %s fits the dynamic workgroup storage (%s)", what, pos, why))
	}
	if need == nil {
		skip(reason)
		return
	}
	w.p.exact = true
	n, err := w.p.print(need)
	w.p.exact = false
	if err != nil {
		w.p.guards = nil
		skip(err.Error())
		return
	}
	n = w.p.convert(n, "int64")
	if n.c != nil && have.c != nil && n.c.Int <= have.c.Int {
		return
	}
	w.flushGuards()
	avail := jen.Id("storage")
	if have.c != nil {
		avail = jen.Lit(have.c.Int)
	}
	tooBig := jen.Id("need").Op(">").Add(avail)
	if strings.Contains(n.src, extentVar+".") {
		if !w.spanVar {
			w.spanVar = true
			w.body = append(w.body, jen.Var().Id(extentVar).Id("loomExtent"))
		}
		tooBig = jen.Id(extentVar).Dot("invalid").Op("||").Add(tooBig)
	}
	w.body = append(w.body, jen.If(jen.Id("need").Op(":=").Id(typedConst(n).src), tooBig).Block(
		w.fail(fmt.Sprintf("%%w: %s: %s at %s %s %%d bytes; the launch config's dynamic_workgroup_storage gives %%d for these arguments",
			k.Export, what, pos, verb), jen.Id("need"), avail.Clone()),
	))
}

// emptyHint tells the caller what to do about a grid with no workgroups.
func emptyHint(local string) string {
	if local != "groups" {
		return ""
	}
	return " (with no work to do, skip the dispatch)"
}

// maxDim is the largest launch dimension: the runtime passes dimensions in
// 32-bit fields on every backend.
const maxDim = 1<<31 - 1

// check emits one argument predicate; a predicate Dispatch cannot translate
// is listed in the doc comment instead (the runtime's validation and the
// CPU executor still see the kernel's own semantics).
func (w *dispatchWriter) check(c loom.ArgCheck) error {
	args := make([]goVal, len(c.Args))
	for i, a := range c.Args {
		v, err := w.p.print(a)
		if err != nil {
			w.p.guards = nil
			w.skipped = append(w.skipped, c.Text+" ("+err.Error()+")")
			return nil
		}
		args[i] = v
	}
	bad, ok := violation(w.p, c.Pred, args)
	if !ok {
		w.p.guards = nil
		w.skipped = append(w.skipped, c.Text)
		return nil
	}
	w.flushGuards()
	subject := prettyExpr(c.Args[0], w.k, nil)
	valueArg := jen.Id(args[0].src)
	if p := leafParam(c.Args[0], w.k); p != nil {
		valueArg = jen.Id(p.GoName)
	}
	w.body = append(w.body, jen.If(jen.Id(bad)).Block(
		w.fail(fmt.Sprintf("%%w: %s: %s = %%v violates %s at %s", w.k.Export, escapePercent(subject), escapePercent(c.Text), c.Pos), valueArg),
	))
	return nil
}

func leafParam(e *loom.Expr, k *Kernel) *Param {
	if e == nil || k == nil {
		return nil
	}
	switch e.Op {
	case loom.ExprWorkload:
		return k.paramForWorkload(e.Arg)
	case loom.ExprLaunch:
		return k.paramForLaunch(e.Arg)
	}
	return nil
}

// violation spells the Go condition under which predicate pred fails for
// the printed operands; ok is false for predicates it does not know.
func violation(p *exprPrinter, pred string, args []goVal) (string, bool) {
	need := map[string]int{"range": 3, "mul": 2, "pow2": 1, "lt": 2, "le": 2, "gt": 2, "ge": 2, "eq": 2, "ne": 2, "min": 2, "max": 2, "finite": 1}
	n, known := need[pred]
	if !known || len(args) != n {
		return "", false
	}
	v := args[0]
	for i := 1; i < len(args); i++ {
		args[i] = p.convert(args[i], v.typ)
	}
	isFloat := isFloatGo(v.typ)
	cmp := func(op string, a, b goVal) string { return binary(op, precCmp, a, b, "bool").src }
	switch pred {
	case "range":
		if isFloat {
			return "!(" + cmp(">=", v, args[1]) + " && " + cmp("<=", v, args[2]) + ")", true
		}
		return cmp("<", v, args[1]) + " || " + cmp(">", v, args[2]), true
	case "mul":
		if isFloat || v.typ == "bool" {
			return "", false
		}
		m := args[1]
		if m.c != nil {
			if m.c.Int == 0 {
				return cmp("!=", v, m), true
			}
			return binary("%", precMul, v, m, v.typ).src + " != 0", true
		}
		return "(" + m.src + " == 0 && " + cmp("!=", v, goVal{src: "0", prec: precPrimary}) + ") || (" +
			m.src + " != 0 && " + binary("%", precMul, v, m, v.typ).src + " != 0)", true
	case "pow2":
		if isFloat || v.typ == "bool" {
			return "", false
		}
		return paren(v, precCmp+1) + " <= 0 || " + paren(v, precMul) + "&(" + v.src + "-1) != 0", true
	case "finite":
		if !isFloat {
			return "", false
		}
		// x-x is zero exactly when x is finite (NaN and ±Inf give NaN).
		return paren(v, precAdd+1) + "-" + paren(v, precAdd+1) + " != 0", true
	}
	ops := map[string]string{"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=", "min": ">=", "max": "<="}
	return "!(" + cmp(ops[pred], v, args[1]) + ")", true
}

// extent emits the length check of one buffer.
func (w *dispatchWriter) extent(b *Buffer) {
	if b.Extent == nil {
		return
	}
	w.p.exact = true
	v, err := w.p.print(b.Extent)
	w.p.exact = false
	if err != nil {
		w.p.guards = nil
		b.Reason = "its extent has no Go translation: " + err.Error()
		return
	}
	w.flushGuards()
	p := b.Param
	region := jen.Id(p.GoName)
	if b.ElemGo != "" {
		region = jen.Id(p.GoName).Dot("Region").Call()
	}
	if v.c != nil && v.c.Int <= 0 {
		return
	}
	if v.c == nil && v.typ == "int64" {
		v = w.p.exactOffset(v)
	}
	have := func() *jen.Statement { return jen.Id(v.typ).Call(region.Clone().Dot("Len").Call()) }
	formula := escapePercent(prettyExpr(b.Extent, w.k, nil))
	lengthCheck := jen.If(jen.Id("need").Op(":=").Id(typedConst(v).src), have().Op("<").Id("need")).Block(
		w.fail(fmt.Sprintf("%%w: %s: buffer %s holds %%d bytes; the kernel's views span %%d bytes for these arguments (%s)",
			w.k.Export, p.GoName, formula),
			region.Clone().Dot("Len").Call(), jen.Id("need")),
	)
	if !strings.Contains(v.src, extentVar+".") {
		w.body = append(w.body, lengthCheck)
		return
	}
	if !w.spanVar {
		w.spanVar = true
		w.body = append(w.body, jen.Var().Id(extentVar).Id("loomExtent"))
	}
	// The same check, refusing first the arguments for which the extent
	// overflows 64 bits or goes negative, where wrapped arithmetic could
	// make any buffer look long enough.
	w.body = append(w.body, jen.If(jen.Id("need").Op(":=").Id(v.src), jen.Id(extentVar).Dot("invalid")).Block(
		w.fail(fmt.Sprintf("%%w: %s: the kernel's views over buffer %s span a byte count (%s) that is negative or overflows 64 bits for these arguments",
			w.k.Export, p.GoName, formula)),
	).Else().If(have().Op("<").Id("need")).Block(
		w.fail(fmt.Sprintf("%%w: %s: buffer %s holds %%d bytes; the kernel's views span %%d bytes for these arguments (%s)",
			w.k.Export, p.GoName, formula),
			region.Clone().Dot("Len").Call(), jen.Id("need")),
	))
}

// prettyExpr spells an expression for people: infix, with parameter names
// as the kernel writes them and config values as @key.
func prettyExpr(e *loom.Expr, k *Kernel, _ map[string]*ConfigField) string {
	s, _ := prettyPrec(e, k)
	return s
}

func prettyPrec(e *loom.Expr, k *Kernel) (string, int) {
	if e == nil {
		return "?", precPrimary
	}
	switch e.Op {
	case loom.ExprConst:
		c := e.Const
		if c.Type == nil {
			c.Type = e.Type
		}
		return c.String(), precPrimary
	case loom.ExprWorkload, loom.ExprLaunch:
		if p := leafParam(e, k); p != nil {
			return p.LoomName, precPrimary
		}
		return fmt.Sprintf("arg%d", e.Arg), precPrimary
	case loom.ExprConfig:
		return "@" + e.Symbol, precPrimary
	case loom.ExprSubgroupSize:
		return "subgroup_size", precPrimary
	case loom.ExprCast:
		if len(e.Args) == 1 {
			return prettyPrec(e.Args[0], k)
		}
	case loom.ExprNeg:
		if len(e.Args) == 1 {
			s, p := prettyPrec(e.Args[0], k)
			if p < precPrimary {
				s = "(" + s + ")"
			}
			return "-" + s, precPrimary
		}
	}
	infix := map[loom.ExprOp]struct {
		op   string
		prec int
	}{
		loom.ExprAdd: {"+", precAdd}, loom.ExprSub: {"-", precAdd}, loom.ExprMul: {"*", precMul},
		loom.ExprDiv: {"/", precMul}, loom.ExprDivU: {"/", precMul}, loom.ExprRem: {"%", precMul},
		loom.ExprRemU: {"%", precMul}, loom.ExprAnd: {"&", precMul}, loom.ExprOr: {"|", precAdd},
		loom.ExprXor: {"^", precAdd}, loom.ExprShl: {"<<", precMul}, loom.ExprShrS: {">>", precMul},
		loom.ExprShrU: {">>", precMul},
	}
	if in, ok := infix[e.Op]; ok && len(e.Args) == 2 {
		a, pa := prettyPrec(e.Args[0], k)
		b, pb := prettyPrec(e.Args[1], k)
		if pa < in.prec {
			a = "(" + a + ")"
		}
		if pb <= in.prec {
			b = "(" + b + ")"
		}
		return a + in.op + b, in.prec
	}
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i], _ = prettyPrec(a, k)
	}
	name := e.Op.String()
	if e.Pred != "" {
		name += " " + e.Pred
	}
	return name + "(" + strings.Join(parts, ", ") + ")", precPrimary
}
