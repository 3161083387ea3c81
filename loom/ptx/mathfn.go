package ptx

import (
	"fmt"
	"math"

	"github.com/loomgen/loomgen/loom"
)

// Transcendental functions on f32 (f16/bf16 arrive widened). Accuracy,
// measured against float64 references on the GPU test's inputs and bounded
// by the analysis in each comment:
//
//	exp2f      ex2.approx.f32: ≤ 2 ulp
//	expf       x·log2e = j + g (j clamped to the normal exponents, g from
//	           log2e split hi + lo), ex2.approx on g times 2^j built
//	           from bits: ≤ 3 ulp over the finite range
//	logf/log2f/log10f  lg2.approx.f32: absolute error ≤ 2^-22 near 1,
//	           ≤ 2 ulp relative elsewhere
//	rsqrtf     sqrt.rn then rcp.rn: ≤ 1 ulp (sqrtf and divf are exact: .rn)
//	tanhf      odd Taylor polynomial below |x| = 0.25, else
//	           1 − 2/(e^{2|x|}+1): relative error ≤ 1e-6
//	erff       Maclaurin series below |x| = 0.5, else Abramowitz–Stegun
//	           7.1.26: relative error ≤ 1e-6
//	           (both take the reciprocal as rcp.approx and a Newton step,
//	           recip; TestTanhErfSequences: 5.2e-7 and 6.5e-7 at worst with
//	           ex2 two steps and rcp.approx 64 steps off)
//	logisticf  1/(1+e^{−x}), siluf x·logistic(x): ≤ 4 ulp
//
// Anything else (sin, cos, pow, …) is refused as unsupported rather than
// lowered to an inaccurate approximation.

// f32 constants as PTX immediates.
func fimm(f float64) string { return fmt.Sprintf("0f%08X", math.Float32bits(float32(f))) }

// freg returns a fresh f32 register.
func (e *emitter) freg() string { return e.newReg(cF) }

// mathF32 lowers a transcendental on f32 operands; ok is false when the
// function has no lowering.
func (e *emitter) mathF32(op *loom.Op, name string, a []*val) (*val, bool, error) {
	if len(a) == 2 && name == "remf" {
		out := e.newVal(f32Type)
		e.ins("copysign.f32 %s, %s, %s", out.reg, a[0].reg, e.fmodAbs(a[0].reg, a[1].reg))
		return out, true, nil
	}
	if len(a) != 1 {
		return nil, false, nil
	}
	x := a[0].reg
	var r string
	switch name {
	case "exp2f":
		r = e.freg()
		e.ins("ex2.approx.f32 %s, %s", r, x)
	case "expf":
		r = e.expf(x)
	case "logf", "log2f", "log10f":
		l := e.freg()
		e.ins("lg2.approx.f32 %s, %s", l, x)
		r = l
		if name != "log2f" {
			k := math.Ln2
			if name == "log10f" {
				k = math.Log10(2)
			}
			r = e.freg()
			e.ins("mul.rn.f32 %s, %s, %s", r, l, fimm(k))
		}
	case "rsqrtf":
		// sqrt.rn then rcp.rn: two correct roundings, within 1 ulp of
		// 1/√x (rsqrt.approx is off by up to 2 ulp).
		q := e.freg()
		e.ins("sqrt.rn.f32 %s, %s", q, x)
		r = e.freg()
		e.ins("rcp.rn.f32 %s, %s", r, q)
	case "tanhf":
		r = e.tanhf(x)
	case "erff":
		r = e.erff(x)
	case "logisticf", "siluf":
		n := e.freg()
		e.ins("neg.f32 %s, %s", n, x)
		ex := e.expf(n)
		d := e.freg()
		e.ins("add.rn.f32 %s, %s, %s", d, ex, fimm(1))
		r = e.freg()
		if name == "logisticf" {
			e.ins("rcp.rn.f32 %s, %s", r, d)
		} else {
			e.ins("div.rn.f32 %s, %s, %s", r, x, d)
		}
	default:
		return nil, false, nil
	}
	return &val{t: f32Type, reg: r}, true, nil
}

// expf computes e^x; see the accuracy table above. Eight instructions,
// ex2 the only one on the quarter-rate unit (cvt.rni and cvt.rzi issue
// there too and made a softmax's sweeps issue-bound on the H200):
//
//	s  = sat((y + 126.5)/253)   y = x·log2e, one fma.sat
//	t  = 1.5·2^23 + 1 + ⌊253·s⌋  one fma.rm: t's low mantissa bits hold
//	                            j + 127, j = round(y) clamped to [−126, 127]
//	−j = (1.5·2^23 + 127) − t    exact
//	g  = x·log2e − j            two fmas, log2e split hi + lo
//	e^x = ex2(g) · 2^j          2^j built from t's bits
//
// The saturation is the clamp: past it g grows and ex2 of it overflows to
// inf or underflows toward 0 as e^x does, and 2^j stays a normal number.
// Within the clamp |g| ≤ ½ (a little more where 253·s rounds across a
// half), so g is within 2^-25 of x·log2e − j and ex2 needs no subnormal
// care: the .ftz form saves the scaling ptxas wraps the plain one in
// (a compare and two multiplies). Below the clamp an ex2 result flushes
// only when it is under 2^-126, where e^x is under 2^-252, far below the
// smallest subnormal. A NaN x stays NaN through g (sat turns it into 0,
// but g is x·log2e − j).
func (e *emitter) expf(x string) string {
	s, t, nj, g, p, sc, r := e.freg(), e.freg(), e.freg(), e.freg(), e.freg(), e.freg(), e.freg()
	bits := e.newReg(cR)
	e.ins("fma.rn.sat.f32 %s, %s, %s, %s", s, x, fimm(math.Log2E/253), fimm(126.5/253))
	e.ins("fma.rm.f32 %s, %s, %s, %s", t, s, fimm(253), fimm(expMagic-126))
	e.ins("sub.rn.f32 %s, %s, %s", nj, fimm(expMagic), t)
	e.ins("fma.rn.f32 %s, %s, %s, %s", g, x, fimm(log2eHi), nj)
	e.ins("fma.rn.f32 %s, %s, %s, %s", g, x, fimm(log2eLo), g)
	e.ins("ex2.approx.ftz.f32 %s, %s", p, g)
	// bits(t) = bits(1.5·2^23) + j + 127, and bits(1.5·2^23) is zero
	// below bit 22, so shifting by 23 leaves exactly (j+127)<<23.
	e.ins("mov.b32 %s, %s", bits, t)
	e.ins("shl.b32 %s, %s, 23", bits, bits)
	e.ins("mov.b32 %s, %s", sc, bits)
	e.ins("mul.rn.f32 %s, %s, %s", r, p, sc)
	return r
}

// expMagic is 1.5·2^23 + 127: an integer n in [0, 2^22) added to
// 1.5·2^23 stays exact and sits in the float's low mantissa bits, so
// (1.5·2^23 + 1 + n) − expMagic is n − 126 exactly.
const expMagic = 12583039.0

// log2eHi + log2eLo is log2e to about 48 bits: x·log2eHi is exact inside
// an fma, and x·log2eLo is below 2^-18 for every x whose e^x is finite
// and not zero.
var (
	log2eHi = float64(float32(math.Log2E))
	log2eLo = math.Log2E - log2eHi
)

// poly evaluates c[0] + z·(c[1] + z·(…)) by Horner's rule.
func (e *emitter) poly(z string, c []float64) string {
	acc := e.freg()
	e.ins("mov.f32 %s, %s", acc, fimm(c[len(c)-1]))
	for i := len(c) - 2; i >= 0; i-- {
		n := e.freg()
		e.ins("fma.rn.f32 %s, %s, %s, %s", n, acc, z, fimm(c[i]))
		acc = n
	}
	return acc
}

func (e *emitter) tanhf(x string) string {
	a, z, q, small := e.freg(), e.freg(), e.freg(), e.newReg(cPred)
	e.ins("abs.f32 %s, %s", a, x)
	e.ins("mul.rn.f32 %s, %s, %s", z, a, a)
	// tanh a = a·(1 − a²/3 + 2a⁴/15 − 17a⁶/315 + 62a⁸/2835 − …)
	p := e.poly(z, []float64{1, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835})
	e.ins("mul.rn.f32 %s, %s, %s", q, p, a)
	// tanh a = 1 − 2/(e^{2a}+1). Past 9.1 it rounds to 1, so a is capped
	// there (min.NaN keeps a NaN): e^{2a} + 1 stays finite and at least 1,
	// and its reciprocal needs no special case.
	ac, two := e.freg(), e.freg()
	e.ins("min.NaN.f32 %s, %s, %s", ac, a, fimm(9.1))
	e.ins("add.rn.f32 %s, %s, %s", two, ac, ac)
	ex := e.expf(two)
	d, big := e.freg(), e.freg()
	e.ins("add.rn.f32 %s, %s, %s", d, ex, fimm(1))
	r := e.recip(d)
	e.ins("fma.rn.f32 %s, %s, %s, %s", big, r, fimm(-2), fimm(1))
	e.ins("setp.lt.f32 %s, %s, %s", small, a, fimm(0.25))
	out := e.freg()
	e.ins("selp.f32 %s, %s, %s, %s", out, q, big, small)
	e.ins("copysign.f32 %s, %s, %s", out, x, out)
	return out
}

// recip is 1/d for a finite d ≥ 1 (no subnormal reciprocal, no infinity):
// rcp.approx, within an ulp, then one Newton step r + r·(1 − d·r) in two
// fmas, which leaves it within half an ulp and 2^-44 of 1/d. rcp.rn, an
// IEEE reciprocal, costs ptxas's checked sequence and a slow-path branch
// besides.
func (e *emitter) recip(d string) string {
	r, nd, h := e.freg(), e.freg(), e.freg()
	e.ins("rcp.approx.ftz.f32 %s, %s", r, d)
	e.ins("neg.f32 %s, %s", nd, d)
	e.ins("fma.rn.f32 %s, %s, %s, %s", h, nd, r, fimm(1))
	e.ins("fma.rn.f32 %s, %s, %s, %s", r, r, h, r)
	return r
}

func (e *emitter) erff(x string) string {
	a, ac, z, small := e.freg(), e.freg(), e.freg(), e.newReg(cPred)
	e.ins("abs.f32 %s, %s", a, x)
	// Past 4, erf rounds to 1; capping a there (min.NaN keeps a NaN)
	// keeps t's reciprocal and e^(−a²) away from infinities and zeros.
	e.ins("min.NaN.f32 %s, %s, %s", ac, a, fimm(4))
	e.ins("mul.rn.f32 %s, %s, %s", z, ac, ac)
	// erf a = 2/√π · Σ (−1)^n a^(2n+1) / (n!(2n+1))
	s := e.poly(z, []float64{1, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360})
	q := e.freg()
	e.ins("mul.rn.f32 %s, %s, %s", q, s, ac)
	e.ins("mul.rn.f32 %s, %s, %s", q, q, fimm(2/math.Sqrt(math.Pi)))
	// erf a = 1 − t·P(t)·e^(−a²), t = 1/(1 + 0.3275911·a)
	d := e.freg()
	e.ins("fma.rn.f32 %s, %s, %s, %s", d, ac, fimm(0.3275911), fimm(1))
	t := e.recip(d)
	pt := e.poly(t, []float64{0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429})
	nz := e.freg()
	e.ins("neg.f32 %s, %s", nz, z)
	ex := e.expf(nz)
	big := e.freg()
	e.ins("mul.rn.f32 %s, %s, %s", big, pt, t)
	e.ins("mul.rn.f32 %s, %s, %s", big, big, ex)
	e.ins("sub.rn.f32 %s, %s, %s", big, fimm(1), big)
	e.ins("setp.lt.f32 %s, %s, %s", small, a, fimm(0.5))
	r := e.freg()
	e.ins("selp.f32 %s, %s, %s, %s", r, q, big, small)
	e.ins("copysign.f32 %s, %s, %s", r, x, r)
	return r
}

// fmodAbs is |fmod(x, y)| of two f32 registers (C's fmodf, which is exact),
// as an f32 register; the caller gives it x's sign. It works in f64, where
// every f32 (subnormals too) is normal: t = |y|·2^k with k the difference
// of the binary exponents puts t in |x|'s binade, then for t = |y|·2^k …
// |y| the remainder r (from |x|) drops t whenever r ≥ t — exact, as
// t ≤ r < 2t (Sterbenz). Up to 277 steps for the widest exponent gap. A
// zero or NaN y and an infinite or NaN x give NaN; |x| < |y| gives |x|.
func (e *emitter) fmodAbs(x, y string) string {
	r, t, ay := e.newReg(cFd), e.newReg(cFd), e.newReg(cFd)
	e.ins("cvt.f64.f32 %s, %s", r, x)
	e.ins("abs.f64 %s, %s", r, r)
	e.ins("cvt.f64.f32 %s, %s", ay, y)
	e.ins("abs.f64 %s, %s", ay, ay)
	out := e.freg()
	nan, loop, done, end := e.newLabel("fmod_nan"), e.newLabel("fmod_loop"), e.newLabel("fmod_done"), e.newLabel("fmod_end")
	ok, p := e.newReg(cPred), e.newReg(cPred)
	e.ins("setp.lt.f64 %s, %s, 0d7FF0000000000000", ok, r) // false for ∞ and NaN
	e.ins("setp.gt.and.f64 %s, %s, 0d0000000000000000, %s", ok, ay, ok)
	e.ins("@!%s bra %s", ok, nan)
	exp := func(f string) string {
		b, x := e.newReg(cRd), e.newReg(cR)
		e.ins("mov.b64 %s, %s", b, f)
		e.ins("shr.u64 %s, %s, 52", b, b)
		e.ins("cvt.u32.u64 %s, %s", x, b)
		return x
	}
	k := e.newReg(cR)
	e.ins("sub.s32 %s, %s, %s", k, exp(r), exp(ay))
	e.ins("setp.lt.s32 %s, %s, 0", p, k)
	e.ins("@%s bra %s", p, done)
	scale := e.newReg(cRd)
	e.ins("cvt.u64.u32 %s, %s", scale, k)
	e.ins("add.u64 %s, %s, 1023", scale, scale)
	e.ins("shl.b64 %s, %s, 52", scale, scale)
	e.ins("mov.b64 %s, %s", t, scale)
	e.ins("mul.rn.f64 %s, %s, %s", t, t, ay)
	e.label(loop)
	e.ins("setp.ge.f64 %s, %s, %s", p, r, t)
	e.ins("@%s sub.rn.f64 %s, %s, %s", p, r, r, t)
	e.ins("setp.eq.f64 %s, %s, %s", p, t, ay)
	e.ins("@%s bra %s", p, done)
	e.ins("mul.rn.f64 %s, %s, 0d3FE0000000000000", t, t)
	e.ins("bra %s", loop)
	e.label(done)
	e.ins("cvt.rn.f32.f64 %s, %s", out, r)
	e.ins("bra %s", end)
	e.label(nan)
	e.ins("mov.f32 %s, 0f7FFFFFFF", out)
	e.label(end)
	return out
}

// fmodF64 is C's fmod on f64 registers x, y, exactly, on the integer
// significands: |x| < |y| gives x; otherwise, with mx, my the significands
// (implicit bit set; a subnormal's exponent taken as 1) and d the exponent
// difference, r = mx mod my, then r = (r·2^s) mod my for s = min(d, 11)
// while d lasts (r < 2^53, so r·2^11 fits 64 bits: at most 187 rem.u64
// steps for the widest gap), and the result is r·2^(ey−1075) (exact: a
// multiple of y's ulp below |y|) with x's sign. A zero or NaN y and an
// infinite or NaN x give NaN.
func (e *emitter) fmodF64(x, y string) string {
	ax, ay := e.newReg(cRd), e.newReg(cRd)
	e.ins("mov.b64 %s, %s", ax, x)
	e.ins("and.b64 %s, %s, 0x7FFFFFFFFFFFFFFF", ax, ax)
	e.ins("mov.b64 %s, %s", ay, y)
	e.ins("and.b64 %s, %s, 0x7FFFFFFFFFFFFFFF", ay, ay)
	out := e.newReg(cFd)
	nan, small, loop, done, end := e.newLabel("fmod_nan"), e.newLabel("fmod_small"), e.newLabel("fmod_loop"), e.newLabel("fmod_done"), e.newLabel("fmod_end")
	p, q := e.newReg(cPred), e.newReg(cPred)
	// NaN unless x is finite and y is neither zero nor NaN.
	e.ins("setp.ge.u64 %s, %s, 0x7FF0000000000000", p, ax)
	e.ins("setp.eq.or.u64 %s, %s, 0, %s", p, ay, p)
	e.ins("setp.gt.or.u64 %s, %s, 0x7FF0000000000000, %s", p, ay, p)
	e.ins("@%s bra %s", p, nan)
	e.ins("setp.lt.u64 %s, %s, %s", p, ax, ay)
	e.ins("@%s bra %s", p, small)
	// significands and exponents
	sig := func(a string) (m, ex string) {
		m, ex = e.newReg(cRd), e.newReg(cR)
		t := e.newReg(cRd)
		e.ins("shr.u64 %s, %s, 52", t, a)
		e.ins("cvt.u32.u64 %s, %s", ex, t)
		e.ins("and.b64 %s, %s, 0x000FFFFFFFFFFFFF", m, a)
		e.ins("setp.eq.u32 %s, %s, 0", q, ex)
		e.ins("@!%s or.b64 %s, %s, 0x0010000000000000", q, m, m)
		e.ins("@%s mov.u32 %s, 1", q, ex)
		return m, ex
	}
	mx, ex := sig(ax)
	my, ey := sig(ay)
	d, sh := e.newReg(cR), e.newReg(cR)
	r := e.newReg(cRd)
	e.ins("sub.s32 %s, %s, %s", d, ex, ey)
	e.ins("rem.u64 %s, %s, %s", r, mx, my)
	e.label(loop)
	e.ins("setp.le.s32 %s, %s, 0", p, d)
	e.ins("@%s bra %s", p, done)
	e.ins("min.s32 %s, %s, 11", sh, d)
	e.ins("shl.b64 %s, %s, %s", r, r, sh)
	e.ins("rem.u64 %s, %s, %s", r, r, my)
	e.ins("sub.s32 %s, %s, %s", d, d, sh)
	e.ins("bra %s", loop)
	e.label(done)
	// r·2^(ey−1075): 2^(ey−1075) is normal for ey ≥ 53, else subnormal.
	scale, sb := e.newReg(cFd), e.newReg(cRd)
	t := e.newReg(cR)
	e.ins("setp.ge.u32 %s, %s, 53", p, ey)
	e.ins("sub.s32 %s, %s, 52", t, ey)
	e.ins("@!%s sub.s32 %s, %s, 1", p, t, ey)
	e.ins("cvt.u64.u32 %s, %s", sb, t)
	e.ins("@%s shl.b64 %s, %s, 52", p, sb, sb)
	e.ins("@!%s mov.b64 %s, 1", p, sb)
	e.ins("@!%s shl.b64 %s, %s, %s", p, sb, sb, t)
	e.ins("mov.b64 %s, %s", scale, sb)
	rf := e.newReg(cFd)
	e.ins("cvt.rn.f64.u64 %s, %s", rf, r)
	e.ins("mul.rn.f64 %s, %s, %s", rf, rf, scale)
	e.ins("copysign.f64 %s, %s, %s", out, x, rf)
	e.ins("bra %s", end)
	e.label(small)
	e.ins("mov.f64 %s, %s", out, x)
	e.ins("bra %s", end)
	e.label(nan)
	e.ins("mov.f64 %s, 0d7FF8000000000000", out)
	e.label(end)
	return out
}
