package ptx

import (
	"math/bits"

	"github.com/loomgen/loomgen/loom"
)

// Integer division by a constant.
//
// ptxas (CUDA 13, sm_90) emits its generic division for div and rem even
// when the divisor is an immediate power of two, signed or not: a float
// reciprocal estimate and correction steps, about fifteen instructions
// (cuobjdump of the q4_K mat-vec, where index.div %cols, 256 in its loop
// cost more than the rest of the address arithmetic). nvcc's front end
// strength-reduces such divisions before ptxas sees them; so does this
// file: shifts and masks for powers of two, a high multiply by a magic
// number (Granlund and Montgomery) for other divisors of a dividend known
// to be below 2^31 or 2^32.

// divConst lowers out = x div|rem c for a constant c > 0 and reports
// whether it did; otherwise the caller emits the division instruction.
// rest is the op: index div/rem (Loom defines them only for a non-negative
// dividend), or the 32-bit scalar divui/remui/divsi/remsi.
func (e *emitter) divConst(rest string, out, x *val, c int64) bool {
	isRem := rest == "rem" || rest == "remui" || rest == "remsi"
	if rest == "div" || rest == "rem" {
		if x.known {
			v := x.ci / c
			if isRem {
				v = x.ci % c
			}
			*out = *e.constInt(out.t, v)
			return true
		}
		e.divUnsigned(isRem, out, x, c, 31)
		out.nonneg = true
		if !isRem && c&(c-1) == 0 {
			setExact(out, x, int64(bits.TrailingZeros64(uint64(c))))
		}
		return true
	}
	if x.known || out.t.Kind != loom.TypeInt || out.t.Bits != 32 || classOf(out.t) != cR {
		return false
	}
	switch {
	case rest == "divui" || rest == "remui":
		if !e.divUnsigned(isRem, out, x, c, 32) {
			return false
		}
		out.nonneg = true
	case x.nonneg:
		// A non-negative dividend divides alike signed and unsigned.
		e.divUnsigned(isRem, out, x, c, 31)
		out.nonneg = true
	case c&(c-1) == 0:
		e.divSignedPow2(isRem, out, x, c)
	default:
		return false
	}
	if isRem && out.nonneg {
		out.mag = max(bitLen(c-1), 1)
	}
	return true
}

// divUnsigned emits x div|rem c for 0 ≤ x < 2^n (n is 31 or 32) and
// 0 < c; it reports false, emitting nothing, when no 32-bit magic
// number serves.
func (e *emitter) divUnsigned(isRem bool, out, x *val, c int64, n uint) bool {
	switch {
	case c >= 1<<n: // the quotient is 0
		if isRem {
			e.ins("mov.b32 %s, %s", out.reg, x.reg)
		} else {
			e.ins("mov.b32 %s, 0", out.reg)
		}
		return true
	case c&(c-1) == 0:
		k := bits.TrailingZeros64(uint64(c))
		switch {
		case isRem:
			e.ins("and.b32 %s, %s, %d", out.reg, x.reg, c-1)
		case k == 0:
			e.ins("mov.b32 %s, %s", out.reg, x.reg)
		default:
			e.ins("shr.u32 %s, %s, %d", out.reg, x.reg, k)
		}
		return true
	}
	m, sh, ok := divMagic(uint64(c), n)
	if !ok {
		return false
	}
	q := out.reg
	if isRem {
		q = e.newReg(cR)
	}
	e.ins("mul.hi.u32 %s, %s, %d", q, x.reg, m)
	if sh > 0 {
		e.ins("shr.u32 %s, %s, %d", q, q, sh)
	}
	if isRem {
		e.ins("mad.lo.s32 %s, %s, %d, %s", out.reg, q, -c, x.reg)
	}
	return true
}

// divSignedPow2 emits x div|rem 2^k for a signed 32-bit x, truncating
// toward zero: a negative x is biased by 2^k − 1 before the arithmetic
// shift. A dividend known to be a multiple of 2^k needs no bias.
func (e *emitter) divSignedPow2(isRem bool, out, x *val, c int64) {
	k := bits.TrailingZeros64(uint64(c))
	switch {
	case k == 0 || pow2Of(x) >= c:
		switch {
		case isRem:
			e.ins("mov.b32 %s, 0", out.reg)
		case k == 0:
			e.ins("mov.b32 %s, %s", out.reg, x.reg)
		default:
			e.ins("shr.s32 %s, %s, %d", out.reg, x.reg, k)
		}
		return
	}
	t := e.newReg(cR)
	e.ins("shr.s32 %s, %s, 31", t, x.reg)
	e.ins("shr.u32 %s, %s, %d", t, t, 32-k)
	e.ins("add.s32 %s, %s, %s", t, x.reg, t)
	if isRem {
		e.ins("and.b32 %s, %s, %d", t, t, -c)
		e.ins("sub.s32 %s, %s, %s", out.reg, x.reg, t)
		return
	}
	e.ins("shr.s32 %s, %s, %d", out.reg, t, k)
}

// divMagic returns m < 2^32 and sh with ⌊x·m / 2^(32+sh)⌋ = ⌊x / d⌋ for
// every 0 ≤ x < 2^n, d ≥ 2 not a power of two: m = ⌈2^(32+sh) / d⌉ with
// error e = m·d − 2^(32+sh) < d, exact when e·2^n ≤ 2^(32+sh) (then
// x·e / (d·2^(32+sh)) < 1/d cannot carry ⌊x/d⌋ past the next integer).
// For n = 31 the shift ⌈log2 d⌉ − 1 always serves.
func divMagic(d uint64, n uint) (m uint64, sh uint, ok bool) {
	for sh = 0; sh < 32; sh++ {
		q, r := bits.Div64(0, uint64(1)<<(32+sh), d)
		if r != 0 {
			q++
		}
		if q >= 1<<32 {
			return 0, 0, false
		}
		e := q*d - (uint64(1) << (32 + sh))
		if e<<n <= uint64(1)<<(32+sh) {
			return q, sh, true
		}
	}
	return 0, 0, false
}
