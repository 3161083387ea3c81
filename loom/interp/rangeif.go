package interp

import (
	"sync/atomic"

	"github.com/loomgen/loomgen/loom"
)

// Fused range guards. A guard on an affine index is
//
//	%c = index.cmp ult, %tid, %bound : index
//	scf.if %c { … }
//
// with %c used by nothing else. Run op by op, the comparison records the
// lane range where it holds in %c's meta and scf.if reads it back
// (affine.go). Fused, one instruction derives the range from %tid's facts
// and runs the if's regions over it directly: one dispatch, no meta
// round trip. When the facts do not give a range (the index is not affine
// over a dense, all-alive bound, or the order is not one the shortcut
// handles), the compiled comparison and if run as they are, so results and
// errors are exactly those of the unfused ops.

// noRangeIf, set by tests, keeps comparisons and ifs unfused so both forms
// can be compared; rangeIfRuns counts fused guards that took the range
// (only while countFused is set).
var (
	noRangeIf   bool
	rangeIfRuns atomic.Int64
)

// rangeIfCandidate reports whether ops[i:i+2] is a comparison whose one
// use is as the condition of the scf.if right after it; the slots are
// checked once both ops compiled.
func (c *compiler) rangeIfCandidate(ops []*loom.Op, i int) bool {
	if noRangeIf || i+2 > len(ops) {
		return false
	}
	cmp, ifo := ops[i], ops[i+1]
	if cmp.Name != "index.cmp" || len(cmp.Results) != 1 || len(cmp.Operands) != 2 {
		return false
	}
	if ifo.Name != "scf.if" || len(ifo.Operands) != 1 || ifo.Operands[0].Lit != nil || ifo.Operands[0].Name != cmp.Results[0].Name {
		return false
	}
	// The fused guarded copy (fuse.go) takes an if whose result is stored
	// right after it; that shape keeps its own fusion.
	if c.guardCandidate(ops, i+1) {
		return false
	}
	n := c.uses[cmp]
	return n != nil && n[cmp.Results[0].Name] == 1
}

// rangeIf builds the fused guard over the compiled comparison and if, or
// returns nil when the comparison did not compile to the affine form.
func (c *compiler) rangeIf(b *block, ops []*loom.Op, code []instr) instr {
	if len(code) != 2 {
		return nil
	}
	cmp, ifo := ops[0], ops[1]
	p := c.ifs[ifo]
	r, a, u := b.sc.lookup(cmp.Results[0].Name), b.sc.lookup(cmp.Operands[0].Name), b.sc.lookup(cmp.Operands[1].Name)
	// affineCmp marks its i1 result aff; nothing else does.
	if p == nil || r == nil || a == nil || u == nil || !r.aff || r.uni || r.kind != kInt || a.uni || a.kind != kInt || !u.uni || u.kind != kInt {
		return nil
	}
	var ult, eq bool
	switch cmp.Pred {
	case "ult":
		ult = true
	case "eq":
		eq = true
	case "slt":
	default:
		return nil
	}
	cmpIn, ifIn := code[0], code[1]
	ai, ui := a.idx, u.idx
	// A guard with only a then region, inside which no lane can exit,
	// runs it here: runRange's else and exit handling do not apply.
	thenOnly, then, depth := len(p.els) == 0 && p.noExit, p.then, p.depth
	return func(fr *frame) error {
		lo, hi := fr.lo, fr.hi
		if thenOnly && fr.grp < fr.L && a.aff && fr.meta[ai].per {
			if ok, err := periodicIf(fr, &fr.meta[ai], fr.I[ui][0], ult, eq, then, depth); ok {
				return err
			}
		}
		if a.aff && lo < hi && fr.nalive == fr.L && fr.nact == hi-lo {
			m := &fr.meta[ai]
			a0, y := m.a0, fr.I[ui][0]
			if m.aff && lo >= m.alo && hi <= m.ahi && a0+int64(lo) >= 0 && (!ult || y >= 0) {
				ra, rb := cmpRange(eq, a0, y, lo, hi)
				if thenOnly {
					if countFused {
						rangeIfRuns.Add(1)
					}
					if ra == rb || len(then) == 0 {
						return nil
					}
					cur, cn := fr.mask, fr.nact
					if ra != lo || rb != hi {
						// As rangeMaskOf.
						L := fr.L
						switch {
						case ra == 0:
							fr.mask = fr.pre[L-rb : 2*L-rb]
						case rb == L:
							fr.mask = fr.suf[L-ra : 2*L-ra]
						default:
							fr.setRange(depth, ra, rb)
						}
						fr.nact, fr.lo, fr.hi = rb-ra, ra, rb
					}
					for _, in := range then {
						if err := in(fr); err != nil {
							if err == errAllExited {
								break
							}
							fr.mask = cur
							fr.unbound()
							return err
						}
					}
					// Every lane is still alive (noExit): cur is unchanged.
					fr.mask, fr.nact, fr.lo, fr.hi = cur, cn, lo, hi
					return nil
				}
				if ok, err := p.runRange(fr, ra, rb); ok {
					if countFused {
						rangeIfRuns.Add(1)
					}
					return err
				}
			}
		}
		if err := cmpIn(fr); err != nil {
			return err
		}
		return ifIn(fr)
	}
}

// cmpRange is the lane interval [ra, rb) within [lo, hi) where a0+l < y
// (eq false) or a0+l == y (eq true) holds, for nonnegative, rising a0+l.
func cmpRange(eq bool, a0, y int64, lo, hi int) (ra, rb int) {
	d := y - a0
	if eq {
		if d >= int64(lo) && d < int64(hi) {
			return int(d), int(d) + 1
		}
		return lo, lo
	}
	if d > int64(lo) {
		return lo, int(min(d, int64(hi)))
	}
	return lo, lo
}
