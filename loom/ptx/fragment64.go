package ptx

import (
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

// Wave-64 fragments (Loom's CDNA MFMA layouts, loom.FragmentWave): a tile
// spread over 64 consecutive invocations, two warps. Loads and stores
// address each lane's own elements; vector.mma stages lhs and rhs through
// the pair's slice of shared memory and computes every lane's four
// accumulator elements with fused multiply-adds in reduction order — in
// f64, rounded to the accumulator type after each step, as the CPU
// executor does, so the results agree bit for bit. No tensor-core shape
// takes this layout across two warps.

// fragWave is the invocations a subgroup fragment spans in this kernel.
func (e *emitter) fragWave() int {
	if e.wave == 0 {
		e.wave = loom.FragmentWave(e.prog.Modules, e.k)
	}
	return e.wave
}

// wave64Lane holds functions of the invocation's place in its 64-lane
// group: the group index, lane mod 16 and the lane group (lane / 16).
type wave64Lane struct{ group, lo, quarter string }

func (e *emitter) wave64Lane() wave64Lane {
	lin := e.linearTid()
	w := wave64Lane{e.newReg(cR), e.newReg(cR), e.newReg(cR)}
	e.ins("shr.u32 %s, %s, 6", w.group, lin.reg)
	e.ins("and.b32 %s, %s, 15", w.lo, lin.reg)
	e.ins("bfe.u32 %s, %s, 4, 2", w.quarter, lin.reg)
	return w
}

// wave64Coord returns registers with the (row, column) component i of
// this lane holds: lhs (lane mod 16, k), rhs and accumulators (k, lane mod
// 16), with k = (lane / 16)·payload + i.
func (e *emitter) wave64Coord(w wave64Lane, lay loom.FragmentLayout, i int) (row, col string) {
	k := e.newReg(cR)
	e.ins("mad.lo.s32 %s, %s, %d, %d", k, w.quarter, lay.Payload, i)
	if lay.Role == loom.FragmentLHS {
		return w.lo, k
	}
	return k, w.lo
}

// wave64Fragment loads or stores a wave-64 fragment: each lane its own
// elements.
func (e *emitter) wave64Fragment(op *loom.Op, store bool, v *val, vt *loom.Type, lay loom.FragmentLayout, base string, rowStride, colStride *val) error {
	size := int64(carrierBytes(v.elem))
	w := e.wave64Lane()
	return e.fragmentElements(op, store, v, vt, lay, func(i int) string {
		row, col := e.wave64Coord(w, lay, i)
		a := e.addrLike(base)
		e.offsetBy(a, base, row, rowStride, size)
		e.offsetBy(a, a, col, colStride, size)
		return a
	})
}

// wave64MMA lowers a wave-64 vector.mma of depth k (see above).
func (e *emitter) wave64MMA(op *loom.Op, args []*val, k int) error {
	ab, acc := op.Types[0].Elem, op.Types[2].Elem
	if !isFloat(ab) || ab.Name == "f64" || (acc.Name != "f32" && acc.Name != "f16") {
		return unsupported(op, "wave-64 (MFMA layout) mma of %s into %s (f16, bf16 or f32 into f32 or f16 are implemented)", ab, acc)
	}
	a, b, c := args[0], args[1], args[2]
	p := k / 4
	if a.frag != nil || b.frag != nil || c.frag != nil || len(a.vec) != p || len(b.vec) != p || len(c.vec) != 4 {
		return invalid(op.Pos, "vector.mma: wave-64 operands of %d, %d and %d components", len(a.vec), len(b.vec), len(c.vec))
	}
	n := e.wgTotal()
	if n <= 0 || n%64 != 0 || n > 960 {
		return unsupported(op, "wave-64 fragments need a static workgroup size that is a multiple of 64 and at most 960 (the mma synchronizes each 64 invocations on a named barrier of their own)")
	}
	// The pair's scratch: lhs [16, k] then rhs [k, 16], f32 row-major.
	bytes := int64(4 * 32 * k)
	scratch := e.needScratch(int(n/64) * int(bytes))
	w := e.wave64Lane()
	lhs := e.addrLike(scratch)
	e.addrMad(lhs, w.group, bytes, scratch, true)
	rhs := e.addrLike(lhs)
	if addr32(lhs) {
		e.ins("add.u32 %s, %s, %d", rhs, lhs, 64*k)
	} else {
		e.ins("add.u64 %s, %s, %d", rhs, lhs, 64*k)
	}
	put := func(at string, r, c string, cols int, x *val) {
		ad := e.addrLike(at)
		t := e.newReg(cR)
		e.ins("mad.lo.s32 %s, %s, %d, %s", t, r, cols, c)
		e.addrMad(ad, t, 4, at, true)
		e.storeFrom(f32Type, "shared", "", ad, e.toF32(x))
	}
	la, _ := loom.NewFragmentLayout(loom.FragmentLHS, 16, int64(k), int64(p), loom.FragmentWave64)
	lb, _ := loom.NewFragmentLayout(loom.FragmentRHS, int64(k), 16, int64(p), loom.FragmentWave64)
	for i := range p {
		r, col := e.wave64Coord(w, la, i)
		put(lhs, r, col, k, a.vec[i])
		r, col = e.wave64Coord(w, lb, i)
		put(rhs, r, col, 16, b.vec[i])
	}
	bar := e.newReg(cR)
	e.ins("add.u32 %s, %s, 1", bar, w.group)
	e.ins("bar.sync %s, 64", bar)
	lc, _ := loom.NewFragmentLayout(loom.FragmentResult, 16, 16, 4, loom.FragmentWave64)
	colAt := e.addrLike(rhs)
	e.addrMad(colAt, w.lo, 4, rhs, true)
	out := make([]*val, 4)
	for i := range out {
		row, _ := e.wave64Coord(w, lc, i)
		rowAt := e.addrLike(lhs)
		e.addrMad(rowAt, row, int64(4*k), lhs, true)
		s := e.newReg(cFd)
		e.ins("cvt.f64.f32 %s, %s", s, e.toF32(c.vec[i]).reg)
		for kk := range k {
			x, y := e.loadInto(f32Type, "shared", "", fmt.Sprintf("%s+%d", rowAt, 4*kk)), e.loadInto(f32Type, "shared", "", fmt.Sprintf("%s+%d", colAt, 64*kk))
			xd, yd := e.newReg(cFd), e.newReg(cFd)
			e.ins("cvt.f64.f32 %s, %s", xd, x.reg)
			e.ins("cvt.f64.f32 %s, %s", yd, y.reg)
			e.ins("fma.rn.f64 %s, %s, %s, %s", s, xd, yd, s)
			r := e.newVal(acc)
			e.ins("cvt.rn.%s.f64 %s, %s", acc.Name, r.reg, s)
			if kk == k-1 {
				out[i] = r
				break
			}
			e.ins("cvt.f64.%s %s, %s", acc.Name, s, r.reg)
		}
	}
	e.ins("bar.sync %s, 64", bar) // the scratch may be reused next
	rt := resultType(op, 0)
	shape, _, err := vectorShape(op, rt)
	if err != nil {
		return err
	}
	return e.define(op, 0, vecVal(rt, shape, out))
}
