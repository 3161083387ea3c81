package loom

import (
	"strconv"
	"strings"
)

// Loc is a source location annotation written after an op, `loc(…)`: where
// a tool that produced the Loom text says the op came from. It is metadata
// only; positions in errors stay those of the parsed file. Loom's forms are
//
//	loc("file":line:col)
//	loc("file":line:col to line:col)
//	loc(fused<location, location, …>)
//	loc(opaque<"tag", "data">)
//
// Lines and columns are 0…65535, as in Loom.
type Loc struct {
	Pos  Pos    // of the word loc
	Text string // what is between the parentheses, spaced as written
}

// takeLocs removes the loc(…) annotations from toks (in its own array),
// checking each against Loom's location grammar, and records them in p.locs
// by the offset of the token they follow; parseOp gives each to the op that
// ends with that token. An annotation counts only after another token of its
// line, so a statement cannot start with one.
func (p *parser) takeLocs(toks []token) []token {
	// Compacted in place (toks is the parser's own copy): out never gets
	// ahead of i, and every token at i or after (a location's included) is
	// read before out can reach it. Growing a new list by appends copied
	// and cleared the whole token list several times over.
	out := toks[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tIdent || t.text != "loc" || i+1 >= len(toks) || toks[i+1].kind != tLParen ||
			int(t.off)+len(t.text) != int(toks[i+1].off) || len(out) == 0 || out[len(out)-1].kind == tNewline {
			out = append(out, t)
			continue
		}
		end := p.locBody(toks, i+2, 0)
		if toks[end].kind != tRParen {
			p.failAt(p.pos(toks[end]), "expected ')' closing the location, found %s", toks[end].describe())
		}
		if p.locs == nil {
			p.locs = map[int32]*Loc{}
		}
		p.locs[out[len(out)-1].off] = &Loc{Pos: p.pos(t), Text: joinTokens(toks[i+2 : end])}
		i = end
	}
	return out
}

// locBody checks one location starting at toks[i] and returns the index of
// the token after it.
func (p *parser) locBody(toks []token, i, depth int) int {
	if depth > maxDepth {
		p.failAt(p.pos(toks[i]), "location nested deeper than %d levels", maxDepth)
	}
	want := func(k tokKind, what string) {
		if toks[i].kind != k {
			p.failAt(p.pos(toks[i]), "expected %s in location, found %s", what, toks[i].describe())
		}
		i++
	}
	str := func() {
		if toks[i].kind == tString {
			if _, err := unquote(toks[i].text); err != nil {
				p.failAt(p.pos(toks[i]), "invalid string in location: %v", err)
			}
		}
		want(tString, "a string")
	}
	num := func(what string) {
		if toks[i].kind == tInt {
			if _, err := strconv.ParseUint(toks[i].text, 10, 16); err != nil {
				p.failAt(p.pos(toks[i]), "location %s %s is not in 0…65535", what, toks[i].text)
			}
		}
		want(tInt, "a "+what+" number")
	}
	t := toks[i]
	switch {
	case t.kind == tString:
		str()
		want(tColon, "':' after the file name")
		num("line")
		want(tColon, "':' after the line")
		num("column")
		if toks[i].kind == tIdent && toks[i].text == "to" {
			i++
			num("line")
			want(tColon, "':' after the line")
			num("column")
		}
	case t.kind == tIdent && t.text == "fused":
		i++
		want(tLAngle, "'<' after fused")
		if toks[i].kind != tRAngle {
			for {
				i = p.locBody(toks, i, depth+1)
				if toks[i].kind != tComma {
					break
				}
				i++
			}
		}
		want(tRAngle, "'>' closing fused<…>")
	case t.kind == tIdent && t.text == "opaque":
		i++
		want(tLAngle, "'<' after opaque")
		str()
		want(tComma, "',' after the opaque location's tag")
		str()
		want(tRAngle, "'>' closing opaque<…>")
	default:
		p.failAt(p.pos(t), "expected a location (\"file\":line:col, fused<…> or opaque<\"tag\", \"data\">), found %s", t.describe())
	}
	return i
}

// attachLoc gives op the annotation written after its last token, if any.
func (p *parser) attachLoc(op *Op) {
	if l, ok := p.locs[p.prev.off]; ok {
		op.Loc = l
		delete(p.locs, p.prev.off)
	}
}

// strayLoc reports an annotation no op took (one after a block label or an
// attribute alias, or inside an op's operands).
func (p *parser) strayLoc() {
	var first *Loc
	for _, l := range p.locs {
		if first == nil || l.Pos.Offset < first.Pos.Offset {
			first = l
		}
	}
	if first != nil {
		p.failAt(first.Pos, "location annotation loc(%s) must follow a whole operation", first.Text)
	}
}

// joinTokens spells toks as the tree keeps the text of an unparsed group
// (see spanText).
func joinTokens(toks []token) string {
	var b strings.Builder
	var prev *token
	for i := range toks {
		t := &toks[i]
		if t.kind == tNewline {
			continue
		}
		if prev != nil && spacedTokens(*prev, *t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
		prev = t
	}
	return b.String()
}
