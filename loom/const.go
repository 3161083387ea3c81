package loom

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrConst is the class of errors about a constant's text not fitting its type.
var ErrConst = errors.New("loom: bad constant")

// scalarTypeNamed returns a fresh *Type for a scalar spelling such as "f32",
// "index" or "i1", or nil when the name is not a scalar type.
func scalarTypeNamed(name string) *Type {
	switch name {
	case "index":
		return &Type{Kind: TypeIndex, Name: name}
	case "offset":
		return &Type{Kind: TypeOffset, Name: name}
	case "i1", "i8", "i16", "i32", "i64":
		b, _ := strconv.Atoi(name[1:])
		return &Type{Kind: TypeInt, Name: name, Bits: b}
	case "f8E4M3", "f8E5M2":
		return &Type{Kind: TypeFloat, Name: name, Bits: 8}
	case "f16", "bf16":
		return &Type{Kind: TypeFloat, Name: name, Bits: 16}
	case "f32":
		return &Type{Kind: TypeFloat, Name: name, Bits: 32}
	case "f64":
		return &Type{Kind: TypeFloat, Name: name, Bits: 64}
	}
	return nil
}

// Shared scalar types for expressions the analyses build themselves.
var (
	typeIndex  = scalarTypeNamed("index")
	typeOffset = scalarTypeNamed("offset")
	typeBool   = scalarTypeNamed("i1")
)

// ParseConst reads a configuration or workload value written in the Loom
// spelling of type t: "256", "-3", "0x10" for integers, index and offset;
// "true"/"false" (or 0/1) for i1; "1.5", "-0.0", "1e-3", "inf", "nan" for
// floats. Integer values must fit t: signed or unsigned N-bit spellings are
// accepted for iN and stored sign-extended; offsets are unsigned.
func ParseConst(t *Type, text string) (Const, error) {
	if t == nil {
		return Const{}, fmt.Errorf("%w: no type for %q", ErrConst, text)
	}
	s := strings.TrimSpace(text)
	c := Const{Type: t}
	switch t.Kind {
	case TypeInt:
		if t.Bits == 1 {
			switch s {
			case "true", "1":
				c.Int = 1
				return c, nil
			case "false", "0":
				return c, nil
			}
			return c, fmt.Errorf("%w: %q is not an i1 (true or false)", ErrConst, text)
		}
		v, err := parseIntText(s)
		if err != nil {
			return c, fmt.Errorf("%w: %q is not an %s: %v", ErrConst, text, t.Name, err)
		}
		bits := t.Bits
		if bits <= 0 || bits > 64 {
			bits = 64
		}
		if bits < 64 {
			lo, hi := -(int64(1) << (bits - 1)), (int64(1)<<bits)-1
			if v < lo || v > hi {
				return c, fmt.Errorf("%w: %q is out of range for %s", ErrConst, text, t.Name)
			}
		}
		c.Int = wrapSigned(v, bits)
		return c, nil
	case TypeIndex:
		v, err := parseIntText(s)
		if err != nil {
			return c, fmt.Errorf("%w: %q is not an index: %v", ErrConst, text, err)
		}
		c.Int = v
		return c, nil
	case TypeOffset:
		if strings.HasPrefix(s, "-") {
			return c, fmt.Errorf("%w: %q: offsets are unsigned", ErrConst, text)
		}
		u, err := parseUintText(s)
		if err != nil {
			return c, fmt.Errorf("%w: %q is not an offset: %v", ErrConst, text, err)
		}
		c.Int = int64(u)
		return c, nil
	case TypeFloat:
		var f float64
		switch strings.ToLower(s) {
		case "inf", "+inf":
			f = math.Inf(1)
		case "-inf":
			f = math.Inf(-1)
		case "nan", "+nan":
			f = math.NaN()
		case "-nan":
			f = math.Copysign(math.NaN(), -1)
		default:
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return c, fmt.Errorf("%w: %q is not a %s", ErrConst, text, t.Name)
			}
			f = v
		}
		c.Float = roundFloat(f, t)
		return c, nil
	}
	return c, fmt.Errorf("%w: values of type %s cannot be written as constants", ErrConst, t)
}

func parseIntText(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	u, err := parseUintText(body)
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, errors.New("out of range")
		}
		return -int64(u), nil
	}
	if u > math.MaxInt64 {
		// Hex spellings of 64-bit patterns are taken as bits.
		if strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X") {
			return int64(u), nil
		}
		return 0, errors.New("out of range")
	}
	return int64(u), nil
}

func parseUintText(s string) (uint64, error) {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, errors.New("not a number")
	}
	return strconv.ParseUint(s, 10, 64)
}

// wrapSigned keeps the low bits of v and sign-extends them, the two's
// complement view of an N-bit integer payload.
func wrapSigned(v int64, bits int) int64 {
	if bits >= 64 || bits <= 0 {
		return v
	}
	sh := uint(64 - bits)
	return v << sh >> sh
}

// roundFloat rounds f to the precision of float type t where Go can do so
// exactly (f32); narrower formats keep float64 precision here and are
// rounded by the consumers that store them.
func roundFloat(f float64, t *Type) float64 {
	if t != nil && t.Name == "f32" {
		return float64(float32(f))
	}
	return f
}

// String spells the constant as Loom source would: true/false for i1,
// unsigned decimal for offsets, decimal for other integers, and floats with
// a decimal point or exponent so they read back as floats.
func (c Const) String() string {
	if c.Type == nil {
		return strconv.FormatInt(c.Int, 10)
	}
	switch c.Type.Kind {
	case TypeInt:
		if c.Type.Bits == 1 {
			if c.Int&1 != 0 {
				return "true"
			}
			return "false"
		}
		return strconv.FormatInt(c.Int, 10)
	case TypeOffset:
		return strconv.FormatUint(uint64(c.Int), 10)
	case TypeFloat:
		f := c.Float
		switch {
		case math.IsNaN(f):
			return "nan"
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
		bits := 64
		if c.Type.Bits == 32 {
			bits = 32
		}
		s := strconv.FormatFloat(f, 'g', -1, bits)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatInt(c.Int, 10)
}
