package interp

import (
	"encoding/binary"
	"math"

	"github.com/loomgen/loomgen/loom"
)

// codec reads and writes one element type in little-endian memory.
type codec struct {
	size    int
	isFloat bool
	// enc names the encodings lane loops decode inline (encOther: call
	// loadI or loadF).
	enc    elemEnc
	loadI  func(b []byte) int64
	storeI func(b []byte, v int64)
	loadF  func(b []byte) float64
	storeF func(b []byte, v float64)
}

var le = binary.LittleEndian

// elemEnc is an element encoding that lane loops decode without calling
// the codec.
type elemEnc uint8

const (
	encOther elemEnc = iota
	encI8            // i8, sign-extended
	encI16           // i16, sign-extended
	encI32           // i32, sign-extended
	encF32
	encF16
	encBF16
)

// decodeF16 is fmtF16.decode with normal and subnormal values computed
// directly: a normal half is an f32 with the exponent rebiased (15 → 127)
// and the mantissa moved up 13 bits; a subnormal is mant·2⁻²⁴.
func decodeF16(h uint16) float64 {
	if h&0x7c00-0x400 < 0x7800 { // exponent neither 0 nor 31
		u := uint32(h)
		return float64(math.Float32frombits(u&0x8000<<16 | u&0x7fff<<13 + (127-15)<<23))
	}
	// Bit 14 tells exponent 31 from 0 here.
	return f16Rare[h>>4&0xc00|h&0x3ff]
}

// f16Rare holds the halves decodeF16 does not compute, by sign, exponent
// 31 or 0, and mantissa: zeros and subnormals (mant·2⁻²⁴), infinities and
// NaNs (fmtF16's decoding). A table, not a call, keeps decodeF16 small
// enough to be inlined into the load loops.
var f16Rare = func() (t [4096]float64) {
	for i := range t {
		h := uint16(i&0x800<<4 | i&0x3ff)
		if i&0x400 != 0 {
			t[i] = fmtF16.decode(uint64(h | 0x7c00))
			continue
		}
		t[i] = float64(h&0x3ff) * 0x1p-24
		if h&0x8000 != 0 {
			t[i] = -t[i]
		}
	}
	return t
}()

// decodeBF16 is fmtBF16.decode with finite values widened by a shift (a
// bf16 is the top half of an f32).
func decodeBF16(h uint16) float64 {
	if h&0x7f80 == 0x7f80 {
		return fmtBF16.decode(uint64(h))
	}
	return float64(math.Float32frombits(uint32(h) << 16))
}

// floatFormat returns the rounding format of a float type.
func floatFormat(pos loom.Pos, t *loom.Type) (ffmt, error) {
	switch t.Name {
	case "f32":
		return ffmt{kind: fF32}, nil
	case "f64":
		return ffmt{kind: fF64}, nil
	case "f16":
		return ffmt{kind: fMini, m: fmtF16}, nil
	case "bf16":
		return ffmt{kind: fMini, m: fmtBF16}, nil
	case "f8E4M3", "f8E4M3FN":
		return ffmt{kind: fMini, m: fmtF8E4M3}, nil
	case "f8E5M2":
		return ffmt{kind: fMini, m: fmtF8E5M2}, nil
	}
	return ffmt{}, compileErr(pos, ErrUnsupported, "float type %s", t.Name)
}

type ffmtKind uint8

const (
	fF64 ffmtKind = iota
	fF32
	fMini
)

// ffmt rounds float64 results to a float type.
type ffmt struct {
	kind ffmtKind
	m    minifloat
}

func (f ffmt) round(x float64) float64 {
	switch f.kind {
	case fF32:
		return float64(float32(x))
	case fMini:
		return f.m.round(x)
	}
	return x
}

// fma is fmaf in the format, rounded once. For f32 that is fma32. For the
// narrower formats the product of two values is exact in float64 and the
// sum rounds once to s; rounding s to the format is the correctly rounded
// fused result unless s lies exactly halfway between two of the format's
// values while the exact sum does not (bf16's range lets a tiny addend
// vanish in float64), where the sum's rounding error (TwoSum) breaks the
// tie.
func (f ffmt) fma(a, b, c float64) float64 {
	switch f.kind {
	case fF32:
		return fma32(a, b, c)
	case fMini:
		p := a * b
		s := p + c
		r := f.m.round(s)
		d := s - r
		if d == 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return r
		}
		// s is a midpoint exactly when the value as far beyond it as r
		// is below it is one of the format's.
		if o := r + 2*d; f.m.round(o) != o {
			return r
		}
		bb := s - p
		if e := (p - (s - bb)) + (c - bb); e != 0 {
			return f.m.round(math.Nextafter(s, math.Copysign(math.Inf(1), e)))
		}
		return r
	}
	return math.FMA(a, b, c)
}

// roundAll rounds every element of r in place.
func (f ffmt) roundAll(r []float64) {
	switch f.kind {
	case fF32:
		round32(r)
	case fMini:
		for i, x := range r {
			r[i] = f.m.round(x)
		}
	}
}

// bitsOf returns the storage bits of a float value.
func (f ffmt) bitsOf(x float64) uint64 {
	switch f.kind {
	case fF32:
		return uint64(math.Float32bits(float32(x)))
	case fMini:
		return f.m.encode(x)
	}
	return math.Float64bits(x)
}

// fromBits decodes storage bits.
func (f ffmt) fromBits(b uint64) float64 {
	switch f.kind {
	case fF32:
		return float64(math.Float32frombits(uint32(b)))
	case fMini:
		return f.m.decode(b)
	}
	return math.Float64frombits(b)
}

// codecFor returns the memory codec of scalar type t on the target.
func (c *compiler) codecFor(pos loom.Pos, t *loom.Type) (codec, error) {
	if t == nil {
		return codec{}, compileErr(pos, ErrInvalid, "view without element type")
	}
	size := 0
	switch t.Kind {
	case loom.TypeIndex:
		size = c.k.tgt.indexSize
	case loom.TypeOffset:
		size = c.k.tgt.offsetSize
	case loom.TypeInt:
		size = t.ByteSize()
	case loom.TypeFloat:
		f, err := floatFormat(pos, t)
		if err != nil {
			return codec{}, err
		}
		size = t.ByteSize()
		cd := codec{size: size, isFloat: true}
		switch {
		case f.kind == fF32:
			cd.enc = encF32
			cd.loadF = func(b []byte) float64 { return float64(math.Float32frombits(le.Uint32(b))) }
			cd.storeF = func(b []byte, v float64) { le.PutUint32(b, math.Float32bits(float32(v))) }
		case f.kind == fF64:
			cd.loadF = func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
			cd.storeF = func(b []byte, v float64) { le.PutUint64(b, math.Float64bits(v)) }
		case t.Name == "bf16":
			cd.enc = encBF16
			cd.loadF = func(b []byte) float64 { return decodeBF16(le.Uint16(b)) }
			cd.storeF = func(b []byte, v float64) { le.PutUint16(b, uint16(f.m.encode(v))) }
		case t.Name == "f16":
			cd.enc = encF16
			cd.loadF = func(b []byte) float64 { return decodeF16(le.Uint16(b)) }
			cd.storeF = func(b []byte, v float64) { le.PutUint16(b, uint16(f.m.encode(v))) }
		case size == 2:
			cd.loadF = func(b []byte) float64 { return f.m.decode(uint64(le.Uint16(b))) }
			cd.storeF = func(b []byte, v float64) { le.PutUint16(b, uint16(f.m.encode(v))) }
		default:
			cd.loadF = func(b []byte) float64 { return f.m.decode(uint64(b[0])) }
			cd.storeF = func(b []byte, v float64) { b[0] = byte(f.m.encode(v)) }
		}
		return cd, nil
	default:
		return codec{}, compileErr(pos, ErrUnsupported, "memory element type %s", t)
	}
	cd := codec{size: size}
	unsigned := t.Kind == loom.TypeOffset
	switch size {
	case 1:
		if t.Kind == loom.TypeInt && t.Bits == 1 {
			cd.loadI = func(b []byte) int64 { return int64(b[0] & 1) }
			cd.storeI = func(b []byte, v int64) { b[0] = byte(v & 1) }
		} else {
			cd.enc = encI8
			cd.loadI = func(b []byte) int64 { return int64(int8(b[0])) }
			cd.storeI = func(b []byte, v int64) { b[0] = byte(v) }
		}
	case 2:
		cd.enc = encI16
		cd.loadI = func(b []byte) int64 { return int64(int16(le.Uint16(b))) }
		cd.storeI = func(b []byte, v int64) { le.PutUint16(b, uint16(v)) }
	case 4:
		if unsigned {
			cd.loadI = func(b []byte) int64 { return int64(le.Uint32(b)) }
		} else {
			cd.enc = encI32
			cd.loadI = func(b []byte) int64 { return int64(int32(le.Uint32(b))) }
		}
		cd.storeI = func(b []byte, v int64) { le.PutUint32(b, uint32(v)) }
	case 8:
		cd.loadI = func(b []byte) int64 { return int64(le.Uint64(b)) }
		cd.storeI = func(b []byte, v int64) { le.PutUint64(b, uint64(v)) }
	default:
		return codec{}, compileErr(pos, ErrUnsupported, "memory element type %s of %d bytes", t, size)
	}
	return cd, nil
}

// wrapBits reduces v to the canonical form of an n-bit integer: i1 as 0/1,
// others sign-extended.
func wrapBits(v int64, n int) int64 {
	switch {
	case n == 1:
		return v & 1
	case n >= 64 || n <= 0:
		return v
	}
	s := uint(64 - n)
	return v << s >> s
}

// zext returns the unsigned value of an n-bit canonical integer.
func zext(v int64, n int) uint64 {
	if n >= 64 || n <= 0 {
		return uint64(v)
	}
	return uint64(v) & (1<<uint(n) - 1)
}
