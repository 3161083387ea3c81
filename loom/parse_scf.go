package loom

// boundOperand reads an SSA value or an integer literal used as a loop
// bound.
func (p *parser) boundOperand(what string) *Operand {
	t := p.tok
	switch t.kind {
	case tSSA:
		p.next()
		return p.operand(t)
	case tInt, tFloat:
		p.next()
		return &Operand{Pos: p.pos(t), Lit: p.literal(t)}
	}
	p.unexpected(what)
	return nil
}

// parseIterArgs reads `(%a = %init : T, …)`, or with the types grouped
// after the values, `(%a = %x, %b = %y : T, U)`; the inits are appended to
// the op's operands and the new values returned.
func (p *parser) parseIterArgs(op *Op) []*Value {
	open := p.expect(tLParen, "'('")
	var args, untyped []*Value
	for {
		p.skipNL()
		switch p.tok.kind {
		case tRParen:
			if len(untyped) > 0 {
				p.failAt(p.pos(p.tok), "expected ':' and a type for %%%s before ')'", untyped[0].Name)
			}
			p.next()
			return args
		case tComma:
			p.next()
			continue
		case tEOF:
			p.failAt(p.pos(p.tok), "unexpected end of file: '(' opened at %d:%d is not closed", open.line, open.col)
		case tSSA:
		default:
			p.unexpected("loop-carried value such as %acc = %init : f32")
		}
		v := p.newArg(p.tok)
		p.next()
		p.expect(tEqual, "'=' and an initial value after %"+v.Name)
		op.Operands = append(op.Operands, p.boundOperand("initial value"))
		args = append(args, v)
		untyped = append(untyped, v)
		if p.tok.kind == tComma && p.peekPastNL(1).kind == tSSA {
			continue // its type comes in a group after the last value
		}
		p.expect(tColon, "':' and a type after the initial value")
		for {
			untyped[0].Type = p.parseType(false)
			untyped = untyped[1:]
			if p.tok.kind != tComma || p.peekPastNL(1).kind == tSSA || len(untyped) == 0 {
				break
			}
			p.next()
			p.skipNL()
		}
	}
}

// peekPastNL is the n-th token after the current one that is not a
// newline.
func (p *parser) peekPastNL(n int) token {
	for i := 1; ; i++ {
		t := p.peek(i)
		if t.kind == tNewline {
			continue
		}
		if n--; n == 0 || t.kind == tEOF {
			return t
		}
	}
}

// parseFor reads
//
//	scf.for %iv = [%lb to %ub step %s] [(%a = %init : T, …)] [-> (T…)]
//	        [pipeline(…)] [unroll[(…)]] [schedule(…)] { … }
func (p *parser) parseFor(op *Op) {
	iv := p.newArg(p.expect(tSSA, "induction variable"))
	p.expect(tEqual, "'=' after the induction variable")
	bracket := p.tok.kind == tLBrack
	if bracket {
		p.next()
	}
	op.Operands = append(op.Operands, p.boundOperand("lower bound"))
	p.expectWord("to")
	op.Operands = append(op.Operands, p.boundOperand("upper bound"))
	p.expectWord("step")
	op.Operands = append(op.Operands, p.boundOperand("step"))
	if bracket {
		p.expect(tRBrack, "']' closing the loop range")
	}
	args := []*Value{iv}
	if p.tok.kind == tLParen {
		args = append(args, p.parseIterArgs(op)...)
	}
	for {
		switch {
		case p.tok.kind == tArrow:
			p.next()
			p.parseResultTypes(op, &op.ResultTypes, false)
		case p.tok.kind == tIdent:
			w := p.tok
			p.next()
			if p.tok.kind == tLParen && p.adjacent() {
				var pending []*Value
				p.parseClause(op, w, &pending)
			} else {
				op.Attrs = append(op.Attrs, &Attr{Pos: p.pos(w), Key: w.text})
			}
		case p.tok.kind == tLBrace && p.braceIsDict(op):
			p.parseAttrDict(op)
		default:
			goto body
		}
	}
body:
	op.Regions = []*Region{p.parseRegion("", args)}
}

// parseWhile reads
//
//	scf.while(%a = %init : T, …) -> (T…) { … scf.condition … } do(%b: T, …) { … }
func (p *parser) parseWhile(op *Op) {
	var before []*Value
	if p.tok.kind == tLParen {
		before = p.parseIterArgs(op)
	}
	if p.tok.kind == tArrow {
		p.next()
		p.parseResultTypes(op, &op.ResultTypes, false)
	}
	r0 := p.parseRegion("", before)
	p.expectWord("do")
	var after []*Value
	if p.tok.kind == tLParen {
		after = p.parseSignature(false)
	}
	r1 := p.parseRegion("do", after)
	op.Regions = []*Region{r0, r1}
}

// parseSwitch reads `scf.switch %sel [-> (T…)] { case N { … } … default { … } }`.
func (p *parser) parseSwitch(op *Op) {
	op.Operands = append(op.Operands, p.operand(p.expect(tSSA, "selector value")))
	if p.tok.kind == tColon {
		p.next()
		p.parseTypeList(&op.Types, false)
	}
	if p.tok.kind == tArrow {
		p.next()
		p.parseResultTypes(op, &op.ResultTypes, false)
	}
	open := p.expect(tLBrace, "'{' opening the switch cases")
	p.enter()
	defer p.leave()
	seen := map[int64]bool{}
	for {
		p.skipNL()
		t := p.tok
		switch {
		case t.kind == tRBrace:
			p.next()
			return
		case t.kind == tEOF:
			p.failAt(p.pos(t), "unexpected end of file: '{' opened at %d:%d is not closed", open.line, open.col)
		case p.isWord("case"):
			p.next()
			n := p.expect(tInt, "case value")
			v := p.literal(n).Int
			if seen[v] {
				p.failAt(p.pos(n), "duplicate case %d", v)
			}
			seen[v] = true
			r := p.parseRegion("case", nil)
			r.Case = v
			r.Pos = p.pos(t)
			op.Regions = append(op.Regions, r)
		case p.isWord("default"):
			p.next()
			r := p.parseRegion("default", nil)
			r.Pos = p.pos(t)
			op.Regions = append(op.Regions, r)
		default:
			p.unexpected("'case N {' or 'default {'")
		}
	}
}

// parseLookup reads
//
//	scf.lookup %sel { 0 = (%x…), 1 = (%y…) } default(%d…) : T…
func (p *parser) parseLookup(op *Op) {
	op.Operands = append(op.Operands, p.operand(p.expect(tSSA, "selector value")))
	open := p.expect(tLBrace, "'{' opening the lookup table")
	for {
		p.skipNL()
		t := p.tok
		switch t.kind {
		case tRBrace:
			p.next()
			goto tail
		case tComma:
			p.next()
			continue
		case tEOF:
			p.failAt(p.pos(t), "unexpected end of file: '{' opened at %d:%d is not closed", open.line, open.col)
		case tInt:
		default:
			p.unexpected("table row such as 0 = (%a)")
		}
		p.next()
		row := &LookupCase{Pos: p.pos(t), Key: p.literal(t).Int}
		p.expect(tEqual, "'=' after the row key")
		row.Values = p.lookupValues()
		op.Cases = append(op.Cases, row)
	}
tail:
	if p.isWord("default") {
		t := p.tok
		p.next()
		op.Cases = append(op.Cases, &LookupCase{Pos: p.pos(t), Default: true, Values: p.lookupValues()})
	}
	if p.tok.kind == tColon {
		p.next()
		p.parseTypeList(&op.Types, false)
	}
	if p.tok.kind == tArrow {
		p.next()
		p.parseResultTypes(op, &op.ResultTypes, false)
	}
}

func (p *parser) lookupValues() []*Operand {
	p.expect(tLParen, "'(' opening the row values")
	var vals []*Operand
	for {
		p.skipNL()
		switch p.tok.kind {
		case tRParen:
			p.next()
			return vals
		case tComma:
			p.next()
		default:
			vals = append(vals, p.boundOperand("row value"))
		}
	}
}
