package ptx

import (
	"math/bits"

	"github.com/loomgen/loomgen/loom"
)

// indexShifts are the index ops Loom defines over the 64-bit logical value
// with a count in 0..63 (LOOM.md 6.1), lowered by indexShift.
var indexShifts = map[string]bool{"shli": true, "shrsi": true, "shrui": true, "rotli": true, "rotri": true}

// indexShift lowers index.shli/shrsi/shrui/rotli/rotri on the 32-bit
// carrier. The operand's 64-bit value is its register sign-extended, or
// zero-extended when wide. A constant count takes an exact 32-bit form
// where one exists: shrsi and shrui always, shli by at most 30 as
// index.mul by 2^s (the same rule: the product of non-wide values is read
// signed); shrsi and shrui of a non-negative value by any count. Everything else computes the 64-bit result and keeps its low
// 32 bits, read signed (unsigned when the operand is wide, or for shli by
// 31), and traps when the 64-bit result is not that value or the count is
// outside 0..63: the carrier's answer is never given for Loom's.
func (e *emitter) indexShift(op *loom.Op, rest string) error {
	if err := need(op, 2); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	x, y := a[0], a[1]
	for _, v := range a {
		if v.t == nil || v.t.Kind != loom.TypeIndex {
			return invalid(op.Pos, "%s on %s", op.Name, typeName(v.t))
		}
	}
	t := resultType(op, 0)
	if x.known && y.known {
		if r, ok := indexShift64(rest, x.ci, y.ci); ok && r >= -1<<31 && r < 1<<31 {
			return e.define(op, 0, e.constInt(t, r))
		} else if ok && r >= 1<<31 && r < 1<<32 {
			out := e.newVal(t)
			out.wide, out.nonneg = true, true
			e.ins("mov.b32 %s, %d", out.reg, uint32(r))
			return e.define(op, 0, out)
		}
	}
	var out *val
	switch {
	case y.known && y.ci >= 0 && y.ci < 64:
		out = e.indexShiftConst(rest, t, x, y.ci)
	case (rest == "shrui" || rest == "shrsi") && (x.wide || x.nonneg || x.known && x.ci >= 0):
		// A non-negative value's right shifts are its 32-bit logical
		// shift (0 from a count of 32 on); a tree reduction's halving
		// stride takes this path.
		out = e.newVal(t)
		e.ins("shr.u32 %s, %s, %s", out.reg, x.reg, y.reg)
		out.wide, out.nonneg = x.wide, true
	case rest == "shrsi":
		// sign-fills from a count of 32 on, as the 64-bit value does
		out = e.newVal(t)
		e.ins("shr.s32 %s, %s, %s", out.reg, x.reg, y.reg)
	}
	if out == nil {
		wide := x.wide || (rest == "shli" && y.known && y.ci == 31)
		out = e.indexShiftChecked(rest, t, x, y, wide)
	}
	if out != x {
		setP2(rest, out, a)
		if (rest == "shrui" || rest == "shrsi") && y.known {
			setExact(out, x, y.ci)
		}
	}
	return e.define(op, 0, out)
}

// indexShift64 is Loom's meaning of an index shift or rotate; ok is false
// for a count outside 0..63.
func indexShift64(rest string, x, s int64) (int64, bool) {
	if s < 0 || s > 63 {
		return 0, false
	}
	switch rest {
	case "shli":
		return x << uint(s), true
	case "shrsi":
		return x >> uint(s), true
	case "shrui":
		return int64(uint64(x) >> uint(s)), true
	case "rotli":
		return int64(bits.RotateLeft64(uint64(x), int(s))), true
	case "rotri":
		return int64(bits.RotateLeft64(uint64(x), -int(s))), true
	}
	return 0, false
}

// indexShiftConst is the exact 32-bit form of a shift by the constant s,
// or nil where there is none.
func (e *emitter) indexShiftConst(rest string, t *loom.Type, x *val, s int64) *val {
	if s == 0 {
		return x
	}
	out := e.newVal(t)
	switch rest {
	case "shli":
		if s > 30 {
			return nil
		}
		e.ins("shl.b32 %s, %s, %d", out.reg, x.reg, s)
		out.wide = x.wide
	case "shrsi", "shrui":
		switch {
		case x.wide || s < 32:
			// A wide value is non-negative; a negative non-wide one
			// shifted logically by less than 32 leaves the carrier.
			mn := "shr.u32"
			if rest == "shrsi" && !x.wide {
				mn = "shr.s32"
			}
			e.ins("%s %s, %s, %d", mn, out.reg, x.reg, min(s, 32))
		case rest == "shrsi":
			e.ins("shr.s32 %s, %s, 31", out.reg, x.reg)
		case s == 32:
			// 0, or 2^32 - 1 for a negative value: held unsigned.
			e.ins("shr.s32 %s, %s, 31", out.reg, x.reg)
			out.wide, out.nonneg = true, true
		default:
			// 0, or 2^(64-s) - 1 for a negative value.
			m := e.newReg(cR)
			e.ins("shr.s32 %s, %s, 31", m, x.reg)
			e.ins("and.b32 %s, %s, %d", out.reg, m, uint32(1)<<uint(64-s)-1)
		}
	default:
		return nil
	}
	return out
}

// indexShiftChecked computes the shift or rotate in 64 bits and keeps the
// low 32, trapping when they do not hold the result (read unsigned when
// wide, else signed) or the count is outside 0..63.
func (e *emitter) indexShiftChecked(rest string, t *loom.Type, x, y *val, wide bool) *val {
	x64 := e.widen64(x, !x.wide)
	s := y.reg
	bad := e.newReg(cPred)
	e.ins("setp.gt.u32 %s, %s, 63", bad, s)
	r := e.newReg(cRd)
	switch rest {
	case "shli":
		e.ins("shl.b64 %s, %s, %s", r, x64.reg, s)
	case "shrsi":
		e.ins("shr.s64 %s, %s, %s", r, x64.reg, s)
	case "shrui":
		e.ins("shr.u64 %s, %s, %s", r, x64.reg, s)
	default:
		// rotate: x << k | x >> (64 - k), k = s mod 64 for the left
		// rotate (PTX clamps a 64-bit shift by 64 to 0).
		k := e.newReg(cR)
		if rest == "rotri" {
			n := e.newReg(cR)
			e.ins("neg.s32 %s, %s", n, s)
			s = n
		}
		e.ins("and.b32 %s, %s, 63", k, s)
		l, n := e.newReg(cR), e.newReg(cR)
		e.ins("neg.s32 %s, %s", n, k)
		e.ins("add.s32 %s, %s, 64", l, n)
		hi, lo := e.newReg(cRd), e.newReg(cRd)
		e.ins("shl.b64 %s, %s, %s", hi, x64.reg, k)
		e.ins("shr.b64 %s, %s, %s", lo, x64.reg, l)
		e.ins("or.b64 %s, %s, %s", r, hi, lo)
	}
	out := e.newVal(t)
	e.ins("cvt.u32.u64 %s, %s", out.reg, r)
	back := e.newReg(cRd)
	if wide {
		e.ins("cvt.u64.u32 %s, %s", back, out.reg)
		out.wide, out.nonneg = true, true
	} else {
		e.ins("cvt.s64.s32 %s, %s", back, out.reg)
	}
	trap := e.newReg(cPred)
	e.ins("setp.ne.or.b64 %s, %s, %s, %s", trap, back, r, bad)
	// The device has no message channel: the runtime reports the trap as
	// a launch failure (as for kernel.assert).
	e.ins("@%s trap", trap)
	return out
}
