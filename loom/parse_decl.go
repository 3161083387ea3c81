package loom

import "strings"

// parseSignature reads `( %a: T, … )`, one argument per line or all on
// one; a bare type without a name is accepted for declarations and kept as
// an unnamed value.
func (p *parser) parseSignature(lenient bool) []*Value {
	open := p.expect(tLParen, "'(' opening the signature")
	var args []*Value
	for {
		p.skipNL()
		switch p.tok.kind {
		case tRParen:
			p.next()
			return args
		case tEOF:
			p.failAt(p.pos(p.tok), "unexpected end of file: '(' opened at %d:%d is not closed", open.line, open.col)
		case tSSA:
			t := p.tok
			p.next()
			p.skipNL()
			p.expect(tColon, "':' and a type after "+t.text)
			p.skipNL()
			v := p.newArg(t)
			v.Type = p.parseType(lenient)
			v.Index = len(args)
			args = append(args, v)
		case tIdent, tLParen:
			t := p.tok
			args = append(args, &Value{Pos: p.pos(t), Type: p.parseType(lenient), Index: len(args)})
		default:
			p.unexpected("argument such as %x: index")
		}
		p.skipNL()
		if p.tok.kind == tComma {
			p.next()
			continue
		}
		if p.tok.kind != tRParen {
			p.unexpected("',' or ')' in signature")
		}
	}
}

// clauseArg reads `(tok)` after a header keyword and returns the token.
func (p *parser) clauseArg(key string, k tokKind, what string) token {
	p.expect(tLParen, "'(' after "+key)
	t := p.expect(k, what)
	p.expect(tRParen, "')' after "+key+" argument")
	return t
}

// exportClause reads `("name"[, {linkage = "…"}])` after export and
// returns the name token and the linkage attribute (a word), if written.
// Other keys of the dictionary are rejected: Loom's export takes only a
// linkage.
func (p *parser) exportClause() (token, *Attr) {
	p.expect(tLParen, "'(' after export")
	name := p.expect(tString, "export name string")
	var linkage *Attr
	if p.tok.kind == tComma {
		p.next()
		var tmp Op
		p.parseAttrDict(&tmp)
		for _, a := range tmp.Attrs {
			if a.Key != "linkage" {
				p.failAt(a.Pos, "unknown export attribute %q (export takes {linkage = \"…\"})", a.Key)
			}
			v := a.Value.Str
			if a.Value.Kind != LitString && a.Value.Kind != LitWord || v == "" {
				p.failAt(a.Pos, "export linkage must be a name such as \"dso_local\"")
			}
			linkage = &Attr{Pos: a.Pos, Key: "linkage", Value: Literal{Kind: LitWord, Text: v, Str: v}}
		}
	}
	p.expect(tRParen, "')' closing export(…)")
	return name, linkage
}

// parseKernel reads kernel.def and kernel.decl headers (modifiers in any
// order) and, for a def, both regions.
func (p *parser) parseKernel(op *Op) {
	k := &Kernel{Op: op, Decl: op.Name == "kernel.decl", Doc: op.Doc}
	for p.tok.kind == tIdent {
		w := p.tok
		p.next()
		switch w.text {
		case "retain":
			k.Retain = true
			op.Words = append(op.Words, w.text)
		case "target":
			k.Target = p.clauseArg("target", tSymbol, "target symbol").text[1:]
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "target", Value: Literal{Kind: LitRaw, Text: "@" + k.Target}})
		case "export":
			s, linkage := p.exportClause()
			k.Export, k.HasExport = p.literal(s).Str, true
			if k.Export == "" {
				p.failAt(p.pos(s), "export name is empty")
			}
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "export", Value: *p.literal(s)})
			if linkage != nil {
				k.Linkage = linkage.Value.Str
				op.Attrs = append(op.Attrs, linkage)
			}
		case "linkage":
			k.Linkage = p.clauseArg("linkage", tIdent, "linkage kind").text
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "linkage", Value: Literal{Kind: LitWord, Text: k.Linkage, Str: k.Linkage}})
		default:
			if p.tok.kind == tLParen && p.adjacent() {
				var pending []*Value
				p.parseClause(op, w, &pending)
			} else {
				op.Words = append(op.Words, w.text)
			}
		}
	}
	sym := p.expect(tSymbol, "kernel symbol such as @my_kernel")
	k.Symbol = sym.text[1:]
	op.Symbol = k.Symbol
	if !k.HasExport {
		k.Export = k.Symbol
	}
	k.Workload = p.parseSignature(false)
	k.WorkloadWhere = p.parseWhere(op)
	if k.Decl {
		p.expectWord("launch")
		k.Launch = p.parseSignature(false)
		k.LaunchWhere = p.parseWhere(op)
	} else {
		k.Config = p.parseRegion("", k.Workload)
		p.expectWord("launch")
		k.Launch = p.parseSignature(false)
		k.LaunchWhere = p.parseWhere(op)
		k.Body = p.parseRegion("launch", k.Launch)
		op.Regions = []*Region{k.Config, k.Body}
	}
	op.Preds = append(append(op.Preds, k.WorkloadWhere...), k.LaunchWhere...)
	p.mod.Kernels = append(p.mod.Kernels, k)
}

// parseWhere reads an optional `where [preds]`.
func (p *parser) parseWhere(op *Op) []*Pred {
	if !p.isWord("where") {
		return nil
	}
	p.next()
	return p.parsePreds()
}

// parseFunc reads func.def/func.decl and the template spellings.
func (p *parser) parseFunc(op *Op) {
	f := &Func{Op: op, Kind: op.Name, Doc: op.Doc}
	switch op.Name {
	case "template.def", "func.template", "func.ukernel", "func.provider.decl":
		if op.Param == "" {
			p.failAt(op.Pos, "%s needs a family: %s<…>", op.Name, op.Name)
		}
		f.Family = strings.TrimPrefix(strings.TrimSpace(op.Param), "@")
	}
	for p.tok.kind == tIdent {
		w := p.tok
		p.next()
		switch {
		case w.text == "export" && p.tok.kind == tLParen:
			s, linkage := p.exportClause()
			f.Export = p.literal(s).Str
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "export", Value: *p.literal(s)})
			if linkage != nil {
				op.Attrs = append(op.Attrs, linkage)
			}
		case w.text == "target" && p.tok.kind == tLParen:
			t := p.clauseArg("target", tSymbol, "target symbol")
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "target", Value: Literal{Kind: LitRaw, Text: t.text}})
		case w.text == "priority" && p.tok.kind == tLParen:
			t := p.clauseArg("priority", tInt, "priority number")
			f.Priority = p.literal(t).Int
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "priority", Value: *p.literal(t)})
		case w.text == "requires" && p.tok.kind == tLBrack:
			start := p.i
			p.skipBalanced()
			op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: "requires", Value: Literal{Kind: LitRaw, Text: p.spanText(start, p.i)}})
		case p.tok.kind == tLParen && p.adjacent():
			var pending []*Value
			p.parseClause(op, w, &pending)
		default:
			f.Modifiers = append(f.Modifiers, w.text)
		}
	}
	op.Words = f.Modifiers
	sym := p.expect(tSymbol, "function symbol such as @helper")
	f.Symbol = sym.text[1:]
	op.Symbol = f.Symbol
	f.Params = p.parseSignature(false)
	for {
		switch {
		case p.tok.kind == tArrow:
			p.next()
			p.parseResultTypes(op, &f.Results, false)
			op.ResultTypes = f.Results
			f.ResultSigs = op.ResultSigs
			continue
		case p.isWord("where"):
			f.Where = p.parseWhere(op)
			op.Preds = f.Where
			continue
		case p.tok.kind == tIdent && p.peek(1).kind == tLParen:
			// Trailing clauses such as import("mod", "sym").
			w := p.tok
			p.next()
			var pending []*Value
			p.parseClause(op, w, &pending)
			continue
		}
		break
	}
	if p.tok.kind == tLBrace {
		if op.Name == "func.decl" || op.Name == "template.decl" || op.Name == "func.provider.decl" {
			p.failAt(p.pos(p.tok), "%s has no body", op.Name)
		}
		f.Body = p.parseRegion("", f.Params)
		op.Regions = []*Region{f.Body}
	}
	p.mod.Funcs = append(p.mod.Funcs, f)
}

// parseConfigDecl reads `config.decl @s : [%v:] T [where [preds]]`.
func (p *parser) parseConfigDecl(op *Op) {
	sym := p.expect(tSymbol, "config symbol")
	op.Symbol = sym.text[1:]
	p.expect(tColon, "':' after config symbol")
	c := &ConfigDecl{Op: op, Symbol: op.Symbol, Doc: op.Doc}
	if p.tok.kind == tSSA {
		c.Bind = p.newArg(p.tok)
		p.next()
		p.expect(tColon, "':' after bound name")
	}
	c.Type = p.parseType(false)
	if c.Bind != nil {
		c.Bind.Type = c.Type
	}
	op.Types = []*Type{c.Type}
	c.Preds = p.parseWhere(op)
	op.Preds = c.Preds
	p.mod.ConfigDecls = append(p.mod.ConfigDecls, c)
}

// parseConfigDef reads `config.def @s = literal : T`.
func (p *parser) parseConfigDef(op *Op) {
	sym := p.expect(tSymbol, "config symbol")
	op.Symbol = sym.text[1:]
	p.expect(tEqual, "'=' after config symbol")
	t := p.tok
	switch t.kind {
	case tInt, tFloat, tString, tIdent:
		p.next()
		op.Literal = p.literal(t)
	case tHash:
		// An attribute value, such as a quantization schema of type
		// encoding<schema>: kept as written.
		op.Literal = &Literal{Kind: LitRaw, Text: p.hashText()}
	default:
		p.unexpected("config value")
	}
	p.expect(tColon, "':' and a type after config value")
	ty := p.parseType(false)
	op.Types = []*Type{ty}
	p.mod.ConfigDefs = append(p.mod.ConfigDefs, &ConfigDef{Op: op, Symbol: op.Symbol, Value: *op.Literal, Type: ty})
}

// parseGlobal reads `global.constant @s : T [where [preds]] [= value]`
// (or global.variable). The names in T's dynamic dimensions and encoding
// are local to the declaration.
func (p *parser) parseGlobal(op *Op) {
	sym := p.expect(tSymbol, "global symbol such as @weights")
	op.Symbol = sym.text[1:]
	p.expect(tColon, "':' and a type after the global symbol")
	g := &Global{Op: op, Symbol: op.Symbol, Mutable: op.Name == "global.variable", Doc: op.Doc}
	g.Type = p.parseType(false)
	op.Types = []*Type{g.Type}
	g.Preds = p.parseWhere(op)
	op.Preds = g.Preds
	if p.tok.kind == tEqual {
		p.next()
		t := p.tok
		switch t.kind {
		case tInt, tFloat, tString, tIdent:
			p.next()
			g.Init = p.literal(t)
		case tHash:
			g.Init = &Literal{Kind: LitRaw, Text: p.hashText()}
		case tLBrack, tLBrace:
			start := p.i
			p.skipBalanced()
			g.Init = &Literal{Kind: LitRaw, Text: p.spanText(start, p.i)}
		default:
			p.unexpected("initial value")
		}
		op.Literal = g.Init
	}
	p.mod.Globals = append(p.mod.Globals, g)
}

// parseSplitFunc reads the test dialect's two-region function
// `test.split_func [public] [cc] @f(%a: T, …) { … } launch { … }`: both
// regions take the signature's arguments (the second a projected copy).
// It is kept opaque: nothing but the test harness runs it.
func (p *parser) parseSplitFunc(op *Op) {
	op.Opaque = true
	for p.tok.kind == tIdent {
		op.Words = append(op.Words, p.tok.text)
		p.next()
	}
	op.Symbol = p.expect(tSymbol, "function symbol").text[1:]
	args := p.parseSignature(false)
	first := p.parseRegion("", args)
	p.expectWord("launch")
	copies := make([]*Value, len(args))
	for i, a := range args {
		c := *a
		copies[i] = &c
	}
	op.Regions = []*Region{first, p.parseRegion("launch", copies)}
}

// parseImport reads `module.import "key" [@a, @b]`.
func (p *parser) parseImport(op *Op) {
	key := p.expect(tString, "import key string")
	op.Str = p.literal(key).Str
	im := &Import{Op: op, Key: op.Str}
	if p.tok.kind == tLBrack {
		p.next()
		for {
			p.skipNL()
			switch p.tok.kind {
			case tRBrack:
				p.next()
				op.Words = im.Symbols
				p.mod.Imports = append(p.mod.Imports, im)
				return
			case tComma:
				p.next()
			case tSymbol:
				im.Symbols = append(im.Symbols, p.tok.text[1:])
				p.next()
			default:
				p.unexpected("symbol in import list")
			}
		}
	}
	p.mod.Imports = append(p.mod.Imports, im)
}
