package loom

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// maxSourceSize bounds one file so that positions fit the token's int32
// fields; real kernel files are a few kilobytes.
const maxSourceSize = 1 << 30

// lexer turns Loom source into tokens. It knows nothing of the grammar
// except two lexical contexts that a context-free tokenizer gets wrong:
// shapes inside view<…>/vector<…>/tensor<…>/tile<…>, where `4x8xf32` is
// three tokens and `0xf32` is not a hex number, and `asm { … }` bodies,
// which hold target assembly and are kept as one raw token.
type lexer struct {
	file     string
	src      string
	pos      int
	line     int
	lineOff  int // offset of the first byte of the current line
	toks     []token
	comments []comment
	err      *Error
}

// lex tokenizes src. It stops at the first lexical error, which it returns
// with the tokens read so far (the last one being tEOF).
func lex(file string, src []byte) ([]token, []comment, *Error) {
	lx := &lexer{file: file, src: string(src), line: 1}
	if len(src) > maxSourceSize {
		lx.errorf(0, "source is %d bytes; the limit is %d", len(src), maxSourceSize)
		return []token{{kind: tEOF, line: 1, col: 1}}, nil, lx.err
	}
	lx.toks = make([]token, 0, len(src)/4+8)
	lx.run()
	return lx.toks, lx.comments, lx.err
}

func (lx *lexer) posAt(off int) Pos {
	// Columns count bytes from the start of the current line; every caller
	// passes an offset on the current line.
	return Pos{File: lx.file, Offset: off, Line: lx.line, Col: off - lx.lineOff + 1}
}

func (lx *lexer) errorf(off int, format string, args ...any) {
	if lx.err == nil {
		lx.err = &Error{Pos: lx.posAt(off), Msg: fmt.Sprintf(format, args...), Class: ErrSyntax}
	}
}

func (lx *lexer) emit(k tokKind, start int) {
	lx.toks = append(lx.toks, token{
		kind: k, text: lx.src[start:lx.pos],
		off: int32(start), line: int32(lx.line), col: int32(start - lx.lineOff + 1),
	})
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// isNameChar reports the characters of SSA names: [A-Za-z0-9_$].
func isNameChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

func (lx *lexer) peekAt(i int) byte {
	if i < len(lx.src) {
		return lx.src[i]
	}
	return 0
}

func (lx *lexer) run() {
	for lx.err == nil {
		if lx.pos >= len(lx.src) {
			lx.emit(tEOF, lx.pos)
			return
		}
		c := lx.src[lx.pos]
		start := lx.pos
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			lx.pos++
		case c == '\n':
			lx.pos++
			lx.emitNewline(start)
		case c == '/' && lx.peekAt(lx.pos+1) == '/':
			lx.scanComment()
		case isIdentStart(c):
			lx.scanIdent()
		case c == '%' || c == '@' || c == '#' || c == '^':
			lx.scanSigil(c)
		case isDigit(c) || c == '-' && (isDigit(lx.peekAt(lx.pos+1)) || lx.peekAt(lx.pos+1) == '.'):
			lx.scanNumber()
		case c == '.' && isDigit(lx.peekAt(lx.pos+1)):
			lx.scanNumber()
		case c == '-' && lx.negWord():
			// -inf and -nan are one word, as in Loom's tokenizer.
			lx.pos += 4
			lx.emit(tIdent, start)
		case c == '"':
			lx.scanString()
		case c == '-' && lx.peekAt(lx.pos+1) == '>':
			lx.pos += 2
			lx.emit(tArrow, start)
		default:
			k, ok := punct[c]
			if !ok {
				r, _ := utf8.DecodeRuneInString(lx.src[lx.pos:])
				lx.errorf(start, "unexpected character %q", r)
				lx.emit(tEOF, start)
				return
			}
			lx.pos++
			lx.emit(k, start)
		}
	}
	if n := len(lx.toks); n == 0 || lx.toks[n-1].kind != tEOF {
		lx.emit(tEOF, lx.pos)
	}
}

var punct = map[byte]tokKind{
	'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack, '{': tLBrace, '}': tRBrace,
	'<': tLAngle, '>': tRAngle, ',': tComma, ':': tColon, '=': tEqual, '|': tPipe,
	'?': tQuestion, '*': tStar, '!': tBang,
}

func (lx *lexer) emitNewline(start int) {
	lx.emit(tNewline, start)
	lx.line++
	lx.lineOff = lx.pos
}

func (lx *lexer) scanComment() {
	start := lx.pos
	alone := true
	for i := lx.lineOff; i < start; i++ {
		if c := lx.src[i]; c != ' ' && c != '\t' && c != '\r' { // the spacing scan skips
			alone = false
			break
		}
	}
	for lx.pos < len(lx.src) && lx.src[lx.pos] != '\n' {
		lx.pos++
	}
	text := lx.src[start+2 : lx.pos]
	if len(text) > 0 && text[0] == ' ' {
		text = text[1:]
	}
	// Carriage returns at the end are line-break debris: Format would
	// write them back and its second pass drop them.
	for n := len(text); n > 0 && text[n-1] == '\r'; n-- {
		text = text[:n-1]
	}
	lx.comments = append(lx.comments, comment{line: int32(lx.line), alone: alone, text: text})
}

// negWord reports whether -inf or -nan, not followed by a name
// character, starts at the current position.
func (lx *lexer) negWord() bool {
	w := lx.src[lx.pos:min(lx.pos+4, len(lx.src))]
	return (w == "-inf" || w == "-nan") && !isNameChar(lx.peekAt(lx.pos+4))
}

// scanIdent reads a bare word. Words may be dotted (kernel.launch.config),
// hold '$', and hold '-' before a letter (gfx11-generic).
func (lx *lexer) scanIdent() {
	start := lx.pos
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		if isNameChar(c) || c == '.' || c == '-' && isIdentStart(lx.peekAt(lx.pos+1)) {
			lx.pos++
			continue
		}
		break
	}
	lx.emit(tIdent, start)
	word := lx.src[start:lx.pos]
	switch word {
	case "view", "vector", "tensor", "tile", "pool":
		if lx.peekAt(lx.pos) == '<' {
			lx.pos++
			lx.emit(tLAngle, lx.pos-1)
			lx.scanShape(word != "pool")
		}
	case "asm":
		lx.scanAsm()
	}
}

// scanShape reads the dimensions of a shaped type up to and including the
// last 'x'; the element type and attachment are lexed normally afterwards.
// A pool<…> shape has no element type (pool<[%m]>, pool<4x8>): its last
// dimension takes no 'x'.
func (lx *lexer) scanShape(elem bool) {
	for lx.err == nil {
		start := lx.pos
		c := lx.peekAt(lx.pos)
		switch {
		case isDigit(c):
			for isDigit(lx.peekAt(lx.pos)) {
				lx.pos++
			}
			lx.emit(tInt, start)
		case c == '?':
			lx.pos++
			lx.emit(tQuestion, start)
		case c == '[':
			lx.pos++
			lx.emit(tLBrack, start)
			if lx.peekAt(lx.pos) != '%' {
				lx.errorf(lx.pos, "expected %%value in dynamic dimension")
				return
			}
			lx.scanSigil('%')
			if lx.peekAt(lx.pos) != ']' {
				lx.errorf(lx.pos, "expected ']' closing dynamic dimension")
				return
			}
			lx.pos++
			lx.emit(tRBrack, lx.pos-1)
		default:
			// No dimension here: a 0-d type such as vector<f32>.
			return
		}
		if lx.peekAt(lx.pos) != 'x' {
			if !elem {
				return
			}
			lx.errorf(lx.pos, "expected 'x' after shape dimension")
			return
		}
		next := lx.peekAt(lx.pos + 1)
		lx.pos++
		lx.emit(tShapeX, lx.pos-1)
		if !isDigit(next) && next != '[' && next != '?' {
			return
		}
	}
}

// scanAsm keeps `asm { … }` as one raw token: its contents are target
// assembly, balanced on braces and never tokenized.
func (lx *lexer) scanAsm() {
	i := lx.pos
	for i < len(lx.src) && (lx.src[i] == ' ' || lx.src[i] == '\t') {
		i++
	}
	if i >= len(lx.src) || lx.src[i] != '{' {
		return
	}
	lx.pos = i
	start := i
	startPos := lx.posAt(start)
	depth := 0
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		lx.pos++
		switch c {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				tok := token{kind: tRaw, text: lx.src[start:lx.pos], off: int32(start),
					line: int32(lx.line), col: int32(start - lx.lineOff + 1)}
				lx.toks = append(lx.toks, tok)
				return
			}
		case '\n':
			lx.line++
			lx.lineOff = lx.pos
		}
	}
	if lx.err == nil {
		lx.err = &Error{Pos: startPos, Msg: "unclosed asm body", Class: ErrSyntax}
	}
}

// scanSigil reads %name, @name, #name or ^name. Symbols and attributes may
// be dotted; SSA names may not.
func (lx *lexer) scanSigil(c byte) {
	start := lx.pos
	lx.pos++
	for lx.pos < len(lx.src) {
		d := lx.src[lx.pos]
		if isNameChar(d) || d == '.' && c != '%' && isNameChar(lx.peekAt(lx.pos+1)) {
			lx.pos++
			continue
		}
		break
	}
	if lx.pos == start+1 {
		lx.errorf(start, "expected a name after %q", c)
		return
	}
	switch c {
	case '%':
		lx.emit(tSSA, start)
	case '@':
		lx.emit(tSymbol, start)
	case '#':
		lx.emit(tHash, start)
	default:
		lx.emit(tCaret, start)
	}
}

// scanNumber reads an integer or float: -12, 0x1F, 1.5, -0.0, 2e-3, .5.
func (lx *lexer) scanNumber() {
	start := lx.pos
	if lx.src[lx.pos] == '-' {
		lx.pos++
	}
	if lx.peekAt(lx.pos) == '0' && (lx.peekAt(lx.pos+1) == 'x' || lx.peekAt(lx.pos+1) == 'X') && isHex(lx.peekAt(lx.pos+2)) {
		lx.pos += 2
		for isHex(lx.peekAt(lx.pos)) {
			lx.pos++
		}
		lx.finishNumber(tInt, start)
		return
	}
	kind := tInt
	for isDigit(lx.peekAt(lx.pos)) {
		lx.pos++
	}
	if lx.peekAt(lx.pos) == '.' && isDigit(lx.peekAt(lx.pos+1)) {
		kind = tFloat
		lx.pos++
		for isDigit(lx.peekAt(lx.pos)) {
			lx.pos++
		}
	}
	if c := lx.peekAt(lx.pos); c == 'e' || c == 'E' {
		j := lx.pos + 1
		if s := lx.peekAt(j); s == '+' || s == '-' {
			j++
		}
		if isDigit(lx.peekAt(j)) {
			kind = tFloat
			lx.pos = j
			for isDigit(lx.peekAt(lx.pos)) {
				lx.pos++
			}
		}
	}
	lx.finishNumber(kind, start)
}

func (lx *lexer) finishNumber(kind tokKind, start int) {
	if c := lx.peekAt(lx.pos); isNameChar(c) || c == '.' {
		lx.errorf(start, "malformed number %q", lx.src[start:lx.pos+1])
		return
	}
	lx.emit(kind, start)
}

// scanString reads a double-quoted string; escapes are checked here and
// decoded by unquote.
func (lx *lexer) scanString() {
	start := lx.pos
	lx.pos++
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch c {
		case '"':
			lx.pos++
			if _, err := unquote(lx.src[start:lx.pos]); err != nil {
				lx.errorf(start, "invalid string literal: %v", err)
				return
			}
			lx.emit(tString, start)
			return
		case '\\':
			lx.pos += 2
		case '\n':
			lx.errorf(start, "string literal not terminated before end of line")
			return
		default:
			lx.pos++
		}
	}
	lx.pos = len(lx.src)
	lx.errorf(start, "string literal not terminated")
}

// unquote decodes a JSON-style string literal including its quotes.
func unquote(s string) (string, error) {
	body := s[1 : len(s)-1]
	buf := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			buf = append(buf, c)
			continue
		}
		i++
		if i >= len(body) {
			return "", fmt.Errorf("trailing backslash")
		}
		switch body[i] {
		case '"', '\\', '/':
			buf = append(buf, body[i])
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if i+5 > len(body) {
				return "", fmt.Errorf("short \\u escape")
			}
			v, err := strconv.ParseUint(body[i+1:i+5], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad \\u escape %q", body[i+1:i+5])
			}
			r := rune(v)
			i += 4
			// A UTF-16 surrogate pair spells one code point, as in JSON.
			if r >= 0xD800 && r < 0xDC00 && i+7 <= len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
				if lo, err := strconv.ParseUint(body[i+3:i+7], 16, 32); err == nil && lo >= 0xDC00 && lo < 0xE000 {
					r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
					i += 6
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", fmt.Errorf("unknown escape \\%c", body[i])
		}
	}
	return string(buf), nil
}
