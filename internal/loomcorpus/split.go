// Package loomcorpus reads a corpus of Loom sources: it finds the .loom and
// .loom-test files under directories and splits a .loom-test file into its
// test cases as Loom's loom-check does. internal/corpusrate and
// cmd/loomdiff read their inputs through it.
package loomcorpus

import (
	"strings"
)

// Case is one test case of a .loom-test file, reduced to what the
// measurement needs: its input section and whether the test expects that
// input to be valid Loom.
type Case struct {
	// Index is the case's 1-based position in its file.
	Index int
	// Line is the 1-based file line of the input's first line.
	Line int
	// Mode is the case's RUN mode (roundtrip, verify, pass, …), inherited
	// from the file's first case when the case has no RUN line.
	Mode string
	// Input is the input section: the body up to a `// ----` line.
	Input string
	// Expected is the expected-output section after `// ----` ("" without
	// one) and ExpectedLine its first file line.
	Expected     string
	ExpectedLine int
	// Excluded says why the input is not counted as valid source; "" for a
	// valid input.
	Excluded string
}

// frontEndDomains are the error domains of Loom's parser and verifier
// (loom/src/loom/error/error_defs.h); an input expected to raise one of
// them is invalid source. The other domains (LOWERING, BACKEND, TARGET,
// AMDGPU, SPIRV, X86, WASM, FOLD) come from passes and emitters, which
// run only on input that parsed and verified.
var frontEndDomains = map[string]bool{
	"TYPE": true, "SHAPE": true, "SUBRANGE": true, "ENCODING": true,
	"STRUCTURE": true, "DOMINANCE": true, "SYMBOL": true, "PARSE": true,
	"BYTECODE": true,
}

// SplitTest splits a .loom-test file into its cases, following loom-check's
// format: cases are separated by lines starting with `// ====`; a case
// starts with a header of directives (`// RUN:`, `// REQUIRES:`,
// `// XFAIL:`, `// TEMPLATE:`), blank lines and plain comments; its body
// starts at the first annotation or source line; a line that is exactly
// `// ----` ends the input, and what follows is expected output (never
// measured). A case without RUN inherits the first case's mode, else
// roundtrip.
//
// An input is excluded when the test expects Loom to reject it: in verify
// mode, any ERROR annotation; in other modes, an ERROR annotation without a
// domain or in a parser/verifier domain (frontEndDomains). Errors that
// passes and emitters raise (LOWERING, TARGET, AMDGPU, …) keep the input
// valid: it parsed and verified before they ran. Empty inputs are
// excluded too.
func SplitTest(src string) []Case {
	lines := strings.Split(src, "\n")
	var cases []Case
	start := 0
	flush := func(end int) {
		c := parseCase(lines[start:end], start+1)
		c.Index = len(cases) + 1
		cases = append(cases, c)
	}
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "// ====") {
			flush(i)
			start = i + 1
		}
	}
	flush(len(lines))
	defMode := "roundtrip"
	if len(cases) > 0 && cases[0].Mode != "" {
		defMode = cases[0].Mode
	}
	for i := range cases {
		c := &cases[i]
		if c.Mode == "" {
			c.Mode = defMode
		}
		if c.Excluded == "" {
			c.Excluded = exclusion(c.Mode, c.Input)
		}
	}
	return cases
}

// parseCase splits one case's lines (the first at file line first) into
// mode and input; Mode is "" without a RUN line.
func parseCase(lines []string, first int) Case {
	c := Case{}
	body := len(lines)
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if v, ok := strings.CutPrefix(t, "// RUN:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				c.Mode = f[0]
			}
			continue
		}
		if strings.HasPrefix(t, "//") && !isAnnotation(t) && t != "// ----" {
			continue // directives and plain comments of the header
		}
		body = i
		break
	}
	end := len(lines)
	for i := body; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "// ----" {
			end = i
			break
		}
	}
	c.Line = first + body
	if body < end {
		c.Input = strings.Join(lines[body:end], "\n")
	}
	if end < len(lines) {
		c.ExpectedLine = first + end + 1
		c.Expected = strings.Join(lines[end+1:], "\n")
	}
	return c
}

// exclusion says why an input of a case in mode is not valid source, or "".
func exclusion(mode, input string) string {
	if OnlyComments(input) {
		return "empty input"
	}
	for _, l := range strings.Split(input, "\n") {
		sev, domain, ok := annotation(strings.TrimSpace(l))
		if !ok || sev != "ERROR" {
			continue
		}
		switch {
		case mode == "verify":
			return "verify case expects an error"
		case domain == "":
			return "expects an error without a domain"
		case frontEndDomains[domain]:
			return "expects a " + domain + " error"
		}
	}
	return ""
}

func OnlyComments(input string) bool {
	for _, l := range strings.Split(input, "\n") {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "//") {
			return false
		}
	}
	return true
}

func isAnnotation(trimmed string) bool {
	_, _, ok := annotation(trimmed)
	return ok
}

// annotation parses a standalone comment line as a loom-check diagnostic
// annotation: `// SEVERITY[@±N]: [DOMAIN[/CODE]] ["substring"…]`.
func annotation(trimmed string) (severity, domain string, ok bool) {
	text, found := strings.CutPrefix(trimmed, "//")
	if !found {
		return "", "", false
	}
	text = strings.TrimSpace(text)
	for _, s := range []string{"ERROR", "WARNING", "REMARK"} {
		if rest, found := strings.CutPrefix(text, s); found {
			severity, text = s, rest
			break
		}
	}
	if severity == "" {
		return "", "", false
	}
	if rest, found := strings.CutPrefix(text, "@"); found {
		i := strings.IndexByte(rest, ':')
		if i < 0 {
			return "", "", false
		}
		text = rest[i:]
	}
	text, found = strings.CutPrefix(text, ":")
	if !found {
		return "", "", false
	}
	text = strings.TrimSpace(text)
	if text == "" || text[0] == '"' {
		return severity, "", true
	}
	tok, _, _ := strings.Cut(text, " ")
	domain, _, _ = strings.Cut(tok, "/")
	return severity, domain, true
}
