package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// nativeOps are the ops this backend lowers itself instead of through the
// shared pass (loom.Lower), because an instruction does them faster:
// vector.dot4i is one dp4a per accumulator lane (plus packing four byte
// lanes into a word with bfi, unless they are a word's bytes in order),
// where the shared form takes four multiplies and four adds.
var nativeOps = map[string]bool{"vector.dot4i": true}

// dp4aTypes maps dot4i's signedness template to dp4a's operand types.
var dp4aTypes = map[string]string{"s8s8": "s32.s32", "u8s8": "u32.s32", "s8u8": "s32.u32", "u8u8": "u32.u32"}

// vecDot4i lowers vector.dot4i<kind> %lhs, %rhs, %acc: accumulator lane j
// adds the products of source lanes 4j…4j+3 (the last axis grouped by four,
// so flat lanes 4j+k in row-major order), which dp4a computes exactly.
func (e *emitter) vecDot4i(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	types, ok := dp4aTypes[op.Param]
	if !ok {
		return invalid(op.Pos, "vector.dot4i: signedness <%s> (s8s8, u8s8, s8u8 or u8u8)", op.Param)
	}
	var vs [3]*val
	for i := range vs {
		v, err := e.vecOperand(op.Operands[i])
		if err != nil {
			return err
		}
		vs[i] = v
	}
	lhs, rhs, acc := vs[0], vs[1], vs[2]
	if len(lhs.vec) != 4*len(acc.vec) || len(rhs.vec) != len(lhs.vec) ||
		lhs.t.Elem == nil || lhs.t.Elem.Bits != 8 || acc.t.Elem == nil || acc.t.Elem.Bits != 32 {
		return invalid(op.Pos, "vector.dot4i needs i8 sources of four lanes per i32 accumulator lane")
	}
	pack := func(lanes []*val) string {
		if w := lanes[0].word; w != "" && lanes[0].wordShift == 0 &&
			lanes[1].word == w && lanes[1].wordShift == 8 &&
			lanes[2].word == w && lanes[2].wordShift == 16 &&
			lanes[3].word == w && lanes[3].wordShift == 24 {
			return w // the bytes of one word in order: the word itself
		}
		w := e.newReg(cR)
		e.ins("mov.b32 %s, %s", w, lanes[0].reg)
		for k := 1; k < 4; k++ {
			e.ins("bfi.b32 %s, %s, %s, %d, 8", w, lanes[k].reg, w, 8*k)
		}
		return w
	}
	out := make([]*val, len(acc.vec))
	for j := range out {
		a, b := pack(lhs.vec[4*j:4*j+4]), pack(rhs.vec[4*j:4*j+4])
		out[j] = e.newVal(acc.t.Elem)
		e.ins("dp4a.%s %s, %s, %s, %s", types, out[j].reg, a, b, acc.vec[j].reg)
	}
	return e.define(op, 0, vecVal(acc.t, acc.shape, out))
}
