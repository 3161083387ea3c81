package interp

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/loomgen/loomgen/loom"
)

// Lane-affine values. Work-item ids along x of a one-dimensional workgroup,
// and those plus a uniform value, hold base+l on lane l. Their producers
// record that fact at run time in the frame's meta (for the registers the
// compiler marked as candidates, which only their producer writes, SSA
// being single-assignment), so consumers can replace per-lane work with
// range work: a load or store at an affine index is one contiguous block
// with one bounds check, and a comparison of an affine index with a
// uniform bound is a lane range, which scf.if turns into a mask without
// looking at lanes.

// regMeta is what a producer knows about an int register's lanes.
type regMeta struct {
	// aff: over the lanes [alo, ahi) (those active when it was computed,
	// or more), element l is a0+l (computed in int64: inactive lanes may
	// lie outside the index carrier, they are never read as active).
	aff      bool
	alo, ahi int
	a0       int64
	// rng: over the lanes [dlo, dhi) active when it was computed, the
	// value is 1 exactly on [rlo, rhi) and 0 elsewhere.
	rng                bool
	dlo, dhi, rlo, rhi int
	// lazy: the register was not written; its lanes follow from rng. Only
	// set where every use of the value reads the range (scf.if), which
	// materializes it when it cannot.
	lazy bool
	// unwritten: an affine register whose lanes [alo, ahi) were not
	// written (slot.lazyAff); writeAffine writes them. Consumers of a
	// lazyAff register call it before reading lanes.
	unwritten bool
	// per (batched frames, batchwg.go): in every workgroup of the batch,
	// the lanes [pa, pb) of the group hold a0 plus the lane's index
	// within its group, and are written. aff is then false, so consumers
	// that do not know periodic facts read the lanes.
	per    bool
	pa, pb int
	// grpc (batched frames): the register is the workgroup id along axis
	// gax, constant on each group's lanes and left unwritten; every use
	// writes the lanes it is about to read (writeAffine).
	grpc bool
	gax  int8
}

// writeAffine writes the lanes of an affine register left unwritten.
func (fr *frame) writeAffine(s *slot) {
	m := &fr.meta[s.idx]
	if !m.unwritten {
		return
	}
	if m.per || m.grpc {
		fr.writeBatched(s, m)
		return
	}
	R := fr.I[s.idx][m.alo:m.ahi]
	for i := range R {
		R[i] = m.a0 + int64(m.alo+i)
	}
	m.unwritten = false
}

// affine reports whether varying register s holds a0+lane on every lane of
// the current active bound, and returns a0.
func (fr *frame) affine(s *slot) (int64, bool) {
	if !s.aff {
		return 0, false
	}
	m := &fr.meta[s.idx]
	if !m.aff || fr.lo < m.alo || fr.hi > m.ahi {
		return 0, false
	}
	return m.a0, true
}

// affineAdd emits r = a + b for index values where one operand is varying
// and may be affine and the other is uniform; a varying operand that is not
// affine at run time takes the general path.
func affineAdd(op *loom.Op, r, a, b *slot, general instr, tg target) instr {
	v, u := a, b
	if a.uni {
		v, u = b, a
	}
	return affineOffset(op, r, v, u, nil, general, tg)
}

// affineMadd emits r = a*b + c for uniform index values a and b and a
// varying, possibly affine c (the base + workgroup*size + tid shape). Index
// values fit 32 bits, so a*b+c is exact in int64 and only the result is
// checked against the carrier, as on the general path.
func affineMadd(op *loom.Op, r, a, b, c *slot, general instr, tg target) instr {
	return affineOffset(op, r, c, a, b, general, tg)
}

// affineOffset emits r = v + ua*ub (r = v + ua when ub is nil) for a
// varying, possibly affine v and uniform ua, ub; a v that is not affine at
// run time takes the general path. The amount is read in place rather than
// through a function value: it runs every loop step.
func affineOffset(op *loom.Op, r, v, ua, ub *slot, general instr, tg target) instr {
	r.aff = true
	lim := tg.indexMax
	bits := tg.indexBits
	vi, ui := v.idx, ua.idx
	return func(fr *frame) error {
		// fr.affine(v), written out: this runs at every loop step.
		lo, hi := fr.lo, fr.hi
		mv := &fr.meta[vi]
		if mv.per && v.aff {
			if ok, err := periodicOffset(fr, r, mv, ua, ub, tg); ok {
				return err
			}
		}
		fr.meta[r.idx].per, fr.meta[r.idx].grpc = false, false
		if !v.aff || !mv.aff || lo < mv.alo || hi > mv.ahi {
			fr.meta[r.idx].aff, fr.meta[r.idx].unwritten = false, false
			fr.writeAffine(v)
			return general(fr)
		}
		u := fr.I[ui][0]
		if ub != nil {
			u *= fr.I[ub.idx][0]
		}
		base := mv.a0 + u
		if r.lazyAff && lo < hi && base+int64(lo) >= tg.indexMin && base+int64(hi-1) <= lim {
			// Every value fits; the one consumer reads the meta.
			m := &fr.meta[r.idx]
			m.aff, m.alo, m.ahi, m.a0, m.unwritten = true, lo, hi, base, true
			return nil
		}
		fr.meta[r.idx].unwritten = false
		R := fr.I[r.idx][lo:hi]
		for i := range R {
			R[i] = base + int64(lo+i)
		}
		m := &fr.meta[r.idx]
		m.aff, m.alo, m.ahi, m.a0 = true, lo, hi, base
		// Values rise with the lane: only the ends of the active bound can
		// leave the carrier, and only an active lane's value is an error.
		if lo < hi && (R[0] < tg.indexMin || R[len(R)-1] > lim) {
			for l := lo; l < hi; l++ {
				if x := R[l-lo]; fr.mask[l] && (x < tg.indexMin || x > lim) {
					return newTrap(op, l, ErrOverflow, "index value %d does not fit the %d-bit carrier", x, bits)
				}
			}
		}
		return nil
	}
}

// affineCmp emits r = a pred b for a varying, possibly affine index a and
// a uniform b (the i < n and tid < stride shapes), recording the lane
// range where it holds; otherwise it runs the general comparison.
//
// With lazy set (every use of the result is an scf.if condition), the
// register itself is left unwritten while the range applies.
func affineCmp(pred string, r, a, b *slot, general instr, lazy bool) instr {
	if pred != "ult" && pred != "slt" && pred != "eq" {
		return nil
	}
	r.aff = true // candidate for range meta
	// Decided here, not by string compares on every tree step.
	ult, eq := pred == "ult", pred == "eq"
	return func(fr *frame) error {
		m := &fr.meta[r.idx]
		lo, hi := fr.lo, fr.hi
		a0, ok := fr.affine(a)
		y := fr.I[b.idx][0]
		if !ok || lo >= hi || a0+int64(lo) < 0 || (ult && y < 0) {
			// Unsigned order of negative values: no range shortcut.
			m.rng, m.lazy = false, false
			fr.writeAffine(a)
			return general(fr)
		}
		// a0+l < y  ⇔  l < y-a0, values nonnegative and rising;
		// a0+l == y  ⇔  l == y-a0.
		d := y - a0
		rlo, rhi := int64(lo), int64(lo)
		if eq {
			if d >= int64(lo) && d < int64(hi) {
				rlo, rhi = d, d+1
			}
		} else if d > rhi {
			rhi = min(d, int64(hi))
		}
		// Field by field: a whole-struct store is a block copy here.
		m.aff, m.unwritten = false, false
		m.rng, m.dlo, m.dhi, m.rlo, m.rhi, m.lazy = true, lo, hi, int(rlo), int(rhi), lazy
		if !lazy {
			materialize(fr.I[r.idx], m, lo, hi)
		}
		return nil
	}
}

// materialize writes a range register's lanes [lo, hi).
func materialize(R []int64, m *regMeta, lo, hi int) {
	R = R[lo:hi]
	clear(R)
	a, b := max(m.rlo, lo)-lo, min(m.rhi, hi)-lo
	for i := a; i < b; i++ {
		R[i] = 1
	}
}

// rangeMask is scf.if's shortcut: when cond is a recorded lane range valid
// for the current (dense, all-alive) mask, the lanes taking the then
// branch are the interval [a, b).
func (fr *frame) rangeMask(cond *slot) (a, b int, ok bool) {
	if !cond.aff || cond.uni || fr.nalive != fr.L || !fr.dense() {
		return 0, 0, false
	}
	m := &fr.meta[cond.idx]
	if !m.rng || fr.lo < m.dlo || fr.hi > m.dhi {
		return 0, 0, false
	}
	// An empty range is [b, b); min/max keep this under the inlining
	// budget (scf.if calls it once per tree step).
	b = min(fr.hi, m.rhi)
	return min(max(fr.lo, m.rlo), b), b, true
}

// maskIv records that a scratch mask is exactly the lanes [a, b).
type maskIv struct {
	a, b int
	ok   bool
	// per: the mask is [a, b) of every workgroup of a batch (setPeriodic).
	per bool
}

// setRange makes scratch mask d the lanes [a, b), writing only what
// differs from the interval it is known to hold (a tree reduction narrows
// the same mask step by step).
func (fr *frame) setRange(d, a, b int) {
	m, iv := fr.masks[d], &fr.miv[d]
	if !iv.ok || iv.per || iv.b <= a || b <= iv.a {
		// fr.all is every lane set: copies are memmoves, not lane loops.
		clear(m[:a])
		copy(m[a:b], fr.all)
		clear(m[b:])
	} else {
		if iv.a < a {
			clear(m[iv.a:a])
		}
		if a < iv.a {
			copy(m[a:iv.a], fr.all)
		}
		if b < iv.b {
			clear(m[b:iv.b])
		}
		if iv.b < b {
			copy(m[iv.b:b], fr.all)
		}
	}
	*iv = maskIv{a: a, b: b, ok: true}
	fr.mask, fr.nact, fr.lo, fr.hi = m, b-a, a, b
}

// forgetMasks drops what is known about the scratch masks (a lane left
// the kernel: some mask was cleared in place).
func (fr *frame) forgetMasks() {
	for i := range fr.miv {
		fr.miv[i].ok = false
	}
}

// contiguous returns the byte block of an f32 access whose lane index is
// affine, for the dense active bound, after checking the whole block against
// the view's extent and the bound bytes at once; ok is false when the
// shortcut does not apply (the per-lane path then runs and reports any
// violation).
func contiguous(fr *frame, v *view, ix *slot) (blk []byte, ok bool) {
	if !fr.dense() || v.strides[0] != 1 {
		return nil, false
	}
	a0, ok := fr.affine(ix)
	lo, hi := fr.lo, fr.hi
	if !ok || lo >= hi {
		return nil, false
	}
	first, last := a0+int64(lo), a0+int64(hi-1)
	if first < 0 || last >= v.dims[0] {
		return nil, false
	}
	off := v.base + first*4
	end := off + int64(hi-lo)*4
	if off < 0 || end > v.lim || end > int64(len(v.mem)) {
		return nil, false
	}
	return v.mem[off:end], true
}

// nativeLE is true on little-endian hosts, where an aligned block of
// little-endian f32 bytes can be read as []float32 directly.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// asF32 views blk as float32 values when the host allows it (little-endian,
// 4-byte aligned); the bytes stay inside the checked block either way.
func asF32(blk []byte) ([]float32, bool) {
	if !nativeLE || len(blk) < 4 || uintptr(unsafe.Pointer(unsafe.SliceData(blk)))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(blk))), len(blk)/4), true
}

// decodeF32 widens a block of little-endian f32 values.
func decodeF32(out []float64, blk []byte) {
	blk = blk[:4*len(out)]
	if src, ok := asF32(blk); ok {
		src = src[:len(out)]
		if hasFMA && len(out) >= 4 {
			n := len(out) &^ 3
			widenF32AVX(out[:n], src[:n])
			out, src = out[n:], src[n:]
		}
		for l, x := range src {
			out[l] = float64(x)
		}
		return
	}
	for l := range out {
		out[l] = float64(math.Float32frombits(le.Uint32(blk[4*l:])))
	}
}

// encodeF32 narrows values into a block of little-endian f32.
func encodeF32(blk []byte, in []float64) {
	blk = blk[:4*len(in)]
	if dst, ok := asF32(blk); ok {
		dst = dst[:len(in)]
		if hasFMA && len(in) >= 4 {
			n := len(in) &^ 3
			narrowF64AVX(dst[:n], in[:n])
			dst, in = dst[n:], in[n:]
		}
		for l, x := range in {
			dst[l] = float32(x)
		}
		return
	}
	for l, x := range in {
		le.PutUint32(blk[4*l:], math.Float32bits(float32(x)))
	}
}

// condOnly returns the SSA names, among every op of mods, whose every use
// is as the condition of an scf.if. Names are not unique across functions,
// so a use anywhere disqualifies a name everywhere; that is conservative.
func condOnly(mods []*loom.Module) map[string]bool {
	ifUse, other := map[string]bool{}, map[string]bool{}
	var typ func(t *loom.Type)
	typ = func(t *loom.Type) {
		if t == nil {
			return
		}
		for _, d := range t.Dims {
			if d.Value != nil {
				other[d.Value.Name] = true
			}
		}
		if t.LayoutValue != nil {
			other[t.LayoutValue.Name] = true
		}
		typ(t.Elem)
	}
	preds := func(ps []*loom.Pred) {
		for _, p := range ps {
			for _, a := range p.Args {
				if a.Lit == nil {
					other[a.Name] = true
				}
			}
		}
	}
	var walk func(ops []*loom.Op)
	walk = func(ops []*loom.Op) {
		for _, op := range ops {
			for i, o := range op.Operands {
				if o.Lit != nil {
					continue
				}
				if op.Name == "scf.if" && i == 0 {
					ifUse[o.Name] = true
				} else {
					other[o.Name] = true
				}
			}
			// Names read by predicates and lookup rows count as other uses:
			// they are not operands but still read the value's lanes.
			preds(op.Preds)
			for _, c := range op.Cases {
				for _, v := range c.Values {
					if v.Lit == nil {
						other[v.Name] = true
					}
				}
			}
			for _, t := range op.Types {
				typ(t)
			}
			for _, t := range op.ResultTypes {
				typ(t)
			}
			for _, r := range op.Regions {
				walk(r.Ops)
			}
		}
	}
	for _, m := range mods {
		if m == nil {
			continue
		}
		walk(m.Ops)
		for _, k := range m.Kernels {
			preds(k.WorkloadWhere)
			preds(k.LaunchWhere)
		}
	}
	out := map[string]bool{}
	for n := range ifUse {
		if !other[n] {
			out[n] = true
		}
	}
	return out
}
