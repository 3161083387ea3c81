package ptx

import "strings"

// trailingMark is the comment line before a reduction's trailing barrier.
const trailingMark = "\t// trailing barrier of a workgroup reduction\n"

// dropTrailingBarriers removes each marked trailing barrier of body that
// nothing after it can need: no later line of its body version (up to the
// misaligned version's label, which the aligned version never falls
// into) names the scratch, and no later branch goes back to a label above
// it (the barrier is then in a loop, and the next trip's reduction reuses
// the scratch). Every invocation has passed the reduction's first barrier
// before any reads the scratch, so that one still orders the accesses
// before the reduction with those after it.
func dropTrailingBarriers(body string) string {
	if !strings.Contains(body, trailingMark) {
		return body
	}
	lines := strings.SplitAfter(body, "\n")
	labels := map[string]int{}
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasSuffix(t, ":") && strings.HasPrefix(t, "$L_") {
			labels[strings.TrimSuffix(t, ":")] = i
		}
	}
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		if lines[i] != trailingMark {
			out.WriteString(lines[i])
			continue
		}
		needed := false
		for _, l := range lines[i+2:] {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "$L_misaligned_") {
				break
			}
			if strings.Contains(t, collScratch) {
				needed = true
				break
			}
			if j := strings.Index(t, "bra"); j >= 0 && !strings.HasPrefix(t, "//") {
				f := strings.Fields(t[j:])
				if len(f) == 2 {
					if at, ok := labels[strings.TrimSuffix(f[1], ";")]; ok && at < i {
						needed = true
						break
					}
				}
			}
		}
		if needed && i+1 < len(lines) {
			out.WriteString(lines[i+1])
		}
		i++ // the barrier line
	}
	return out.String()
}
