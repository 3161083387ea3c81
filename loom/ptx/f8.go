package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// FP8 (OCP f8E4M3 and f8E5M2). An f8 value lives in a 16-bit register as
// its byte; views of f8 load and store that byte, and scalar.extf /
// scalar.fptrunc convert with sm_89's cvt .e4m3x2/.e5m2x2 instructions.
// Other f8 arithmetic is refused (Loom computes in a wider type).
//
// The hardware encoder only has a .satfinite form, which clamps values
// beyond the largest finite f8 to it; Loom (and the CPU executor) round
// to nearest even, so a value past the rounding midpoint above the largest
// finite one becomes NaN in f8E4M3 (which has no infinity) and ∞ in
// f8E5M2, with the sign kept. That case is selected after the cvt.

// isF8 reports whether t is one of the 8-bit float formats.
func isF8(t *loom.Type) bool {
	return t != nil && t.Kind == loom.TypeFloat && (t.Name == "f8E4M3" || t.Name == "f8E5M2")
}

// f8Formats maps a format to its cvt name, the magnitude above which RNE
// overflows, and the byte that overflow gives (without sign).
var f8Formats = map[string]struct {
	cvt      string
	cmp      string // |x| cmp overflow: gt where the midpoint rounds down (even), ge where up
	overflow string // f32 immediate
	special  int
}{
	"f8E4M3": {"e4m3x2", "gt", fimm(464), 0x7f},   // 448 is the largest; NaN is S.1111.111
	"f8E5M2": {"e5m2x2", "ge", fimm(61440), 0x7c}, // 57344 is the largest; ∞ is S.11111.00
}

// f8Convert lowers extf from f8 and fptrunc to f8 (through f32, which holds
// every f8, f16 and bf16 value exactly; from f64 the double rounding is
// refused).
func (e *emitter) f8Convert(op *loom.Op, x *val, to *loom.Type) (*val, error) {
	if e.sm < 89 {
		return nil, unsupported(op, "f8 conversions need sm_89 or newer (have sm_%d)", e.sm)
	}
	if e.sm < 90 {
		e.isa = max(e.isa, 81) // cvt of f8 pairs: ISA 7.8 on sm_90, 8.1 on sm_89
	}
	from := x.t
	if isF8(from) {
		f := f8Formats[from.Name]
		pair, lo, hi := e.newReg(cR), e.newReg(cH), e.newReg(cH)
		e.ins("cvt.rn.f16x2.%s %s, %s", f.cvt, pair, x.reg)
		e.ins("mov.b32 {%s, %s}, %s", lo, hi, pair)
		h := &val{t: &loom.Type{Kind: loom.TypeFloat, Name: "f16", Bits: 16}, reg: lo}
		if isF8(to) {
			return nil, unsupported(op, "conversion between f8 formats")
		}
		if to.Name == "f16" {
			return h, nil
		}
		return e.floatToFloat(op, h, to), nil
	}
	if from.Name == "f64" {
		return nil, unsupported(op, "fptrunc f64 to %s (round to f32 first: PTX has no single rounding)", to.Name)
	}
	w := e.toF32(x)
	f := f8Formats[to.Name]
	out := e.newVal(to)
	zero, bits, sign, a := e.freg(), e.newReg(cR), e.newReg(cR), e.freg()
	big := e.newReg(cPred)
	e.ins("mov.f32 %s, 0f00000000", zero)
	e.ins("cvt.rn.satfinite.%s.f32 %s, %s, %s", f.cvt, out.reg, zero, w.reg)
	e.ins("mov.b32 %s, %s", bits, w.reg)
	e.ins("shr.u32 %s, %s, 24", sign, bits)
	e.ins("and.b32 %s, %s, 128", sign, sign)
	e.ins("or.b32 %s, %s, %d", sign, sign, f.special)
	e.ins("abs.f32 %s, %s", a, w.reg)
	e.ins("setp.%s.f32 %s, %s, %s", f.cmp, big, a, f.overflow)
	sp := e.newReg(cH)
	e.ins("cvt.u16.u32 %s, %s", sp, sign)
	e.ins("selp.b16 %s, %s, %s, %s", out.reg, sp, out.reg, big)
	return out, nil
}
