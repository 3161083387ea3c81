package loom

// tokKind classifies a lexical token.
type tokKind uint8

const (
	tEOF     tokKind = iota
	tNewline         // end of a line outside a comment
	tIdent           // bare word, possibly dotted: kernel.def, f32, launch
	tSSA             // %name (Text keeps the '%')
	tSymbol          // @name (Text keeps the '@')
	tHash            // #name attribute reference (Text keeps the '#')
	tCaret           // ^label
	tInt             // decimal or hex integer, optionally negative
	tFloat           // float literal
	tString          // "…" with escapes (Text is the raw spelling)
	tRaw             // a brace-balanced body skipped verbatim (asm { … })
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tLAngle
	tRAngle
	tComma
	tColon
	tEqual
	tArrow    // ->
	tPipe     // |
	tQuestion // ? (unknown dimension)
	tStar
	tBang
	tShapeX // the 'x' gluing dimensions of a shape
)

var tokNames = [...]string{
	tEOF: "end of file", tNewline: "newline", tIdent: "identifier", tSSA: "SSA value",
	tSymbol: "symbol", tHash: "attribute", tCaret: "block label", tInt: "integer",
	tFloat: "float", tString: "string", tRaw: "raw body", tLParen: "'('", tRParen: "')'",
	tLBrack: "'['", tRBrack: "']'", tLBrace: "'{'", tRBrace: "'}'", tLAngle: "'<'",
	tRAngle: "'>'", tComma: "','", tColon: "':'", tEqual: "'='", tArrow: "'->'",
	tPipe: "'|'", tQuestion: "'?'", tStar: "'*'", tBang: "'!'", tShapeX: "shape 'x'",
}

// String names the kind for error messages.
func (k tokKind) String() string {
	if int(k) < len(tokNames) {
		return tokNames[k]
	}
	return "token"
}

// token is one lexeme. Text is a slice of the source; positions are kept as
// plain integers so that a token costs no allocation.
type token struct {
	kind tokKind
	text string
	off  int32
	line int32
	col  int32
}

// describe spells a token for "unexpected …" messages.
func (t token) describe() string {
	switch t.kind {
	case tEOF, tNewline:
		return t.kind.String()
	case tRaw:
		return "raw body"
	}
	s := t.text
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return "'" + s + "'"
}

// comment is a // comment, remembered for doc comments.
type comment struct {
	line int32
	// alone is set when nothing but blanks precede the comment on its line.
	alone bool
	text  string // without the slashes and one leading space
}
