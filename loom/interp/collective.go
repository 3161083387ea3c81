package interp

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// collective compiles kernel.subgroup.* and kernel.workgroup.* operations.
// Subgroups are chunks of the target's subgroup size over linearized
// work-item ids; subgroup ops combine the active lanes of each subgroup.
// Workgroup ops require the whole (non-exited) workgroup, like barriers.
func (c *compiler) collective(b *block, op *loom.Op, rest string) (instr, error) {
	scope, what, _ := strings.Cut(rest, ".")
	wg := scope == "workgroup"
	ops, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	for _, s := range ops {
		if s.comps != 1 || s.kind == kView {
			return nil, compileErr(op.Pos, ErrUnsupported, "%s on %s", op.Name, s.typ)
		}
	}
	sg := c.k.tgt.subgroup
	switch what {
	case "reduce", "scan":
		if len(ops) != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s takes one value", op.Name)
		}
		x := ops[0]
		cb, err := c.combinerFor(op.Pos, op.Param, x.typ)
		if err != nil {
			return nil, err
		}
		// A batch holds several workgroups: their reductions differ.
		r, err := c.result(b, op, 0, wg && what == "reduce" && !c.k.batched)
		if err != nil {
			return nil, err
		}
		if r.kind != x.kind {
			return nil, compileErr(op.Pos, ErrInvalid, "%s result type", op.Name)
		}
		size, stride := int64(0), int64(1)
		if a := op.Attr("cluster_size"); a != nil {
			size = a.Value.Int
		}
		if a := op.Attr("cluster_stride"); a != nil && a.Value.Int > 0 {
			stride = a.Value.Int
		}
		excl, rev := false, false
		if a := op.Attr("mode"); a != nil {
			excl = a.Value.Str == "exclusive" || a.Value.Text == "exclusive"
		}
		if a := op.Attr("direction"); a != nil {
			rev = a.Value.Str == "reverse" || a.Value.Text == "reverse"
		}
		return func(fr *frame) error {
			if wg && fr.nact != fr.nalive {
				if err := fr.divergent(op, op.Name); err != nil {
					return err
				}
			}
			group := sg
			if wg {
				group = fr.grp
			}
			for gs := 0; gs < fr.L; gs += fr.grp {
				if fr.groupIdle(gs) {
					continue
				}
				ge := gs + fr.grp
				for g0 := gs; g0 < ge; g0 += group {
					g1 := min(g0+group, ge)
					if what == "reduce" && size > 0 && !wg {
						clusterReduce(fr, cb, x, r, g0, g1, int(size), int(stride))
						continue
					}
					if size > 0 && !wg {
						clusterScan(fr, cb, x, r, g0, g1, int(size), int(stride), excl, rev)
						continue
					}
					combineRange(fr, cb, x, r, g0, g1, what == "scan", excl, rev)
				}
			}
			return nil
		}, nil
	case "shuffle":
		if wg || len(ops) != 3 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s takes a value, an offset and a width", op.Name)
		}
		x, off, wd := ops[0], ops[1], ops[2]
		r, err := c.result(b, op, 0, false)
		if err != nil {
			return nil, err
		}
		var valid *slot
		if len(op.Results) > 1 {
			if valid, err = c.newSlot(op.Pos, typeI1, false); err != nil {
				return nil, err
			}
			b.sc.vals[op.Results[1].Name] = valid
		}
		mode := op.Param
		switch mode {
		case "xor", "up", "down", "index":
		default:
			return nil, compileErr(op.Pos, ErrUnsupported, "kernel.subgroup.shuffle<%s>", mode)
		}
		return func(fr *frame) error {
			// Read sources from a snapshot so r may alias nothing of x.
			get := func(s *slot, l int) int64 {
				if s.uni {
					return fr.I[s.idx][0]
				}
				return fr.I[s.idx][l]
			}
			grp := fr.grp
			for l := range fr.L {
				if !fr.mask[l] {
					continue
				}
				// Segments are counted from the lane's workgroup start.
				gs := l / grp * grp
				w := get(wd, l)
				if w <= 0 || w > int64(sg) || w&(w-1) != 0 {
					return newTrap(op, l, ErrInvalid, "shuffle width %d is not a power of two up to %d", w, sg)
				}
				o := get(off, l)
				seg := int64(gs) + int64(l-gs)/w*w
				var src int64
				switch mode {
				case "xor":
					src = int64(gs) + (int64(l-gs) ^ o)
				case "up":
					src = int64(l) - o
				case "down":
					src = int64(l) + o
				case "index":
					src = seg + o
				}
				ok := src >= seg && src < seg+w && src < int64(gs+grp) && fr.mask[src]
				if !ok {
					src = int64(l)
				}
				if r.kind == kFloat {
					v := fr.F[x.idx]
					if x.uni {
						fr.F[r.idx][l] = v[0]
					} else {
						fr.scrF[3][l] = v[src]
					}
				} else {
					v := fr.I[x.idx]
					if x.uni {
						fr.I[r.idx][l] = v[0]
					} else {
						fr.scrI[3][l] = v[src]
					}
				}
				if valid != nil {
					fr.I[valid.idx][l] = b2i(ok)
				}
			}
			if !x.uni {
				for l := range fr.L {
					if fr.mask[l] {
						if r.kind == kFloat {
							fr.F[r.idx][l] = fr.scrF[3][l]
						} else {
							fr.I[r.idx][l] = fr.scrI[3][l]
						}
					}
				}
			}
			return nil
		}, nil
	case "broadcast", "broadcast.first":
		if wg {
			break
		}
		x := ops[0]
		r, err := c.result(b, op, 0, x.uni)
		if err != nil {
			return nil, err
		}
		var from *slot
		if what == "broadcast" {
			if len(ops) != 2 {
				return nil, compileErr(op.Pos, ErrInvalid, "%s takes a value and a lane", op.Name)
			}
			from = ops[1]
		}
		return func(fr *frame) error {
			if x.uni {
				fr.copySlot(r, x)
				return nil
			}
			// Subgroups end at their workgroup's end (a batch's next
			// workgroup starts a new one).
			for g0, g1 := 0, 0; g0 < fr.L; g0 = g1 {
				g1 = min(g0+sg, g0/fr.grp*fr.grp+fr.grp)
				if from != nil && !from.uni {
					// A lane that differs between invocations: each reads
					// the lane its own operand names (Loom's AMDGPU
					// lowering: ds_bpermute; PTX: shfl.idx).
					if err := broadcastPerLane(fr, op, r, x, from, g0, g1, sg); err != nil {
						return err
					}
					continue
				}
				src := -1
				for l := g0; l < g1; l++ {
					if !fr.mask[l] {
						continue
					}
					if from == nil {
						src = l
						break
					}
					ln := fr.I[from.idx][0]
					if !from.uni {
						ln = fr.I[from.idx][l]
					}
					if ln < 0 || ln >= int64(sg) {
						return newTrap(op, l, ErrOutOfBounds, "broadcast from lane %d of a %d-lane subgroup", ln, sg)
					}
					src = g0 + int(ln)
					break
				}
				if src < 0 {
					continue
				}
				if src >= g1 || !fr.mask[src] {
					src = -1
				}
				for l := g0; l < g1; l++ {
					if !fr.mask[l] {
						continue
					}
					s := src
					if s < 0 {
						s = l
					}
					if r.kind == kFloat {
						fr.F[r.idx][l] = fr.F[x.idx][s]
					} else {
						fr.I[r.idx][l] = fr.I[x.idx][s]
					}
				}
			}
			return nil
		}, nil
	case "vote.any", "vote.all", "vote.ballot", "vote.count", "active.mask":
		var p *slot
		if what != "active.mask" {
			if len(ops) != 1 {
				return nil, compileErr(op.Pos, ErrInvalid, "%s takes one predicate", op.Name)
			}
			p = ops[0]
		}
		r, err := c.result(b, op, 0, wg && !c.k.batched)
		if err != nil {
			return nil, err
		}
		if !wg && what == "vote.count" {
			break
		}
		return func(fr *frame) error {
			if wg && fr.nact != fr.nalive {
				if err := fr.divergent(op, op.Name); err != nil {
					return err
				}
			}
			group := sg
			if wg {
				group = fr.grp
			}
			for g0, g1 := 0, 0; g0 < fr.L; g0 = g1 {
				gs := g0 / fr.grp * fr.grp
				g1 = min(g0+group, gs+fr.grp)
				if g0 == gs && fr.groupIdle(gs) {
					g1 = gs + fr.grp
					continue
				}
				anyv, allv, count, ballot := false, true, int64(0), int64(0)
				for l := g0; l < g1; l++ {
					if !fr.mask[l] {
						continue
					}
					on := true
					if p != nil {
						on = fr.I[p.idx][laneIdx(p, l)]&1 != 0
					}
					if on {
						anyv = true
						count++
						ballot |= 1 << uint(l-g0)
					} else {
						allv = false
					}
				}
				var v int64
				switch what {
				case "vote.any":
					v = b2i(anyv)
				case "vote.all":
					v = b2i(allv)
				case "vote.count":
					v = count
				default:
					v = ballot
				}
				if r.uni {
					fr.I[r.idx][0] = v
					continue
				}
				for l := g0; l < g1; l++ {
					fr.I[r.idx][l] = v
				}
			}
			return nil
		}, nil
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
}

func laneIdx(s *slot, l int) int {
	if s.uni {
		return 0
	}
	return l
}

// combineRange reduces or scans x over the active lanes in [g0, g1).
func combineRange(fr *frame, cb combiner, x, r *slot, g0, g1 int, scan, excl, rev bool) {
	step, start, end := 1, g0, g1
	if rev {
		step, start, end = -1, g1-1, g0-1
	}
	accI, accF := cb.idI, cb.idF
	for l := start; l != end; l += step {
		if !fr.mask[l] {
			continue
		}
		xi := laneIdx(x, l)
		if cb.isFloat {
			prev := accF
			accF = cb.ff(accF, fr.F[x.idx][xi])
			if scan {
				if excl {
					fr.F[r.idx][l] = prev
				} else {
					fr.F[r.idx][l] = accF
				}
			}
		} else {
			prev := accI
			accI = cb.fi(accI, fr.I[x.idx][xi])
			if scan {
				if excl {
					fr.I[r.idx][l] = prev
				} else {
					fr.I[r.idx][l] = accI
				}
			}
		}
	}
	if scan {
		return
	}
	if r.uni {
		if cb.isFloat {
			fr.F[r.idx][0] = accF
		} else {
			fr.I[r.idx][0] = accI
		}
		return
	}
	for l := g0; l < g1; l++ {
		if cb.isFloat {
			fr.F[r.idx][l] = accF
		} else {
			fr.I[r.idx][l] = accI
		}
	}
}

// clusterReduce reduces within clusters of size lanes spaced stride apart:
// each cluster once, over its active lanes in lane order, its result given
// to every active lane of it (r is a register of its own: SSA slots are
// never shared).
func clusterReduce(fr *frame, cb combiner, x, r *slot, g0, g1, size, stride int) {
	span := size * stride
	for b := g0; b < g1; b += span {
		for res := range stride {
			accI, accF := cb.idI, cb.idF
			for m := b + res; m < min(b+span, g1); m += stride {
				if !fr.mask[m] {
					continue
				}
				switch {
				case cb.addF32:
					accF = float64(float32(accF + fr.F[x.idx][laneIdx(x, m)])) // cb.ff without a call
				case cb.isFloat:
					accF = cb.ff(accF, fr.F[x.idx][laneIdx(x, m)])
				default:
					accI = cb.fi(accI, fr.I[x.idx][laneIdx(x, m)])
				}
			}
			for m := b + res; m < min(b+span, g1); m += stride {
				if !fr.mask[m] {
					continue
				}
				if cb.isFloat {
					fr.F[r.idx][m] = accF
				} else {
					fr.I[r.idx][m] = accI
				}
			}
		}
	}
}

// clusterScan scans each cluster of a subgroup [g0, g1) — size lanes
// stride apart, as clusterReduce groups them — in lane order (reverse:
// from the last), over the active lanes that exist.
func clusterScan(fr *frame, cb combiner, x, r *slot, g0, g1, size, stride int, excl, rev bool) {
	span := size * stride
	for b := g0; b < g1; b += span {
		for res := 0; res < stride; res++ {
			accI, accF := cb.idI, cb.idF
			for j := range size {
				if rev {
					j = size - 1 - j
				}
				l := b + res + j*stride
				if l >= g1 || !fr.mask[l] {
					continue
				}
				xi := laneIdx(x, l)
				if cb.isFloat {
					prev := accF
					accF = cb.ff(accF, fr.F[x.idx][xi])
					fr.F[r.idx][l] = accF
					if excl {
						fr.F[r.idx][l] = prev
					}
				} else {
					prev := accI
					accI = cb.fi(accI, fr.I[x.idx][xi])
					fr.I[r.idx][l] = accI
					if excl {
						fr.I[r.idx][l] = prev
					}
				}
			}
		}
	}
}

// broadcastPerLane is kernel.subgroup.broadcast over the subgroup of lanes
// [g0, g1) with a source lane that varies: lane l takes x from lane
// from[l] of the subgroup, or its own x where that lane is inactive or
// past the workgroup's end. Sources are read before any result is written
// (r may be x's register).
func broadcastPerLane(fr *frame, op *loom.Op, r, x, from *slot, g0, g1, sg int) error {
	src := make([]int, g1-g0)
	for l := g0; l < g1; l++ {
		if !fr.mask[l] {
			continue
		}
		ln := fr.I[from.idx][l]
		if ln < 0 || ln >= int64(sg) {
			return newTrap(op, l, ErrOutOfBounds, "broadcast from lane %d of a %d-lane subgroup", ln, sg)
		}
		s := g0 + int(ln)
		if s >= g1 || !fr.mask[s] {
			s = l
		}
		src[l-g0] = s
	}
	if r.kind == kFloat {
		gatherLanes(fr.F[r.idx], fr.F[x.idx], src, fr.mask, g0)
	} else {
		gatherLanes(fr.I[r.idx], fr.I[x.idx], src, fr.mask, g0)
	}
	return nil
}

// gatherLanes sets dst[l] = from[src[l-g0]] for the active lanes l of
// [g0, g0+len(src)), reading every source before writing any result (dst
// may be from).
func gatherLanes[T any](dst, from []T, src []int, mask []bool, g0 int) {
	vals := make([]T, len(src))
	for i, s := range src {
		vals[i] = from[s]
	}
	for i, v := range vals {
		if mask[g0+i] {
			dst[g0+i] = v
		}
	}
}
