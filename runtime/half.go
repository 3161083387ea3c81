package runtime

import "math"

// F16 is an IEEE 754 binary16 value stored as its bit pattern.
type F16 uint16

// BF16 is a bfloat16 value (the upper half of a binary32) stored as its bit
// pattern.
type BF16 uint16

// F16From converts f to binary16, rounding to nearest with ties to even.
// Values beyond the largest finite half become infinities; values below the
// smallest subnormal round to (signed) zero; NaN payloads keep their top bits
// and stay NaN.
func F16From(f float32) F16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff:
		if man == 0 {
			return F16(sign | 0x7c00)
		}
		m := uint16(man >> 13)
		if m == 0 {
			m = 0x200 // the payload lived only in dropped bits: keep it a NaN
		}
		return F16(sign | 0x7c00 | m)
	case exp == 0 && man == 0:
		return F16(sign)
	}
	// Unbiased exponent; float32 subnormals are far below half's range and
	// fall into the underflow branch below.
	e := exp - 127
	if exp == 0 {
		e = -126
	} else {
		man |= 1 << 23 // implicit bit
	}
	switch {
	case e > 15:
		return F16(sign | 0x7c00)
	case e >= -14:
		// Normal half: 10 fraction bits, drop 13.
		h := uint32(e+15)<<10 | (man>>13)&0x3ff
		h = roundShift(h, man, 13)
		// A carry out of the fraction bumps the exponent; past 30 it is inf.
		return F16(sign | uint16(h))
	default:
		// Subnormal half: value = man * 2^(e-23); unit 2^-24.
		shift := uint(-e - 14 + 13) // 14 dropped when e = -15 ... up
		if shift > 24 {
			return F16(sign)
		}
		h := man >> shift
		h = roundShift(h, man, shift)
		return F16(sign | uint16(h))
	}
}

// roundShift rounds h (= src >> shift, possibly with higher bits ORed in
// above the kept ones) to nearest even given the dropped bits of src.
func roundShift(h, src uint32, shift uint) uint32 {
	half := uint32(1) << (shift - 1)
	rem := src & (1<<shift - 1)
	if rem > half || (rem == half && h&1 == 1) {
		h++
	}
	return h
}

// Float32 converts h to float32 exactly.
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: normalise into a float32 normal.
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// BF16From converts f to bfloat16, rounding to nearest with ties to even.
// NaNs stay NaN with their sign and the top bits of their payload.
func BF16From(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		h := uint16(b >> 16)
		if h&0x7f == 0 {
			h |= 0x40
		}
		return BF16(h)
	}
	// Adding 0x7fff plus the kept lsb rounds ties to even; a carry into the
	// exponent rounds up to the next binade or to infinity, as it should.
	b += 0x7fff + (b>>16)&1
	return BF16(b >> 16)
}

// Float32 converts h to float32 exactly.
func (h BF16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }
