package loom

import "strings"

// joinLines drops the newlines that cannot end a statement (in toks's own
// array, which it returns shortened), so that the parser, which ends
// statements at newlines, accepts the layouts Loom's own (format-driven)
// parser accepts: a line ending in `,`, `:`, `=`, `->`, `(`, `[`, `<` or `|`
// continues on the next one (`%a, %b =` with the op below, call operands and
// type lists over several lines), and so does a line followed by one that
// starts with `:`, `->`, `,`, `=`, `|`, `{`, a closing `)`, `]` or `>`, one
// of the header words where, launch, else and do, or a clause word such as
// workgroup_size(. Statements written one per line are unaffected.
func joinLines(toks []token) []token {
	// Compacted in place (the lexer's list is used only here): out never
	// gets ahead of i, and what is read at i or after is read first.
	out := toks[:0]
	labelLine := false // the current line starts with a ^block label
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tNewline {
			if len(out) == 0 || out[len(out)-1].kind == tNewline {
				labelLine = t.kind == tCaret
			}
			out = append(out, t)
			continue
		}
		j := i + 1
		for j < len(toks) && toks[j].kind == tNewline {
			j++
		}
		// A run of newlines (blank lines) is kept as its first one.
		joined := len(out) > 0 && (continuesAfter(out[len(out)-1], labelLine) || j < len(toks) && continuesBefore(toks[j:]))
		if !joined {
			out = append(out, t)
		}
		i = j - 1
	}
	return out
}

// continuesAfter reports whether a line ending in t goes on. A `:` ending
// a ^label line (`^bb1:` or `^bb1(%a: i32):`) ends it.
func continuesAfter(t token, labelLine bool) bool {
	switch t.kind {
	case tComma, tEqual, tArrow, tLParen, tLBrack, tLAngle, tPipe:
		return true
	case tColon:
		return !labelLine
	}
	return false
}

// continuesBefore reports whether a line starting with toks[0] continues
// the statement above: no statement starts with these tokens. Besides the
// punctuation and header words, that is an @symbol, a '{' (a region or
// attribute dictionary moved down) and an undotted word directly followed
// by '(' (a clause such as workgroup_size(…) or export("k"); op names are
// dotted).
func continuesBefore(toks []token) bool {
	t := toks[0]
	switch t.kind {
	case tColon, tArrow, tComma, tEqual, tPipe, tRParen, tRBrack, tRAngle, tLBrace, tSymbol:
		return true
	case tIdent:
		switch t.text {
		case "where", "launch", "else", "do":
			return true
		}
		return len(toks) > 1 && toks[1].kind == tLParen && int(t.off)+len(t.text) == int(toks[1].off) &&
			!strings.Contains(t.text, ".")
	}
	return false
}
