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
	if p.tok.kind == tLAngle && p.adjacent() {
		ty.Name = t.text + "<" + p.balancedText() + ">"
		return ty
	}
	if !lenient && !strings.Contains(t.text, ".") {
		p.failAt(ty.Pos, "unknown type %q", t.text)
	}
	return ty
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

// parseResultTypes reads the list after '->': `(T, …)` or `T, …`.
func (p *parser) parseResultTypes(dst *[]*Type, lenient bool) {
	p.parseTypeList(dst, lenient)
}
