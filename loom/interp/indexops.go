package interp

import (
	"math"
	"math/bits"

	"github.com/loomgen/loomgen/loom"
)

var indexNames = map[string]string{
	"add": "addi", "sub": "subi", "mul": "muli", "div": "divsi", "rem": "remsi",
	"min": "minsi", "max": "maxsi", "andi": "andi", "ori": "ori", "xori": "xori",
	"shli": "shli", "shrsi": "shrsi", "shrui": "shrui", "rotli": "rotli", "rotri": "rotri",
}

var indexBitwise = map[string]bool{"andi": true, "ori": true, "xori": true, "shli": true, "shrsi": true, "shrui": true, "rotli": true, "rotri": true}

// indexOp compiles index.* ops: exact integer arithmetic whose results must
// fit the target's carrier (bitwise ops work on the carrier's bits).
func (c *compiler) indexOp(b *block, op *loom.Op, rest string) (instr, error) {
	switch rest {
	case "constant", "assume":
		return c.arith(b, op, rest)
	case "cast":
		return c.arith(b, op, "cast")
	case "cmp":
		return c.arith(b, op, "cmp")
	case "ctlzi", "cttzi", "ctpopi":
		return c.arith(b, op, rest)
	}
	ops, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	for _, s := range ops {
		if s.kind != kInt || s.comps != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s on %s", op.Name, s.typ)
		}
	}
	uni := allUni(ops...)
	if rest == "scale" {
		if err := arity(op, 2); err != nil {
			return nil, err
		}
		r, err := c.result(b, op, 0, uni)
		if err != nil {
			return nil, err
		}
		chk := &check{bad: func(x, y int64) bool {
			if x < 0 || y < 0 {
				return true
			}
			hi, _ := bits.Mul64(uint64(x), uint64(y))
			return hi != 0 || x*y < 0
		}, class: ErrOverflow, what: "index.scale result is negative or overflows the offset"}
		return c.fold2(op, r, ops[0], ops[1], "", 0, func(x, y int64) int64 { return x * y }, chk, c.postFor(r.typ))
	}
	if rest == "madd" {
		if err := arity(op, 3); err != nil {
			return nil, err
		}
		r, err := c.result(b, op, 0, uni)
		if err != nil {
			return nil, err
		}
		in := maddI(op, r, ops[0], ops[1], ops[2], c.postFor(r.typ))
		if r.typ.Kind == loom.TypeIndex && c.intBits(r.typ) < 64 && !r.uni && ops[0].uni && ops[1].uni {
			in = affineMadd(op, r, ops[0], ops[1], ops[2], in, c.k.tgt)
			c.metaUse(ops[2], op, 2)
			c.lazyCandidate(r, op)
		}
		return in, nil
	}
	sn, ok := indexNames[rest]
	if !ok {
		return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
	}
	if err := arity(op, 2); err != nil {
		return nil, err
	}
	r, err := c.result(b, op, 0, uni)
	if err != nil {
		return nil, err
	}
	nb := c.intBits(r.typ)
	if indexBitwise[rest] {
		// Loom defines the bitwise ops over the 64-bit logical value
		// (shift and rotate counts 0..63): compute them there, then hold
		// the result to the carrier's range like any index result.
		nb = 64
	}
	fn, pre := intBinary[sn](nb)
	if rest == "rotli" || rest == "rotri" {
		pre = shiftCheck(64)
	}
	post := c.postFor(r.typ)
	if rest == "shrui" && r.uni && r.comps == 1 && !(ops[0].cst && ops[1].cst) {
		return uniformShrui(op, r, ops[0], ops[1], pre, post), nil
	}
	if r.typ.Kind == loom.TypeOffset || nb >= 64 {
		// Values live in int64: detect wrap of the 64-bit carrier directly.
		unsigned := r.typ.Kind == loom.TypeOffset
		switch rest {
		case "add":
			pre = &check{bad: func(x, y int64) bool {
				if unsigned {
					s, carry := bits.Add64(uint64(x), uint64(y), 0)
					_ = s
					return carry != 0
				}
				s := x + y
				return (s^x)&(s^y) < 0
			}, class: ErrOverflow, what: r.typ.Name + " addition overflows"}
		case "sub":
			pre = &check{bad: func(x, y int64) bool {
				if unsigned {
					return uint64(x) < uint64(y)
				}
				d := x - y
				return (x^y)&(x^d) < 0
			}, class: ErrOverflow, what: r.typ.Name + " subtraction leaves the carrier"}
		case "mul":
			pre = &check{bad: func(x, y int64) bool {
				if unsigned {
					hi, _ := bits.Mul64(uint64(x), uint64(y))
					return hi != 0
				}
				hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
				return hi != 0 || lo > 1<<63-1
			}, class: ErrOverflow, what: r.typ.Name + " multiplication overflows"}
		}
	}
	in, err := c.fold2(op, r, ops[0], ops[1], sn, nb, fn, pre, post)
	if err == nil && in != nil && rest == "add" && r.typ.Kind == loom.TypeIndex && nb < 64 && !r.uni && (ops[0].uni != ops[1].uni) {
		in = affineAdd(op, r, ops[0], ops[1], in, c.k.tgt)
		if ops[0].uni {
			c.metaUse(ops[1], op, 1)
		} else {
			c.metaUse(ops[0], op, 0)
		}
		c.lazyCandidate(r, op)
	}
	return in, err
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// fold2 emits a binary int op, or computes it at Compile when both operands
// are known constants (so allocation sizes and vector shapes derived from
// constants are static). name and nb, when name is an intBinary op of
// nb bits, let it take fastBinI's loops.
func (c *compiler) fold2(op *loom.Op, r, a, b *slot, name string, nb int, f func(x, y int64) int64, pre *check, post postI) (instr, error) {
	if a.cst && b.cst && r.uni && r.comps == 1 {
		if pre == nil || !pre.bad(a.ci, b.ci) {
			v := f(a.ci, b.ci)
			ok := true
			switch {
			case post.wrap > 0:
				v = wrapBits(v, post.wrap)
			case post.ranged:
				ok = v >= post.lo && v <= post.hi
			}
			if ok {
				r.cst, r.ci = true, v
				return nil, nil
			}
		}
	}
	generic := binI(op, r, a, b, f, pre, post)
	if fast := fastBinI(name, nb, op, r, a, b, pre, post, generic); fast != nil {
		return fast, nil
	}
	return generic, nil
}

// uniformShrui is binI's one-value path for index.shrui (the halving
// strides of tree reductions run it every step): the same count check,
// messages and carrier bound, without calling the check and the op
// through function values.
func uniformShrui(op *loom.Op, r, a, b *slot, pre *check, post postI) instr {
	ai, bi, ri := a.idx, b.idx, r.idx // fixed once allocated
	hi := int64(math.MaxInt64)
	if post.ranged {
		hi = post.hi
	}
	return func(fr *frame) error {
		x, y := fr.I[ai][0], fr.I[bi][0]
		if uint64(y) >= 64 {
			return newTrap(op, -1, pre.class, "%s (operands %d, %d)", pre.what, x, y)
		}
		v := int64(uint64(x) >> uint(y))
		if v > hi {
			// a negative operand's 64-bit pattern shifted right
			return newTrap(op, -1, post.class, "%s %d does not fit the %d-bit carrier", post.what, uint64(v), carrierBits(post.lo, post.hi))
		}
		fr.I[ri][0] = v
		return nil
	}
}
