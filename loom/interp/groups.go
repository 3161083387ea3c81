package interp

import "github.com/loomgen/loomgen/loom"

// Workgroup-scoped operations in a batch. A batched frame holds K
// workgroups of fr.grp lanes each (lanes [g*grp, (g+1)*grp) are the g-th);
// an unbatched frame is the case grp == L. Barriers, collectives and
// subgroup numbering act on each workgroup's lanes as if it ran alone: a
// workgroup none of whose lanes is active is skipped, as the unbatched
// form never reaches the op for it.

// divergent checks, once fr.nact != fr.nalive, which workgroup reached a
// workgroup-wide op (a barrier, a workgroup collective) with only part of
// its live work-items, and returns the trap of the lowest such group at
// its first active lane; nil when every group is either whole or absent.
func (fr *frame) divergent(op *loom.Op, what string) error {
	if fr.grp == fr.L {
		return newTrap(op, fr.firstActive(), ErrDivergentBarrier, "%s reached by %d of %d work-items", what, fr.nact, fr.nalive)
	}
	for gs := 0; gs < fr.L; gs += fr.grp {
		act, alive, first := 0, 0, -1
		for l := gs; l < gs+fr.grp; l++ {
			if fr.mask[l] {
				if first < 0 {
					first = l
				}
				act++
			}
			if fr.alive[l] {
				alive++
			}
		}
		if act > 0 && act != alive {
			return newTrap(op, first, ErrDivergentBarrier, "%s reached by %d of %d work-items", what, act, alive)
		}
	}
	return nil
}

// groupIdle reports whether no lane of the workgroup starting at lane gs
// is active (always false for an unbatched frame, which runs an op only
// when some lane is active).
func (fr *frame) groupIdle(gs int) bool {
	if fr.grp == fr.L {
		return false
	}
	for _, a := range fr.mask[gs : gs+fr.grp] {
		if a {
			return false
		}
	}
	return true
}
