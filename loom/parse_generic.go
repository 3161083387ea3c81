package loom

import (
	"math"
	"strconv"
	"strings"
)

// parseGeneric reads the operand syntax shared by most ops:
//
//	[pred,] operands [word(args)] [{attrs}] [: types [to T]] [-> types] [regions]
//
// in whatever order the op writes them. Structured ops get the layout of
// opsyntax.go from it directly; opaque ops additionally collect `%a: T` and
// `%a = %init` definitions in their header as arguments of the next region.
func (p *parser) parseGeneric(op *Op) {
	var pending []*Value
	label := ""
	typed := false
	if op.Name == "kernel.launch" {
		op.LaunchWorkload = -1
	}
	for {
		t := p.tok
		if typed && !op.Opaque && p.startsStmt() {
			return // the next statement, on the same line
		}
		if typed && !op.Opaque && t.kind != tLBrace && t.kind != tArrow && t.kind != tNewline && t.kind != tEOF && t.kind != tRBrace {
			p.failAt(p.pos(t), "unexpected %s after the types of %s", t.describe(), op.Name)
		}
		switch t.kind {
		case tNewline, tEOF, tRBrace:
			return
		case tSSA:
			p.next()
			if op.Opaque && p.tok.kind == tEqual {
				pending = append(pending, p.newArg(t))
				p.next()
				continue
			}
			op.Operands = append(op.Operands, p.operand(t))
			p.parseIndices(op)
		case tComma, tPipe, tStar, tBang, tQuestion:
			p.next()
		case tEqual:
			if !op.Opaque {
				p.failAt(p.pos(t), "unexpected '=' in %s", op.Name)
			}
			p.next()
		case tIdent:
			p.next()
			switch {
			case isCompare(op.Name) && op.Pred == "" && len(op.Operands) == 0:
				op.Pred = t.text
			case t.text == "true" || t.text == "false":
				p.addLiteral(op, t, p.literal(t))
			case strings.HasSuffix(op.Name, ".constant") && specialFloat(t.text):
				p.addLiteral(op, t, p.literal(t))
			case p.tok.kind == tLParen && p.adjacent():
				p.parseClause(op, t, &pending)
				label = t.text
			case p.tok.kind == tLAngle && p.adjacent():
				op.Words = append(op.Words, t.text+"<"+p.balancedText()+">")
			default:
				op.Words = append(op.Words, t.text)
				label = t.text
			}
		case tInt, tFloat, tString:
			p.next()
			lit := p.literal(t)
			if t.kind == tString && op.Str == "" {
				op.Str = lit.Str
				continue
			}
			p.addLiteral(op, t, lit)
		case tSymbol:
			p.next()
			if op.Symbol == "" {
				op.Symbol = t.text[1:]
			} else {
				op.Words = append(op.Words, t.text[1:])
			}
		case tHash:
			op.Words = append(op.Words, p.hashText())
		case tCaret:
			p.next()
			op.Words = append(op.Words, t.text)
			if p.tok.kind == tLParen && p.adjacent() {
				// A successor's arguments, ^join(%v: i32): values passed
				// to the block, so uses.
				p.parenGroup(op, &pending, false, true)
			}
		case tRaw:
			p.next()
		case tLParen:
			p.parseParenGroup(op, &pending)
		case tLBrack:
			switch {
			case strings.HasSuffix(op.Name, ".assume") || p.looksLikePreds():
				op.Preds = append(op.Preds, p.parsePreds()...)
			case op.Name == "kernel.launch" && op.LaunchWorkload < 0 && len(op.Operands) == 0:
				p.parseIndices(op)
				op.LaunchWorkload = len(op.Operands)
			default:
				p.parseIndices(op)
			}
		case tLAngle:
			op.Words = append(op.Words, "<"+p.balancedText()+">")
		case tLBrace:
			switch {
			case p.braceIsDict(op):
				p.parseAttrDict(op)
			case !op.Opaque || p.regionLooksLikeStatements():
				op.Regions = append(op.Regions, p.parseRegion(label, pending))
				pending, label = nil, ""
			default:
				p.skipBalanced()
				pending, label = nil, ""
			}
		case tColon:
			p.next()
			typed = true
			p.parseTypeList(&op.Types, op.Opaque)
			if p.isWord("to") {
				p.next()
				op.ResultTypes = append(op.ResultTypes, p.parseType(op.Opaque))
			}
		case tArrow:
			p.next()
			p.parseResultTypes(op, &op.ResultTypes, op.Opaque)
		default:
			p.failAt(p.pos(t), "unexpected %s in %s", t.describe(), op.Name)
		}
	}
}

func (p *parser) newArg(t token) *Value {
	return &Value{Name: t.text[1:], Pos: p.pos(t)}
}

func (p *parser) operand(t token) *Operand {
	return &Operand{Pos: p.pos(t), Name: t.text[1:]}
}

// addLiteral stores the first constant of an op as its Literal and any
// further one as a literal operand.
func (p *parser) addLiteral(op *Op, t token, lit *Literal) {
	if op.Literal == nil {
		op.Literal = lit
		return
	}
	op.Operands = append(op.Operands, &Operand{Pos: p.pos(t), Lit: lit})
}

// parseIndices reads any number of `[a, b, …]` groups after a value: view
// indices, subview offsets (which may be literals), gather offsets, and the
// `[%lo to %hi step %s]` of vector.mask.range.
func (p *parser) parseIndices(op *Op) {
	for p.tok.kind == tLBrack && !p.looksLikePreds() {
		open := p.tok
		p.next()
		for {
			p.skipNL()
			t := p.tok
			switch t.kind {
			case tRBrack:
				p.next()
				goto nextGroup
			case tSSA:
				p.next()
				op.Operands = append(op.Operands, p.operand(t))
			case tInt, tFloat:
				p.next()
				op.Operands = append(op.Operands, &Operand{Pos: p.pos(t), Lit: p.literal(t)})
			case tIdent:
				p.next()
				op.Words = append(op.Words, t.text)
			case tString:
				// A field selector, %schema["element_format"].
				p.next()
				if lit := p.literal(t); op.Str == "" {
					op.Str = lit.Str
				} else {
					op.Words = append(op.Words, lit.Str)
				}
			case tComma:
				p.next()
			case tEOF:
				p.failAt(p.pos(t), "unexpected end of file: '[' opened at %d:%d is not closed", open.line, open.col)
			default:
				p.failAt(p.pos(t), "unexpected %s in index list", t.describe())
			}
		}
	nextGroup:
	}
}

// parseParenGroup reads `( … )` in an op's operand syntax: call arguments
// are operands; `%a: T` and `%a = %init [: T]` define arguments of the
// region that follows.
func (p *parser) parseParenGroup(op *Op, pending *[]*Value) {
	p.parenGroup(op, pending, false, false)
}

// parenGroup reads a parenthesized group; in a keyword clause only SSA
// values become operands, the rest is the clause's attribute value. With
// uses, `%a: T` is an operand with its type (a successor's arguments,
// iter_args(%init: T)) rather than the definition of a region argument.
func (p *parser) parenGroup(op *Op, pending *[]*Value, clause, uses bool) {
	open := p.expect(tLParen, "'('")
	p.enter()
	defer p.leave()
	for {
		p.skipNL()
		t := p.tok
		switch t.kind {
		case tRParen:
			p.next()
			return
		case tEOF:
			p.failAt(p.pos(t), "unexpected end of file: '(' opened at %d:%d is not closed", open.line, open.col)
		case tSSA:
			p.next()
			switch {
			case p.tok.kind == tColon && uses:
				p.next()
				op.Operands = append(op.Operands, p.operand(t))
				p.parseType(true)
			case p.tok.kind == tColon:
				p.next()
				v := p.newArg(t)
				v.Type = p.parseType(op.Opaque)
				*pending = append(*pending, v)
			case p.tok.kind == tEqual:
				p.next()
				v := p.newArg(t)
				init := p.expect(tSSA, "initial value")
				op.Operands = append(op.Operands, p.operand(init))
				if p.tok.kind == tColon {
					p.next()
					v.Type = p.parseType(op.Opaque)
				}
				*pending = append(*pending, v)
			default:
				op.Operands = append(op.Operands, p.operand(t))
				p.parseIndices(op)
			}
		case tInt, tFloat:
			p.next()
			lit := p.literal(t)
			if !clause {
				op.Operands = append(op.Operands, &Operand{Pos: p.pos(t), Lit: lit})
			}
		case tString:
			p.next()
			lit := p.literal(t)
			if !clause && op.Str == "" {
				op.Str = lit.Str
			}
		case tIdent, tSymbol, tHash:
			p.next()
			if !clause {
				op.Words = append(op.Words, strings.TrimPrefix(t.text, "@"))
			}
		case tComma, tColon, tPipe, tStar, tQuestion, tBang, tEqual, tArrow, tCaret:
			p.next()
		case tLParen, tLBrack, tLBrace, tLAngle:
			p.skipBalanced()
		default:
			p.failAt(p.pos(t), "unexpected %s in parenthesized list", t.describe())
		}
	}
}

// parseClause reads a keyword clause word(args), such as align(64),
// scope(workgroup) or workgroups(%a, %b, %c). SSA arguments become operands
// too.
func (p *parser) parseClause(op *Op, key token, pending *[]*Value) {
	first := p.i + 1
	// Loop-carried initial values, iter_args(%init: T), are uses.
	p.parenGroup(op, pending, true, key.text == "iter_args")
	last := p.i - 1 // the closing ')'
	a := &Attr{Pos: p.pos(key), Key: key.text}
	if last-first == 1 {
		a.Value = *p.literal(p.toks[first])
	} else {
		a.Value = Literal{Kind: LitRaw, Text: p.spanText(first, last)}
	}
	op.Attrs = append(op.Attrs, a)
}

// parseAttrDict reads `{key = value, flag, …}`.
func (p *parser) parseAttrDict(op *Op) {
	open := p.expect(tLBrace, "'{'")
	p.enter()
	defer p.leave()
	for {
		p.skipNL()
		t := p.tok
		switch t.kind {
		case tRBrace:
			p.next()
			return
		case tComma:
			p.next()
			continue
		case tEOF:
			p.failAt(p.pos(t), "unexpected end of file: '{' opened at %d:%d is not closed", open.line, open.col)
		case tIdent, tString:
		default:
			p.unexpected("attribute name")
		}
		p.next()
		a := &Attr{Pos: p.pos(t), Key: t.text}
		if t.kind == tString {
			a.Key = p.literal(t).Str
		}
		if p.tok.kind == tEqual {
			p.next()
			a.Value = p.attrValue(op)
			if p.tok.kind == tColon {
				// A typed attribute value such as 1 : i32.
				p.next()
				p.parseType(true)
			}
		} else {
			a.Value = Literal{Kind: LitBool, Text: "true", Int: 1}
		}
		op.Attrs = append(op.Attrs, a)
	}
}

func (p *parser) attrValue(op *Op) Literal {
	t := p.tok
	switch t.kind {
	case tInt, tFloat, tString, tIdent:
		p.next()
		return *p.literal(t)
	case tHash:
		s := p.hashText()
		return Literal{Kind: LitRaw, Text: s}
	case tSymbol:
		p.next()
		return Literal{Kind: LitRaw, Text: t.text}
	case tSSA:
		p.next()
		op.Operands = append(op.Operands, p.operand(t))
		return Literal{Kind: LitRaw, Text: t.text}
	case tLBrack, tLBrace, tLParen, tLAngle:
		start := p.i
		p.skipBalanced()
		return Literal{Kind: LitRaw, Text: p.spanText(start, p.i)}
	}
	p.unexpected("attribute value")
	return Literal{}
}

// hashText reads #name or #name<…> and returns its spelling.
func (p *parser) hashText() string {
	t := p.expect(tHash, "attribute")
	if p.tok.kind == tLAngle && p.adjacent() {
		return t.text + "<" + p.balancedText() + ">"
	}
	return t.text
}

func (p *parser) looksLikePreds() bool {
	j := 1
	for p.peek(j).kind == tNewline {
		j++
	}
	if p.peek(j).kind == tRBrack {
		return false
	}
	return p.peek(j).kind == tIdent && p.peek(j+1).kind == tLParen
}

// parsePreds reads `[name(args), …]`.
func (p *parser) parsePreds() []*Pred {
	open := p.expect(tLBrack, "'['")
	var preds []*Pred
	for {
		p.skipNL()
		t := p.tok
		switch t.kind {
		case tRBrack:
			p.next()
			return preds
		case tComma:
			p.next()
			continue
		case tEOF:
			p.failAt(p.pos(t), "unexpected end of file: '[' opened at %d:%d is not closed", open.line, open.col)
		case tIdent:
		default:
			p.unexpected("predicate such as range(%v, 1, 64)")
		}
		p.next()
		pr := &Pred{Pos: p.pos(t), Name: t.text}
		p.expect(tLParen, "'(' after predicate "+t.text)
		for {
			p.skipNL()
			a := p.tok
			switch a.kind {
			case tRParen:
				p.next()
				goto done
			case tComma:
				p.next()
				continue
			case tSSA:
				pr.Args = append(pr.Args, p.operand(a))
			case tInt, tFloat, tIdent:
				pr.Args = append(pr.Args, &Operand{Pos: p.pos(a), Lit: p.literal(a)})
			default:
				p.unexpected("predicate argument")
			}
			p.next()
		}
	done:
		preds = append(preds, pr)
	}
}

// braceIsDict decides whether the '{' at hand opens an attribute
// dictionary or a region. A dictionary holds `key = value` or bare `key`
// entries with undotted keys (or quoted ones); a region starts with a
// statement: `%r =`, a ^label, or a dotted op name. An empty `{}` is a
// region for the ops that take regions and a dictionary otherwise; a '{'
// ending its line is a region (or, in an opaque op, maybe a data block).
func (p *parser) braceIsDict(op *Op) bool {
	t, n := p.peek(1), p.peek(2)
	switch t.kind {
	case tNewline:
		return false
	case tString:
		return true
	case tRBrace:
		return !takesRegions(op.Name)
	case tIdent:
		if n.kind == tEqual || n.kind == tColon {
			return true
		}
		if n.kind == tComma || n.kind == tRBrace {
			return !strings.Contains(t.text, ".")
		}
		return false
	}
	return false
}

// takesRegions lists the ops whose '{' after the operands is always a region.
func takesRegions(name string) bool {
	switch name {
	case "scf.if", "scf.for", "scf.while", "scf.switch", "kernel.exit":
		return true
	}
	return strings.HasSuffix(name, ".def") || strings.HasSuffix(name, ".func") ||
		strings.HasSuffix(name, ".case") || strings.HasPrefix(name, "test.")
}

// regionLooksLikeStatements decides, for an opaque op, whether the region
// at the current '{' holds statements or data (a target record's
// `key = value` lines), which is skipped.
func (p *parser) regionLooksLikeStatements() bool {
	j := 1
	for p.peek(j).kind == tNewline {
		j++
	}
	t := p.peek(j)
	switch t.kind {
	case tSSA, tRBrace, tCaret:
		return true
	case tIdent:
		n := p.peek(j + 1).kind
		return n != tEqual && n != tColon
	}
	return false
}

// parseRegion reads `{ statements }`; args become the region's arguments.
func (p *parser) parseRegion(label string, args []*Value) *Region {
	open := p.expect(tLBrace, "'{'")
	p.enter()
	defer p.leave()
	r := &Region{Pos: p.pos(open), Label: label, Args: args}
	for i, a := range args {
		a.Owner, a.Index, a.Def = r, i, nil
	}
	for {
		p.skipNL()
		switch p.tok.kind {
		case tRBrace:
			r.End = p.pos(p.tok)
			p.next()
			return r
		case tEOF:
			p.failAt(p.pos(p.tok), "unexpected end of file: '{' opened at %d:%d is not closed", open.line, open.col)
		}
		op := p.parseOp(false)
		p.endStmt(op)
		r.Ops = append(r.Ops, op)
	}
}

// specialFloat reports whether word spells an infinity or a NaN, which
// Loom writes as words (inf, -inf, nan, -nan) rather than numbers.
func specialFloat(word string) bool {
	switch word {
	case "inf", "+inf", "-inf", "nan", "+nan", "-nan":
		return true
	}
	return false
}

// literal converts a literal token; range errors are syntax errors.
func (p *parser) literal(t token) *Literal {
	lit := &Literal{Text: t.text}
	switch t.kind {
	case tInt:
		lit.Kind = LitInt
		v, err := strconv.ParseInt(t.text, 0, 64)
		if err != nil {
			// Hex spellings of 64-bit patterns (0xFFFFFFFFFFFFFFFF) are
			// kept as their two's-complement value.
			u, uerr := strconv.ParseUint(t.text, 0, 64)
			if uerr != nil || !strings.HasPrefix(t.text, "0x") && !strings.HasPrefix(t.text, "0X") {
				p.failAt(p.pos(t), "integer literal %s out of range", t.text)
			}
			v = int64(u)
		}
		lit.Int = v
		lit.Float = float64(v)
	case tFloat:
		lit.Kind = LitFloat
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil || math.IsInf(v, 0) {
			p.failAt(p.pos(t), "float literal %s out of range", t.text)
		}
		lit.Float = v
	case tString:
		lit.Kind = LitString
		s, err := unquote(t.text)
		if err != nil {
			p.failAt(p.pos(t), "invalid string literal: %v", err)
		}
		lit.Str = s
	case tIdent:
		switch t.text {
		case "true":
			lit.Kind, lit.Int = LitBool, 1
		case "false":
			lit.Kind = LitBool
		case "inf", "+inf", "-inf", "nan", "+nan", "-nan":
			lit.Kind = LitFloat
			c, _ := ParseConst(&Type{Kind: TypeFloat, Name: "f64", Bits: 64}, t.text)
			lit.Float = c.Float
		default:
			lit.Kind, lit.Str = LitWord, t.text
		}
	default:
		lit.Kind = LitRaw
	}
	return lit
}
