package interp

import (
	"math"
	"math/bits"

	"github.com/loomgen/loomgen/loom"
)

// intBits is the bit width integer ops on t work at.
func (c *compiler) intBits(t *loom.Type) int {
	switch t.Kind {
	case loom.TypeIndex:
		return c.k.tgt.indexBits
	case loom.TypeOffset:
		return c.k.tgt.offsetBits
	}
	return t.Bits
}

// arith compiles scalar.* ops and the lane-wise vector.* ops of the same
// names (vector registers are just wider).
func (c *compiler) arith(b *block, op *loom.Op, name string) (instr, error) {
	switch name {
	case "constant":
		return nil, c.constant(b, op)
	case "poison":
		t, err := opType(op)
		if err != nil {
			return nil, err
		}
		s, err := c.newSlot(op.Pos, t, true)
		if err != nil {
			return nil, err
		}
		return nil, c.bind(b, op, 0, s)
	case "assume":
		ops, err := c.operands(b, op)
		if err != nil {
			return nil, err
		}
		for i := range op.Results {
			if i < len(ops) {
				b.sc.vals[op.Results[i].Name] = ops[i]
			}
		}
		return nil, nil
	}
	ops, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 {
		return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
	}
	uni := allUni(ops...)
	for _, s := range ops[1:] {
		if s.comps != ops[0].comps && s.comps != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s: operands of different shapes", op.Name)
		}
	}
	if castOps[name] {
		return c.cast(b, op, name, ops[0])
	}
	r, err := c.result(b, op, 0, uni)
	if err != nil {
		return nil, err
	}
	if r.comps != ops[0].comps {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: result shape differs from its operands", op.Name)
	}
	for _, s := range ops[1:] {
		if s.comps != r.comps {
			return nil, compileErr(op.Pos, ErrUnsupported, "%s: mixing vector and scalar operands", op.Name)
		}
	}
	need := func(n int) error {
		if len(ops) != n {
			return compileErr(op.Pos, ErrInvalid, "%s takes %d operands, has %d", op.Name, n, len(ops))
		}
		return nil
	}
	a := ops[0]
	if a.kind == kInt {
		t := a.typ
		nb := c.intBits(t)
		post := c.postFor(r.typ)
		if r.kind != kInt {
			return nil, compileErr(op.Pos, ErrInvalid, "%s: result must be an integer", op.Name)
		}
		if name == "cmpi" || name == "cmp" {
			if err := need(2); err != nil {
				return nil, err
			}
			f := intCompare(op.Pred, nb)
			if f == nil {
				return nil, compileErr(op.Pos, ErrInvalid, "%s: unknown predicate %q", op.Name, op.Pred)
			}
			if fast := fastCmpI(op.Pred, nb, r, a, ops[1]); fast != nil {
				if t.Kind == loom.TypeIndex && nb < 64 && !a.uni && ops[1].uni && a.comps == 1 {
					if ac := affineCmp(op.Pred, r, a, ops[1], fast, len(op.Results) == 1 && c.condOnly[op.Results[0].Name]); ac != nil {
						c.metaUse(a, op, 0)
						return ac, nil
					}
				}
				return fast, nil
			}
			return cmpI(r, a, ops[1], f), nil
		}
		if f, ok := intBinary[name]; ok {
			if err := need(2); err != nil {
				return nil, err
			}
			fn, pre := f(nb)
			generic := binI(op, r, a, ops[1], fn, pre, post)
			if fast := fastBinI(name, nb, op, r, a, ops[1], pre, post, generic); fast != nil {
				return fast, nil
			}
			return generic, nil
		}
		if f, ok := intUnary[name]; ok {
			if err := need(1); err != nil {
				return nil, err
			}
			if t.Kind == loom.TypeIndex {
				// index bit counts are over the 64-bit logical value
				// (Loom's index facts), whatever the carrier: its
				// sign-extended value is that value.
				nb = 64
			}
			return unI(op, r, a, f(nb), post), nil
		}
		if name == "fmai" {
			if err := need(3); err != nil {
				return nil, err
			}
			return maddI(op, r, a, ops[1], ops[2], post), nil
		}
		if name == "signi" {
			return unI(op, r, a, func(x int64) int64 {
				switch {
				case x > 0:
					return 1
				case x < 0:
					return -1
				}
				return 0
			}, post), nil
		}
		return nil, compileErr(op.Pos, ErrUnsupported, "op %s on %s is not supported by the CPU executor", op.Name, t)
	}
	if a.kind != kFloat {
		return nil, compileErr(op.Pos, ErrInvalid, "%s on %s", op.Name, a.typ)
	}
	if name == "cmpf" {
		if err := need(2); err != nil {
			return nil, err
		}
		f := floatCompare(op.Pred)
		if f == nil {
			return nil, compileErr(op.Pos, ErrInvalid, "%s: unknown predicate %q", op.Name, op.Pred)
		}
		return cmpF(r, a, ops[1], f), nil
	}
	if p, ok := floatPredicates[name]; ok {
		return f2i(op, r, a, p, postI{}), nil
	}
	if r.kind != kFloat {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: result must be a float", op.Name)
	}
	rnd, err := floatFormat(op.Pos, r.typ)
	if err != nil {
		return nil, err
	}
	if f, ok := floatBinary[name]; ok {
		if err := need(2); err != nil {
			return nil, err
		}
		if fast := fastBinF(name, r, a, ops[1], rnd); fast != nil {
			return fast, nil
		}
		return binF(r, a, ops[1], f, rnd), nil
	}
	if f, ok := floatUnary[name]; ok {
		if err := need(1); err != nil {
			return nil, err
		}
		if name == "expf" && rnd.kind == fF32 && a.typ != nil && a.typ.Name == "f32" {
			return expF32Lanes(r, a), nil
		}
		return unF(r, a, f, rnd), nil
	}
	switch name {
	case "fmaf":
		if err := need(3); err != nil {
			return nil, err
		}
		if rnd.kind != fMini {
			return fastFMA(r, a, ops[1], ops[2], rnd.kind == fF32), nil
		}
		return terF(r, a, ops[1], ops[2], rnd.fma, rnd), nil
	case "clampf":
		if err := need(3); err != nil {
			return nil, err
		}
		var f func(x, lo, hi float64) float64
		switch loom.ClampfMode(op.Param) {
		case "ordered":
			f = func(x, lo, hi float64) float64 {
				if x < lo {
					x = lo
				}
				if x > hi {
					x = hi
				}
				return x
			}
		case "number":
			f = func(x, lo, hi float64) float64 { return minnumF(maxnumF(x, lo), hi) }
		case "ieee":
			f = func(x, lo, hi float64) float64 { return minimumF(maximumF(x, lo), hi) }
		default:
			return nil, compileErr(op.Pos, ErrUnsupported, "scalar.clampf<%s>", op.Param)
		}
		return terF(r, a, ops[1], ops[2], f, rnd), nil
	case "geluf":
		if err := need(1); err != nil {
			return nil, err
		}
		var f func(x float64) float64
		switch loom.GeluVariant(op.Param) {
		case "erf":
			f = func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
		case "tanh":
			k := math.Sqrt(2 / math.Pi)
			f = func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(k*(x+0.044715*x*x*x))) }
		case "logistic":
			s := loom.GeluScale(op)
			f = func(x float64) float64 { return x * logistic(s*x) }
		default:
			return nil, compileErr(op.Pos, ErrUnsupported, "scalar.geluf<%s>", op.Param)
		}
		return unF(r, a, f, rnd), nil
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
}

func (c *compiler) constant(b *block, op *loom.Op) error {
	t, err := opType(op)
	if err != nil {
		return err
	}
	if op.Literal == nil {
		return compileErr(op.Pos, ErrInvalid, "%s without a value", op.Name)
	}
	lit := op.Literal
	s, err := c.newSlot(op.Pos, t, true)
	if err != nil {
		return err
	}
	switch s.kind {
	case kInt:
		var v int64
		switch lit.Kind {
		case loom.LitInt, loom.LitBool:
			v = lit.Int
		default:
			return compileErr(op.Pos, ErrInvalid, "%s: %s is not an integer", op.Name, lit.Text)
		}
		et := s.typ
		switch et.Kind {
		case loom.TypeInt:
			v = wrapBits(v, et.Bits)
		case loom.TypeIndex:
			if v < c.k.tgt.indexMin || v > c.k.tgt.indexMax {
				return compileErr(op.Pos, ErrOverflow, "index constant %d does not fit the %d-bit carrier", v, c.k.tgt.indexBits)
			}
		}
		if s.comps == 1 {
			s.cst, s.ci = true, v
		} else {
			c.k.inits = append(c.k.inits, constInit{s: s, i: v})
		}
	case kFloat:
		var v float64
		switch lit.Kind {
		case loom.LitFloat:
			v = lit.Float
		case loom.LitInt:
			v = float64(lit.Int)
		default:
			return compileErr(op.Pos, ErrInvalid, "%s: %s is not a number", op.Name, lit.Text)
		}
		f, _ := floatFormat(op.Pos, s.typ)
		c.k.inits = append(c.k.inits, constInit{s: s, f: f.round(v)})
	default:
		return compileErr(op.Pos, ErrUnsupported, "%s of type %s", op.Name, t)
	}
	return c.bind(b, op, 0, s)
}

func intCompare(pred string, nb int) func(x, y int64) bool {
	switch pred {
	case "eq":
		return func(x, y int64) bool { return x == y }
	case "ne":
		return func(x, y int64) bool { return x != y }
	case "slt":
		return func(x, y int64) bool { return x < y }
	case "sle":
		return func(x, y int64) bool { return x <= y }
	case "sgt":
		return func(x, y int64) bool { return x > y }
	case "sge":
		return func(x, y int64) bool { return x >= y }
	case "ult":
		return func(x, y int64) bool { return zext(x, nb) < zext(y, nb) }
	case "ule":
		return func(x, y int64) bool { return zext(x, nb) <= zext(y, nb) }
	case "ugt":
		return func(x, y int64) bool { return zext(x, nb) > zext(y, nb) }
	case "uge":
		return func(x, y int64) bool { return zext(x, nb) >= zext(y, nb) }
	}
	return nil
}

func floatCompare(pred string) func(x, y float64) bool {
	uno := func(x, y float64) bool { return x != x || y != y }
	switch pred {
	case "oeq":
		return func(x, y float64) bool { return x == y }
	case "ogt":
		return func(x, y float64) bool { return x > y }
	case "oge":
		return func(x, y float64) bool { return x >= y }
	case "olt":
		return func(x, y float64) bool { return x < y }
	case "ole":
		return func(x, y float64) bool { return x <= y }
	case "one":
		return func(x, y float64) bool { return x < y || x > y }
	case "ord":
		return func(x, y float64) bool { return !uno(x, y) }
	case "ueq":
		return func(x, y float64) bool { return uno(x, y) || x == y }
	case "ugt":
		return func(x, y float64) bool { return uno(x, y) || x > y }
	case "uge":
		return func(x, y float64) bool { return uno(x, y) || x >= y }
	case "ult":
		return func(x, y float64) bool { return uno(x, y) || x < y }
	case "ule":
		return func(x, y float64) bool { return uno(x, y) || x <= y }
	case "une":
		return func(x, y float64) bool { return x != y }
	case "uno":
		return uno
	case "true":
		return func(x, y float64) bool { return true }
	case "false":
		return func(x, y float64) bool { return false }
	}
	return nil
}

var divZero = &check{bad: func(_, y int64) bool { return y == 0 }, class: ErrDivideByZero, what: "integer division by zero"}

func shiftCheck(nb int) *check {
	return &check{bad: func(_, y int64) bool { return y < 0 || y >= int64(nb) }, class: ErrShift,
		what: "shift count not below the operand width"}
}

// intBinary maps an op name (without dialect) to its function at a bit
// width, with an optional operand check.
var intBinary = map[string]func(nb int) (func(x, y int64) int64, *check){
	"addi": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return x + y }, nil },
	"subi": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return x - y }, nil },
	"muli": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return x * y }, nil },
	"divsi": func(int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			return x / y
		}, divZero
	},
	"remsi": func(int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			return x % y
		}, divZero
	},
	"divui": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			return int64(zext(x, nb) / zext(y, nb))
		}, divZero
	},
	"remui": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			return int64(zext(x, nb) % zext(y, nb))
		}, divZero
	},
	"ceildivsi": func(int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			q := x / y
			if x%y != 0 && (x < 0) == (y < 0) {
				q++
			}
			return q
		}, divZero
	},
	"ceildivui": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			a, b := zext(x, nb), zext(y, nb)
			q := a / b
			if a%b != 0 {
				q++
			}
			return int64(q)
		}, divZero
	},
	"floordivsi": func(int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y == 0 {
				return 0
			}
			q := x / y
			if x%y != 0 && (x < 0) != (y < 0) {
				q--
			}
			return q
		}, divZero
	},
	"minsi": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return min(x, y) }, nil },
	"maxsi": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return max(x, y) }, nil },
	"minui": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if zext(x, nb) <= zext(y, nb) {
				return x
			}
			return y
		}, nil
	},
	"maxui": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if zext(x, nb) >= zext(y, nb) {
				return x
			}
			return y
		}, nil
	},
	"andi": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return x & y }, nil },
	"ori":  func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return x | y }, nil },
	"xori": func(int) (func(x, y int64) int64, *check) { return func(x, y int64) int64 { return x ^ y }, nil },
	"shli": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y < 0 || y >= 64 {
				return 0
			}
			return x << uint(y)
		}, shiftCheck(nb)
	},
	"shrsi": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y < 0 || y >= 64 {
				return 0
			}
			return x >> uint(y)
		}, shiftCheck(nb)
	},
	"shrui": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 {
			if y < 0 || y >= 64 {
				return 0
			}
			return int64(zext(x, nb) >> uint(y))
		}, shiftCheck(nb)
	},
	"rotli": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 { return rot(x, y, nb) }, nil
	},
	"rotri": func(nb int) (func(x, y int64) int64, *check) {
		return func(x, y int64) int64 { return rot(x, -y, nb) }, nil
	},
}

// rot rotates the low nb bits of x left by k (mod nb).
func rot(x, k int64, nb int) int64 {
	n := int64(nb)
	k %= n
	if k < 0 {
		k += n
	}
	u := zext(x, nb)
	if k == 0 {
		return int64(u)
	}
	mask := uint64(1)<<uint(nb) - 1
	if nb == 64 {
		mask = ^uint64(0)
	}
	return int64((u<<uint(k) | u>>uint(n-k)) & mask)
}

var intUnary = map[string]func(nb int) func(x int64) int64{
	"negi": func(int) func(x int64) int64 { return func(x int64) int64 { return -x } },
	"absi": func(int) func(x int64) int64 {
		return func(x int64) int64 {
			if x < 0 {
				return -x
			}
			return x
		}
	},
	"ctlzi": func(nb int) func(x int64) int64 {
		return func(x int64) int64 { return int64(bits.LeadingZeros64(zext(x, nb)) - (64 - nb)) }
	},
	"cttzi": func(nb int) func(x int64) int64 {
		return func(x int64) int64 {
			u := zext(x, nb)
			if u == 0 {
				return int64(nb)
			}
			return int64(bits.TrailingZeros64(u))
		}
	},
	"ctpopi": func(nb int) func(x int64) int64 {
		return func(x int64) int64 { return int64(bits.OnesCount64(zext(x, nb))) }
	},
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var floatBinary = map[string]func(x, y float64) float64{
	"addf":      func(x, y float64) float64 { return x + y },
	"subf":      func(x, y float64) float64 { return x - y },
	"mulf":      func(x, y float64) float64 { return x * y },
	"divf":      func(x, y float64) float64 { return x / y },
	"remf":      math.Mod,
	"minimumf":  minimumF,
	"maximumf":  maximumF,
	"minnumf":   minnumF,
	"maxnumf":   maxnumF,
	"copysignf": math.Copysign,
	"powf":      math.Pow,
	"atan2f":    math.Atan2,
}

var floatUnary = map[string]func(x float64) float64{
	"negf":       func(x float64) float64 { return -x },
	"absf":       math.Abs,
	"sqrtf":      math.Sqrt,
	"rsqrtf":     func(x float64) float64 { return 1 / math.Sqrt(x) },
	"cbrtf":      math.Cbrt,
	"expf":       math.Exp,
	"exp2f":      math.Exp2,
	"expm1f":     math.Expm1,
	"logf":       math.Log,
	"log2f":      math.Log2,
	"log10f":     math.Log10,
	"log1pf":     math.Log1p,
	"sinf":       math.Sin,
	"cosf":       math.Cos,
	"tanf":       math.Tan,
	"asinf":      math.Asin,
	"acosf":      math.Acos,
	"atanf":      math.Atan,
	"sinhf":      math.Sinh,
	"coshf":      math.Cosh,
	"tanhf":      math.Tanh,
	"asinhf":     math.Asinh,
	"acoshf":     math.Acosh,
	"atanhf":     math.Atanh,
	"erff":       math.Erf,
	"erfcf":      math.Erfc,
	"logisticf":  logistic,
	"siluf":      func(x float64) float64 { return x * logistic(x) },
	"softplusf":  func(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) },
	"ceilf":      math.Ceil,
	"floorf":     math.Floor,
	"roundf":     math.Round,
	"roundevenf": math.RoundToEven,
	"truncf":     math.Trunc,
	"sinturnsf":  func(x float64) float64 { return math.Sin(2 * math.Pi * math.Mod(x, 1)) },
	"costurnsf":  func(x float64) float64 { return math.Cos(2 * math.Pi * math.Mod(x, 1)) },
	"signf": func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return x
	},
}

var floatPredicates = map[string]func(x float64) int64{
	"isnanf": func(x float64) int64 { return b2i(math.IsNaN(x)) },
	"isinff": func(x float64) int64 { return b2i(math.IsInf(x, 0)) },
	"isfinitef": func(x float64) int64 {
		return b2i(!math.IsNaN(x) && !math.IsInf(x, 0))
	},
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
