package interp

import (
	"math"
	"math/bits"

	"github.com/loomgen/loomgen/loom"
)

var castOps = map[string]bool{
	"sitofp": true, "uitofp": true, "fptosi": true, "fptoui": true, "extf": true, "fptrunc": true,
	"extsi": true, "extui": true, "trunci": true, "bitcast": true, "cast": true,
}

// cast compiles conversions `op %x : A to B` (scalar and lane-wise vector).
func (c *compiler) cast(b *block, op *loom.Op, name string, x *slot) (instr, error) {
	if len(op.Operands) != 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "%s takes one operand", op.Name)
	}
	r, err := c.result(b, op, 0, x.uni)
	if err != nil {
		return nil, err
	}
	if r.comps != x.comps {
		return nil, compileErr(op.Pos, ErrInvalid, "%s changes the vector shape", op.Name)
	}
	from, to := x.typ, r.typ
	fb, tb := c.intBits(from), c.intBits(to)
	post := c.postFor(to)
	switch name {
	case "extsi":
		if x.kind != kInt || r.kind != kInt {
			break
		}
		if fb == 1 {
			return unI(op, r, x, func(v int64) int64 { return -(v & 1) }, post), nil
		}
		return c.movI(op, r, x, post), nil
	case "extui":
		if x.kind != kInt || r.kind != kInt {
			break
		}
		return zextI(op, r, x, fb, post), nil
	case "trunci":
		if x.kind != kInt || r.kind != kInt {
			break
		}
		return c.movI(op, r, x, post), nil
	case "sitofp", "uitofp":
		if x.kind != kInt || r.kind != kFloat {
			break
		}
		rnd, err := floatFormat(op.Pos, to)
		if err != nil {
			return nil, err
		}
		// Go's conversions round once, to f32 or f64 directly; the
		// narrower formats round an exact-or-sticky float64 (roundable).
		unsigned := name == "uitofp"
		switch {
		case rnd.kind == fF32 && !unsigned:
			return sitofp32(r, x), nil
		case rnd.kind == fF32:
			return i2f(r, x, func(v int64) float64 { return float64(float32(zext(v, fb))) }, ffmt{kind: fF64}), nil
		case rnd.kind == fF64 && unsigned:
			return i2f(r, x, func(v int64) float64 { return float64(zext(v, fb)) }, rnd), nil
		case rnd.kind == fF64:
			return i2f(r, x, func(v int64) float64 { return float64(v) }, rnd), nil
		case unsigned:
			return i2f(r, x, func(v int64) float64 { return roundable(zext(v, fb)) }, rnd), nil
		}
		return i2f(r, x, func(v int64) float64 {
			if v < 0 {
				return -roundable(-uint64(v))
			}
			return roundable(uint64(v))
		}, rnd), nil
	case "fptosi", "fptoui":
		if x.kind != kFloat || r.kind != kInt {
			break
		}
		lo, hi := -math.Ldexp(1, tb-1), math.Ldexp(1, tb-1)-1
		if name == "fptoui" {
			lo, hi = 0, math.Ldexp(1, tb)-1
		}
		if tb == 1 {
			lo, hi = 0, 1
		}
		// NaN and out-of-range values saturate (the documentation leaves
		// them open; saturation is what PTX's cvt.rzi.sat does).
		return f2i(op, r, x, func(v float64) int64 {
			switch {
			case v != v:
				return 0
			case v <= lo:
				return int64(lo)
			case v >= hi:
				if hi >= math.Ldexp(1, 63) {
					return -1 // 2^64-1 as raw bits
				}
				return int64(hi)
			}
			t := math.Trunc(v)
			if t >= math.Ldexp(1, 63) {
				return int64(uint64(t))
			}
			return int64(t)
		}, post), nil
	case "extf", "fptrunc":
		if x.kind != kFloat || r.kind != kFloat {
			break
		}
		rnd, err := floatFormat(op.Pos, to)
		if err != nil {
			return nil, err
		}
		// Every f8, f16, bf16 and f32 value is an f32 and an f64 value as
		// well: widening into those copies.
		if (to.Name == "f32" || to.Name == "f64") && from.Bits < to.Bits {
			rnd = ffmt{kind: fF64}
		}
		return movF(r, x, rnd), nil
	case "bitcast":
		return c.bitcast(op, r, x)
	case "cast":
		return c.indexCast(op, r, x)
	}
	return nil, compileErr(op.Pos, ErrInvalid, "%s from %s to %s", op.Name, from, to)
}

func (c *compiler) bitcast(op *loom.Op, r, x *slot) (instr, error) {
	fromBits, toBits := typeBits(c, x.typ), typeBits(c, r.typ)
	if fromBits != toBits || fromBits == 0 {
		return nil, compileErr(op.Pos, ErrInvalid, "bitcast between %s and %s of different widths", x.typ, r.typ)
	}
	nb := fromBits
	switch {
	case x.kind == kInt && r.kind == kInt:
		return c.movI(op, r, x, c.postFor(r.typ)), nil
	case x.kind == kInt && r.kind == kFloat:
		f, err := floatFormat(op.Pos, r.typ)
		if err != nil {
			return nil, err
		}
		return i2f(r, x, func(v int64) float64 { return f.fromBits(zext(v, nb)) }, ffmt{kind: fF64}), nil
	case x.kind == kFloat && r.kind == kInt:
		f, err := floatFormat(op.Pos, x.typ)
		if err != nil {
			return nil, err
		}
		return f2i(op, r, x, func(v float64) int64 { return wrapBits(int64(f.bitsOf(v)), nb) }, postI{}), nil
	case x.kind == kFloat && r.kind == kFloat:
		ff, err := floatFormat(op.Pos, x.typ)
		if err != nil {
			return nil, err
		}
		tf, err := floatFormat(op.Pos, r.typ)
		if err != nil {
			return nil, err
		}
		return unF(r, x, func(v float64) float64 { return tf.fromBits(ff.bitsOf(v)) }, ffmt{kind: fF64}), nil
	}
	return nil, compileErr(op.Pos, ErrInvalid, "bitcast from %s to %s", x.typ, r.typ)
}

func typeBits(c *compiler, t *loom.Type) int {
	switch t.Kind {
	case loom.TypeIndex:
		return c.k.tgt.indexBits
	case loom.TypeOffset:
		return c.k.tgt.offsetBits
	}
	return t.Bits
}

// indexCast implements index.cast: into index, integers are signed (i1
// as 0/1); into offset, narrower payloads zero-extend and values must be
// non-negative; out of the address domain, the low bits are kept.
func (c *compiler) indexCast(op *loom.Op, r, x *slot) (instr, error) {
	if x.kind != kInt || r.kind != kInt {
		return nil, compileErr(op.Pos, ErrInvalid, "index.cast from %s to %s", x.typ, r.typ)
	}
	from, to := x.typ, r.typ
	fb := c.intBits(from)
	post := c.postFor(to)
	switch to.Kind {
	case loom.TypeIndex:
		if from.Kind == loom.TypeOffset {
			return c.movI(op, r, x, c.nonNegative(post, "offset → index")), nil
		}
		return c.movI(op, r, x, post), nil
	case loom.TypeOffset:
		switch {
		case from.Kind == loom.TypeInt && from.Bits < 64:
			return zextI(op, r, x, fb, post), nil
		default:
			return c.movI(op, r, x, c.nonNegative(post, "negative value to offset")), nil
		}
	case loom.TypeInt:
		return c.movI(op, r, x, post), nil
	}
	return nil, compileErr(op.Pos, ErrInvalid, "index.cast to %s", to)
}

// nonNegative extends a post-check to also reject negative values.
func (c *compiler) nonNegative(p postI, what string) postI {
	if !p.ranged {
		p.ranged, p.lo, p.hi = true, 0, math.MaxInt64
	} else if p.lo < 0 {
		p.lo = 0
	}
	p.class, p.what = ErrOverflow, what+": value"
	return p
}

// roundable returns u as a float64 that rounds to any format of at most 51
// significant bits as u itself would: u exactly where it fits 53 bits, else
// its top 53 bits with every bit below them or-ed into the last (rounding
// to odd, which a second rounding to two or more bits fewer cannot tell
// from the exact value). float64(u) there would round twice.
func roundable(u uint64) float64 {
	n := bits.Len64(u)
	if n <= 53 {
		return float64(u)
	}
	k := n - 53
	w := u >> uint(k)
	if u&(1<<uint(k)-1) != 0 {
		w |= 1
	}
	return math.Ldexp(float64(w), k)
}
