package loom

import (
	"bytes"
	"strings"
)

// Format returns the canonical layout of a Loom file: one statement per
// line, regions (and the case list of scf.switch) opened at the end of a
// line and closed on their own, indented two spaces per level; continued
// lines joined and one-line regions expanded. Spacing between the tokens of
// a statement is kept as written (none stays none, any blank run becomes one
// space), and so are comments (whole-line ones on their own line, others at
// the end of the line of the statement they were in) and blank-line
// grouping, so doc comments stay attached to their ops. Brace blocks that
// are data rather than statements (a target record's `{ key = value }`
// lines, a multi-line scf.lookup table) and asm bodies are copied verbatim.
//
// Format parses src first and returns its syntax errors; it does not run the
// checker, so a file with undefined values formats too. The result parses
// to the same syntax tree as src, positions aside.
func Format(filename string, src []byte) ([]byte, error) {
	m, errs := parseModule(filename, src)
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs.Err()
	}
	toks, comments, lexErr := lex(filename, src)
	if lexErr != nil {
		return nil, ErrorList{lexErr}.Err()
	}
	f := &formatter{src: src, toks: toks, comments: comments,
		starts: map[int32]bool{}, opens: map[int32]bool{}, closes: map[int32]bool{}}
	f.pairBraces()
	for _, a := range m.Aliases {
		f.starts[int32(a.Pos.Offset)] = true
	}
	for _, op := range m.Ops {
		f.mark(op)
	}
	f.run()
	return f.out.Bytes(), nil
}

type formatter struct {
	src      []byte
	toks     []token
	comments []comment
	out      bytes.Buffer

	// starts are the offsets of the first token of each statement (and of
	// each case/default label of scf.switch); opens and closes those of
	// the braces that open and close an indented block.
	starts, opens, closes map[int32]bool
	match                 map[int32]int // '{' token index -> its '}' token index, and back

	depth    int
	lineOpen bool // the current output line has text
	trailing []string
	lastLine int32 // source line of the last thing written
	atBlock  bool  // nothing written since the last block opened (or the file began)
}

// pairBraces matches the braces of the token stream.
func (f *formatter) pairBraces() {
	f.match = map[int32]int{}
	var stack []int
	for i, t := range f.toks {
		switch t.kind {
		case tLBrace:
			stack = append(stack, i)
		case tRBrace:
			if n := len(stack); n > 0 {
				f.match[int32(stack[n-1])] = i
				f.match[int32(i)] = stack[n-1]
				stack = stack[:n-1]
			}
		}
	}
}

// tokenAt returns the index of the token at byte offset off.
func (f *formatter) tokenAt(off int) int {
	lo, hi := 0, len(f.toks)
	for lo < hi {
		mid := (lo + hi) / 2
		if int(f.toks[mid].off) < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// mark records the statement starts and block braces of op and its regions.
func (f *formatter) mark(op *Op) {
	f.starts[int32(op.Pos.Offset)] = true
	for _, r := range op.Regions {
		ci := f.tokenAt(r.End.Offset)
		if ci < len(f.toks) && f.toks[ci].kind == tRBrace {
			f.closes[f.toks[ci].off] = true
			if oi, ok := f.match[int32(ci)]; ok {
				f.opens[f.toks[oi].off] = true
			}
		}
		if r.Label == "case" || r.Label == "default" {
			f.starts[int32(r.Pos.Offset)] = true
		}
		for _, inner := range r.Ops {
			f.mark(inner)
		}
	}
	if op.Name == "scf.switch" && op.End.Offset > 0 {
		// The case list is a block whose lines are the case labels.
		ci := f.tokenAt(op.End.Offset - 1)
		if ci < len(f.toks) && f.toks[ci].kind == tRBrace {
			f.closes[f.toks[ci].off] = true
			f.opens[f.toks[f.match[int32(ci)]].off] = true
		}
	}
}

func (f *formatter) run() {
	f.atBlock = true
	var prev *token
	for i := 0; i < len(f.toks); i++ {
		t := f.toks[i]
		if t.kind == tNewline {
			continue
		}
		if t.kind == tEOF {
			f.comments = f.flushComments(int32(1<<31-1), true)
			break
		}
		boundary := f.starts[t.off] || f.closes[t.off]
		f.comments = f.flushComments(t.line, boundary)
		switch {
		case f.closes[t.off]:
			f.depth--
			f.newline()
			f.text(t, t.line)
		case f.starts[t.off]:
			f.newline()
			if !f.atBlock && t.line > f.lastLine+1 && f.lastLine > 0 {
				f.out.WriteByte('\n')
			}
			f.text(t, t.line)
		default:
			if prev != nil && f.lineOpen && f.spaced(*prev, t) {
				f.out.WriteByte(' ')
			}
			if t.kind == tLBrace && !f.opens[t.off] && i+1 < len(f.toks) && f.toks[i+1].kind == tNewline {
				// A data block: copied as written.
				j := f.match[int32(i)]
				if j <= i {
					j = len(f.toks) - 2
				}
				end := f.toks[j]
				f.out.Write(f.src[t.off : int(end.off)+len(end.text)])
				f.lineOpen = true
				f.dropComments(t.line, end.line)
				f.lastLine = end.line
				f.atBlock = false
				prev = &f.toks[j]
				i = j
				continue
			}
			f.text(t, t.line+int32(strings.Count(t.text, "\n")))
		}
		if f.opens[t.off] {
			f.depth++
			f.atBlock = true
		}
		prev = &f.toks[i]
	}
	f.endLine()
}

// spaced reports whether a blank goes between a and b on one output line,
// by the rule of spacedTokens, which the parser's kept texts follow too.
func (f *formatter) spaced(a, b token) bool { return spacedTokens(a, b) }

func (f *formatter) text(t token, lastLine int32) {
	if !f.lineOpen {
		f.out.WriteString(strings.Repeat("  ", f.depth))
	}
	f.out.WriteString(t.text)
	f.lineOpen = true
	f.lastLine = lastLine
	f.atBlock = false
}

// newline ends the current output line, with its trailing comments.
func (f *formatter) newline() {
	if f.lineOpen {
		f.endLine()
	}
}

func (f *formatter) endLine() {
	if !f.lineOpen && len(f.trailing) == 0 {
		return
	}
	for _, c := range f.trailing {
		f.out.WriteString(" //" + commentBody(c))
	}
	f.trailing = f.trailing[:0]
	f.out.WriteByte('\n')
	f.lineOpen = false
}

func commentBody(text string) string {
	if text == "" {
		return ""
	}
	return " " + text
}

// flushComments writes the comments of lines before line. At a statement
// boundary whole-line comments keep their own lines (and the blank lines
// before them); elsewhere every comment goes to the end of the output line.
func (f *formatter) flushComments(line int32, boundary bool) []comment {
	i := 0
	for ; i < len(f.comments) && f.comments[i].line < line; i++ {
		c := f.comments[i]
		if !c.alone || !boundary {
			f.trailing = append(f.trailing, c.text)
			continue
		}
		f.newline()
		if !f.atBlock && c.line > f.lastLine+1 && f.lastLine > 0 {
			f.out.WriteByte('\n')
		}
		f.out.WriteString(strings.Repeat("  ", f.depth) + "//" + commentBody(c.text) + "\n")
		f.lastLine = c.line
		f.atBlock = false
	}
	return f.comments[i:]
}

// dropComments forgets the comments inside a block copied verbatim: those
// of its lines but the last, where a comment follows the closing brace.
func (f *formatter) dropComments(from, to int32) {
	kept := f.comments[:0]
	for _, c := range f.comments {
		if c.line < from || c.line >= to {
			kept = append(kept, c)
		}
	}
	f.comments = kept
}
