package ptx

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Workgroup (shared) memory is addressed with 32-bit registers, as nvcc
// does: a shared-window address is below the per-block limit (228 KiB on
// sm_90), so every in-bounds byte offset fits in 32 bits, each address
// takes one register instead of two, and ptxas folds constant offsets of
// 32-bit sums into the access ([r+imm]), which it cannot do through the
// sign extension of mad.wide. Global and local addresses stay 64-bit. The
// register's class tells which an address is: the helpers below emit the
// arithmetic of the base's width.

// addr32 reports whether an address register (or register+immediate) is a
// 32-bit shared-window address.
func addr32(reg string) bool {
	return strings.HasPrefix(reg, classPrefix[cR]) && !strings.HasPrefix(reg, classPrefix[cRd])
}

// addrClass is the register class of addresses in a state space.
func addrClass(space string) class {
	if space == "shared" {
		return cR
	}
	return cRd
}

// addrLike returns a fresh register of base's width.
func (e *emitter) addrLike(base string) string {
	if addr32(base) {
		return e.newReg(cR)
	}
	return e.newReg(cRd)
}

// addrMad sets dst = base + n·scale for a 32-bit register n, signed
// (mad.wide.s32 for 64-bit bases) or unsigned.
func (e *emitter) addrMad(dst, n string, scale int64, base string, unsigned bool) {
	switch {
	case addr32(base) && scale == 1:
		e.ins("add.s32 %s, %s, %s", dst, n, base)
	case addr32(base):
		e.ins("mad.lo.s32 %s, %s, %d, %s", dst, n, scale, base)
	case unsigned:
		e.ins("mad.wide.u32 %s, %s, %d, %s", dst, n, scale, base)
	default:
		e.ins("mad.wide.s32 %s, %s, %d, %s", dst, n, scale, base)
	}
}

// addrMadReg sets dst = base + n·s·scale for 32-bit registers n and s,
// their product widened signed or unsigned for a 64-bit base.
func (e *emitter) addrMadReg(dst, n, s string, scale int64, base string, unsigned bool) {
	if addr32(base) {
		t := e.newReg(cR)
		e.ins("mul.lo.s32 %s, %s, %s", t, n, s)
		e.ins("mad.lo.s32 %s, %s, %d, %s", dst, t, scale, base)
		return
	}
	sign := "s32"
	if unsigned {
		sign = "u32"
	}
	t := e.newReg(cRd)
	e.ins("mul.wide.%s %s, %s, %s", sign, t, n, s)
	e.ins("mad.lo.s64 %s, %s, %d, %s", dst, t, scale, base)
}

// addrAddImm sets dst = base + imm.
func (e *emitter) addrAddImm(dst, base string, imm int64) {
	if addr32(base) {
		e.ins("add.s32 %s, %s, %d", dst, base, imm)
		return
	}
	e.ins("add.s64 %s, %s, %d", dst, base, imm)
}

// addrAddOffset sets dst = base + off for a 64-bit byte offset register.
func (e *emitter) addrAddOffset(dst, base, off string) {
	if addr32(base) {
		t := e.newReg(cR)
		e.ins("cvt.u32.u64 %s, %s", t, off)
		e.ins("add.s32 %s, %s, %s", dst, base, t)
		return
	}
	e.ins("add.s64 %s, %s, %s", dst, base, off)
}

// addrAddU32 sets dst = base + off for an unsigned 32-bit register off.
func (e *emitter) addrAddU32(dst, base, off string) {
	e.addrMad(dst, off, 1, base, true)
}

// addrMisaligned returns a predicate that holds when addr is not a
// multiple of g (a power of two).
func (e *emitter) addrMisaligned(addr string, g int64) string {
	t, p := e.addrLike(addr), e.newReg(cPred)
	e.ins("and.%s %s, %s, %d", addrBits(addr), t, addr, g-1)
	e.ins("setp.ne.%s %s, %s, 0", addrBits(addr), p, t)
	return p
}

// addrSymbol returns a fresh register holding the address of a variable
// of the state space.
func (e *emitter) addrSymbol(space, name string) string {
	r := e.newReg(addrClass(space))
	if addr32(r) {
		e.ins("mov.u32 %s, %s", r, name)
	} else {
		e.ins("mov.u64 %s, %s", r, name)
	}
	return r
}

// addrBits is the PTX bit-width suffix (b32/b64) of an address register.
func addrBits(reg string) string {
	if addr32(reg) {
		return "b32"
	}
	return "b64"
}

// Index values a constant apart, such as the rows %r, %r+16, %r+32 a
// cooperative tile copy or a fragment loop addresses, would each pay the
// full address arithmetic (a widening multiply by a run-time stride, a
// 64-bit add per axis), and ptxas cannot split the sum itself: it sees
// sext(r+16)·stride, not sext(r)·stride + 16·stride, since the 32-bit sum
// might wrap. Loom's views are bounds-checked at dispatch, so an access's
// index lies in [0, dim); a sum r+c with |c| ≤ maxAffineOff that is in
// range cannot have wrapped unless dim exceeds 2^31-maxAffineOff, which
// only wide indices reach (and they are left alone). So index.add and
// index.sub record the split (val.aff) and address sums the register
// parts first — identical across such accesses, computed once by ptxas —
// then each constant part: an immediate for a known stride (folded into
// the access as [reg+imm]), one mad by a run-time stride.

// affineIndex is an index known to equal base + off.
type affineIndex struct {
	base *val
	off  int64
}

// maxAffineOff bounds the constant part of an affineIndex.
const maxAffineOff = 1 << 20

// affineParts splits an index into its register part and constant part.
func affineParts(v *val) (*val, int64) {
	if v.aff != nil {
		return v.aff.base, v.aff.off
	}
	return v, 0
}

// affineSum records out = x ± y as a register part plus a constant where
// either operand has a constant part; for two register parts it emits
// their sum, which ptxas shares among the indices built on it.
func (e *emitter) affineSum(out, x, y *val, sub bool) {
	if out.t.Kind != loom.TypeIndex || classOf(out.t) != cR || out.wide || x.wide || y.wide {
		return
	}
	xb, xo := affineParts(x)
	yb, yo := affineParts(y)
	sign := int64(1)
	if sub {
		sign = -1
	}
	var base *val
	switch {
	case xb.known && yb.known:
		return // the sum is a constant plus nothing: known elsewhere
	case yb.known:
		base, xo = xb, xo+sign*(yo+yb.ci)
		yo = 0
	case xb.known && !sub:
		base, xo = yb, xo+xb.ci
	case xo == 0 && yo == 0 || xb.known:
		return
	default:
		base = e.newVal(indexType)
		mn := "add"
		if sub {
			mn = "sub"
		}
		e.ins("%s.s32 %s, %s, %s", mn, base.reg, xb.reg, yb.reg)
	}
	off := xo + sign*yo
	if off == 0 || off < -maxAffineOff || off > maxAffineOff {
		return
	}
	out.aff = &affineIndex{base: base, off: off}
}

// affineScale records out = x·y, where one operand is a constant k and the
// other has a constant part, as (register part)·k + (constant part)·k. The
// split holds modulo 2^32, which is all address needs: the access's index
// is in range, so its register part read signed is exact (see above).
// q6_K-style block loops index (block·8 + part·2 + lane)·9: every unrolled
// copy then shares lane·9 and differs by an immediate.
func (e *emitter) affineScale(out, x, y *val) {
	if out.t.Kind != loom.TypeIndex || classOf(out.t) != cR || out.wide || x.wide || y.wide {
		return
	}
	if x.known {
		x, y = y, x
	}
	if !y.known || x.known || x.aff == nil {
		return
	}
	k := y.ci
	b, off := affineParts(x)
	if k == 0 || off*k < -maxAffineOff || off*k > maxAffineOff || off > maxAffineOff || off < -maxAffineOff {
		return
	}
	base := b
	if k != 1 {
		base = e.newVal(indexType)
		e.ins("mul.lo.s32 %s, %s, %d", base.reg, b.reg, k)
		// what divides the part divides it times k (swizzled columns
		// read it, vector_mem.go)
		base.p2 = min(pow2Of(b)*(k&-k), 1<<30)
	}
	out.aff = &affineIndex{base: base, off: off * k}
}
