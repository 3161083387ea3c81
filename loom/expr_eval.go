package loom

import (
	"math"
	"math/bits"
)

// Eval computes e for the values in env. Index arithmetic is exact in int64
// and every index value must fit the target's index carrier; offsets are
// unsigned and must not wrap; iN arithmetic wraps in two's complement.
// Errors (class ErrEval) name the position of the op that failed.
func (e *Expr) Eval(env *Env) (Const, error) {
	if env == nil {
		env = &Env{}
	}
	t := env.Target.orDefault()
	return e.eval(env, t, 0)
}

const maxExprDepth = 10000

func (e *Expr) eval(env *Env, t Target, depth int) (Const, error) {
	if e == nil {
		return Const{}, evalErr(Pos{}, "missing expression")
	}
	if depth > maxExprDepth {
		return Const{}, evalErr(e.Pos, "expression nested too deeply")
	}
	switch e.Op {
	case ExprConst:
		c := e.Const
		if c.Type == nil {
			c.Type = e.Type
		}
		return c, nil
	case ExprWorkload, ExprLaunch:
		vals, what := env.Workload, "workload"
		if e.Op == ExprLaunch {
			vals, what = env.Launch, "launch"
		}
		if e.Arg < 0 || e.Arg >= len(vals) {
			return Const{}, evalErr(e.Pos, "%s argument %d not supplied (%d given)", what, e.Arg, len(vals))
		}
		c := vals[e.Arg]
		c.Type = e.Type
		if err := checkCarrier(c, t, e.Pos, what+" argument"); err != nil {
			return Const{}, err
		}
		return c, nil
	case ExprConfig:
		c, ok := env.Config[e.Symbol]
		if !ok {
			return Const{}, evalErr(e.Pos, "config value @%s not supplied", e.Symbol)
		}
		c.Type = e.Type
		return c, nil
	case ExprSubgroupSize:
		return Const{Type: e.Type, Int: int64(t.SubgroupSize)}, nil
	}
	// Operands live on the stack for every op (at most three): host
	// evaluation runs for every dispatch the runtime seals.
	var buf [3]Const
	args := buf[:0]
	for _, a := range e.Args {
		v, err := a.eval(env, t, depth+1)
		if err != nil {
			return Const{}, err
		}
		args = append(args, v)
	}
	need := 2
	switch e.Op {
	case ExprNeg, ExprCast:
		need = 1
	case ExprSelect:
		need = 3
	}
	if len(args) != need {
		return Const{}, evalErr(e.Pos, "%s expects %d operands, has %d", e.Op, need, len(args))
	}
	switch e.Op {
	case ExprSelect:
		if args[0].Int&1 != 0 {
			return retype(args[1], e.Type), nil
		}
		return retype(args[2], e.Type), nil
	case ExprCmp:
		return evalCmp(e, args[0], args[1], t)
	case ExprCast:
		return evalCast(e, args[0], t)
	}
	ty := e.Type
	if ty == nil {
		ty = args[0].Type
	}
	if ty == nil {
		return Const{}, evalErr(e.Pos, "%s has no type", e.Op)
	}
	switch ty.Kind {
	case TypeFloat:
		return evalFloat(e, ty, args)
	case TypeIndex:
		return evalIndex(e, ty, args, t)
	case TypeOffset:
		return evalOffset(e, ty, args, t)
	case TypeInt:
		return evalInt(e, ty, args)
	}
	return Const{}, evalErr(e.Pos, "%s on values of type %s cannot be evaluated", e.Op, ty)
}

func retype(c Const, t *Type) Const {
	if t != nil {
		c.Type = t
	}
	return c
}

// checkCarrier reports an index or offset value that its target carrier
// cannot hold.
func checkCarrier(c Const, t Target, pos Pos, what string) error {
	if c.Type == nil {
		return nil
	}
	switch c.Type.Kind {
	case TypeIndex:
		if b := t.IndexBits; b < 64 {
			lim := int64(1) << (b - 1)
			if c.Int < -lim || c.Int >= lim {
				return evalErr(pos, "%s %d does not fit the %d-bit index carrier of target %s", what, c.Int, b, t.Name)
			}
		}
	case TypeOffset:
		if b := t.OffsetBits; b < 64 && uint64(c.Int) >= uint64(1)<<b {
			return evalErr(pos, "%s %d does not fit the %d-bit offset carrier of target %s", what, uint64(c.Int), b, t.Name)
		}
	}
	return nil
}

func evalIndex(e *Expr, ty *Type, a []Const, t Target) (Const, error) {
	x := a[0].Int
	var y int64
	if len(a) > 1 {
		y = a[1].Int
	}
	var r int64
	ok := true
	switch e.Op {
	case ExprAdd:
		r = x + y
		ok = (y >= 0) == (r >= x)
	case ExprSub:
		r = x - y
		ok = (y >= 0) == (r <= x)
	case ExprMul:
		hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
		ok = hi == 0 && lo <= math.MaxInt64 && x != math.MinInt64 && y != math.MinInt64
		r = x * y
	case ExprDiv, ExprRem, ExprCeilDiv, ExprDivU, ExprRemU, ExprCeilDivU:
		if y == 0 {
			return Const{}, evalErr(e.Pos, "index %s by zero", e.Op)
		}
		if x < 0 || y < 0 {
			return Const{}, evalErr(e.Pos, "index %s of negative operands (%d, %d) is undefined", e.Op, x, y)
		}
		switch e.Op {
		case ExprDiv, ExprDivU:
			r = x / y
		case ExprRem, ExprRemU:
			r = x % y
		default:
			r = x / y
			if x%y != 0 {
				r++
			}
		}
	case ExprMin:
		r = min(x, y)
	case ExprMax:
		r = max(x, y)
	case ExprMinU:
		r = int64(min(uint64(x), uint64(y)))
	case ExprMaxU:
		r = int64(max(uint64(x), uint64(y)))
	case ExprAnd:
		r = x & y
	case ExprOr:
		r = x | y
	case ExprXor:
		r = x ^ y
	case ExprShl, ExprShrS, ExprShrU:
		// over the 64-bit logical value whatever the carrier (LOOM.md
		// 6.1); checkCarrier then bounds the result
		if y < 0 || y > 63 {
			return Const{}, evalErr(e.Pos, "index shift by %d is outside 0..63", y)
		}
		switch e.Op {
		case ExprShl:
			r = x << uint(y)
		case ExprShrS:
			r = x >> uint(y)
		default:
			r = int64(uint64(x) >> uint(y))
		}
	case ExprNeg:
		r = -x
		ok = x != math.MinInt64
	default:
		return Const{}, evalErr(e.Pos, "%s is not defined on index values", e.Op)
	}
	if !ok {
		return Const{}, evalErr(e.Pos, "index %s overflows", e.Op)
	}
	c := Const{Type: ty, Int: r}
	if err := checkCarrier(c, t, e.Pos, "index result"); err != nil {
		return Const{}, err
	}
	return c, nil
}

func carrierMask(b int) uint64 {
	if b >= 64 || b <= 0 {
		return math.MaxUint64
	}
	return uint64(1)<<b - 1
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func evalOffset(e *Expr, ty *Type, a []Const, t Target) (Const, error) {
	x := uint64(a[0].Int)
	var y uint64
	if len(a) > 1 {
		y = uint64(a[1].Int)
	}
	var r uint64
	ok := true
	switch e.Op {
	case ExprAdd:
		r = x + y
		ok = r >= x
	case ExprSub:
		r = x - y
		ok = x >= y
	case ExprMul:
		hi, lo := bits.Mul64(x, y)
		r, ok = lo, hi == 0
	case ExprDiv, ExprDivU, ExprRem, ExprRemU, ExprCeilDiv, ExprCeilDivU:
		if y == 0 {
			return Const{}, evalErr(e.Pos, "offset %s by zero", e.Op)
		}
		switch e.Op {
		case ExprDiv, ExprDivU:
			r = x / y
		case ExprRem, ExprRemU:
			r = x % y
		default:
			r = x / y
			if x%y != 0 {
				r++
			}
		}
	case ExprMin, ExprMinU:
		r = min(x, y)
	case ExprMax, ExprMaxU:
		r = max(x, y)
	case ExprAnd:
		r = x & y
	case ExprOr:
		r = x | y
	case ExprXor:
		r = x ^ y
	case ExprShl:
		if y >= 64 {
			return Const{}, evalErr(e.Pos, "offset shift by %d is outside 0..63", y)
		}
		r = x << y
		ok = r>>y == x
	case ExprShrU, ExprShrS:
		if y >= 64 {
			return Const{}, evalErr(e.Pos, "offset shift by %d is outside 0..63", y)
		}
		r = x >> y
	default:
		return Const{}, evalErr(e.Pos, "%s is not defined on offset values", e.Op)
	}
	if !ok {
		return Const{}, evalErr(e.Pos, "offset %s wraps around", e.Op)
	}
	c := Const{Type: ty, Int: int64(r)}
	if err := checkCarrier(c, t, e.Pos, "offset result"); err != nil {
		return Const{}, err
	}
	return c, nil
}

func evalInt(e *Expr, ty *Type, a []Const) (Const, error) {
	b := ty.Bits
	if b <= 0 || b > 64 {
		b = 64
	}
	m := carrierMask(b)
	x := a[0].Int
	var y int64
	if len(a) > 1 {
		y = a[1].Int
	}
	ux, uy := uint64(x)&m, uint64(y)&m
	var r int64
	switch e.Op {
	case ExprAdd:
		r = x + y
	case ExprSub:
		r = x - y
	case ExprMul:
		r = x * y
	case ExprDiv, ExprRem, ExprCeilDiv:
		if y == 0 {
			return Const{}, evalErr(e.Pos, "integer %s by zero", e.Op)
		}
		if x == math.MinInt64 && y == -1 {
			return Const{}, evalErr(e.Pos, "integer %s overflows", e.Op)
		}
		switch e.Op {
		case ExprDiv:
			r = x / y
		case ExprRem:
			r = x % y
		default:
			r = x / y
			if x%y != 0 && (x < 0) == (y < 0) {
				r++
			}
		}
	case ExprDivU, ExprRemU, ExprCeilDivU:
		if uy == 0 {
			return Const{}, evalErr(e.Pos, "integer %s by zero", e.Op)
		}
		switch e.Op {
		case ExprDivU:
			r = int64(ux / uy)
		case ExprRemU:
			r = int64(ux % uy)
		default:
			q := ux / uy
			if ux%uy != 0 {
				q++
			}
			r = int64(q)
		}
	case ExprMin:
		r = min(x, y)
	case ExprMax:
		r = max(x, y)
	case ExprMinU:
		r = int64(min(ux, uy))
	case ExprMaxU:
		r = int64(max(ux, uy))
	case ExprAnd:
		r = x & y
	case ExprOr:
		r = x | y
	case ExprXor:
		r = x ^ y
	case ExprShl, ExprShrS, ExprShrU:
		if uy >= uint64(b) {
			return Const{}, evalErr(e.Pos, "shift by %d is outside 0..%d for %s", uy, b-1, ty)
		}
		switch e.Op {
		case ExprShl:
			r = x << uy
		case ExprShrS:
			r = x >> uy
		default:
			r = int64(ux >> uy)
		}
	case ExprNeg:
		r = -x
	default:
		return Const{}, evalErr(e.Pos, "%s is not defined on %s values", e.Op, ty)
	}
	return Const{Type: ty, Int: wrapSigned(r, b)}, nil
}

func evalFloat(e *Expr, ty *Type, a []Const) (Const, error) {
	x := a[0].Float
	var y float64
	if len(a) > 1 {
		y = a[1].Float
	}
	var r float64
	switch e.Op {
	case ExprAdd:
		r = x + y
	case ExprSub:
		r = x - y
	case ExprMul:
		r = x * y
	case ExprDiv:
		r = x / y
	case ExprNeg:
		r = -x
	case ExprMin:
		r = math.Min(x, y)
	case ExprMax:
		r = math.Max(x, y)
	default:
		return Const{}, evalErr(e.Pos, "%s is not defined on %s values", e.Op, ty)
	}
	return Const{Type: ty, Float: roundFloat(r, ty)}, nil
}

func evalCmp(e *Expr, x, y Const, t Target) (Const, error) {
	res := func(b bool) (Const, error) {
		c := Const{Type: e.Type}
		if c.Type == nil {
			c.Type = typeBool
		}
		if b {
			c.Int = 1
		}
		return c, nil
	}
	if x.Type != nil && x.Type.Kind == TypeFloat {
		a, b := x.Float, y.Float
		unord := math.IsNaN(a) || math.IsNaN(b)
		switch e.Pred {
		case "oeq":
			return res(!unord && a == b)
		case "ogt":
			return res(!unord && a > b)
		case "oge":
			return res(!unord && a >= b)
		case "olt":
			return res(!unord && a < b)
		case "ole":
			return res(!unord && a <= b)
		case "one":
			return res(!unord && a != b)
		case "ord":
			return res(!unord)
		case "ueq":
			return res(unord || a == b)
		case "ugt":
			return res(unord || a > b)
		case "uge":
			return res(unord || a >= b)
		case "ult":
			return res(unord || a < b)
		case "ule":
			return res(unord || a <= b)
		case "une":
			return res(unord || a != b)
		case "uno":
			return res(unord)
		}
		return Const{}, evalErr(e.Pos, "unknown float comparison %q", e.Pred)
	}
	w := 64
	if x.Type != nil {
		switch x.Type.Kind {
		case TypeInt:
			w = x.Type.Bits
		case TypeIndex:
			w = t.IndexBits
		case TypeOffset:
			w = t.OffsetBits
		}
	}
	a, b := x.Int, y.Int
	ua, ub := uint64(a)&carrierMask(w), uint64(b)&carrierMask(w)
	if x.Type != nil && x.Type.Kind == TypeOffset {
		// Offsets are unsigned: signed predicates compare magnitudes too.
		switch e.Pred {
		case "slt":
			return res(ua < ub)
		case "sle":
			return res(ua <= ub)
		case "sgt":
			return res(ua > ub)
		case "sge":
			return res(ua >= ub)
		}
	}
	switch e.Pred {
	case "eq":
		return res(ua == ub)
	case "ne":
		return res(ua != ub)
	case "slt":
		return res(a < b)
	case "sle":
		return res(a <= b)
	case "sgt":
		return res(a > b)
	case "sge":
		return res(a >= b)
	case "ult":
		return res(ua < ub)
	case "ule":
		return res(ua <= ub)
	case "ugt":
		return res(ua > ub)
	case "uge":
		return res(ua >= ub)
	}
	return Const{}, evalErr(e.Pos, "unknown integer comparison %q", e.Pred)
}

func evalCast(e *Expr, x Const, t Target) (Const, error) {
	to := e.Type
	if to == nil {
		return Const{}, evalErr(e.Pos, "cast without a target type")
	}
	from := x.Type
	out := Const{Type: to}
	srcBits := 64
	if from != nil && from.Kind == TypeInt {
		srcBits = from.Bits
	}
	switch e.Pred {
	case "index":
		switch to.Kind {
		case TypeIndex:
			v := x.Int
			if from != nil && from.Kind == TypeOffset && v < 0 {
				return Const{}, evalErr(e.Pos, "offset %d does not fit an index", uint64(v))
			}
			if from != nil && from.Kind == TypeInt && from.Bits == 1 {
				v &= 1
			}
			out.Int = v
			return out, checkCarrier(out, t, e.Pos, "cast result")
		case TypeOffset:
			v := x.Int
			if from != nil && from.Kind == TypeInt && from.Bits < 64 {
				v = int64(uint64(v) & carrierMask(from.Bits))
			} else if v < 0 && (from == nil || from.Kind != TypeOffset) {
				return Const{}, evalErr(e.Pos, "negative value %d cannot become an offset", v)
			}
			out.Int = v
			return out, checkCarrier(out, t, e.Pos, "cast result")
		case TypeInt:
			out.Int = wrapSigned(x.Int, to.Bits)
			return out, nil
		}
	case "extsi", "trunci":
		if to.Kind == TypeInt {
			out.Int = wrapSigned(x.Int, to.Bits)
			return out, nil
		}
	case "extui":
		if to.Kind == TypeInt {
			out.Int = wrapSigned(int64(uint64(x.Int)&carrierMask(srcBits)), to.Bits)
			return out, nil
		}
	case "sitofp":
		out.Float = roundFloat(float64(x.Int), to)
		return out, nil
	case "uitofp":
		out.Float = roundFloat(float64(uint64(x.Int)&carrierMask(srcBits)), to)
		return out, nil
	case "fptosi", "fptoui":
		f := math.Trunc(x.Float)
		b := 64
		if to.Kind == TypeInt {
			b = to.Bits
		}
		lo, hi := -math.Ldexp(1, b-1), math.Ldexp(1, b-1)
		if e.Pred == "fptoui" {
			lo, hi = 0, math.Ldexp(1, b)
		}
		if math.IsNaN(f) || f < lo || f >= hi {
			return Const{}, evalErr(e.Pos, "%s of %v does not fit %s", e.Pred, x.Float, to)
		}
		if e.Pred == "fptoui" {
			out.Int = wrapSigned(int64(uint64(f)), b)
		} else {
			out.Int = int64(f)
		}
		return out, nil
	case "extf", "fptrunc":
		out.Float = roundFloat(x.Float, to)
		return out, nil
	case "bitcast":
		switch {
		case to.Kind == TypeInt && to.Bits == 32 && from != nil && from.Name == "f32":
			out.Int = int64(int32(math.Float32bits(float32(x.Float))))
			return out, nil
		case to.Kind == TypeInt && to.Bits == 64 && from != nil && from.Name == "f64":
			out.Int = int64(math.Float64bits(x.Float))
			return out, nil
		case to.Name == "f32" && from != nil && from.Kind == TypeInt && from.Bits == 32:
			out.Float = float64(math.Float32frombits(uint32(x.Int)))
			return out, nil
		case to.Name == "f64" && from != nil && from.Kind == TypeInt && from.Bits == 64:
			out.Float = math.Float64frombits(uint64(x.Int))
			return out, nil
		case from != nil && from.Kind == to.Kind && from.Bits == to.Bits:
			out.Int, out.Float = x.Int, x.Float
			return out, nil
		}
	}
	return Const{}, evalErr(e.Pos, "cast %s from %s to %s cannot be evaluated", e.Pred, from, to)
}
