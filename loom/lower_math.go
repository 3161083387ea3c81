package loom

import (
	"math"
	"strings"
)

// Shared lowerings of float ops: clampf exactly by compares and selects
// (or minnum/maximum chains), powf and sinf/cosf on f32 lanes from exp2f,
// log2f, fmaf and rounding ops. f16 and bf16 lanes are computed in f32 and
// rounded once at the end; f64 is left to the backends. The accuracy of
// these sequences, measured against float64 (TestSharedMathAccuracy in
// loom/interp and the GPU corpus), is stated in docs/LOOM.md.

// lowerClampf rewrites clampf<mode> by its definition: ordered is
// x < lo ? lo : x, then > hi ? hi (NaN comparisons are false, so a NaN x
// passes through); number is minnum(maxnum(x, lo), hi); ieee is
// minimum(maximum(x, lo), hi), propagating NaNs.
func lowerClampf(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 3)
	if err != nil {
		return true, err
	}
	mode := ClampfMode(op.Param)
	v, lo, hi := x[0], x[1], x[2]
	switch mode {
	case "ordered":
		t := l.sel(l.cmp("cmpf", "olt", v, lo), lo, v)
		l.finish(l.sel(l.cmp("cmpf", "ogt", t, hi), hi, t))
	case "number":
		l.finish(l.bin("minnumf", l.bin("maxnumf", v, lo), hi))
	case "ieee":
		l.finish(l.bin("minimumf", l.bin("maximumf", v, lo), hi))
	default:
		return true, l.errorf("mode <%s> (ordered, number or ieee)", mode)
	}
	return true, nil
}

// ClampfMode is the mode word of clampf's <mode[, flags]> parameter:
// ordered, number or ieee as written, "ordered" when only flags (or
// nothing) are written.
func ClampfMode(param string) string {
	if w := paramWords(param); len(w) > 0 && !isFastMathFlag(w[0]) {
		return w[0]
	}
	return "ordered"
}

// fastMathFlags are the flag words Loom's float ops accept.
var fastMathFlags = map[string]bool{
	"reassoc": true, "nnan": true, "ninf": true, "nsz": true, "arcp": true,
	"contract": true, "afn": true, "fast": true, "none": true,
}

// isFastMathFlag reports whether w is a fast-math flag set like nnan|nsz.
func isFastMathFlag(w string) bool {
	for _, f := range strings.Split(w, "|") {
		if !fastMathFlags[strings.TrimSpace(f)] {
			return false
		}
	}
	return w != ""
}

// inF32 gives the f32 form of a float value: x itself for f32, extended
// for f16/bf16; ok is false for f64, which the shared pass leaves alone.
func (l *lowering) inF32(x *Value) (*Value, bool) {
	switch elemType(x.Type).Name {
	case "f32":
		return x, true
	case "f16", "bf16":
		return l.cast("extf", x, withElem(x.Type, lowerF32)), true
	}
	return nil, false
}

// outOf rounds an f32 result back to the op's type.
func (l *lowering) outOf(v *Value, t *Type) *Value {
	if elemType(t).Name == "f32" {
		return v
	}
	return l.cast("fptrunc", v, t)
}

// f32Bits is an f32 constant given by its bit pattern (NaN, ∞).
func (l *lowering) f32Bits(t *Type, bits uint32) *Value {
	return l.floatConst(t, float64(math.Float32frombits(bits)))
}

// lowerPowf rewrites powf(x, y) as exp2(y·log2|x|) with the special cases
// of C's pow: y = 0 or x = 1 give 1 (even for NaN), |x| = 1 with y = ±∞
// gives 1, x < 0 with a non-integer y gives NaN, and an odd integer y keeps
// the sign of x (including −0). Zeros and infinities of x and y fall out of
// the main formula (log2 0 = −∞, exp2 of ±∞ is ∞ or 0).
func lowerPowf(l *lowering, op *Op) (bool, error) {
	if len(op.Operands) != 2 {
		return true, l.errorf("takes 2 operands, has %d", len(op.Operands))
	}
	xs, err := l.operandValues(op, 2)
	if err != nil {
		return true, err
	}
	start := len(l.out)
	x, ok := l.inF32(xs[0])
	if !ok {
		l.out = l.out[:start]
		return false, nil
	}
	y, _ := l.inF32(xs[1])
	t := x.Type
	ax := l.un("absf", x)
	lh, ll := l.log2Pos(ax)
	// t = y·log2|x| as hi + lo (fmas recover the product's rounding error
	// and add y·ll), 2^t = 2^hi · (1 + lo·ln2).
	hi := l.bin("mulf", y, lh)
	lo := l.fma(y, ll, l.fma(y, lh, l.un("negf", hi)))
	r := l.un("exp2f", hi)
	r = l.fma(r, l.bin("mulf", lo, l.floatConst(t, math.Ln2)), r)
	// lo is NaN where hi is infinite; 2^hi alone is then the answer.
	big := l.cmp("cmpf", "oge", l.un("absf", hi), l.floatConst(t, 256))
	r = l.sel(big, l.un("exp2f", hi), r)
	one := l.floatConst(t, 1)
	zero := l.floatConst(t, 0)
	// Nested selects rather than i1 arithmetic keep to ops every backend
	// lowers alike.
	yint := l.cmp("cmpf", "oeq", l.un("floorf", y), y)
	half := l.bin("mulf", y, l.floatConst(t, 0.5))
	heven := l.cmp("cmpf", "oeq", l.un("floorf", half), half)
	r = l.sel(yint, l.sel(heven, r, l.bin("copysignf", r, x)), r)
	neg := l.cmp("cmpf", "olt", x, zero)
	r = l.sel(neg, l.sel(yint, r, l.f32Bits(t, 0x7fc00000)), r)
	yinf := l.cmp("cmpf", "oeq", l.un("absf", y), l.f32Bits(t, 0x7f800000))
	r = l.sel(yinf, l.sel(l.cmp("cmpf", "oeq", ax, one), one, r), r)
	r = l.sel(l.cmp("cmpf", "oeq", x, one), one, r)
	r = l.sel(l.cmp("cmpf", "oeq", y, zero), one, r)
	l.finish(l.outOf(r, op.Operands[0].Value.Type))
	return true, nil
}

// log2Coeffs are 2/((2k+1)·ln 2), k = 0…5: log2 m = Σ c_k·u^(2k+1) with
// u = (m−1)/(m+1), |u| ≤ 0.1716 for m in [√½, √2] (the u^13 term is below
// 2^-24 of the sum).
var log2Coeffs = func() []float64 {
	c := make([]float64, 6)
	for k := range c {
		c[k] = 2 / (float64(2*k+1) * math.Ln2)
	}
	return c
}()

// log2Pos is log2 of a non-negative f32, as hi + lo, without log2f's approximations
// (PTX's lg2.approx loses relative accuracy near 1, where pow needs it):
// x = 2^e·m with m in [√½, √2) read from the bits (subnormals scaled by
// 2^23 first), then e + the odd series of atanh in u = (m−1)/(m+1).
// 0 gives −∞, ∞ gives ∞, NaN stays NaN (in hi; lo is then meaningless).
func (l *lowering) log2Pos(x *Value) (hi, lo *Value) {
	t := x.Type
	it := withElem(t, typeOfBits(32))
	tiny := l.cmp("cmpf", "olt", x, l.f32Bits(t, 0x00800000))
	xs := l.sel(tiny, l.bin("mulf", x, l.floatConst(t, 1<<23)), x)
	eb := l.sel(tiny, l.floatConst(t, -23), l.floatConst(t, 0))
	bits := l.cast("bitcast", xs, it)
	// m's bits: the mantissa with the exponent of [1, 2), halved when
	// above √2 (0x3fb504f3) so that m lies in [√½, √2).
	mant := l.bin("andi", bits, l.intConst(it, 0x007fffff))
	mb := l.bin("ori", mant, l.intConst(it, 0x3f800000))
	high := l.cmp("cmpi", "sgt", mb, l.intConst(it, 0x3fb504f3))
	mb = l.sel(high, l.bin("subi", mb, l.intConst(it, 0x00800000)), mb)
	e := l.bin("subi", l.bin("shrui", bits, l.intConst(it, 23)), l.intConst(it, 127))
	ef := l.bin("addf", l.cast("sitofp", e, t), eb)
	ef = l.sel(high, l.bin("addf", ef, l.floatConst(t, 1)), ef)
	m := l.cast("bitcast", mb, t)
	one := l.floatConst(t, 1)
	u := l.bin("divf", l.bin("subf", m, one), l.bin("addf", m, one))
	u2 := l.bin("mulf", u, u)
	p := l.horner(u2, log2Coeffs)
	hi = l.fma(u, p, ef) // e + u·P(u²), rounded once
	// The rounding error of hi (e − hi is exact: Sterbenz, or hi alone
	// when e = 0).
	lo = l.fma(u, p, l.bin("subf", ef, hi))
	hi = l.sel(l.cmp("cmpf", "oeq", x, l.floatConst(t, 0)), l.f32Bits(t, 0xff800000), hi)
	hi = l.sel(l.cmp("cmpf", "oeq", x, l.f32Bits(t, 0x7f800000)), x, hi)
	hi = l.sel(l.cmp("cmpf", "uno", x, x), x, hi)
	return hi, lo
}

// Cody–Waite split of π/2 into three f32 parts (computed to 300 bits; the
// remainder of the split is 1.06e-23).
const (
	halfPi1 = 1.5707963705062866      // 0x3fc90fdb
	halfPi2 = -4.3711388286737929e-08 // 0xb33bbd2e
	halfPi3 = -1.7151245100058819e-15 // 0xa6f72ced
)

// Minimax polynomials on [−π/4, π/4] (Cephes sinf/cosf): sin r = r + r³·S(r²),
// cos r = 1 − r²/2 + r⁴·C(r²).
var (
	sinCoeffs = []float64{-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4}
	cosCoeffs = []float64{4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5}
)

// lowerSinCos rewrites sinf and cosf: k = roundeven(x·2/π), r = x − k·π/2
// by three fused steps, then the sine or cosine polynomial of r chosen and
// signed by k mod 4. NaN and ±∞ give NaN through r.
func lowerSinCos(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		k, r := l.reduceHalfPi(x)
		v, _ := l.quadrant(x, k, r, nil, strings.HasSuffix(op.Name, "sinf"))
		return v
	})
}

// reduceHalfPi is k = roundeven(x·2/π) and r = x − k·π/2 by three fused
// steps (Cody–Waite).
func (l *lowering) reduceHalfPi(x *Value) (k, r *Value) {
	t := x.Type
	k = l.un("roundevenf", l.bin("mulf", x, l.floatConst(t, 2/math.Pi)))
	r = l.fma(k, l.floatConst(t, -halfPi1), x)
	r = l.fma(k, l.floatConst(t, -halfPi2), r)
	r = l.fma(k, l.floatConst(t, -halfPi3), r)
	return k, r
}

// horner is Σ c[i]·z^i by fused steps from the highest coefficient.
func (l *lowering) horner(z *Value, c []float64) *Value {
	p := l.floatConst(z.Type, c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		p = l.fma(p, z, l.floatConst(z.Type, c[i]))
	}
	return p
}

// unaryF32 rewrites a lane-wise float op of one operand by f on its f32
// form (f16/bf16 extended, the result rounded back once); f64 is left to
// the backends.
func (l *lowering) unaryF32(op *Op, f func(x *Value) *Value) (bool, error) {
	return l.lanesF32(op, 1, func(x []*Value) *Value { return f(x[0]) })
}

// lanesF32 is unaryF32 for an op of n float operands of one type.
func (l *lowering) lanesF32(op *Op, n int, f func(x []*Value) *Value) (bool, error) {
	xs, err := l.operandValues(op, n)
	if err != nil {
		return true, err
	}
	// A result type other than the operands' is a malformed op: say so
	// here, not later in the ops it would be rewritten into.
	for _, r := range op.Results {
		if r.Type != nil && !sameType(r.Type, xs[0].Type) {
			return true, l.errorf("result type %s differs from the operand type %s", r.Type, xs[0].Type)
		}
	}
	start := len(l.out)
	in := make([]*Value, n)
	for i, x := range xs {
		v, ok := l.inF32(x)
		if !ok {
			l.out = l.out[:start]
			return false, nil
		}
		in[i] = v
	}
	l.finish(l.outOf(f(in), xs[0].Type))
	return true, nil
}

// quadrant is sin or cos of k·π/2 + r (+ rl, a correction below r's
// rounding, or nil) for |r| ≤ π/4: the sine or cosine polynomial of r,
// chosen and signed by k mod 4 (returned as q); sin keeps x's zero
// (sin(−0) is −0).
func (l *lowering) quadrant(x, k, r, rl *Value, sin bool) (v, q *Value) {
	t := x.Type
	z := l.bin("mulf", r, r)
	// sin r = r + r·z·S(z); cos r = 1 − z/2 + z²·C(z); with rl,
	// sin(r + rl) ≈ sin r + rl and cos(r + rl) ≈ cos r − r·rl.
	var s, c *Value
	if rl == nil {
		s = l.fma(l.bin("mulf", r, z), l.horner(z, sinCoeffs), r)
		c = l.fma(l.bin("mulf", z, z), l.horner(z, cosCoeffs), l.fma(z, l.floatConst(t, -0.5), l.floatConst(t, 1)))
	} else {
		s = l.bin("addf", r, l.fma(l.bin("mulf", r, z), l.horner(z, sinCoeffs), rl))
		c = l.fma(l.un("negf", r), rl, l.fma(z, l.floatConst(t, -0.5), l.floatConst(t, 1)))
		c = l.fma(l.bin("mulf", z, z), l.horner(z, cosCoeffs), c)
	}
	// q = k mod 4 in floats (exact: k is an integer below 2^26 wherever
	// the result means anything).
	q = l.bin("subf", k, l.bin("mulf", l.un("floorf", l.bin("mulf", k, l.floatConst(t, 0.25))), l.floatConst(t, 4)))
	h := l.bin("mulf", q, l.floatConst(t, 0.5))
	odd := l.cmp("cmpf", "une", l.un("floorf", h), h)
	var neg *Value
	if sin {
		// k = 0: sin r, 1: cos r, 2: −sin r, 3: −cos r.
		v = l.sel(odd, c, s)
		neg = l.cmp("cmpf", "oge", q, l.floatConst(t, 2))
	} else {
		// k = 0: cos r, 1: −sin r, 2: −cos r, 3: sin r.
		v = l.sel(odd, s, c)
		neg = l.cmp("cmpf", "oeq", l.un("absf", l.bin("subf", q, l.floatConst(t, 1.5))), l.floatConst(t, 0.5))
	}
	v = l.sel(neg, l.un("negf", v), v)
	if sin {
		// sin(−0) is −0; the reduction would give +0.
		v = l.sel(l.cmp("cmpf", "oeq", x, l.floatConst(t, 0)), x, v)
	}
	return v, q
}

// 2π as an f32 and the rest (2π − twoPi1, to f64 precision).
const (
	twoPi1 = 6.2831854820251465      // 0x40c90fdb
	twoPi2 = -1.7484555314695172e-07 // 2π − twoPi1
)

// Loom folds sinturnsf/costurnsf as sin/cos of 2π·x in double (and the
// CPU executor computes sin/cos(2π·fmod(x, 1)) so): at an exact quarter
// turn a zero comes out as the sine or cosine of π/2, π or 3π/2 rounded
// (cos of a quarter turn is 6.1e-17). f32 of those values:
var (
	turnSinHalf  = float64(float32(math.Sin(2 * math.Pi * 0.5)))  // 1.2246469e-16
	turnCosQuart = float64(float32(math.Cos(2 * math.Pi * 0.25))) // 6.123234e-17
	turnCos3Qt   = float64(float32(math.Cos(2 * math.Pi * 0.75))) // -1.8369701e-16
)

// lowerTurns rewrites sinturnsf and costurnsf (sin and cos of 2π·x): in
// turns the reduction is exact, k = roundeven(4x), r = x − k/4 with
// |r| ≤ 1/8; θ = 2π·r is carried as hi + lo (an fma recovers the
// product's rounding), then the quadrant polynomials. Where r is 0 the
// zero results take Loom's folded values (above) and sin(±whole turns)
// keeps x's sign, as fmod does; |x| ≥ 2^23 is a whole number of turns;
// ±∞ and NaN give NaN.
func lowerTurns(l *lowering, op *Op) (bool, error) {
	sin := strings.HasSuffix(op.Name, "sinturnsf")
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		zero := l.floatConst(t, 0)
		ax := l.un("absf", x)
		whole := l.sel(l.cmp("cmpf", "olt", ax, l.f32Bits(t, 0x7f800000)), zero, x)
		xr := l.sel(l.cmp("cmpf", "oge", ax, l.floatConst(t, 1<<23)), whole, x)
		k := l.un("roundevenf", l.bin("mulf", xr, l.floatConst(t, 4)))
		r := l.fma(k, l.floatConst(t, -0.25), xr)
		hi := l.bin("mulf", r, l.floatConst(t, twoPi1))
		lo := l.fma(r, l.floatConst(t, twoPi2), l.fma(r, l.floatConst(t, twoPi1), l.un("negf", hi)))
		v, q := l.quadrant(x, k, hi, lo, sin)
		// Exact quarter turns (nested selects, no i1 arithmetic).
		qis := func(n float64) *Value { return l.cmp("cmpf", "oeq", q, l.floatConst(t, n)) }
		var at *Value
		if sin {
			at = l.sel(qis(0), l.bin("copysignf", zero, x), l.sel(qis(2), l.bin("copysignf", l.floatConst(t, turnSinHalf), x), v))
		} else {
			pos := l.cmp("cmpf", "ogt", x, zero)
			quart, three := l.floatConst(t, turnCosQuart), l.floatConst(t, turnCos3Qt)
			at = l.sel(qis(1), l.sel(pos, quart, three), l.sel(qis(3), l.sel(pos, three, quart), v))
		}
		return l.sel(l.cmp("cmpf", "oeq", r, zero), at, v)
	})
}

// lowerSoftplus rewrites softplusf: max(x, 0) + log1p(e^−|x|), where
// log1p(e) = ln(w)·e/(w − 1) with w = 1 + e rounded (w − 1 is exact, and
// the ratio undoes w's rounding), ln w from log2Pos, and e itself once w
// rounds to 1. NaN stays NaN (through e), +∞ gives ∞, −∞ gives 0.
func lowerSoftplus(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		zero, one := l.floatConst(t, 0), l.floatConst(t, 1)
		e := l.un("expf", l.un("negf", l.un("absf", x)))
		w := l.bin("addf", one, e)
		d := l.bin("subf", w, one)
		lp := l.bin("mulf", l.lnOf(w), l.bin("divf", e, d))
		lp = l.sel(l.cmp("cmpf", "oeq", d, zero), e, lp)
		return l.bin("addf", l.bin("maxnumf", x, zero), lp)
	})
}

// lowerSign rewrites signi and signf by compares and selects: 1 above
// zero, −1 below, else the input itself (0, −0 and NaN stay), exact.
func lowerSign(l *lowering, op *Op) (bool, error) {
	xs, err := l.operandValues(op, 1)
	if err != nil {
		return true, err
	}
	x := xs[0]
	t := x.Type
	var zero, one, minus *Value
	cmp, gt, lt := "cmpi", "sgt", "slt"
	if strings.HasSuffix(op.Name, "signf") {
		zero, one, minus = l.floatConst(t, 0), l.floatConst(t, 1), l.floatConst(t, -1)
		cmp, gt, lt = "cmpf", "ogt", "olt"
	} else {
		zero, one, minus = l.intConst(t, 0), l.intConst(t, 1), l.intConst(t, -1)
	}
	v := l.sel(l.cmp(cmp, lt, x, zero), minus, x)
	l.finish(l.sel(l.cmp(cmp, gt, x, zero), one, v))
	return true, nil
}

// GeluVariant is geluf's formula family, the first word of its <variant[,
// flags]> parameter: erf (also when none is written), tanh or logistic.
func GeluVariant(param string) string {
	if w := paramWords(param); len(w) > 0 && !isFastMathFlag(w[0]) {
		return w[0]
	}
	return "erf"
}

// GeluScale is the logistic variant's {scale = s}, 1.702 when absent.
func GeluScale(op *Op) float64 {
	if a := op.Attr("scale"); a != nil {
		if a.Value.Kind == LitInt {
			return float64(a.Value.Int)
		}
		return a.Value.Float
	}
	return 1.702
}

// lowerGelu rewrites geluf by Loom's formulas on the executors' own
// erff, tanhf and logisticf: erf h + h·erf(x/√2) and tanh
// h + h·tanh(√(2/π)·(x + 0.044715·x³)) with h = x/2 (one fma each),
// logistic x·logistic(s·x).
func lowerGelu(l *lowering, op *Op) (bool, error) {
	v := GeluVariant(op.Param)
	if v != "erf" && v != "tanh" && v != "logistic" {
		return true, l.errorf("variant <%s> (erf, tanh or logistic)", v)
	}
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		if v == "logistic" {
			return l.bin("mulf", x, l.un("logisticf", l.bin("mulf", x, l.floatConst(t, GeluScale(op)))))
		}
		h := l.bin("mulf", x, l.floatConst(t, 0.5))
		var g *Value
		if v == "erf" {
			g = l.un("erff", l.bin("mulf", x, l.floatConst(t, 1/math.Sqrt2)))
		} else {
			x3 := l.bin("mulf", l.bin("mulf", x, x), x)
			in := l.fma(l.floatConst(t, 0.044715), x3, x)
			g = l.un("tanhf", l.bin("mulf", in, l.floatConst(t, math.Sqrt(2/math.Pi))))
		}
		return l.fma(h, g, h)
	})
}

// lnOf is ln w for w ≥ 0 from log2Pos's hi + lo, rounded once more.
func (l *lowering) lnOf(w *Value) *Value {
	t := w.Type
	lh, ll := l.log2Pos(w)
	return l.fma(lh, l.floatConst(t, math.Ln2), l.bin("mulf", ll, l.floatConst(t, math.Ln2)))
}

// lowerLog1p rewrites log1pf: w = 1 + x rounded, then ln(w)·x/(w − 1)
// (the ratio undoes w's rounding; x itself once w rounds to 1), ln w from
// log2Pos. x = −1 gives −∞, x < −1 NaN, +∞ ∞, NaN NaN.
func lowerLog1p(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		return l.log1p(x)
	})
}

// log1p is ln(1 + x) of an f32 value (lowerLog1p).
func (l *lowering) log1p(x *Value) *Value {
	t := x.Type
	zero, one := l.floatConst(t, 0), l.floatConst(t, 1)
	w := l.bin("addf", one, x)
	d := l.bin("subf", w, one)
	v := l.bin("mulf", l.lnOf(w), l.bin("divf", x, d))
	v = l.sel(l.cmp("cmpf", "oeq", d, zero), x, v)
	v = l.sel(l.cmp("cmpf", "oeq", x, l.floatConst(t, -1)), l.f32Bits(t, 0xff800000), v)
	v = l.sel(l.cmp("cmpf", "olt", w, zero), l.f32Bits(t, 0x7fc00000), v)
	return l.sel(l.cmp("cmpf", "oeq", x, l.f32Bits(t, 0x7f800000)), x, v)
}

// lowerExpm1 rewrites expm1f by Kahan's formula: u = expf(x), then
// (u − 1)·x/ln u (ln u of the same u cancels most of u's error; x itself
// once u rounds to 1), ln u from log2Pos; u − 1 = −1 gives −1 (x → −∞),
// u = ∞ gives ∞, NaN stays NaN.
func lowerExpm1(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		return l.expm1(x)
	})
}

// expm1 is Kahan's e^x − 1 of an f32 value (lowerExpm1).
func (l *lowering) expm1(x *Value) *Value {
	t := x.Type
	one := l.floatConst(t, 1)
	u := l.un("expf", x)
	um := l.bin("subf", u, one)
	v := l.bin("mulf", um, l.bin("divf", x, l.lnOf(u)))
	v = l.sel(l.cmp("cmpf", "oeq", u, one), x, v)
	v = l.sel(l.cmp("cmpf", "oeq", um, l.floatConst(t, -1)), um, v)
	return l.sel(l.cmp("cmpf", "oeq", u, l.f32Bits(t, 0x7f800000)), u, v)
}

// Cephes atanf's minimax polynomial on [0, tan π/8]: atan t = t + t·z·A(z),
// z = t²; and π/4 as an f32 plus its remainder.
var atanCoeffs = []float64{-3.33329491539e-1, 1.99777106478e-1, -1.38776856032e-1, 8.05374449538e-2}

const (
	quarterPi1  = 0.78539818525314331     // 0x3f490fdb
	quarterPi2  = -2.1855694143368964e-08 // π/4 − quarterPi1
	tanEighthPi = 0.41421356237309503     // tan π/8
)

// lowerAtan rewrites atanf(x) as atan2f(x, 1) and atan2f(y, x) (C's atan2:
// y first) by atan2Of.
func lowerAtan(l *lowering, op *Op) (bool, error) {
	if strings.HasSuffix(op.Name, ".atanf") {
		return l.unaryF32(op, func(x *Value) *Value { return l.atan2Of(x, l.floatConst(x.Type, 1)) })
	}
	return l.lanesF32(op, 2, func(x []*Value) *Value { return l.atan2Of(x[0], x[1]) })
}

// atan2Of is atan2(y, x) in f32: t = min(|y|,|x|)/max(|y|,|x|) in [0, 1]
// (0 for two zeros, 1 for two infinities, as C's atan2), reduced to
// |t'| ≤ tan π/8 by t' = (t−1)/(t+1) (k = 1 eighth turn), atan t' by the
// polynomial p; then the result is k·π/4 + s·p with k and s folded from
// |y| > |x| (k = 2 − k, s = −1) and x's sign bit (k = 4 − k, s = −s),
// k·π/4 as hi + lo, and y's sign copied. NaNs propagate through t.
func (l *lowering) atan2Of(y, x *Value) *Value {
	t := y.Type
	zero, one := l.floatConst(t, 0), l.floatConst(t, 1)
	inf := l.f32Bits(t, 0x7f800000)
	ay, ax := l.un("absf", y), l.un("absf", x)
	swap := l.cmp("cmpf", "ogt", ay, ax)
	mn, mx := l.sel(swap, ax, ay), l.sel(swap, ay, ax)
	r := l.bin("divf", mn, mx)
	r = l.sel(l.cmp("cmpf", "oeq", mx, zero), l.sel(l.cmp("cmpf", "oeq", mn, zero), zero, r), r)
	r = l.sel(l.cmp("cmpf", "oeq", mx, inf), l.sel(l.cmp("cmpf", "oeq", mn, inf), one, r), r)
	big := l.cmp("cmpf", "ogt", r, l.floatConst(t, tanEighthPi))
	r = l.sel(big, l.bin("divf", l.bin("subf", r, one), l.bin("addf", r, one)), r)
	k := l.sel(big, one, zero)
	z := l.bin("mulf", r, r)
	a := l.horner(z, atanCoeffs)
	p := l.fma(l.bin("mulf", r, z), a, r)
	s := one
	k = l.sel(swap, l.bin("subf", l.floatConst(t, 2), k), k)
	s = l.sel(swap, l.floatConst(t, -1), s)
	xneg := l.cmp("cmpf", "olt", l.bin("copysignf", one, x), zero)
	k = l.sel(xneg, l.bin("subf", l.floatConst(t, 4), k), k)
	s = l.sel(xneg, l.un("negf", s), s)
	// k·π/4 = chi + clo (the fma recovers chi's rounding; k ≤ 4 is exact).
	chi := l.bin("mulf", k, l.floatConst(t, quarterPi1))
	clo := l.fma(k, l.floatConst(t, quarterPi2), l.fma(k, l.floatConst(t, quarterPi1), l.un("negf", chi)))
	v := l.bin("addf", chi, l.fma(s, p, clo))
	return l.bin("copysignf", v, y)
}

// lowerSinhCosh rewrites sinhf and coshf from e = |x|: sinh by expm1
// (u = expm1 e, (u + u/(u+1))/2, exact at small e where u = e) with x's
// sign; cosh as e^e/2 + 1/(2e^e); above |x| = 88, where e^|x| overflows
// f32 before the result does, both are (h/2)·h with h = e^(|x|/2).
// NaN stays NaN, ±∞ gives ±∞ (cosh ∞).
func lowerSinhCosh(l *lowering, op *Op) (bool, error) {
	sinh := strings.HasSuffix(op.Name, "sinhf")
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		half := l.floatConst(t, 0.5)
		ax := l.un("absf", x)
		h := l.un("expf", l.bin("mulf", ax, half))
		large := l.bin("mulf", l.bin("mulf", h, half), h)
		var v *Value
		if sinh {
			u := l.expm1(ax)
			v = l.bin("mulf", half, l.bin("addf", u, l.bin("divf", u, l.bin("addf", u, l.floatConst(t, 1)))))
		} else {
			e := l.un("expf", ax)
			v = l.fma(e, half, l.bin("divf", half, e))
		}
		v = l.sel(l.cmp("cmpf", "ogt", ax, l.floatConst(t, 88)), large, v)
		if sinh {
			v = l.bin("copysignf", v, x)
		}
		return v
	})
}

// lowerTan rewrites tanf as sin r / cos r of sinf/cosf's reduction (the
// quadrant polynomials, each chosen and signed by k): both are accurate
// relatively, so the quotient adds one rounding. tan(−0) is −0, ±∞ and
// NaN give NaN.
func lowerTan(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		k, r := l.reduceHalfPi(x)
		s, _ := l.quadrant(x, k, r, nil, true)
		c, _ := l.quadrant(x, k, r, nil, false)
		return l.bin("divf", s, c)
	})
}

// Cephes asinf's polynomial: asin t = t + t·z·B(z), z = t², |t| ≤ ½.
var asinCoeffs = []float64{1.6666752422e-1, 7.4953002686e-2, 4.5470025998e-2, 2.4181311049e-2, 4.2163199048e-2}

// lowerAsinAcos rewrites asinf and acosf: a = |x|; at most ½, p = asin a
// by the polynomial; above, p = asin √((1 − a)/2) (1 − a exact), and
// asin a = π/2 − 2p, acos a = 2p. asin copies x's sign; acos x is
// π/2 − asin x at most ½, π − 2p for x < −½. π/2 and π are hi + lo.
// |x| > 1 gives NaN (through the square root), NaN stays NaN.
func lowerAsinAcos(l *lowering, op *Op) (bool, error) {
	asin := strings.HasSuffix(op.Name, "asinf")
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		half := l.floatConst(t, 0.5)
		a := l.un("absf", x)
		far := l.cmp("cmpf", "ogt", a, half)
		zf := l.bin("mulf", half, l.bin("subf", l.floatConst(t, 1), a))
		tt := l.sel(far, l.un("sqrtf", zf), a)
		z := l.sel(far, zf, l.bin("mulf", a, a))
		b := l.horner(z, asinCoeffs)
		p := l.fma(l.bin("mulf", tt, z), b, tt)
		p2 := l.bin("mulf", p, l.floatConst(t, -2))
		hp1, hp2 := l.floatConst(t, halfPi1), l.floatConst(t, halfPi2)
		if asin {
			v := l.sel(far, l.bin("addf", hp1, l.bin("addf", hp2, p2)), p)
			return l.bin("copysignf", v, x)
		}
		sp := l.bin("copysignf", p, x)
		near := l.bin("addf", hp1, l.bin("subf", hp2, sp))
		neg := l.bin("addf", l.floatConst(t, 2*halfPi1), l.bin("addf", l.floatConst(t, 2*halfPi2), p2))
		farv := l.sel(l.cmp("cmpf", "olt", x, l.floatConst(t, 0)), neg, l.un("negf", p2))
		return l.sel(far, farv, near)
	})
}

// lowerInvHyp rewrites asinhf, acoshf and atanhf through the shared log1p:
// asinh a = log1p(a + a²/(1 + √(1 + a²))), acosh x = log1p(u + √(2u + u²))
// with u = x − 1, both ln a + ln 2 above 2^12 (where the rest is below
// f32's rounding); atanh a = ½·log1p(2a/(1 − a)). asinh and atanh take
// a = |x| and copy x's sign; acosh below 1 is NaN. Infinities and NaN
// follow log1p (atanh ±1 is ±∞, beyond NaN).
func lowerInvHyp(l *lowering, op *Op) (bool, error) {
	name := op.Name[strings.LastIndexByte(op.Name, '.')+1:]
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		one := l.floatConst(t, 1)
		a := l.un("absf", x)
		if name == "atanhf" {
			w := l.bin("divf", l.bin("addf", a, a), l.bin("subf", one, a))
			return l.bin("copysignf", l.bin("mulf", l.floatConst(t, 0.5), l.log1p(w)), x)
		}
		if name == "acoshf" {
			a = x
		}
		big := l.cmp("cmpf", "ogt", a, l.floatConst(t, 4096))
		lg := l.bin("addf", l.lnOf(a), l.floatConst(t, math.Ln2))
		var v *Value
		if name == "asinhf" {
			a2 := l.bin("mulf", a, a)
			s := l.bin("addf", one, l.un("sqrtf", l.bin("addf", one, a2)))
			v = l.bin("copysignf", l.sel(big, lg, l.log1p(l.bin("addf", a, l.bin("divf", a2, s)))), x)
		} else {
			u := l.bin("subf", x, one)
			r := l.un("sqrtf", l.fma(u, u, l.bin("addf", u, u)))
			v = l.sel(big, lg, l.log1p(l.bin("addf", u, r)))
			v = l.sel(l.cmp("cmpf", "olt", x, one), l.f32Bits(t, 0x7fc00000), v)
		}
		return v
	})
}

// lowerCbrt rewrites cbrtf: y = 2^(log2|x|/3) (log2 from the bits, as in
// powf, subnormals included), two Newton steps y += (a/y² − y)/3, x's
// sign; ±0, ±∞ and NaN are returned as they are.
func lowerCbrt(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		a := l.un("absf", x)
		lh, _ := l.log2Pos(a)
		y := l.un("exp2f", l.bin("mulf", lh, l.floatConst(t, 1.0/3)))
		for range 2 {
			y = l.fma(l.bin("subf", l.bin("divf", a, l.bin("mulf", y, y)), y), l.floatConst(t, 1.0/3), y)
		}
		v := l.bin("copysignf", y, x)
		keep := l.cmp("cmpf", "oeq", a, l.floatConst(t, 0))
		v = l.sel(keep, x, v)
		v = l.sel(l.cmp("cmpf", "oeq", a, l.f32Bits(t, 0x7f800000)), x, v)
		return l.sel(l.cmp("cmpf", "uno", x, x), x, v)
	})
}

// erfcCoeffs is Numerical Recipes' erfcc fit: erfc z = t·e^(−z² + Q(t)),
// t = 1/(1 + z/2), fractional error below 1.2e-7 for every z ≥ 0.
var erfcCoeffs = []float64{-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
	0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277}

// lowerErfc rewrites erfcf by erfcCoeffs with z = |x|: e^(−z²) is taken
// as e^(−hi)·e^(Q − lo) with z² = hi + lo (an fma), so the large exponent
// stays exact; x < 0 gives 2 − erfc|x|. Beyond |x| = 10 the result is 0
// (or 2); NaN stays NaN.
func lowerErfc(l *lowering, op *Op) (bool, error) {
	return l.unaryF32(op, func(x *Value) *Value {
		t := x.Type
		one, two := l.floatConst(t, 1), l.floatConst(t, 2)
		z := l.un("absf", x)
		tt := l.bin("divf", one, l.fma(z, l.floatConst(t, 0.5), one))
		q := l.horner(tt, erfcCoeffs)
		hi := l.bin("mulf", z, z)
		lo := l.fma(z, z, l.un("negf", hi))
		e := l.bin("mulf", l.un("expf", l.un("negf", hi)), l.un("expf", l.bin("subf", q, lo)))
		v := l.bin("mulf", tt, e)
		v = l.sel(l.cmp("cmpf", "ogt", z, l.floatConst(t, 10)), l.floatConst(t, 0), v)
		return l.sel(l.cmp("cmpf", "olt", x, l.floatConst(t, 0)), l.bin("subf", two, v), v)
	})
}
