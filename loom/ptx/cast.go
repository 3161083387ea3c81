package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// castTypes returns the operand and the from/to types of a `: A to B` cast.
func (e *emitter) castTypes(op *loom.Op) (*val, *loom.Type, *loom.Type, error) {
	if err := need(op, 1); err != nil {
		return nil, nil, nil, err
	}
	x, err := e.get(op.Operands[0])
	if err != nil {
		return nil, nil, nil, err
	}
	to := resultType(op, 0)
	from := x.t
	if len(op.Types) > 0 && op.Types[0] != nil {
		from = op.Types[0]
	}
	for _, t := range []*loom.Type{from, to} {
		if isF8(t) && (op.Name == "scalar.extf" || op.Name == "scalar.fptrunc") {
			continue // f8Convert
		}
		if err := scalarOK(op, t); err != nil {
			return nil, nil, nil, err
		}
	}
	return x, from, to, nil
}

// intToInt converts between integer-like registers: signed says how a
// narrower source extends. Small integers stay sign-extended in 32 bits.
func (e *emitter) intToInt(x *val, to *loom.Type, signed bool) *val {
	from := x.t
	if classOf(from) == cPred {
		out := e.newVal(to)
		if classOf(to) == cPred {
			e.mov(out, x)
			return out
		}
		one := "1"
		if signed {
			one = "-1"
		}
		e.ins("selp.%s %s, %s, 0, %s", sType(to), out.reg, one, x.reg)
		return out
	}
	if classOf(to) == cPred {
		return e.intToPred(x)
	}
	out := e.newVal(to)
	fb, tb := intBits(from), intBits(to)
	switch {
	case classOf(from) == cR && classOf(to) == cRd:
		if signed {
			e.ins("cvt.s64.s32 %s, %s", out.reg, x.reg)
		} else {
			e.ins("cvt.u64.u32 %s, %s", out.reg, e.zext(x).reg)
		}
	case classOf(from) == cRd && classOf(to) == cR:
		e.ins("cvt.u32.u64 %s, %s", out.reg, x.reg)
		e.sext(out)
	case classOf(from) == cRd:
		e.ins("mov.b64 %s, %s", out.reg, x.reg)
	default: // both in 32-bit registers
		if !signed && fb < tb {
			e.ins("mov.b32 %s, %s", out.reg, e.zext(x).reg)
		} else {
			e.ins("mov.b32 %s, %s", out.reg, x.reg)
		}
		e.sext(out)
	}
	if x.known {
		out.known, out.ci = true, wrapInt(x.ci, tb)
	}
	return out
}

func (e *emitter) indexCast(op *loom.Op) error {
	x, from, to, err := e.castTypes(op)
	if err != nil {
		return err
	}
	if isFloat(from) || isFloat(to) {
		return invalid(op.Pos, "index.cast between %s and %s", from, to)
	}
	// Into index a source integer is read signed; into offset narrower
	// payloads zero-extend; out of index the domain's sign extends.
	signed := true
	switch {
	case to.Kind == loom.TypeOffset && from.Kind != loom.TypeIndex:
		signed = false
	case from.Kind == loom.TypeOffset:
		signed = false
	case x.wide:
		if intBits(to) > 32 {
			signed = false // a non-negative index held unsigned
		}
	}
	xv := *x
	xv.t = from
	return e.define(op, 0, e.intToInt(&xv, to, signed))
}

func (e *emitter) scalarCast(op *loom.Op, rest string) error {
	x, from, to, err := e.castTypes(op)
	if err != nil {
		return err
	}
	xv := *x
	xv.t = from
	x = &xv
	switch rest {
	case "extsi", "extui", "trunci":
		if isFloat(from) || isFloat(to) {
			return invalid(op.Pos, "%s between %s and %s", op.Name, from, to)
		}
		out := e.intToInt(x, to, rest != "extui")
		if rest == "extui" && isI32(to) {
			out.field = extField(x, intBits(from))
		}
		if rest == "trunci" && intBits(to) == 8 {
			out.word, out.wordShift = wordBits(x, 0) // its byte of a word
		}
		if b := intBits(from); rest != "trunci" && b < 32 && to.Kind == loom.TypeInt && to.Bits == 32 {
			out.mag, out.nonneg = b-1, rest == "extui"
			if out.nonneg {
				out.mag = b
			}
		}
		return e.define(op, 0, out)
	case "sitofp", "uitofp":
		if isFloat(from) || !isFloat(to) {
			return invalid(op.Pos, "%s from %s to %s", op.Name, from, to)
		}
		signed := rest == "sitofp"
		src := x
		if classOf(from) == cPred {
			src = e.predToInt(x, signed)
		} else if !signed {
			src = e.zext(x)
		}
		it := "s32"
		if classOf(from) == cRd {
			it = "s64"
		}
		if !signed {
			it = "u" + it[1:]
		}
		ct := to
		if isHalf(to) {
			ct = f32Type
		}
		out := e.newVal(ct)
		if ct.Name == "f32" && it[1:] == "32" && x.mag > 0 && x.mag <= 22 && (signed || x.nonneg) {
			// |x| < 2^22: added to the bits of 1.5·2^23 it lands in the
			// mantissa, so the float is 1.5·2^23 + x exactly, and one
			// subtraction leaves x. An integer add and a float add issue
			// at full rate; cvt (I2F) at a quarter, which bounds
			// dequantizing kernels.
			t := e.newReg(cR)
			e.ins("add.s32 %s, %s, 0x4B400000", t, src.reg)
			f := e.newReg(cF)
			e.ins("mov.b32 %s, %s", f, t)
			e.ins("sub.rn.f32 %s, %s, 0f4B400000", out.reg, f)
			return e.define(op, 0, e.fromF32(out, to))
		}
		if to.Name == "f16" || to.Name == "bf16" && e.sm >= 90 {
			// One rounding, straight to the half (I2F.F16, I2F.BF16):
			// through f32, an integer beyond 2^24 would round twice.
			// sm_90 is the first with integer → bf16; before it, bf16
			// goes through f32 (LOOM.md §11).
			h := e.newVal(to)
			e.ins("cvt.rn.%s.%s %s, %s", to.Name, it, h.reg, src.reg)
			return e.define(op, 0, h)
		}
		e.ins("cvt.rn.%s.%s %s, %s", ct.Name, it, out.reg, src.reg)
		return e.define(op, 0, e.fromF32(out, to))
	case "fptosi", "fptoui":
		if !isFloat(from) || isFloat(to) {
			return invalid(op.Pos, "%s from %s to %s", op.Name, from, to)
		}
		w := e.toF32(x)
		it := "s32"
		if classOf(to) == cRd {
			it = "s64"
		}
		if rest == "fptoui" {
			it = "u" + it[1:]
		}
		if classOf(to) == cPred {
			tmp := &val{t: i32Type, reg: e.newReg(cR)}
			e.ins("cvt.rzi.%s.%s %s, %s", it, w.t.Name, tmp.reg, w.reg)
			return e.define(op, 0, e.intToPred(tmp))
		}
		out := e.newVal(to)
		e.ins("cvt.rzi.%s.%s %s, %s", it, w.t.Name, out.reg, w.reg)
		e.sext(out)
		return e.define(op, 0, out)
	case "extf", "fptrunc":
		if !isFloat(from) || !isFloat(to) {
			return invalid(op.Pos, "%s from %s to %s", op.Name, from, to)
		}
		if isF8(from) || isF8(to) {
			v, err := e.f8Convert(op, x, to)
			if err != nil {
				return err
			}
			return e.define(op, 0, v)
		}
		return e.define(op, 0, e.floatToFloat(op, x, to))
	case "bitcast":
		return e.bitcast(op, x, to)
	}
	return unsupported(op, "cast")
}

// floatToFloat converts between float formats with one rounding where PTX
// has the instruction; bf16 and f16 meet through f32 (exact widening).
func (e *emitter) floatToFloat(op *loom.Op, x *val, to *loom.Type) *val {
	from := x.t
	if from.Name == to.Name {
		out := e.newVal(to)
		e.mov(out, x)
		return out
	}
	if isHalf(from) && to.Name == "f32" {
		return e.toF32(x)
	}
	out := e.newVal(to)
	switch {
	case to.Bits > from.Bits || (from.Bits == to.Bits): // widening (or f16<->bf16)
		if isHalf(from) && isHalf(to) {
			w := e.toF32(x)
			return e.fromF32(w, to)
		}
		if from.Name == "bf16" && to.Name == "f64" {
			w := e.toF32(x)
			e.ins("cvt.f64.f32 %s, %s", out.reg, w.reg)
			return out
		}
		e.ins("cvt.%s.%s %s, %s", to.Name, from.Name, out.reg, x.reg)
	default: // narrowing rounds to nearest even
		if from.Name == "f64" && to.Name == "bf16" && e.sm < 90 {
			// No direct instruction before sm_90 (F2F.BF16.F64): round to
			// f32 toward zero and set the last bit where that was inexact
			// (rounding to odd), which f32's 24 bits carry into bf16's
			// round to nearest even as the exact value would. Rounding
			// to nearest twice would be wrong where the first lands on a
			// tie of the second.
			w, back, p := e.newReg(cF), e.newReg(cFd), e.newReg(cPred)
			bits, odd := e.newReg(cR), e.newReg(cR)
			e.ins("cvt.rz.f32.f64 %s, %s", w, x.reg)
			e.ins("cvt.f64.f32 %s, %s", back, w)
			e.ins("setp.neu.f64 %s, %s, %s", p, back, x.reg)
			e.ins("mov.b32 %s, %s", bits, w)
			e.ins("or.b32 %s, %s, 1", odd, bits)
			e.ins("selp.b32 %s, %s, %s, %s", bits, odd, bits, p)
			r := e.newVal(f32Type)
			e.ins("mov.b32 %s, %s", r.reg, bits)
			return e.fromF32(r, to)
		}
		e.ins("cvt.rn.%s.%s %s, %s", to.Name, from.Name, out.reg, x.reg)
	}
	return out
}

func (e *emitter) bitcast(op *loom.Op, x *val, to *loom.Type) error {
	from := x.t
	if carrierBytes(from) != carrierBytes(to) || classOf(from) == cPred || classOf(to) == cPred {
		return unsupported(op, "bitcast from %s to %s", from, to)
	}
	out := e.newVal(to)
	fc, tc := classOf(from), classOf(to)
	switch {
	case fc == tc:
		e.mov(out, x)
	case fc == cH: // f16/bf16 bits into a sign-extended i16
		e.ins("cvt.s32.s16 %s, %s", out.reg, x.reg)
	case tc == cH:
		e.ins("cvt.u16.u32 %s, %s", out.reg, x.reg)
	case carrierBytes(to) == 8:
		e.ins("mov.b64 %s, %s", out.reg, x.reg)
	default:
		e.ins("mov.b32 %s, %s", out.reg, x.reg)
	}
	return e.define(op, 0, out)
}
