package checkrun

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/loomgen/loomgen/loom"
)

// attr returns the literal of op's attribute or clause key, or nil.
func attr(op *loom.Op, key string) *loom.Literal {
	if a := op.Attr(key); a != nil {
		return &a.Value
	}
	return nil
}

// litValue converts a literal to a Go value: int64, float64, bool,
// string (strings and bare words), []any (arrays) or map[string]any
// (dictionaries), parsing raw text where the parser kept it.
func litValue(l *loom.Literal) (any, error) {
	switch l.Kind {
	case loom.LitInt:
		return l.Int, nil
	case loom.LitFloat:
		return l.Float, nil
	case loom.LitBool:
		return l.Int != 0, nil
	case loom.LitString, loom.LitWord:
		return l.Str, nil
	}
	p := &attrParser{s: l.Text}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, fmt.Errorf("unexpected %q in %q", p.s[p.i:], p.s)
	}
	return v, nil
}

// attrParser reads the attribute values the parser keeps as raw text:
// [1, 2], {key = value, ...}, strings, numbers and bare words.
type attrParser struct {
	s string
	i int
}

func (p *attrParser) space() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

func (p *attrParser) value() (any, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("missing value in %q", p.s)
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		var out []any
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return out, nil
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			}
		}
	case c == '{':
		p.i++
		out := map[string]any{}
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return out, nil
			}
			k := p.word()
			if k == "" {
				return nil, fmt.Errorf("expected a key in %q", p.s)
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '=' {
				return nil, fmt.Errorf("expected = after %s in %q", k, p.s)
			}
			p.i++
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			out[k] = v
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			}
		}
	case c == '"':
		j := p.i + 1
		for j < len(p.s) && p.s[j] != '"' {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return nil, fmt.Errorf("unterminated string in %q", p.s)
		}
		str, err := strconv.Unquote(p.s[p.i : j+1])
		if err != nil {
			return nil, err
		}
		p.i = j + 1
		return str, nil
	}
	w := p.word()
	if w == "" {
		return nil, fmt.Errorf("unexpected %q in %q", p.s[p.i:], p.s)
	}
	if n, err := strconv.ParseInt(w, 0, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(w, 64); err == nil {
		return f, nil
	}
	switch w {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return w, nil
}

func (p *attrParser) word() string {
	p.space()
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(" \t\n,=[]{}\"", rune(p.s[j])) {
		j++
	}
	w := p.s[p.i:j]
	p.i = j
	return w
}

// attrs returns op's attributes as a dictionary of Go values, skipping the
// keys in skip (clauses that are not part of a provider's dictionary).
func attrs(op *loom.Op, skip ...string) (map[string]any, error) {
	out := map[string]any{}
outer:
	for _, a := range op.Attrs {
		for _, s := range skip {
			if a.Key == s {
				continue outer
			}
		}
		v, err := litValue(&a.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: attribute %s: %w", a.Pos, a.Key, err)
		}
		out[a.Key] = v
	}
	return out, nil
}

// number converts an int64 or float64 attribute value to float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// formatValue spells a Go attribute value the way Loom writes it.
func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		return formatDict(x)
	}
	return fmt.Sprint(v)
}

func formatDict(m map[string]any) string {
	keys := sortedKeys(m)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " = " + formatValue(m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
