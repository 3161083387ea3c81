package loom

import (
	"fmt"
	"os"
	"strings"
)

// maxDepth caps the nesting of regions and brackets so that hostile input
// cannot exhaust the stack; real kernels nest a handful of levels.
const maxDepth = 200

// ParseFile lexes, parses and checks one Loom file, a package of its own.
// filename is used only in positions. On errors it returns what it could
// build together with an ErrorList sorted by position: syntax errors
// (ErrSyntax) stop the parse at the first one; checker errors (ErrInvalid)
// are all reported.
func ParseFile(filename string, src []byte) (*Module, error) {
	m, errs := parseModule(filename, src)
	if len(errs) == 0 {
		errs = check([]*Module{m}, false)
	}
	errs.Sort()
	return m, errs.Err()
}

// File is one source file of a package: Name appears in positions.
type File struct {
	Name string
	Src  []byte
}

// ParsePackage parses the files of one package and checks them as one
// unit: every symbol (function, template family and provider, config
// declaration and definition, target, global, kernel) defined in one file
// is visible in the others, and a symbol defined twice, in one file or in
// two, is an error (ErrInvalid) naming both positions. It returns the
// modules of the files without errors, in argument order, and the errors
// of every file sorted by position. Uses of undefined symbols are not
// reported while some file has a syntax error (the missing definition may
// be in it).
func ParsePackage(files ...File) ([]*Module, error) {
	return parsePackage(files, false)
}

// parsePackage is ParsePackage; missing says that files of the package
// could not be read, which, like a syntax error, may hide definitions.
func parsePackage(files []File, missing bool) ([]*Module, error) {
	var errs ErrorList
	var parsed []*Module
	for _, f := range files {
		m, ferrs := parseModule(f.Name, f.Src)
		if len(ferrs) > 0 {
			errs = append(errs, ferrs...)
			continue
		}
		parsed = append(parsed, m)
	}
	errs = append(errs, check(parsed, missing || len(parsed) < len(files))...)
	bad := map[string]bool{}
	for _, e := range errs {
		bad[e.Pos.File] = true
	}
	var mods []*Module
	for _, m := range parsed {
		if !bad[m.File] {
			mods = append(mods, m)
		}
	}
	errs.Sort()
	return mods, errs.Err()
}

// ParseFiles reads the paths and parses them as one package (see
// ParsePackage). A file that cannot be read is reported as an error
// wrapping the os error, after the package's own errors; like a syntax
// error, it holds back undefined-symbol errors.
func ParseFiles(paths ...string) ([]*Module, error) {
	var files []File
	var readErrs []error
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			readErrs = append(readErrs, fmt.Errorf("loom: %w", err))
			continue
		}
		files = append(files, File{Name: path, Src: src})
	}
	mods, err := parsePackage(files, len(readErrs) > 0)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	return mods, joinErrors(append(errs, readErrs...))
}

func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return multiError(errs)
}

// multiError joins the errors of several files, one per line.
type multiError []error

func (m multiError) Error() string {
	s := make([]string, len(m))
	for i, e := range m {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (m multiError) Unwrap() []error { return m }

// bailout unwinds the parser after the first syntax error.
type bailout struct{}

type parser struct {
	file   string
	src    string
	toks   []token
	i      int
	tok    token // toks[i]
	prev   token // the last consumed token
	docs   map[int32]string
	depth  int
	errs   ErrorList
	mod    *Module
	i1Type *Type
	locs   map[int32]*Loc    // loc(…) annotations by the offset of the token before them
	alias  map[string]*Alias // the aliases so far, by name (a scan per alias is quadratic)
}

func parseModule(filename string, src []byte) (m *Module, errs ErrorList) {
	m = &Module{File: filename}
	toks, comments, lexErr := lex(filename, src)
	p := &parser{file: filename, src: string(src), toks: joinLines(toks), mod: m}
	if lexErr != nil {
		// Parse what precedes the bad character so that the error comes
		// with a partial module; the lexer's error is the one reported.
		p.errs.Add(lexErr.Pos, ErrSyntax, lexErr.Msg)
	}
	p.docs = make(map[int32]string)
	for _, c := range comments {
		if c.alone {
			p.docs[c.line] = c.text
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
		}
		if lexErr != nil && len(p.errs) > 1 {
			// The truncation caused by the lexical error explains any
			// syntax error after it.
			p.errs = p.errs[:1]
		}
		errs = p.errs
	}()
	p.toks = p.takeLocs(p.toks)
	p.tok = p.toks[0]
	p.parseTop()
	return m, p.errs
}

func (p *parser) pos(t token) Pos {
	return Pos{File: p.file, Offset: int(t.off), Line: int(t.line), Col: int(t.col)}
}

// endPos is the position just after token t.
func (p *parser) endPos(t token) Pos {
	return Pos{File: p.file, Offset: int(t.off) + len(t.text), Line: int(t.line), Col: int(t.col) + len(t.text)}
}

func (p *parser) next() {
	p.prev = p.tok
	if p.i < len(p.toks)-1 {
		p.i++
	}
	p.tok = p.toks[p.i]
}

func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

// adjacent reports whether the current token directly follows the previous
// one, as in kernel.barrier<workgroup> or align(64).
func (p *parser) adjacent() bool {
	return int(p.prev.off)+len(p.prev.text) == int(p.tok.off)
}

func (p *parser) failAt(pos Pos, format string, args ...any) {
	p.errs.Add(pos, ErrSyntax, fmt.Sprintf(format, args...))
	panic(bailout{})
}

func (p *parser) unexpected(what string) {
	p.failAt(p.pos(p.tok), "expected %s, found %s", what, p.tok.describe())
}

func (p *parser) expect(k tokKind, what string) token {
	if p.tok.kind != k {
		p.unexpected(what)
	}
	t := p.tok
	p.next()
	return t
}

func (p *parser) expectWord(w string) token {
	if p.tok.kind != tIdent || p.tok.text != w {
		p.unexpected("'" + w + "'")
	}
	t := p.tok
	p.next()
	return t
}

func (p *parser) isWord(w string) bool { return p.tok.kind == tIdent && p.tok.text == w }

func (p *parser) skipNL() {
	for p.tok.kind == tNewline {
		p.next()
	}
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failAt(p.pos(p.tok), "nesting deeper than %d levels", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// docFor collects the whole-line // comments directly above line.
func (p *parser) docFor(line int32) string {
	var lines []string
	for l := line - 1; l > 0; l-- {
		c, ok := p.docs[l]
		if !ok {
			break
		}
		lines = append(lines, c)
	}
	if len(lines) == 0 {
		return ""
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, "\n")
}

func (p *parser) parseTop() {
	for {
		p.skipNL()
		switch p.tok.kind {
		case tEOF:
			p.strayLoc()
			return
		case tRBrace:
			p.failAt(p.pos(p.tok), "unexpected '}' at top level")
		case tHash:
			p.parseAlias()
			continue
		}
		op := p.parseOp(true)
		p.endStmt(op)
		p.mod.Ops = append(p.mod.Ops, op)
	}
}

// parseAlias reads a top-level attribute alias `#name = #attr[<…>]`.
func (p *parser) parseAlias() {
	name := p.tok
	p.next()
	if p.tok.kind != tEqual {
		p.failAt(p.pos(name), "expected '=' after %s: a top-level attribute alias is #name = #attr<…>", name.text)
	}
	p.next()
	if p.tok.kind != tHash {
		p.unexpected("attribute such as #q8_0<block=32> after '='")
	}
	a := &Alias{Pos: p.pos(name), Name: name.text, Value: p.hashText()}
	if old := p.alias[a.Name]; old != nil {
		p.failAt(a.Pos, "duplicate attribute alias %s (first defined at %s)", a.Name, old.Pos)
	}
	switch p.tok.kind {
	case tNewline, tEOF:
	default:
		p.failAt(p.pos(p.tok), "unexpected %s after attribute alias %s", p.tok.describe(), a.Name)
	}
	p.mod.Aliases = append(p.mod.Aliases, a)
	if p.alias == nil {
		p.alias = map[string]*Alias{}
	}
	p.alias[a.Name] = a
}

// endStmt checks that a statement ends where a statement may end: at a
// line break or '}', or, after an op whose syntax the parser knows (so
// that its end is certain), where the next statement starts on the same
// line, as Loom's parser, for which newlines are spacing, allows.
func (p *parser) endStmt(op *Op) {
	switch p.tok.kind {
	case tNewline, tEOF, tRBrace:
		return
	}
	if !op.Opaque && !isBlockLabel(op) && p.startsStmt() {
		return
	}
	p.failAt(p.pos(p.tok), "unexpected %s after %s", p.tok.describe(), op.Name)
}

// startsStmt reports whether the current token starts a statement: a
// result list (`%a =`, `%a, %b =`) or a dotted op name.
func (p *parser) startsStmt() bool {
	switch p.tok.kind {
	case tSSA:
		k := p.peek(1).kind
		return k == tEqual || k == tComma
	case tIdent:
		return strings.Contains(p.tok.text, ".")
	}
	return false
}

// parseOp reads one statement: [results =] name[<param>] operand syntax.
func (p *parser) parseOp(top bool) *Op {
	start := p.tok
	op := &Op{Pos: p.pos(start)}
	if p.i == 0 || p.prev.line < start.line {
		// Only an op that starts its line has the comments above as doc;
		// one nested on the same line (a one-line region) has none.
		op.Doc = p.docFor(start.line)
	}
	var results []token
	if p.tok.kind == tSSA {
		for {
			results = append(results, p.expect(tSSA, "result value"))
			if p.tok.kind != tComma {
				break
			}
			p.next()
			p.skipNL()
		}
		p.expect(tEqual, "'=' after result values")
	}
	switch p.tok.kind {
	case tIdent:
	case tCaret:
		if len(results) > 0 {
			p.unexpected("operation name")
		}
		p.parseBlockLabel(op)
		return op
	default:
		p.unexpected("operation name")
	}
	name := p.tok
	op.Name = name.text
	p.next()
	if p.tok.kind == tLAngle && p.adjacent() {
		op.Param = p.balancedText()
	}
	for i, r := range results {
		op.Results = append(op.Results, &Value{Name: r.text[1:], Pos: p.pos(r), Def: op, Index: i})
	}
	if len(results) > 0 && top && definesSymbol(op.Name) {
		p.failAt(op.Pos, "top-level operation %s cannot define SSA values", op.Name)
	}
	switch op.Name {
	case "kernel.def", "kernel.decl":
		p.parseKernel(op)
	case "func.def", "func.decl", "template.def", "template.decl", "func.template",
		"func.ukernel", "func.provider.decl":
		p.parseFunc(op)
	case "config.decl":
		p.parseConfigDecl(op)
	case "config.def":
		p.parseConfigDef(op)
	case "module.import":
		p.parseImport(op)
	case "global.constant", "global.variable":
		p.parseGlobal(op)
	case "test.split_func":
		p.parseSplitFunc(op)
	case "scf.for":
		p.parseFor(op)
	case "scf.while":
		p.parseWhile(op)
	case "scf.switch":
		p.parseSwitch(op)
	case "scf.lookup":
		p.parseLookup(op)
	default:
		op.Opaque = top || !isStructured(op.Name)
		p.parseGeneric(op)
	}
	op.End = p.endPos(p.prev)
	p.attachLoc(op)
	assignResultTypes(op, p.i1())
	return op
}

// parseBlockLabel reads the label that starts a block of an unstructured
// (cfg) region, `^name[(%arg: T, …)]:`. It is kept as an opaque op named
// by the label whose results are the block's arguments, so that the
// region's later ops resolve them; branches pass them values as operands
// (`cfg.br ^name(%v: T)`).
func (p *parser) parseBlockLabel(op *Op) {
	op.Name = p.tok.text
	op.Opaque = true
	p.next()
	if p.tok.kind == tLParen && p.adjacent() {
		for i, v := range p.parseSignature(true) {
			if v.Name == "" {
				p.failAt(v.Pos, "block argument of %s needs a name, such as %%x: %s", op.Name, v.Type)
			}
			v.Def, v.Index = op, i
			op.Results = append(op.Results, v)
			op.ResultTypes = append(op.ResultTypes, v.Type)
		}
	}
	p.expect(tColon, "':' after block label "+op.Name)
	op.End = p.endPos(p.prev)
}

// isBlockLabel reports whether op is a cfg block label (parseBlockLabel).
func isBlockLabel(op *Op) bool { return strings.HasPrefix(op.Name, "^") }

// definesSymbol reports the ops the parser reads as declarations of a
// symbol; other top-level ops are generic and may define module-level
// values (%c = test.constant 1 : i32).
func definesSymbol(name string) bool {
	switch name {
	case "kernel.def", "kernel.decl", "func.def", "func.decl", "template.def", "template.decl",
		"func.template", "func.ukernel", "func.provider.decl", "config.decl", "config.def",
		"module.import", "global.constant", "global.variable", "test.split_func":
		return true
	}
	return false
}

func (p *parser) i1() *Type {
	if p.i1Type == nil {
		p.i1Type = &Type{Kind: TypeInt, Name: "i1", Bits: 1}
	}
	return p.i1Type
}

// balancedText consumes a bracketed group starting at the current opening
// token and returns the text between the brackets (see spanText).
func (p *parser) balancedText() string {
	open := p.i
	p.skipBalanced()
	return p.spanText(open+1, p.i-1)
}

// spanText spells the tokens toks[lo:hi] as the text the tree keeps of an
// unparsed group (an op's <…> parameter, a clause's arguments, a raw
// attribute value): one space where the source has any blank or line
// break, none inside brackets broken over lines or before a comma broken
// onto a new line. Format lays tokens out by the same rule, so the text
// survives reformatting.
func (p *parser) spanText(lo, hi int) string {
	hi = min(hi, len(p.toks))
	if lo >= hi {
		return ""
	}
	return joinTokens(p.toks[lo:hi])
}

// spacedTokens reports whether one blank separates a and b when they are
// written on one line: when the source had any between them, except just
// inside brackets broken over lines and before a comma starting a line.
func spacedTokens(a, b token) bool {
	if int(a.off)+len(a.text) == int(b.off) {
		return false
	}
	if a.line != b.line && (a.kind == tLParen || a.kind == tLBrack || b.kind == tRParen || b.kind == tRBrack || b.kind == tComma) {
		return false
	}
	return true
}

// skipBalanced consumes tokens from an opening bracket to its match.
func (p *parser) skipBalanced() {
	open := p.tok
	var stack []tokKind
	for {
		switch p.tok.kind {
		case tLParen:
			stack = append(stack, tRParen)
		case tLBrack:
			stack = append(stack, tRBrack)
		case tLBrace:
			stack = append(stack, tRBrace)
		case tLAngle:
			stack = append(stack, tRAngle)
		case tRParen, tRBrack, tRBrace, tRAngle:
			if len(stack) == 0 || stack[len(stack)-1] != p.tok.kind {
				p.failAt(p.pos(p.tok), "unbalanced %s in group opened at %d:%d", p.tok.describe(), open.line, open.col)
			}
			stack = stack[:len(stack)-1]
		case tEOF:
			p.failAt(p.pos(open), "unclosed %s", open.describe())
		}
		if len(stack) > maxDepth {
			p.failAt(p.pos(p.tok), "nesting deeper than %d levels", maxDepth)
		}
		p.next()
		if len(stack) == 0 {
			return
		}
	}
}

// structuredPrefixes are the dialects whose ops the parser lays out per
// opsyntax.go; everything else is opaque.
var structuredPrefixes = []string{"index.", "scalar.", "vector.", "view.", "buffer."}

var structuredOps = map[string]bool{
	"config.get": true, "target.subgroup.size": true,
	"scf.if": true, "scf.yield": true, "scf.condition": true, "scf.select": true,
	"kernel.return": true, "kernel.exit": true, "kernel.assert": true,
	"kernel.barrier": true, "kernel.launch.config": true, "kernel.launch": true,
	"func.call": true, "func.apply": true, "func.return": true,
	"template.apply": true, "template.call": true, "template.return": true,
}

func isStructured(name string) bool {
	if structuredOps[name] {
		return true
	}
	for _, pre := range structuredPrefixes {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	for _, pre := range []string{"kernel.workitem.", "kernel.workgroup.", "kernel.subgroup.", "kernel.cluster."} {
		if strings.HasPrefix(name, pre) {
			return true
		}
	}
	return false
}

func isCompare(name string) bool {
	return strings.HasSuffix(name, ".cmp") || strings.HasSuffix(name, ".cmpi") || strings.HasSuffix(name, ".cmpf")
}

// lastTypedResult lists ops whose result has the type written last after
// ':' (the accumulator or base operand's), not the first.
var lastTypedResult = map[string]bool{
	"vector.dot2f": true, "vector.dot4i": true, "vector.dot8i4": true, "vector.dot4f8": true,
	"vector.bitfield.insert": true, "vector.insert": true, "vector.reduce.axes": true,
}

// assignResultTypes applies the rule of opsyntax.go: ResultTypes when
// written, i1 for predicates, else the i-th type after ':'.
func assignResultTypes(op *Op, i1 *Type) {
	if len(op.Results) == 0 {
		return
	}
	if op.Name == "global.load" && len(op.Types) == 1 {
		globalLoadTypes(op)
		return
	}
	last := func() *Type {
		if len(op.Types) == 0 {
			return nil
		}
		return op.Types[len(op.Types)-1]
	}
	for i, r := range op.Results {
		switch {
		case r.Type != nil:
		case len(op.ResultTypes) > 0:
			if i < len(op.ResultTypes) {
				r.Type = op.ResultTypes[i]
			} else if len(op.ResultTypes) == 1 {
				r.Type = op.ResultTypes[0]
			}
		case isCompare(op.Name) || strings.HasSuffix(op.Name, ".isnanf") ||
			strings.HasSuffix(op.Name, ".isinff") || strings.HasSuffix(op.Name, ".isfinitef"):
			r.Type = i1
		case op.Name == "vector.reduce" || op.Name == "vector.dotf" || op.Name == "vector.load.mask" || op.Name == "vector.mma" ||
			lastTypedResult[op.Name]:
			r.Type = last()
		case strings.HasPrefix(op.Name, "kernel.subgroup.shuffle") && i == 1:
			r.Type = i1
		case i < len(op.Types):
			r.Type = op.Types[i]
		case len(op.Types) == 1:
			r.Type = op.Types[0]
		}
	}
}

// globalLoadTypes types the results of `%v, %d…, %e = global.load @g : T`:
// the first is the loaded value of type T, the others the co-results T's
// dynamic dimensions (index) and encoding (encoding) name.
func globalLoadTypes(op *Op) {
	t := op.Types[0]
	op.Results[0].Type = t
	for _, r := range op.Results[1:] {
		if t.LayoutValue != nil && t.LayoutValue.Name == r.Name {
			r.Type = &Type{Pos: r.Pos, Kind: TypeOther, Name: "encoding"}
		} else {
			r.Type = &Type{Pos: r.Pos, Kind: TypeIndex, Name: "index"}
		}
	}
}
