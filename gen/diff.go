package gen

import (
	"fmt"
	"strings"
)

// UnifiedDiff returns a unified diff (three lines of context) turning old
// into new, with the given file labels, or "" when they are equal. It is
// what `loomgen -check` prints for a stale file.
func UnifiedDiff(oldLabel, newLabel string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldLabel, newLabel)
	const context = 3
	// Walk the edit script, opening a hunk at the first change and closing it
	// once more than 2*context equal lines separate it from the next change.
	i := 0
	for i < len(ops) {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

type diffOp struct {
	kind       byte // ' ', '-', '+'
	text       string
	aLine, bLn int // 1-based line numbers in a and b at this op
}

func writeHunk(out *strings.Builder, ops []diffOp) {
	var aCount, bCount int
	aStart, bStart := ops[0].aLine, ops[0].bLn
	for _, op := range ops {
		if op.kind != '+' {
			aCount++
		}
		if op.kind != '-' {
			bCount++
		}
	}
	// An empty side starts one line before its position, as diff -u writes it.
	if aCount == 0 {
		aStart--
	}
	if bCount == 0 {
		bStart--
	}
	fmt.Fprintf(out, "@@ -%d,%d +%d,%d @@\n", aStart, aCount, bStart, bCount)
	for _, op := range ops {
		out.WriteByte(op.kind)
		out.WriteString(op.text)
		if !strings.HasSuffix(op.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines computes a shortest edit script with Myers' O(ND) algorithm,
// keeping every frontier so the path can be traced back. Generated files
// differ in few lines, so D stays small and the trace stays cheap.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	maxD := n + m
	offset := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	var d int
outer:
	for d = 0; d <= maxD; d++ {
		snap := make([]int, len(v))
		copy(snap, v)
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				break outer
			}
		}
	}
	// Trace back from (n, m) through the saved frontiers.
	var rev []diffOp
	x, y := n, m
	for ; d > 0; d-- {
		vp := trace[d]
		k := x - y
		var prevK int
		if k == -d || (k != d && vp[offset+k-1] < vp[offset+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := vp[offset+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, diffOp{kind: ' ', text: a[x]})
		}
		if x == prevX {
			y--
			rev = append(rev, diffOp{kind: '+', text: b[y]})
		} else {
			x--
			rev = append(rev, diffOp{kind: '-', text: a[x]})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, diffOp{kind: ' ', text: a[x]})
	}
	ops := make([]diffOp, len(rev))
	al, bl := 1, 1
	for i := range rev {
		op := rev[len(rev)-1-i]
		op.aLine, op.bLn = al, bl
		switch op.kind {
		case ' ':
			al++
			bl++
		case '-':
			al++
		case '+':
			bl++
		}
		ops[i] = op
	}
	return ops
}
