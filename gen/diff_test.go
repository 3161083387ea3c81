package gen

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"change", "a\nb\nc\n", "a\nB\nc\n", "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"new file", "", "a\n", "--- x\n+++ y\n@@ -0,0 +1,1 @@\n+a\n"},
		{"no newline", "a\n", "a", "--- x\n+++ y\n@@ -1,1 +1,1 @@\n-a\n+a\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "0\n2\n3\n4\n5\n6\n7\n8\n9\nX\n",
			"--- x\n+++ y\n@@ -1,4 +1,4 @@\n-1\n+0\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+X\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := UnifiedDiff("x", "y", []byte(c.old), []byte(c.new)); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestDiffApplies checks on larger inputs that the edit script turns the old
// text into the new one.
func TestDiffApplies(t *testing.T) {
	old := strings.Repeat("line\nother\n", 50) + "tail\n"
	new := strings.Replace(strings.Replace(old, "other\n", "changed\n", 3), "tail\n", "", 1) + "added\n"
	ops := diffLines(splitLines(old), splitLines(new))
	var a, b strings.Builder
	for _, op := range ops {
		if op.kind != '+' {
			a.WriteString(op.text)
		}
		if op.kind != '-' {
			b.WriteString(op.text)
		}
	}
	if a.String() != old || b.String() != new {
		t.Fatal("edit script does not reproduce its inputs")
	}
}
