package ptx

import "strings"

// entryWait is the programmatic-dependent-launch prologue (sm_90+): a grid
// launched behind this one may be scheduled once every workgroup has
// passed it, and this one waits for the grids it depends on to complete
// (their memory visible). Without a programmatic dependency both are
// no-ops.
const entryWait = "\tgriddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;\n"

// withEntryWait places entryWait in body before its first instruction
// that reads or writes memory other than the kernel's parameters, or that
// branches or is a branch target. What runs before it is straight-line
// arithmetic on parameters and special registers, and L2/L1 prefetches,
// which are hints with no effect on any value: a workgroup scheduled
// while its predecessor still runs computes its addresses and starts
// pulling its first lines into the cache instead of idling at the wait.
// Anything this does not recognise ends the prologue, so the wait still
// dominates every access.
func withEntryWait(body string) string {
	at := 0
	for at < len(body) {
		end := strings.IndexByte(body[at:], '\n')
		if end < 0 {
			break
		}
		if !beforeEntryWait(body[at : at+end]) {
			break
		}
		at += end + 1
	}
	return body[:at] + entryWait + body[at:]
}

// waitFreeOps are the opcodes (up to their first '.') that touch no
// memory and do not branch.
var waitFreeOps = map[string]bool{
	"mov": true, "cvta": true, "cvt": true, "add": true, "sub": true, "mul": true,
	"mad": true, "div": true, "rem": true, "shl": true, "shr": true, "and": true,
	"or": true, "xor": true, "not": true, "neg": true, "abs": true, "min": true,
	"max": true, "setp": true, "selp": true, "lop3": true, "prmt": true, "bfe": true,
	"bfi": true, "popc": true, "clz": true, "brev": true, "fma": true,
}

// beforeEntryWait reports whether one line of the body may stay ahead of
// the entry wait: blank, a comment, or one instruction (perhaps
// predicated) of waitFreeOps, a parameter load or a global prefetch.
func beforeEntryWait(line string) bool {
	s := strings.TrimSpace(line)
	if s == "" || strings.HasPrefix(s, "//") {
		return true
	}
	if !strings.HasSuffix(s, ";") {
		return false // a label, a brace, or an instruction over several lines
	}
	op, _ := splitInsn(s)
	base, _, _ := strings.Cut(op, ".")
	switch {
	case waitFreeOps[base]:
		return true
	case base == "ld":
		return strings.HasPrefix(op, "ld.param.")
	case base == "prefetch":
		return strings.HasPrefix(op, "prefetch.global.")
	}
	return false
}
