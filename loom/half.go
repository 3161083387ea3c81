package loom

import "math"

// HalfBits rounds f to the nearest f16 or bf16 (ties to even) in one step.
func HalfBits(t *Type, f float64) uint16 {
	mant, bias := 10, 15 // f16
	if t.Name == "bf16" {
		mant, bias = 7, 127
	}
	expBits := 15 - mant
	var sign uint16
	if math.Signbit(f) {
		sign = 1 << 15
		f = -f
	}
	maxExp := (1 << expBits) - 1
	switch {
	case math.IsNaN(f):
		return sign | uint16(maxExp)<<mant | 1<<(mant-1)
	case math.IsInf(f, 0):
		return sign | uint16(maxExp)<<mant
	case f == 0:
		return sign
	}
	fr, exp := math.Frexp(f)
	e := exp - 1 + bias
	var q float64 // the value in units of the last mantissa place
	if e <= 0 {
		q = math.Ldexp(f, bias-1+mant)
		e = 0
	} else {
		q = math.Ldexp(fr*2, mant)
	}
	bits := uint64(math.RoundToEven(q))
	if e == 0 {
		// A carry into the smallest normal is encoded by the implicit bit
		// becoming the exponent's 1.
		return sign | uint16(bits)
	}
	if bits >= 1<<(mant+1) {
		bits >>= 1
		e++
	}
	if e >= maxExp {
		return sign | uint16(maxExp)<<mant
	}
	return sign | uint16(e)<<mant | uint16(bits&(1<<mant-1))
}
