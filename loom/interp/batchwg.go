package interp

import (
	"math"
	"unsafe"

	"github.com/loomgen/loomgen/loom"
)

// Workgroup memory in a batch. A batched frame runs K workgroups of grp
// lanes each; every buffer.alloca<workgroup> gives it K blocks, gstride
// bytes apart (the size rounded up to 64, so alignments within a block
// are those of the unbatched allocation), and one uniform view over them
// whose base, limit and shape are each group's own. Lane l's element is
// then in block l/grp: access.at checks the index against the group's
// block alone and adds the block's offset, so no group reads or writes
// another's bytes and every error message is the unbatched one.
//
// The compiler marks the accesses whose view may reach workgroup memory
// (access.wg): those never take a uniform shortcut (a uniform index names
// a different element in each group) nor a fast path that addresses the
// view's bytes itself, only the per-group forms here. A view whose origin
// the compiler does not track (a loop-carried or selected view) counts as
// workgroup memory whenever the kernel allocates any.

// wgOrigin records that view r reaches workgroup memory (batched form).
func (c *compiler) wgOrigin(r *slot) {
	if !c.k.batched {
		return
	}
	if c.wgv == nil {
		c.wgv = map[*slot]bool{}
	}
	c.wgv[r] = true
}

// mayWG reports whether, in a batched form, view v may reach workgroup
// memory.
func (c *compiler) mayWG(v *slot) bool {
	if !c.k.batched || v == nil || v.kind != kView {
		return false
	}
	if c.wgv[v] {
		return true
	}
	if _, known := c.roots[v]; known {
		return false
	}
	return c.allocatesWG()
}

// allocatesWG reports whether any op the compiler can see allocates
// workgroup memory (an access compiled before the alloca, in a loop,
// may still read a view of it).
func (c *compiler) allocatesWG() bool {
	if c.hasWG == 0 {
		c.hasWG = 1
		for op := range c.uses {
			if op.Name == "buffer.alloca" && loom.AllocaSpace(op) == "workgroup" || op.Name == "kernel.workgroup.storage" {
				c.hasWG = 2
				break
			}
		}
	}
	return c.hasWG == 2
}

// wgLoad is the fast form of an f32 load through workgroup memory in a
// batch at a varying index: one block per group over a periodic index,
// lane by lane over the active window otherwise. nil when the access has
// another shape (the caller then builds wgGeneric).
func wgLoad(c *compiler, a *access, r *slot) instr {
	if !wgAccess32(a) || r.uni {
		return nil
	}
	lanes := wgLanes(a, r, nil)
	c.metaUse(a.idx[0], a.op, 1)
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		if wa, wb, off, ok := wgSpan(fr, v, a.idx[0]); ok {
			out, n := fr.F[r.idx], int64(4*(wb-wa))
			for g0, o := 0, off; g0 < fr.L; g0, o = g0+fr.grp, o+v.gstride {
				decodeF32(out[g0+wa:g0+wb], v.mem[o:o+n])
			}
			return nil
		}
		return lanes(fr)
	}
}

// wgStore is wgLoad for stores.
func wgStore(c *compiler, a *access, x *slot) instr {
	if !wgAccess32(a) || x.comps != 1 {
		return nil
	}
	lanes := wgLanes(a, nil, x)
	c.metaUse(a.idx[0], a.op, 2)
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		if wa, wb, off, ok := wgSpan(fr, v, a.idx[0]); ok {
			in, n := fr.F[x.idx], int64(4*(wb-wa))
			if x.uni {
				// One value (clearing a tile): every group's block.
				bits := math.Float32bits(float32(in[0]))
				for g0, o := 0, off; g0 < fr.L; g0, o = g0+fr.grp, o+v.gstride {
					blk := v.mem[o : o+n]
					for i := 0; i < len(blk); i += 4 {
						le.PutUint32(blk[i:], bits)
					}
				}
				return nil
			}
			for g0, o := 0, off; g0 < fr.L; g0, o = g0+fr.grp, o+v.gstride {
				encodeF32(v.mem[o:o+n], in[g0+wa:g0+wb])
			}
			return nil
		}
		return lanes(fr)
	}
}

// wgGeneric is the per-lane form of a non-atomic load (into r) or store
// (of x) through memory that may be workgroup memory in a batch; it also
// records whether the batched form keeps its speed (Kernel.wgFast): only
// a uniform index (one element per group) does without a block form.
func wgGeneric(c *compiler, a *access, r, x *slot) instr {
	if !allUni(a.idx...) || !a.v.uni {
		c.wgSlow++
	}
	return wgLanes(a, r, x)
}

// wgLanes runs an access lane by lane (access.at adds each lane's group
// block), over every group's window when the mask is periodic, else over
// the active bound; lanes go in rising order either way, so the first
// error is the one the unbatched loop meets first.
func wgLanes(a *access, r, x *slot) instr {
	one := func(fr *frame, l int) error {
		v, off, err := a.at(fr, l, nil)
		if err != nil {
			return err
		}
		mem := v.mem[off:]
		src := l
		if x != nil && x.uni {
			src = 0
		}
		switch {
		case x != nil && a.cd.isFloat:
			a.cd.storeF(mem, fr.F[x.idx][src])
		case x != nil:
			a.cd.storeI(mem, fr.I[x.idx][src])
		case a.cd.isFloat:
			fr.F[r.idx][l] = a.cd.loadF(mem)
		default:
			fr.I[r.idx][l] = a.cd.loadI(mem)
		}
		return nil
	}
	return func(fr *frame) error {
		for _, ix := range a.idx {
			if !ix.uni {
				fr.writeAffine(ix)
			}
		}
		if wa, wb, ok := fr.window(); ok {
			for g0 := 0; g0 < fr.L; g0 += fr.grp {
				for l := g0 + wa; l < g0+wb; l++ {
					if err := one(fr, l); err != nil {
						return err
					}
				}
			}
			return nil
		}
		for l := fr.lo; l < fr.hi; l++ {
			if fr.mask[l] {
				if err := one(fr, l); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// Periodic lane facts. In a batch, the work-item id along x of a
// one-dimensional workgroup is the lane's index within its group: affine
// on each group's lanes, the same in every group. Its producer records
// that in the meta (regMeta.per: over the lanes [pa, pb) of every group,
// value = a0 + index in the group), an index plus a uniform keeps it, a
// fused guard comparing it with a uniform bound narrows every group to
// the same window (a periodic mask), and f32 accesses at such an index
// through workgroup memory are one block per group, checked once: the
// groups' blocks have the same shape. Anything else reads the lanes,
// which periodic producers always write.

// perWin is a periodic mask: the lanes [a, b) of every group, n in all,
// valid while the frame's mask is the one starting at ptr and counts n
// (a fused guard sets it and restores the previous one on leaving).
type perWin struct {
	ptr  *bool
	n    int
	a, b int
	ok   bool
}

// window returns the periodic window of the active mask: [a, b) of every
// workgroup of a batch; ok is false for an unbatched frame or a mask
// without that shape (as far as the frame knows).
func (fr *frame) window() (a, b int, ok bool) {
	if fr.grp >= fr.L {
		return 0, 0, false
	}
	if fr.nact == fr.L {
		return 0, fr.grp, true
	}
	if w := &fr.pw; w.ok && fr.nact == w.n && len(fr.mask) > 0 && &fr.mask[0] == w.ptr {
		return w.a, w.b, true
	}
	return 0, 0, false
}

// setPeriodic makes scratch mask d the lanes [a, b) of every group,
// writing only what differs from a periodic window it is known to hold.
func (fr *frame) setPeriodic(d, a, b int) {
	m, iv, grp := fr.masks[d], &fr.miv[d], fr.grp
	if !iv.ok || !iv.per || iv.b <= a || b <= iv.a {
		clear(m)
		for g0 := 0; g0 < fr.L; g0 += grp {
			copy(m[g0+a:g0+b], fr.all)
		}
	} else {
		for g0 := 0; g0 < fr.L; g0 += grp {
			if iv.a < a {
				clear(m[g0+iv.a : g0+a])
			}
			if a < iv.a {
				copy(m[g0+a:g0+iv.a], fr.all)
			}
			if b < iv.b {
				clear(m[g0+b : g0+iv.b])
			}
			if iv.b < b {
				copy(m[g0+iv.b:g0+b], fr.all)
			}
		}
	}
	*iv = maskIv{a: a, b: b, ok: true, per: true}
	n := fr.L / grp * (b - a)
	fr.mask, fr.nact, fr.lo, fr.hi = m, n, a, fr.L-grp+b
	fr.pw = perWin{ptr: &m[0], n: n, a: a, b: b, ok: true}
}

// periodicIf is the fused guard (rangeif.go) on a periodic index m
// compared with the uniform y, for a guard with only a then region in
// which no lane exits: every group's window narrows the same way. ok is
// false when the facts do not apply; the guard then runs unfused.
func periodicIf(fr *frame, m *regMeta, y int64, ult, eq bool, then []instr, depth int) (ok bool, err error) {
	wa, wb, win := fr.window()
	if !win || fr.nalive != fr.L || wa < m.pa || wb > m.pb || wa >= wb || m.a0+int64(wa) < 0 || (ult && y < 0) {
		return false, nil
	}
	ra, rb := cmpRange(eq, m.a0, y, wa, wb)
	if countFused {
		rangeIfRuns.Add(1)
	}
	if ra == rb || len(then) == 0 {
		return true, nil
	}
	cur, cn, lo, hi, pw := fr.mask, fr.nact, fr.lo, fr.hi, fr.pw
	if ra != wa || rb != wb {
		fr.setPeriodic(depth, ra, rb)
	}
	for _, in := range then {
		if err := in(fr); err != nil {
			if err == errAllExited {
				break
			}
			fr.mask, fr.pw = cur, pw
			fr.unbound()
			return true, err
		}
	}
	// No lane left inside (noExit): cur is unchanged.
	fr.mask, fr.nact, fr.lo, fr.hi, fr.pw = cur, cn, lo, hi, pw
	return true, nil
}

// periodicOffset is affineOffset (r = v + ua*ub) for a periodic v over the
// active window: the lanes of every group's window, with the fact kept.
// ok is false when it does not apply (or a value leaves the carrier: the
// general path then reports it).
func periodicOffset(fr *frame, r *slot, mv *regMeta, ua, ub *slot, tg target) (ok bool, err error) {
	wa, wb, win := fr.window()
	if !win || wa < mv.pa || wb > mv.pb || wa >= wb {
		return false, nil
	}
	u := fr.I[ua.idx][0]
	if ub != nil {
		u *= fr.I[ub.idx][0]
	}
	base := mv.a0 + u
	if base+int64(wa) < tg.indexMin || base+int64(wb-1) > tg.indexMax {
		return false, nil
	}
	m := &fr.meta[r.idx]
	m.aff, m.unwritten, m.rng, m.grpc = false, r.lazyAff, false, false
	m.per, m.pa, m.pb, m.a0 = true, wa, wb, base
	if !r.lazyAff {
		writePeriodic(fr.I[r.idx], fr, m)
	}
	return true, nil
}

// writePeriodic writes the lanes a periodic fact describes.
func writePeriodic(out []int64, fr *frame, m *regMeta) {
	for g0 := 0; g0 < fr.L; g0 += fr.grp {
		seg := out[g0+m.pa : g0+m.pb]
		for i := range seg {
			seg[i] = m.a0 + int64(m.pa+i)
		}
	}
}

// writeBatched is writeAffine for the batched facts: a periodic register
// gets every lane of its fact written once; a group id, the lanes the
// consumer is about to read (the active window, or the active bound),
// each time, since the next consumer may run under another mask.
func (fr *frame) writeBatched(s *slot, m *regMeta) {
	out := fr.I[s.idx]
	if m.per {
		writePeriodic(out, fr, m)
		m.unwritten = false
		return
	}
	l := &fr.r.launch
	wa, wb, ok := fr.window()
	if !ok {
		wa, wb = 0, fr.grp
	}
	for g0 := 0; g0 < fr.L; g0 += fr.grp {
		lo, hi := max(g0+wa, fr.lo), min(g0+wb, fr.hi)
		if lo >= hi {
			continue
		}
		g := fr.wgLin + g0/fr.grp
		v := int64(g) // a one-dimensional grid: the id along x is g
		if l.Workgroups[1]*l.Workgroups[2] != 1 || m.gax != 0 {
			v = int64(groupCoord(l, g, int(m.gax)))
		}
		seg := out[lo:hi]
		for i := range seg {
			seg[i] = v
		}
	}
}

// wgSpan checks an f32 access at periodic index ix through the rank-1
// view v for the active window: every group's block of wb-wa elements
// lies inside the group's view and bound bytes (one check serves all:
// the blocks have the same place in each group). off is group 0's byte
// offset; group g's is off + g*v.gstride.
func wgSpan(fr *frame, v *view, ix *slot) (wa, wb int, off int64, ok bool) {
	if !ix.aff || v.strides[0] != 1 {
		return 0, 0, 0, false
	}
	m := &fr.meta[ix.idx]
	wa, wb, ok = fr.window()
	if !ok || !m.per || wa < m.pa || wb > m.pb || wa >= wb {
		return 0, 0, 0, false
	}
	n := int64(wb - wa)
	first := m.a0 + int64(wa)
	if first < 0 || first+n > v.dims[0] {
		return 0, 0, 0, false
	}
	off = v.base + first*4
	end := off + 4*n
	K := int64(fr.L / fr.grp)
	if off < 0 || end > v.lim || (K-1)*v.gstride+end > int64(len(v.mem)) || v.gstride < 0 {
		return 0, 0, 0, false
	}
	return wa, wb, off, true
}

// wgAccess32 reports whether a is an f32 access through a uniform rank-1
// view at one varying index that may carry periodic facts.
func wgAccess32(a *access) bool {
	return a.v.uni && len(a.idx) == 1 && !a.idx[0].uni && a.cd.isFloat && a.cd.size == 4 && a.v.typ.Elem.Name == "f32"
}

// fusePeriodic is the fused load-load-op-store (fuse.go) of a batch whose
// views may be workgroup memory: with periodic indices over the active
// window it is one float32 block loop per group (the tree reduction's
// step), otherwise the compiled ops run one by one. The three views must
// have the same group stride, so the blocks of every group stand in the
// relation group 0's do, which is checked once.
func fusePeriodic(op byte, va, ia, vb, ib, vs, is *slot, code []instr) instr {
	return func(fr *frame) error {
		pa, pb, ps := &fr.V[va.idx][0], &fr.V[vb.idx][0], &fr.V[vs.idx][0]
		if pa.gstride == pb.gstride && pa.gstride == ps.gstride {
			wa, wb, oa, ok := wgSpan(fr, pa, ia)
			var ob, os int64
			if ok {
				_, _, ob, ok = wgSpan(fr, pb, ib)
			}
			if ok {
				_, _, os, ok = wgSpan(fr, ps, is)
			}
			n := int64(4 * (wb - wa))
			var fa, fb, fs []float32
			if ok {
				var oka, okb, oks bool
				fa, oka = asF32(pa.mem[oa : oa+n])
				fb, okb = asF32(pb.mem[ob : ob+n])
				fs, oks = asF32(ps.mem[os : os+n])
				ok = oka && okb && oks && inPlace32(fs, fa) && inPlace32(fs, fb) && pa.gstride%4 == 0
			}
			if ok {
				if countFused {
					fusedRuns.Add(1)
				}
				// Group g's blocks are group 0's moved by g*gstride bytes,
				// inside mem (wgSpan checked the last group's end).
				qa, qb, qs := unsafe.Pointer(&fa[0]), unsafe.Pointer(&fb[0]), unsafe.Pointer(&fs[0])
				k := len(fs)
				for g0, d := 0, uintptr(0); g0 < fr.L; g0, d = g0+fr.grp, d+uintptr(pa.gstride) {
					binBlock32(op, unsafe.Slice((*float32)(unsafe.Add(qs, d)), k), unsafe.Slice((*float32)(unsafe.Add(qa, d)), k), unsafe.Slice((*float32)(unsafe.Add(qb, d)), k))
				}
				return nil
			}
		}
		for _, in := range code {
			if err := in(fr); err != nil {
				return err
			}
		}
		return nil
	}
}

// guardPeriodic is the fused guarded copy (fuse.go) of a batch storing
// into memory that may be workgroup memory, at a periodic index, from a
// view that is not workgroup memory (so source and destination never
// share bytes): the guard's lane range over the batch gives each group's
// then lanes, copied in f32 from the contiguous source, and else lanes,
// filled. Otherwise the compiled ops run one by one.
func guardPeriodic(cond, vi, ii, vs, is, e *slot, code []instr) instr {
	return func(fr *frame) error {
		if fr.lo < fr.hi && fr.dense() {
			if a, bnd, ok := fr.rangeMask(cond); ok {
				vd := &fr.V[vs.idx][0]
				wa, wb, off, ok := wgSpan(fr, vd, is)
				var src []byte
				if ok && a < bnd {
					clo, chi, n := fr.lo, fr.hi, fr.nact
					fr.lo, fr.hi, fr.nact = a, bnd, bnd-a
					src, ok = contiguous(fr, &fr.V[vi.idx][0], ii)
					fr.lo, fr.hi, fr.nact = clo, chi, n
				}
				fs, oks := asF32(src)
				if ok && (oks || src == nil) && vd.gstride%4 == 0 {
					if countFused {
						fusedRuns.Add(1)
					}
					c := float32(fr.F[e.idx][0])
					n := int64(4 * (wb - wa))
					for g0, o := 0, off; g0 < fr.L; g0, o = g0+fr.grp, o+vd.gstride {
						fd, okd := asF32(vd.mem[o : o+n])
						if !okd {
							return guardLanes(fr, code)
						}
						// The lanes [g0+wa, g0+wb) of this group: then
						// lanes [ta, tb), else lanes around them.
						lo := g0 + wa
						ta, tb := min(max(a, lo), g0+wb), max(min(bnd, g0+wb), lo)
						if tb < ta {
							tb = ta
						}
						for i := range fd[:ta-lo] {
							fd[i] = c
						}
						if ta < tb {
							copy(fd[ta-lo:tb-lo], fs[ta-a:tb-a])
						}
						for i := range fd[tb-lo:] {
							fd[tb-lo+i] = c
						}
					}
					return nil
				}
			}
		}
		return guardLanes(fr, code)
	}
}

// guardLanes runs a fused guard's compiled ops one by one.
func guardLanes(fr *frame, code []instr) error {
	for _, in := range code {
		if err := in(fr); err != nil {
			return err
		}
	}
	return nil
}

// windowed wraps a lane-wise index or scalar op of a batched form with
// workgroup memory: under a narrow periodic mask it runs over each
// group's window, not the whole active bound (which spans every group).
// Only ops whose results are plain varying registers qualify: an op
// recording lane facts (slot.aff) keeps its one run.
func (c *compiler) windowed(b *block, op *loom.Op, in instr) instr {
	if in == nil || !c.k.batched || !c.allocatesWG() || len(op.Regions) != 0 || len(op.Results) == 0 {
		return in
	}
	for _, res := range op.Results {
		r := b.sc.lookup(res.Name)
		if r == nil || r.uni || r.aff || r.comps != 1 || r.kind == kView {
			return in
		}
	}
	return func(fr *frame) error {
		if fr.pw.ok {
			if wa, wb, ok := fr.window(); ok && 2*fr.nact < fr.hi-fr.lo {
				lo, hi := fr.lo, fr.hi
				for g0 := 0; g0 < fr.L; g0 += fr.grp {
					fr.lo, fr.hi = g0+wa, g0+wb
					if err := in(fr); err != nil {
						fr.lo, fr.hi = lo, hi
						return err
					}
				}
				fr.lo, fr.hi = lo, hi
				return nil
			}
		}
		return in(fr)
	}
}
