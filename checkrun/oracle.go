package checkrun

import (
	"fmt"
	"math"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// oracle evaluates check.oracle.call<provider> callee(@f) inputs(…) : (…)
// -> (T). Providers, written in Go:
//
//   - reference.matmul: inputs lhs [M,K], rhs [K,N], init [M,N]; result
//     [M,N] = init + lhs·rhs;
//   - reference.tiled_matmul: the same over tiled rank-4 operands lhs
//     [OM,OK,IM,IK], rhs [OK,ON,IK,IN], init and result [OM,ON,IM,IN].
//
// Without attributes the operands must be floats and the sum is taken in
// f64; {lhs, rhs, accumulator, result} name the numeric kinds (f16, bf16,
// f32, f64, i8, u8, i16, u16, i32, u32, i64) for integer inputs, an f32
// accumulator rounds after every step, and a result that does not fit its
// integer type is an error.
func (e *eval) oracle(op *loom.Op) error {
	provider := strings.TrimSpace(op.Param)
	if provider != "reference.matmul" && provider != "reference.tiled_matmul" {
		return skipf("%s: check.oracle.call<%s>: provider not supported by loomgen's check runner (it has reference.matmul and reference.tiled_matmul)", op.Pos, provider)
	}
	if len(op.Operands) != 3 {
		return errorf("%s: %s takes inputs(lhs, rhs, init), has %d", op.Pos, provider, len(op.Operands))
	}
	var in [3]*tensor
	for i := range in {
		v, err := e.operand(op, i)
		if err != nil {
			return err
		}
		t, ok := v.(*tensor)
		if !ok {
			return errorf("%s: %s: input %d is not a tensor", op.Pos, provider, i)
		}
		in[i] = t
	}
	rt := resultType(op)
	if rt == nil || rt.Kind != loom.TypeTensor {
		return errorf("%s: %s needs a tensor result type", op.Pos, provider)
	}
	shape, err := e.shape(op, rt)
	if err != nil {
		return err
	}
	out, err := newTensor(rt.Elem, shape)
	if err != nil {
		return skipf("%s: %v", op.Pos, err)
	}
	ct, err := e.contract(op, in, out)
	if err != nil {
		return err
	}
	lhs, rhs, init := in[0], in[1], in[2]
	var m, n, k, om, on, ok, im, in_, ik int64
	if provider == "reference.matmul" {
		if len(lhs.shape) != 2 || len(rhs.shape) != 2 || len(init.shape) != 2 || len(out.shape) != 2 {
			return errorf("%s: reference.matmul expects rank-2 tensors", op.Pos)
		}
		m, k, n = lhs.shape[0], lhs.shape[1], rhs.shape[1]
		om, on, ok, im, in_, ik = 1, 1, 1, m, n, k
		if rhs.shape[0] != k || init.shape[0] != m || init.shape[1] != n {
			return errorf("%s: reference.matmul shape mismatch: lhs %v, rhs %v, init %v", op.Pos, lhs.shape, rhs.shape, init.shape)
		}
	} else {
		if len(lhs.shape) != 4 || len(rhs.shape) != 4 || len(init.shape) != 4 || len(out.shape) != 4 {
			return errorf("%s: reference.tiled_matmul expects rank-4 tensors", op.Pos)
		}
		om, ok, im, ik = lhs.shape[0], lhs.shape[1], lhs.shape[2], lhs.shape[3]
		on, in_ = rhs.shape[1], rhs.shape[3]
		if rhs.shape[0] != ok || rhs.shape[2] != ik || init.shape[0] != om || init.shape[1] != on || init.shape[2] != im || init.shape[3] != in_ {
			return errorf("%s: reference.tiled_matmul shape mismatch: lhs %v, rhs %v, init %v", op.Pos, lhs.shape, rhs.shape, init.shape)
		}
	}
	if !sameShape(out.shape, init.shape) {
		return errorf("%s: %s: result %v, init %v", op.Pos, provider, out.shape, init.shape)
	}
	// Element offsets of the tiled layout; the plain matmul is one tile.
	at4 := func(d [4]int64, a, b, c, x int64) int { return int(((a*d[1]+b)*d[2]+c)*d[3] + x) }
	ld, rd, od := [4]int64{om, ok, im, ik}, [4]int64{ok, on, ik, in_}, [4]int64{om, on, im, in_}
	for a := range om {
		for b := range on {
			for r := range im {
				for c := range in_ {
					oi := at4(od, a, b, r, c)
					acc := ct.start(init, oi)
					for t := range ok {
						for x := range ik {
							acc = ct.step(acc, lhs, at4(ld, a, t, r, x), rhs, at4(rd, t, b, x, c))
						}
					}
					if err := ct.store(out, oi, acc); err != nil {
						return errorf("%s: %s: element %s: %v", op.Pos, provider, out.index(oi), err)
					}
				}
			}
		}
	}
	return e.define(op, out)
}

// numKind is a numeric interpretation of stored elements.
type numKind struct {
	name    string
	float   bool
	signed  bool
	bits    int
	f32Step bool // an f32 accumulator
}

var numKinds = map[string]numKind{
	"f16": {name: "f16", float: true, bits: 16}, "bf16": {name: "bf16", float: true, bits: 16},
	"f32": {name: "f32", float: true, bits: 32}, "f64": {name: "f64", float: true, bits: 64},
	"i8": {name: "i8", signed: true, bits: 8}, "u8": {name: "u8", bits: 8},
	"i16": {name: "i16", signed: true, bits: 16}, "u16": {name: "u16", bits: 16},
	"i32": {name: "i32", signed: true, bits: 32}, "u32": {name: "u32", bits: 32},
	"i64": {name: "i64", signed: true, bits: 64},
}

// contract is the numeric contract of a matmul oracle call.
type contract struct {
	lhs, rhs, acc numKind
}

type accum struct {
	f float64
	i int64
}

func (e *eval) contract(op *loom.Op, in [3]*tensor, out *tensor) (*contract, error) {
	a, err := attrs(op, "callee", "inputs")
	if err != nil {
		return nil, errorf("%v", err)
	}
	if len(a) == 0 {
		for _, t := range append(in[:], out) {
			if !t.isFloat() {
				return nil, errorf("%s: check.oracle.call: integer operands need {lhs, rhs, accumulator, result} contract attributes", op.Pos)
			}
		}
		return &contract{lhs: numKinds[in[0].elem.Name], rhs: numKinds[in[1].elem.Name], acc: numKinds["f64"]}, nil
	}
	kind := func(key string, t *tensor) (numKind, error) {
		s, _ := a[key].(string)
		k, ok := numKinds[s]
		if !ok {
			return k, errorf("%s: check.oracle.call: %s = %q is not a numeric kind", op.Pos, key, s)
		}
		if t != nil && (k.float != t.isFloat() || k.bits != t.elem.Bits) {
			return k, errorf("%s: check.oracle.call: %s storage %s does not match kind %s", op.Pos, key, t.elem, s)
		}
		return k, nil
	}
	c := &contract{}
	if c.lhs, err = kind("lhs", in[0]); err != nil {
		return nil, err
	}
	if c.rhs, err = kind("rhs", in[1]); err != nil {
		return nil, err
	}
	if c.acc, err = kind("accumulator", nil); err != nil {
		return nil, err
	}
	if _, err = kind("result", out); err != nil {
		return nil, err
	}
	if len(a) != 4 {
		return nil, errorf("%s: check.oracle.call: the contract takes exactly lhs, rhs, accumulator and result", op.Pos)
	}
	c.acc.f32Step = c.acc.name == "f32"
	return c, nil
}

// value reads element i of t as kind k.
func (k numKind) value(t *tensor, i int) (float64, int64) {
	if k.float {
		return t.float(i), 0
	}
	b := t.bits(i)
	if !k.signed {
		return 0, int64(b)
	}
	return 0, t.int(i)
}

func (c *contract) start(init *tensor, i int) accum {
	if init.isFloat() {
		return accum{f: init.float(i)}
	}
	if c.acc.float {
		return accum{f: float64(init.int(i))}
	}
	return accum{i: init.int(i)}
}

func (c *contract) step(acc accum, lhs *tensor, li int, rhs *tensor, ri int) accum {
	lf, lv := c.lhs.value(lhs, li)
	rf, rv := c.rhs.value(rhs, ri)
	if !c.lhs.float {
		lf = float64(lv)
	}
	if !c.rhs.float {
		rf = float64(rv)
	}
	if c.acc.float {
		acc.f += lf * rf
		if c.acc.f32Step {
			acc.f = float64(float32(acc.f))
		}
		return acc
	}
	acc.i += lv * rv
	return acc
}

func (c *contract) store(out *tensor, i int, acc accum) error {
	if out.isFloat() {
		if c.acc.float {
			out.setFloat(i, acc.f)
		} else {
			out.setFloat(i, float64(acc.i))
		}
		return nil
	}
	v := acc.i
	if c.acc.float {
		if math.IsNaN(acc.f) || math.IsInf(acc.f, 0) {
			return fmt.Errorf("result %g is not an integer", acc.f)
		}
		v = int64(math.Round(acc.f))
	}
	if !fitsInt(v, out.elem.Bits) {
		return fmt.Errorf("result %d does not fit %s", v, out.elem)
	}
	out.setInt(i, v)
	return nil
}
