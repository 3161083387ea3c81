package loom

import (
	"fmt"
	"strings"
)

// Dump renders a module's syntax tree as deterministic indented text: one
// line per op with its position, results and types, operands with the
// position of the definition each resolves to, attributes, predicates and
// regions, followed by the declaration indexes. Golden tests compare it;
// it is also a readable way to see what the parser understood.
func Dump(m *Module) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n", m.File)
	for _, op := range m.Ops {
		dumpOp(&b, op, 1)
	}
	for _, k := range m.Kernels {
		fmt.Fprintf(&b, "kernel @%s export=%q", k.Symbol, k.Export)
		if k.Decl {
			b.WriteString(" decl")
		}
		if k.Retain {
			b.WriteString(" retain")
		}
		if k.Target != "" {
			fmt.Fprintf(&b, " target=@%s", k.Target)
		}
		if k.Linkage != "" {
			fmt.Fprintf(&b, " linkage=%s", k.Linkage)
		}
		fmt.Fprintf(&b, " workload=%s launch=%s", dumpValues(k.Workload), dumpValues(k.Launch))
		if len(k.WorkloadWhere) > 0 {
			fmt.Fprintf(&b, " workload_where=%s", dumpPreds(k.WorkloadWhere))
		}
		if len(k.LaunchWhere) > 0 {
			fmt.Fprintf(&b, " launch_where=%s", dumpPreds(k.LaunchWhere))
		}
		if k.Doc != "" {
			fmt.Fprintf(&b, " doc=%q", k.Doc)
		}
		b.WriteByte('\n')
	}
	for _, f := range m.Funcs {
		fmt.Fprintf(&b, "func %s @%s", f.Kind, f.Symbol)
		if f.Family != "" {
			fmt.Fprintf(&b, " family=%s", f.Family)
		}
		if len(f.Modifiers) > 0 {
			fmt.Fprintf(&b, " mods=%v", f.Modifiers)
		}
		if f.Export != "" {
			fmt.Fprintf(&b, " export=%q", f.Export)
		}
		if f.Priority != 0 {
			fmt.Fprintf(&b, " priority=%d", f.Priority)
		}
		fmt.Fprintf(&b, " params=%s results=%s", dumpValues(f.Params), dumpTypes(f.Results))
		if len(f.Where) > 0 {
			fmt.Fprintf(&b, " where=%s", dumpPreds(f.Where))
		}
		if f.Body == nil {
			b.WriteString(" bodyless")
		}
		b.WriteByte('\n')
	}
	for _, d := range m.ConfigDecls {
		fmt.Fprintf(&b, "config.decl @%s : %s", d.Symbol, d.Type)
		if d.Bind != nil {
			fmt.Fprintf(&b, " bind=%%%s", d.Bind.Name)
		}
		if len(d.Preds) > 0 {
			fmt.Fprintf(&b, " where=%s", dumpPreds(d.Preds))
		}
		b.WriteByte('\n')
	}
	for _, d := range m.ConfigDefs {
		fmt.Fprintf(&b, "config.def @%s = %s : %s\n", d.Symbol, d.Value.Text, d.Type)
	}
	for _, im := range m.Imports {
		fmt.Fprintf(&b, "import %q %v\n", im.Key, im.Symbols)
	}
	for _, a := range m.Aliases {
		fmt.Fprintf(&b, "alias %s = %s\n", a.Name, a.Value)
	}
	for _, g := range m.Globals {
		kind := "global.constant"
		if g.Mutable {
			kind = "global.variable"
		}
		fmt.Fprintf(&b, "%s @%s : %s dims=%s", kind, g.Symbol, g.Type, dumpValues(g.Dims))
		if len(g.Preds) > 0 {
			fmt.Fprintf(&b, " where=%s", dumpPreds(g.Preds))
		}
		if g.Init != nil {
			fmt.Fprintf(&b, " init=%s", dumpLit(g.Init))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func lc(p Pos) string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

func dumpOp(b *strings.Builder, op *Op, depth int) {
	ind := strings.Repeat("  ", depth)
	b.WriteString(ind)
	b.WriteString(lc(op.Pos))
	b.WriteByte(' ')
	if len(op.Results) > 0 {
		b.WriteString(dumpValues(op.Results))
		b.WriteString(" = ")
	}
	b.WriteString(op.Name)
	if op.Param != "" {
		b.WriteString("<" + op.Param + ">")
	}
	if op.Opaque {
		b.WriteString(" opaque")
	}
	if op.Symbol != "" {
		b.WriteString(" @" + op.Symbol)
	}
	if op.Pred != "" {
		b.WriteString(" pred=" + op.Pred)
	}
	if len(op.Words) > 0 {
		fmt.Fprintf(b, " words=%v", op.Words)
	}
	if op.Literal != nil {
		fmt.Fprintf(b, " lit=%s", dumpLit(op.Literal))
	}
	if op.Str != "" {
		fmt.Fprintf(b, " str=%q", op.Str)
	}
	if len(op.Operands) > 0 {
		b.WriteString(" operands=" + dumpOperands(op.Operands))
	}
	for _, a := range op.Attrs {
		fmt.Fprintf(b, " %s=%s", a.Key, dumpLit(&a.Value))
	}
	if len(op.Preds) > 0 {
		b.WriteString(" preds=" + dumpPreds(op.Preds))
	}
	if len(op.Types) > 0 {
		b.WriteString(" : " + dumpTypes(op.Types))
	}
	if len(op.ResultTypes) > 0 {
		b.WriteString(" -> " + dumpTypes(op.ResultTypes))
	}
	for _, rs := range op.ResultSigs {
		if rs.Tied != nil {
			fmt.Fprintf(b, " result%d=tied:%s", rs.Index, dumpOperands([]*Operand{rs.Tied}))
		} else if rs.Value != nil {
			fmt.Fprintf(b, " result%d=named:%%%s", rs.Index, rs.Value.Name)
		}
	}
	for _, c := range op.Cases {
		if c.Default {
			fmt.Fprintf(b, " default%s", dumpOperands(c.Values))
		} else {
			fmt.Fprintf(b, " %d=%s", c.Key, dumpOperands(c.Values))
		}
	}
	if op.Doc != "" {
		fmt.Fprintf(b, " doc=%q", op.Doc)
	}
	if op.Loc != nil {
		fmt.Fprintf(b, " loc(%s)", op.Loc.Text)
	}
	b.WriteByte('\n')
	for _, r := range op.Regions {
		b.WriteString(ind + "  region")
		if r.Label != "" {
			b.WriteString(" " + r.Label)
		}
		if r.Label == "case" {
			fmt.Fprintf(b, " %d", r.Case)
		}
		fmt.Fprintf(b, " %s-%s", lc(r.Pos), lc(r.End))
		if len(r.Args) > 0 {
			b.WriteString(" args=" + dumpValues(r.Args))
		}
		b.WriteByte('\n')
		for _, inner := range r.Ops {
			dumpOp(b, inner, depth+2)
		}
	}
}

func dumpValues(vs []*Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "%" + v.Name
		if v.Type != nil {
			parts[i] += ":" + v.Type.String()
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func dumpOperands(os []*Operand) string {
	parts := make([]string, len(os))
	for i, o := range os {
		switch {
		case o.Lit != nil:
			parts[i] = dumpLit(o.Lit)
		case o.Value != nil:
			parts[i] = "%" + o.Name + "@" + lc(o.Value.Pos)
		default:
			parts[i] = "%" + o.Name + "@?"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func dumpTypes(ts []*Type) string { return joinTypes(ts) }

func dumpPreds(ps []*Pred) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + dumpOperands(p.Args)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func dumpLit(l *Literal) string {
	switch l.Kind {
	case LitInt:
		return fmt.Sprintf("%d", l.Int)
	case LitFloat:
		return fmt.Sprintf("%g", l.Float)
	case LitBool:
		return fmt.Sprintf("%t", l.Int != 0)
	case LitString:
		return fmt.Sprintf("%q", l.Str)
	case LitWord:
		return l.Str
	case 0:
		return "unit"
	}
	return l.Text
}
