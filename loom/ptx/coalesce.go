package ptx

import (
	"regexp"
	"slices"
	"strings"
)

// Every SSA value gets a fresh register, and a value carried around a loop
// or out of a branch is copied into its join register where the paths
// meet. ptxas does not always fold those copies: an unrolled register tile
// of 64 accumulators kept 45 MOVs per trip of an SGEMM's main loop. So
// before the module is written, coalesce renames the instruction that
// computes a copied value to write the join register directly and drops
// the copy, where that cannot be observed:
//
//	def:  <op> %B, …        (every write of %B precedes the copy)
//	      …                  (no read or write of %A after the first write
//	                          of %B, which may itself read %A; control
//	                          flow stays within the stretch)
//	copy: mov.T %A, %B       (the only read of %B)
//
// becomes `<op> %A, …` with the copy gone. Several writes (a vector load
// and its predicated scalar fallback) are all renamed: where the copy read
// a defined %B, %A now holds the same value. The stretch between the first
// write and the copy is straight-line code or whole branches inside it
// (every branch there targets a label there, every label there is
// targeted only from there), so every path from the writes reaches the
// copy without touching %A. Folding the copy of a loaded value matters
// beyond the instruction saved: the copy waits for the load, so it stalls
// the warp on memory latency right after issuing the load.

var (
	movRE    = regexp.MustCompile(`^\tmov\.[a-z0-9]+ (%[a-z]+[0-9]+), (%[a-z]+[0-9]+);$`)
	branchRE = regexp.MustCompile(`\bbra(?:\.uni)? (\$\w+);$`)
	classR   = regexp.MustCompile(`^%[a-z]+`)
)

// insnDefs splits an instruction line into the registers it writes and
// those it reads. Stores, branches, barriers, reductions and instructions
// whose first operand is memory write none; every other instruction writes
// its first operand (a register, a {…} list or a %a|%p pair).
func insnDefs(line string) (defs, uses []string) {
	opcode, ops := splitInsn(line)
	writes := !(strings.HasPrefix(opcode, "st.") || opcode == "st" ||
		strings.HasPrefix(opcode, "bra") || strings.HasPrefix(opcode, "bar") || strings.HasPrefix(opcode, "red.") ||
		strings.HasPrefix(opcode, "ret") || strings.HasPrefix(opcode, "membar") || strings.HasPrefix(opcode, "fence"))
	if !writes || strings.HasPrefix(ops, "[") {
		// Stores and the like, and any instruction whose first operand is
		// memory (cp.async, prefetch): everything is read.
		return nil, regs(ops)
	}
	first, rest := ops, ""
	if strings.HasPrefix(ops, "{") {
		if i := strings.Index(ops, "}"); i >= 0 {
			first, rest = ops[:i+1], ops[i+1:]
		}
	} else if i := strings.Index(ops, ","); i >= 0 {
		first, rest = ops[:i], ops[i+1:]
	}
	return regs(first), regs(rest)
}

// splitInsn splits an instruction line into its opcode (the guard
// predicate dropped) and its operands, without the final ';'.
func splitInsn(line string) (opcode, operands string) {
	s := strings.TrimSuffix(strings.TrimSpace(line), ";")
	if strings.HasPrefix(s, "@") {
		_, s, _ = strings.Cut(s, " ")
	}
	opcode, operands, _ = strings.Cut(s, " ")
	return opcode, operands
}

// coalesce applies the copy folding above to a function body. Each line's
// registers are found once, and each register's lines are kept sorted, so
// that asking whether the stretch before a copy mentions the join register
// is a binary search: a scan of the stretch per copy made this pass most of
// the compile time of an unrolled matmul.
func coalesce(body string) string {
	lines := strings.SplitAfter(body, "\n")
	uses := map[string]int{}
	defAt := map[string][]int{}
	labelAt := map[string]int{}
	mentionAt := map[string][]int{} // the lines naming a register, ascending
	var branches [][2]int           // line, target label line (filled below)
	branchTo := map[int]string{}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasSuffix(t, ":") && !strings.HasPrefix(t, "//") {
			labelAt[strings.TrimSuffix(t, ":")] = i
			continue
		}
		if strings.Contains(t, "bra") {
			if m := branchRE.FindStringSubmatch(t); m != nil {
				branchTo[i] = m[1]
			}
		}
		d, u := insnDefs(l)
		for _, r := range d {
			defAt[r] = append(defAt[r], i)
		}
		for _, r := range u {
			uses[r]++
		}
		for _, r := range regs(l) {
			if at := mentionAt[r]; len(at) == 0 || at[len(at)-1] != i {
				mentionAt[r] = append(at, i)
			}
		}
	}
	for i, target := range branchTo {
		if at, ok := labelAt[target]; ok {
			branches = append(branches, [2]int{i, at})
		} else {
			branches = append(branches, [2]int{i, -1})
		}
	}
	// mentions reports whether a line strictly between d and m names r.
	mentions := func(r string, d, m int) bool {
		at := mentionAt[r]
		k, _ := slices.BinarySearch(at, d+1)
		return k < len(at) && at[k] < m
	}
	dead := make([]bool, len(lines))
	for m, l := range lines {
		if !strings.HasPrefix(l, "\tmov.") {
			continue
		}
		mv := movRE.FindStringSubmatch(strings.TrimRight(l, "\n"))
		if mv == nil {
			continue
		}
		a, b := mv[1], mv[2]
		if a == b || classR.FindString(a) != classR.FindString(b) || uses[b] != 1 {
			continue
		}
		at := defAt[b]
		if len(at) == 0 || at[len(at)-1] >= m {
			continue
		}
		d := at[0]
		if !closedStretch(d, m, branches) || mentions(a, d, m) {
			continue
		}
		for _, i := range at {
			lines[i] = renameReg(lines[i], b, a)
			// Line i no longer names b and now names a. (Where a later
			// copy asks, the copy just dropped names both at a later
			// line, so this only keeps the index true to the text.)
			if k, ok := slices.BinarySearch(mentionAt[b], i); ok {
				mentionAt[b] = slices.Delete(mentionAt[b], k, k+1)
			}
			if k, ok := slices.BinarySearch(mentionAt[a], i); !ok {
				mentionAt[a] = slices.Insert(mentionAt[a], k, i)
			}
		}
		dead[m] = true
		defAt[a] = append(defAt[a], at...)
		slices.Sort(defAt[a])
	}
	var out strings.Builder
	for i, l := range lines {
		if !dead[i] {
			out.WriteString(l)
		}
	}
	return out.String()
}

// closedStretch reports whether control flow between lines d and m stays
// between them: every branch inside targets a label inside, and no branch
// outside targets a label inside.
func closedStretch(d, m int, branches [][2]int) bool {
	for _, br := range branches {
		from, to := br[0], br[1]
		inFrom := from > d && from < m
		inTo := to > d && to < m
		if inFrom != inTo || (inFrom && to < 0) {
			return false
		}
	}
	return true
}

// nextReg finds the first register name in s at or after from: a '%',
// lowercase letters, digits, and no letter, digit or '_' after them (%r12,
// %rd3, %f100). It returns its bounds, or -1, -1.
func nextReg(s string, from int) (start, end int) {
	for i := from; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(s) && 'a' <= s[j] && s[j] <= 'z' {
			j++
		}
		k := j
		for k < len(s) && '0' <= s[k] && s[k] <= '9' {
			k++
		}
		if j > i+1 && k > j && (k == len(s) || !isWordByte(s[k])) {
			return i, k
		}
	}
	return -1, -1
}

// isWordByte reports whether c is an ASCII letter, digit or '_'.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// regs returns the register names of s, in order.
func regs(s string) []string {
	var dst []string
	for i := 0; ; {
		start, end := nextReg(s, i)
		if start < 0 {
			return dst
		}
		dst = append(dst, s[start:end])
		i = end
	}
}

// renameReg replaces every mention of register b in line with a.
func renameReg(line, b, a string) string {
	var out strings.Builder
	last := 0
	for i := 0; ; {
		start, end := nextReg(line, i)
		if start < 0 {
			break
		}
		if line[start:end] == b {
			out.WriteString(line[last:start])
			out.WriteString(a)
			last = end
		}
		i = end
	}
	if last == 0 {
		return line
	}
	out.WriteString(line[last:])
	return out.String()
}
