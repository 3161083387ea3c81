package loom

import "strings"

// scalarTypes maps the scalar type spellings to their kind and width.
var scalarTypes = map[string]struct {
	kind TypeKind
	bits int
}{
	"i1": {TypeInt, 1}, "i2": {TypeInt, 2}, "i4": {TypeInt, 4}, "i8": {TypeInt, 8},
	"i16": {TypeInt, 16}, "i32": {TypeInt, 32}, "i64": {TypeInt, 64},
	"f8E4M3": {TypeFloat, 8}, "f8E5M2": {TypeFloat, 8}, "f8E4M3FN": {TypeFloat, 8},
	"f8E4M3FNUZ": {TypeFloat, 8}, "f8E5M2FNUZ": {TypeFloat, 8},
	"f16": {TypeFloat, 16}, "bf16": {TypeFloat, 16}, "f32": {TypeFloat, 32}, "f64": {TypeFloat, 64},
	"index": {TypeIndex, 0}, "offset": {TypeOffset, 0}, "buffer": {TypeBuffer, 0},
}

var shapedKinds = map[string]TypeKind{
	"view": TypeView, "vector": TypeVector, "tensor": TypeTensor, "tile": TypeTile,
}

// parseType reads one type. lenient accepts any bare word as an other type;
// it is used inside opaque ops, whose type vocabulary is open.
func (p *parser) parseType(lenient bool) *Type {
	t := p.tok
	if t.kind == tLParen {
		return p.parseFuncType(lenient)
	}
	if t.kind != tIdent {
		p.unexpected("type")
	}
	p.next()
	ty := &Type{Pos: p.pos(t), Name: t.text}
	if s, ok := scalarTypes[t.text]; ok {
		ty.Kind, ty.Bits = s.kind, s.bits
		return ty
	}
	if k, ok := shapedKinds[t.text]; ok {
		if p.tok.kind != tLAngle || !p.adjacent() {
			p.failAt(ty.Pos, "%s type needs a shape: %s<…>", t.text, t.text)
		}
		ty.Kind = k
		p.parseShape(ty)
		return ty
	}
	ty.Kind = TypeOther
	if t.text == "pool" && p.tok.kind == tLAngle && p.adjacent() {
		p.parsePoolShape(ty)
		return ty
	}
	if p.tok.kind == tLAngle && p.adjacent() {
		ty.Name = t.text + "<" + p.balancedText() + ">"
		return ty
	}
	if !lenient && t.text != "encoding" && !strings.Contains(t.text, ".") {
		p.failAt(ty.Pos, "unknown type %q", t.text)
	}
	return ty
}

// parseFuncType reads a function type `(T, …) -> (R, …)`; its result list
// may also be a single bare type.
func (p *parser) parseFuncType(lenient bool) *Type {
	ty := &Type{Pos: p.pos(p.tok), Kind: TypeFunc, Name: "func"}
	p.enter()
	defer p.leave()
	ty.Params = p.parenTypes(lenient)
	p.expect(tArrow, "'->' and result types of a function type")
	if p.tok.kind == tLParen {
		ty.Results = p.parenTypes(lenient)
	} else {
		ty.Results = []*Type{p.parseType(lenient)}
	}
	return ty
}

// parenTypes reads `(T, …)`, each T possibly a function type itself.
func (p *parser) parenTypes(lenient bool) []*Type {
	open := p.expect(tLParen, "'('")
	var ts []*Type
	for {
		p.skipNL()
		switch p.tok.kind {
		case tRParen:
			p.next()
			return ts
		case tEOF:
			p.failAt(p.pos(p.tok), "unexpected end of file: '(' opened at %d:%d is not closed", open.line, open.col)
		}
		ts = append(ts, p.parseType(lenient))
		p.skipNL()
		if p.tok.kind == tComma {
			p.next()
		} else if p.tok.kind != tRParen {
			p.unexpected("',' or ')' in a type list")
		}
	}
}

// parsePoolShape reads the dimensions of pool<…>, which has no element
// type: pool<[%m]>, pool<64>.
func (p *parser) parsePoolShape(ty *Type) {
	open := p.expect(tLAngle, "'<'")
	for {
		var d Dim
		switch t := p.tok; t.kind {
		case tInt:
			p.next()
			d.Size = p.literal(t).Int
		case tLBrack:
			p.next()
			d.Value = p.operand(p.expect(tSSA, "dynamic dimension value"))
			p.expect(tRBrack, "']'")
		default:
			p.unexpected("pool block size such as [%n] or 64")
		}
		ty.Dims = append(ty.Dims, d)
		if p.tok.kind != tShapeX {
			break
		}
		p.next()
	}
	if p.tok.kind != tRAngle {
		p.failAt(p.pos(p.tok), "expected '>' closing pool type opened at %d:%d, found %s", open.line, open.col, p.tok.describe())
	}
	p.next()
	ty.Name = "pool"
}

// parseShape reads `<dims x elem [, attachment]>`; the lexer has already
// split the dims into integers, [%v] groups and shape 'x' tokens.
func (p *parser) parseShape(ty *Type) {
	open := p.expect(tLAngle, "'<'")
	for {
		t := p.tok
		var d Dim
		switch t.kind {
		case tInt:
			p.next()
			lit := p.literal(t)
			d.Size = lit.Int
		case tQuestion:
			p.next()
			d.Size = -1
		case tLBrack:
			p.next()
			v := p.expect(tSSA, "dynamic dimension value")
			d.Value = p.operand(v)
			p.expect(tRBrack, "']'")
		default:
			goto elem
		}
		p.expect(tShapeX, "'x' after dimension")
		ty.Dims = append(ty.Dims, d)
	}
elem:
	if p.tok.kind != tIdent {
		p.unexpected("element type of " + ty.Name)
	}
	ty.Elem = p.parseType(false)
	if !ty.Elem.IsScalar() {
		p.failAt(ty.Elem.Pos, "element type of %s must be a scalar type, not %s", ty.Name, ty.Elem.Name)
	}
	if p.tok.kind == tComma {
		p.next()
		switch p.tok.kind {
		case tHash:
			ty.Layout = p.hashText()
		case tSSA:
			ty.Layout = p.tok.text
			ty.LayoutValue = p.operand(p.tok)
			p.next()
		default:
			p.unexpected("layout attachment (#attr or %value)")
		}
	}
	if p.tok.kind != tRAngle {
		p.failAt(p.pos(p.tok), "expected '>' closing %s type opened at %d:%d, found %s", ty.Name, open.line, open.col, p.tok.describe())
	}
	p.next()
}

// parseTypeList reads `T, U, …`; parenthesized and bracketed groups such as
// `(T, U)` or `[index](index, buffer)` are flattened into the list.
func (p *parser) parseTypeList(dst *[]*Type, lenient bool) {
	for {
		switch p.tok.kind {
		case tLParen, tLBrack:
			open := p.tok
			closeKind := tRParen
			if open.kind == tLBrack {
				closeKind = tRBrack
			}
			p.next()
			p.enter()
			p.skipNL()
			if p.tok.kind != closeKind {
				p.parseTypeList(dst, lenient)
				p.skipNL()
			}
			if p.tok.kind != closeKind {
				p.unexpected(closeKind.String())
			}
			p.next()
			p.leave()
			if p.tok.kind == tLParen || p.tok.kind == tLBrack {
				continue
			}
		case tIdent:
			if p.tok.text == "to" {
				return
			}
			*dst = append(*dst, p.parseType(lenient))
		default:
			return
		}
		if p.tok.kind != tComma {
			return
		}
		p.next()
		p.skipNL()
	}
}

// parseResultTypes reads the list after '->': `(R, …)` or `T, …`, where
// an R in parentheses may be named (`%n: index`) or tied (`%x as T`); those
// are recorded in op.ResultSigs.
func (p *parser) parseResultTypes(op *Op, dst *[]*Type, lenient bool) {
	if p.tok.kind != tLParen {
		p.parseTypeList(dst, lenient)
		return
	}
	open := p.expect(tLParen, "'('")
	p.enter()
	defer p.leave()
	for {
		p.skipNL()
		switch p.tok.kind {
		case tRParen:
			p.next()
			return
		case tEOF:
			p.failAt(p.pos(p.tok), "unexpected end of file: '(' opened at %d:%d is not closed", open.line, open.col)
		case tSSA:
			name := p.tok
			p.next()
			rs := &ResultSig{Pos: p.pos(name), Index: len(*dst)}
			switch {
			case p.isWord("as"):
				p.next()
				rs.Tied = p.operand(name)
			case p.tok.kind == tColon:
				p.next()
				rs.Value = p.newArg(name)
				rs.Value.Index = rs.Index
			default:
				p.unexpected("'as' (tied result) or ':' (named result) after " + name.text)
			}
			t := p.parseType(lenient)
			if rs.Value != nil {
				rs.Value.Type = t
			}
			*dst = append(*dst, t)
			op.ResultSigs = append(op.ResultSigs, rs)
		default:
			*dst = append(*dst, p.parseType(lenient))
		}
		p.skipNL()
		if p.tok.kind == tComma {
			p.next()
		} else if p.tok.kind != tRParen {
			p.unexpected("',' or ')' in a result list")
		}
	}
}
