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
	regRE    = regexp.MustCompile(`%[a-z]+[0-9]+\b`)
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
		return nil, regRE.FindAllString(ops, -1)
	}
	first, rest := ops, ""
	if strings.HasPrefix(ops, "{") {
		if i := strings.Index(ops, "}"); i >= 0 {
			first, rest = ops[:i+1], ops[i+1:]
		}
	} else if i := strings.Index(ops, ","); i >= 0 {
		first, rest = ops[:i], ops[i+1:]
	}
	return regRE.FindAllString(first, -1), regRE.FindAllString(rest, -1)
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

// coalesce applies the copy folding above to a function body.
func coalesce(body string) string {
	lines := strings.SplitAfter(body, "\n")
	uses := map[string]int{}
	defAt := map[string][]int{}
	labelAt := map[string]int{}
	var branches [][2]int // line, target label line (filled below)
	branchTo := map[int]string{}
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasSuffix(t, ":") && !strings.HasPrefix(t, "//") {
			labelAt[strings.TrimSuffix(t, ":")] = i
			continue
		}
		if m := branchRE.FindStringSubmatch(t); m != nil {
			branchTo[i] = m[1]
		}
		d, u := insnDefs(l)
		for _, r := range d {
			defAt[r] = append(defAt[r], i)
		}
		for _, r := range u {
			uses[r]++
		}
	}
	for i, target := range branchTo {
		if at, ok := labelAt[target]; ok {
			branches = append(branches, [2]int{i, at})
		} else {
			branches = append(branches, [2]int{i, -1})
		}
	}
	dead := make([]bool, len(lines))
	for m, l := range lines {
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
		if !closedStretch(d, m, branches) || mentions(lines[d+1:m], a) {
			continue
		}
		for _, i := range at {
			lines[i] = renameDef(lines[i], b, a)
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

// mentions reports whether any line reads or writes register r.
func mentions(lines []string, r string) bool {
	for _, l := range lines {
		for _, x := range regRE.FindAllString(l, -1) {
			if x == r {
				return true
			}
		}
	}
	return false
}

// renameDef replaces the defined register b in the def line with a.
func renameDef(line, b, a string) string {
	return regRE.ReplaceAllStringFunc(line, func(x string) string {
		if x == b {
			return a
		}
		return x
	})
}
