package interp

import "math"

// minifloat describes a narrow binary floating-point format. Every narrow
// float value is held in registers as the float64 it denotes; these helpers
// convert to and from the stored bits with round-to-nearest-even, directly
// from float64 so no double rounding occurs.
type minifloat struct {
	ebits, mbits int
	// fn marks the OCP "finite" encoding (f8E4M3): no infinities, a single
	// NaN mantissa (all ones) at the top exponent, out-of-range → NaN.
	fn bool
}

var (
	fmtF16    = minifloat{ebits: 5, mbits: 10}
	fmtBF16   = minifloat{ebits: 8, mbits: 7}
	fmtF8E4M3 = minifloat{ebits: 4, mbits: 3, fn: true}
	fmtF8E5M2 = minifloat{ebits: 5, mbits: 2}
)

func (m minifloat) bias() int { return 1<<(m.ebits-1) - 1 }

// nan is the canonical quiet NaN encoding (positive sign).
func (m minifloat) nan() uint64 {
	if m.fn {
		return 1<<(m.ebits+m.mbits) - 1
	}
	return (1<<m.ebits-1)<<m.mbits | 1<<(m.mbits-1)
}

// encode rounds x to the format (RNE) and returns its bits.
func (m minifloat) encode(x float64) uint64 {
	sign := uint64(0)
	if math.Signbit(x) {
		sign = 1 << (m.ebits + m.mbits)
	}
	if math.IsNaN(x) {
		return m.nan() | sign
	}
	a := math.Abs(x)
	expTop := uint64(1<<m.ebits - 1)
	if math.IsInf(a, 0) {
		if m.fn {
			return m.nan() | sign
		}
		return sign | expTop<<m.mbits
	}
	if a == 0 {
		return sign
	}
	bias := m.bias()
	emin := 1 - bias
	_, exp := math.Frexp(a)
	e := exp - 1
	var bits uint64
	if e < emin {
		r := math.RoundToEven(math.Ldexp(a, m.mbits-emin))
		bits = uint64(r) // r == 1<<mbits carries into the smallest normal
	} else {
		if e > bias+1 { // far beyond range: avoid huge intermediate values
			e = bias + 1
			a = math.Ldexp(1, e+1)
		}
		r := math.RoundToEven(math.Ldexp(a, m.mbits-e))
		bits = uint64(e+bias)<<m.mbits + (uint64(r) - 1<<m.mbits)
	}
	if m.fn {
		if bits >= 1<<(m.ebits+m.mbits)-1 {
			return m.nan() | sign
		}
		return bits | sign
	}
	if bits >= expTop<<m.mbits {
		return sign | expTop<<m.mbits
	}
	return bits | sign
}

// decode returns the value denoted by bits.
func (m minifloat) decode(bits uint64) float64 {
	mant := bits & (1<<m.mbits - 1)
	exp := int(bits>>m.mbits) & (1<<m.ebits - 1)
	neg := bits>>(m.ebits+m.mbits)&1 != 0
	var v float64
	switch {
	case m.fn && exp == 1<<m.ebits-1 && mant == 1<<m.mbits-1:
		v = math.NaN()
	case !m.fn && exp == 1<<m.ebits-1:
		if mant != 0 {
			v = math.NaN()
		} else {
			v = math.Inf(1)
		}
	case exp == 0:
		v = math.Ldexp(float64(mant), 1-m.bias()-m.mbits)
	default:
		v = math.Ldexp(float64(mant|1<<m.mbits), exp-m.bias()-m.mbits)
	}
	if neg {
		v = -v
	}
	return v
}

// round returns x rounded to the format.
func (m minifloat) round(x float64) float64 { return m.decode(m.encode(x)) }
