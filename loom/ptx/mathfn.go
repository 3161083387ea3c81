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
//	expf       Cody–Waite reduction x = j·ln2 + f (j clamped to the normal
//	           exponents), ex2.approx on the remainder times 2^j built from
//	           bits: ≤ 3 ulp over the finite range
//	logf/log2f/log10f  lg2.approx.f32: absolute error ≤ 2^-22 near 1,
//	           ≤ 2 ulp relative elsewhere
//	rsqrtf     sqrt.rn then rcp.rn: ≤ 1 ulp (sqrtf and divf are exact: .rn)
//	tanhf      odd Taylor polynomial below |x| = 0.25, else
//	           1 − 2/(e^{2|x|}+1): relative error ≤ 1e-6
//	erff       Maclaurin series below |x| = 0.5, else Abramowitz–Stegun
//	           7.1.26: relative error ≤ 1e-6
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

// expf computes e^x; see the accuracy table above.
func (e *emitter) expf(x string) string {
	t, j, f, g, p, sc, r := e.freg(), e.freg(), e.freg(), e.freg(), e.freg(), e.freg(), e.freg()
	ji, bits := e.newReg(cR), e.newReg(cR)
	e.ins("mul.rn.f32 %s, %s, %s", t, x, fimm(math.Log2E))
	e.ins("cvt.rni.f32.f32 %s, %s", j, t)
	// j is clamped to the normal exponents, so 2^j is built from bits (one
	// ex2 instead of three); past the clamp the remainder grows and ex2 of
	// it overflows to inf or underflows toward 0 as e^x does. A NaN x
	// stays NaN through f.
	e.ins("max.f32 %s, %s, %s", j, j, fimm(-126))
	e.ins("min.f32 %s, %s, %s", j, j, fimm(127))
	// f = x − j·ln2 in two steps (ln2 split so j·ln2_hi is exact).
	e.ins("fma.rn.f32 %s, %s, %s, %s", f, j, "0fBF317200", x)
	e.ins("fma.rn.f32 %s, %s, %s, %s", f, j, "0fB5BFBE8E", f)
	e.ins("mul.rn.f32 %s, %s, %s", g, f, fimm(math.Log2E))
	e.ins("ex2.approx.f32 %s, %s", p, g)
	e.ins("cvt.rzi.s32.f32 %s, %s", ji, j)
	e.ins("add.s32 %s, %s, 127", bits, ji)
	e.ins("shl.b32 %s, %s, 23", bits, bits)
	e.ins("mov.b32 %s, %s", sc, bits)
	e.ins("mul.rn.f32 %s, %s, %s", r, p, sc)
	return r
}

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
	two := e.freg()
	e.ins("add.rn.f32 %s, %s, %s", two, a, a)
	ex := e.expf(two)
	d, big := e.freg(), e.freg()
	e.ins("add.rn.f32 %s, %s, %s", d, ex, fimm(1))
	e.ins("div.rn.f32 %s, %s, %s", d, fimm(2), d)
	e.ins("sub.rn.f32 %s, %s, %s", big, fimm(1), d)
	e.ins("setp.lt.f32 %s, %s, %s", small, a, fimm(0.25))
	r := e.freg()
	e.ins("selp.f32 %s, %s, %s, %s", r, q, big, small)
	e.ins("copysign.f32 %s, %s, %s", r, x, r)
	return r
}

func (e *emitter) erff(x string) string {
	a, z, small := e.freg(), e.freg(), e.newReg(cPred)
	e.ins("abs.f32 %s, %s", a, x)
	e.ins("mul.rn.f32 %s, %s, %s", z, a, a)
	// erf a = 2/√π · Σ (−1)^n a^(2n+1) / (n!(2n+1))
	s := e.poly(z, []float64{1, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360})
	q := e.freg()
	e.ins("mul.rn.f32 %s, %s, %s", q, s, a)
	e.ins("mul.rn.f32 %s, %s, %s", q, q, fimm(2/math.Sqrt(math.Pi)))
	// erf a = 1 − t·P(t)·e^(−a²), t = 1/(1 + 0.3275911·a)
	t := e.freg()
	e.ins("fma.rn.f32 %s, %s, %s, %s", t, a, fimm(0.3275911), fimm(1))
	e.ins("rcp.rn.f32 %s, %s", t, t)
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
