package loom

import (
	"strings"
	"testing"
)

// parseProgram parses inline modules (file names m0.loom, m1.loom, …) into
// a Program, failing the test on any error.
func parseProgram(t testing.TB, srcs ...string) *Program {
	t.Helper()
	var mods []*Module
	for i, src := range srcs {
		name := "m" + string(rune('0'+i)) + ".loom"
		m, err := ParseFile(name, []byte(strings.TrimLeft(src, "\n")))
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		mods = append(mods, m)
	}
	p, err := NewProgram(mods...)
	if err != nil {
		t.Fatalf("NewProgram: %v", err)
	}
	return p
}

func mustKernel(t testing.TB, p *Program, export string) *Kernel {
	t.Helper()
	k, err := p.Kernel(export)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func replaceOnce(t testing.TB, s, old, new string) string {
	t.Helper()
	if old != "" && !strings.Contains(s, old) {
		t.Fatalf("%q not in source", old)
	}
	return strings.Replace(s, old, new, 1)
}

func replaceAll(s, old, new string) string { return strings.ReplaceAll(s, old, new) }
