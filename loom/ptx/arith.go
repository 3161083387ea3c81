package ptx

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// intOp describes an integer binary op: the PTX mnemonic and which suffix
// family it takes ('s' signed, 'u' unsigned, 'b' untyped).
type intOp struct {
	mnem string
	sign byte
}

var intBinary = map[string]intOp{
	"add": {"add", 's'}, "addi": {"add", 's'},
	"sub": {"sub", 's'}, "subi": {"sub", 's'},
	"mul": {"mul.lo", 's'}, "muli": {"mul.lo", 's'},
	"div": {"div", 's'}, "divsi": {"div", 's'}, "divui": {"div", 'u'},
	"rem": {"rem", 's'}, "remsi": {"rem", 's'}, "remui": {"rem", 'u'},
	"min": {"min", 's'}, "minsi": {"min", 's'}, "minui": {"min", 'u'},
	"max": {"max", 's'}, "maxsi": {"max", 's'}, "maxui": {"max", 'u'},
	"andi": {"and", 'b'}, "ori": {"or", 'b'}, "xori": {"xor", 'b'},
	"shli": {"shl", 'b'}, "shrsi": {"shr", 's'}, "shrui": {"shr", 'u'},
}

// floatBinary maps Loom float ops to PTX. The .rn on add/sub/mul keeps
// ptxas from contracting them into fma, so results match the CPU executor
// bit for bit.
var floatBinary = map[string]string{
	"addf": "add.rn", "subf": "sub.rn", "mulf": "mul.rn", "divf": "div.rn",
	"maxnumf": "max", "minnumf": "min", "maximumf": "max.NaN", "minimumf": "min.NaN",
}

var floatRound = map[string]string{
	"ceilf": "rpi", "floorf": "rmi", "truncf": "rzi", "roundevenf": "rni",
}

var castOps = map[string]bool{
	"sitofp": true, "uitofp": true, "fptosi": true, "fptoui": true, "extf": true,
	"fptrunc": true, "extsi": true, "extui": true, "trunci": true, "bitcast": true,
}

// wideIndexOK are the index ops that read a wide operand (val.wide) as its
// 32 bits, exactly: the result's low 32 bits and, for a non-negative
// result below 2^32 (all Loom allows), its value.
var wideIndexOK = map[string]bool{"add": true, "sub": true, "mul": true, "madd": true,
	"andi": true, "ori": true, "xori": true, "shli": true, "shrui": true}

// refuseWide reports a wide operand of an op that would read it signed.
func refuseWide(op *loom.Op, a []*val) error {
	for _, v := range a {
		if v.wide {
			return unsupported(op, "an index operand that may exceed 2^31-1 (a 32-bit index carrier holds it unsigned); PTX lowers add, sub, mul, madd, bitwise ops, shrui, unsigned compares and widening of such values")
		}
	}
	return nil
}

func anyWide(a []*val) bool {
	for _, v := range a {
		if v.wide {
			return true
		}
	}
	return false
}

func (e *emitter) arith(op *loom.Op, rest string) error {
	if strings.HasPrefix(op.Name, "index.") && indexShifts[rest] {
		return e.indexShift(op, rest)
	}
	if strings.HasPrefix(op.Name, "index.") && rest != "constant" && rest != "cast" && rest != "scale" && rest != "cmp" && rest != "assume" {
		a, err := e.operands(op, 0)
		if err != nil {
			return err
		}
		if anyWide(a) {
			if !wideIndexOK[rest] {
				return refuseWide(op, a)
			}
			defer func() {
				if len(op.Results) > 0 {
					if v := e.vals[op.Results[0]]; v != nil {
						c := *v
						c.wide, c.known = true, false
						e.vals[op.Results[0]] = &c
					}
				}
			}()
		}
	}
	switch rest {
	case "constant":
		return e.constant(op)
	case "poison":
		// Poison may be any value (LOOM.md 6.2); zero keeps the register
		// defined, as vector.poison's lanes, and matches the CPU executor.
		t := resultType(op, 0)
		if err := scalarOK(op, t); err != nil {
			return err
		}
		if isFloat(t) {
			return e.define(op, 0, e.constFloat(t, 0))
		}
		return e.define(op, 0, e.constInt(t, 0))
	case "assume":
		for i, o := range op.Operands {
			v, err := e.get(o)
			if err != nil {
				return err
			}
			if i < len(op.Results) {
				e.vals[op.Results[i]] = v
			}
		}
		return nil
	case "cast":
		return e.indexCast(op)
	case "scale":
		if err := need(op, 2); err != nil {
			return err
		}
		a, err := e.operands(op, 0)
		if err != nil {
			return err
		}
		w := e.widen64(a[0], !a[0].wide)
		out := e.newVal(offsetType)
		e.ins("mul.lo.s64 %s, %s, %s", out.reg, w.reg, a[1].reg)
		return e.define(op, 0, out)
	case "cmp", "cmpi":
		return e.intCompare(op)
	case "cmpf":
		return e.floatCompare(op)
	case "isnanf", "isinff", "isfinitef":
		return e.floatClass(op, rest)
	}
	if castOps[rest] {
		return e.scalarCast(op, rest)
	}
	t := resultType(op, 0)
	if err := scalarOK(op, t); err != nil {
		return err
	}
	args, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	for _, a := range args {
		if a.t == nil || !a.t.IsScalar() {
			return invalid(op.Pos, "%s: operand of type %s", op.Name, typeName(a.t))
		}
	}
	if isFloat(t) {
		return e.floatArith(op, rest, t, args)
	}
	return e.intArith(op, rest, t, args)
}

func (e *emitter) constant(op *loom.Op) error {
	t := resultType(op, 0)
	if err := scalarOK(op, t); err != nil {
		return err
	}
	l := op.Literal
	if l == nil {
		return invalid(op.Pos, "%s without a literal", op.Name)
	}
	switch l.Kind {
	case loom.LitInt, loom.LitBool:
		if isFloat(t) {
			return e.define(op, 0, e.constFloat(t, float64(l.Int)))
		}
		if t.Kind == loom.TypeIndex && (l.Int < -1<<31 || l.Int >= 1<<31) {
			// Loom's 32-bit index carrier holds [-2^31, 2^32); the upper
			// half is a non-negative value held unsigned.
			if l.Int < -1<<31 || l.Int >= 1<<32 {
				return invalid(op.Pos, "index constant %d does not fit the 32-bit index carrier ([-2^31, 2^32))", l.Int)
			}
			out := e.newVal(t)
			out.wide, out.nonneg = true, true
			e.ins("mov.b32 %s, %d", out.reg, uint32(l.Int))
			return e.define(op, 0, out)
		}
		return e.define(op, 0, e.constInt(t, l.Int))
	case loom.LitFloat:
		if !isFloat(t) {
			return invalid(op.Pos, "float literal %s for type %s", l.Text, t)
		}
		return e.define(op, 0, e.constFloat(t, l.Float))
	}
	c, err := loom.ParseConst(t, l.Text)
	if err != nil {
		return invalid(op.Pos, "%v", err)
	}
	if isFloat(t) {
		return e.define(op, 0, e.constFloat(t, c.Float))
	}
	return e.define(op, 0, e.constInt(t, c.Int))
}

// sext re-normalises a small integer register after arithmetic.
func (e *emitter) sext(v *val) {
	if v.t.Kind == loom.TypeInt && v.t.Bits > 1 && v.t.Bits < 32 {
		e.ins("cvt.s32.s%d %s, %s", v.t.Bits, v.reg, v.reg)
	}
}

// zext returns a small integer's zero-extended value (the unsigned view).
func (e *emitter) zext(v *val) *val {
	if v.t.Kind != loom.TypeInt || v.t.Bits <= 1 || v.t.Bits >= 32 {
		return v
	}
	out := &val{t: v.t, reg: e.newReg(cR)}
	if w, sh, n := v.word, v.wordShift, v.t.Bits; w != "" && (sh == 0 || sh+n == 32) {
		// The low or the high lane of a loaded word, zero-extended from
		// the word itself: one mask or shift, where masking the
		// sign-extended lane left ptxas a sign extension and a mask.
		// Middle lanes stay as they were: ptxas packs those into prmt
		// sequences that a prmt or bfe here would hide from it.
		if sh == 0 {
			e.ins("and.b32 %s, %s, %d", out.reg, w, (int64(1)<<n)-1)
		} else {
			e.ins("shr.u32 %s, %s, %d", out.reg, w, sh)
		}
		return out
	}
	e.ins("and.b32 %s, %s, %d", out.reg, v.reg, (int64(1)<<v.t.Bits)-1)
	return out
}

// predToInt turns an i1 into 0/1 (or 0/-1 when signed) in a 32-bit register.
func (e *emitter) predToInt(p *val, signed bool) *val {
	out := &val{t: i32Type, reg: e.newReg(cR)}
	one := 1
	if signed {
		one = -1
	}
	e.ins("selp.s32 %s, %d, 0, %s", out.reg, one, p.reg)
	return out
}

// intToPred takes the low bit of an integer register.
func (e *emitter) intToPred(v *val) *val {
	out := e.newVal(i1Type)
	t := e.newReg(classOf(v.t))
	e.ins("and.%s %s, %s, 1", bType(v.t), t, v.reg)
	e.ins("setp.ne.%s %s, %s, 0", bType(v.t), out.reg, t)
	return out
}

// widen64 converts a 32-bit integer register to 64 bits.
func (e *emitter) widen64(v *val, signed bool) *val {
	if classOf(v.t) == cRd {
		return v
	}
	out := &val{t: offsetType, reg: e.newReg(cRd)}
	if signed {
		e.ins("cvt.s64.s32 %s, %s", out.reg, v.reg)
	} else {
		e.ins("cvt.u64.u32 %s, %s", out.reg, e.zext(v).reg)
	}
	return out
}

func (e *emitter) intArith(op *loom.Op, rest string, t *loom.Type, a []*val) error {
	out := e.newVal(t)
	if classOf(t) == cPred {
		m := map[string]string{"andi": "and", "ori": "or", "xori": "xor"}[rest]
		if m == "" || len(a) != 2 {
			return unsupported(op, "i1 operands")
		}
		e.ins("%s.pred %s, %s, %s", m, out.reg, a[0].reg, a[1].reg)
		return e.define(op, 0, out)
	}
	switch {
	case len(a) == 2:
		ib, ok := intBinary[rest]
		if !ok {
			break
		}
		x, y := a[0], a[1]
		suffix := sType(t)
		switch ib.sign {
		case 'u':
			suffix = uType(t)
			x, y = e.zext(x), e.zext(y)
		case 'b':
			suffix = bType(t)
		}
		if (ib.mnem == "div" || ib.mnem == "rem") && y.known && y.ci > 0 && e.divConst(rest, out, x, y.ci) {
			// Shifts, masks or a magic multiply (divconst.go); two
			// constants fold.
			setP2(rest, out, a) // an exact division keeps alignment facts
			return e.define(op, 0, out)
		}
		if rest == "shli" || rest == "shrsi" || rest == "shrui" {
			if classOf(y.t) == cRd {
				n := e.newReg(cR)
				e.ins("cvt.u32.u64 %s, %s", n, y.reg)
				y = &val{t: i32Type, reg: n}
			}
		}
		var f *bitField
		if isI32(t) {
			f = opField(rest, a[0], a[1])
		}
		if f != nil && f.whole() {
			// the lanes of a word put back together: the word
			e.ins("mov.b32 %s, %s", out.reg, f.word)
			out.field = f
			return e.define(op, 0, out)
		}
		if rest == "ori" && isI32(t) {
			if lo, hi, sel, ok := halvesSelector(a[0], a[1]); ok {
				e.ins("prmt.b32 %s, %s, %s, 0x%04x", out.reg, lo, hi, sel)
				return e.define(op, 0, out)
			}
			if m, ok := disjointSum(a[0], a[1]); ok {
				e.ins("mul.lo.s32 %s, %s, %d", out.reg, m.x.reg, int32(m.k))
				out.mul, out.zeros = &m, a[0].zeros&a[1].zeros
				return e.define(op, 0, out)
			}
		}
		e.ins("%s.%s %s, %s, %s", ib.mnem, suffix, out.reg, x.reg, y.reg)
		e.sext(out)
		out.field = f
		if isI32(t) {
			knownZeros(rest, out, a[0], a[1])
		}
		if (rest == "shrui" || rest == "shrsi") && y.known {
			out.word, out.wordShift = wordBits(x, y.ci)
			if rest == "shrsi" || x.nonneg {
				setExact(out, x, y.ci)
			}
		}
		if x.known && y.known && (rest == "add" || rest == "sub" || rest == "mul" || rest == "shli") {
			out.known, out.ci = true, foldInt(rest, x.ci, y.ci)
		} else if rest == "add" || rest == "sub" {
			e.affineSum(out, x, y, rest == "sub")
		} else if rest == "mul" {
			e.affineScale(out, x, y)
		}
		setP2(rest, out, a)
		setMag(rest, out, x, y)
		return e.define(op, 0, out)
	case len(a) == 3 && (rest == "madd" || rest == "fmai"):
		e.ins("mad.lo.%s %s, %s, %s, %s", sType(t), out.reg, a[0].reg, a[1].reg, a[2].reg)
		e.sext(out)
		setP2(rest, out, a)
		return e.define(op, 0, out)
	case len(a) == 1:
		switch rest {
		case "negi":
			e.ins("neg.%s %s, %s", sType(t), out.reg, a[0].reg)
			e.sext(out)
			return e.define(op, 0, out)
		case "absi":
			e.ins("abs.%s %s, %s", sType(t), out.reg, a[0].reg)
			e.sext(out)
			return e.define(op, 0, out)
		case "ctpopi", "ctlzi", "cttzi":
			if b := intBits(t); b != 32 && b != 64 {
				return unsupported(op, "bit counts of %s", t)
			}
			src, wide, bt := a[0].reg, classOf(t) == cRd, bType(t)
			if t.Kind == loom.TypeIndex {
				// index bit counts are over the 64-bit logical value
				// (Loom's index facts): count the sign-extended carrier.
				r := e.newReg(cRd)
				e.ins("cvt.s64.s32 %s, %s", r, src)
				src, wide, bt = r, true, "b64"
			}
			if rest == "cttzi" {
				cls := cR
				if wide {
					cls = cRd
				}
				r := e.newReg(cls)
				e.ins("brev.%s %s, %s", bt, r, src)
				src = r
			}
			m := map[string]string{"ctpopi": "popc", "ctlzi": "clz", "cttzi": "clz"}[rest]
			if t.Kind == loom.TypeIndex {
				e.ins("%s.b64 %s, %s", m, out.reg, src) // the count is a u32
			} else if wide {
				n := e.newReg(cR)
				e.ins("%s.b64 %s, %s", m, n, src)
				e.ins("cvt.u64.u32 %s, %s", out.reg, n)
			} else {
				e.ins("%s.b32 %s, %s", m, out.reg, src)
			}
			return e.define(op, 0, out)
		}
	}
	return unsupported(op, "no PTX lowering for %d-operand %s on %s", len(a), rest, t)
}

func foldInt(op string, x, y int64) int64 {
	switch op {
	case "add":
		return x + y
	case "sub":
		return x - y
	case "mul":
		return x * y
	}
	return x << uint(y&63)
}

// toF32 widens an f16/bf16 value to f32 (others are returned unchanged).
func (e *emitter) toF32(v *val) *val {
	if !isHalf(v.t) {
		return v
	}
	out := e.newVal(f32Type)
	if v.t.Name == "bf16" && v.word != "" && (v.wordShift == 0 || v.wordShift == 16) {
		// A bf16 is the high half of its f32: the lane of a loaded word
		// widens with one shift or mask of the word, where cvt from the
		// split-out half costs ptxas a PRMT and a shift.
		r := e.newReg(cR)
		if v.wordShift == 0 {
			e.ins("shl.b32 %s, %s, 16", r, v.word)
		} else {
			e.ins("and.b32 %s, %s, -65536", r, v.word)
		}
		e.ins("mov.b32 %s, %s", out.reg, r)
		return out
	}
	e.ins("cvt.f32.%s %s, %s", v.t.Name, out.reg, v.reg)
	return out
}

// fromF32 rounds an f32 result to t (f16/bf16), or returns it.
func (e *emitter) fromF32(v *val, t *loom.Type) *val {
	if !isHalf(t) {
		return v
	}
	out := e.newVal(t)
	e.ins("cvt.rn.%s.f32 %s, %s", t.Name, out.reg, v.reg)
	return out
}

// floatArith lowers float ops. f16/bf16 values compute in f32 and round
// once: for add, sub, mul, div and sqrt the double rounding is innocuous
// (f32 carries more than twice their precision plus two bits), so results
// equal correctly rounded half-precision arithmetic.
func (e *emitter) floatArith(op *loom.Op, rest string, t *loom.Type, a []*val) error {
	if len(a) == 3 && rest == "fmaf" {
		out := e.newVal(t)
		e.ins("fma.rn.%s %s, %s, %s, %s", floatSuffix(t), out.reg, a[0].reg, a[1].reg, a[2].reg)
		return e.define(op, 0, out)
	}
	w := make([]*val, len(a))
	for i, x := range a {
		w[i] = e.toF32(x)
	}
	ft := fType(t)
	ct := f32Type
	if ft == "f64" {
		ct = t
	}
	out := e.newVal(ct)
	switch {
	case len(w) == 2 && floatBinary[rest] != "":
		m := floatBinary[rest]
		if ft == "f64" && (rest == "maximumf" || rest == "minimumf") {
			return unsupported(op, "IEEE maximum/minimum on f64")
		}
		e.ins("%s.%s %s, %s, %s", m, ft, out.reg, w[0].reg, w[1].reg)
	case len(w) == 2 && rest == "copysignf":
		e.ins("copysign.%s %s, %s, %s", ft, out.reg, w[1].reg, w[0].reg)
	case len(w) == 1 && rest == "negf":
		e.ins("neg.%s %s, %s", ft, out.reg, w[0].reg)
	case len(w) == 1 && rest == "absf":
		e.ins("abs.%s %s, %s", ft, out.reg, w[0].reg)
	case len(w) == 1 && rest == "sqrtf":
		e.ins("sqrt.rn.%s %s, %s", ft, out.reg, w[0].reg)
	case len(w) == 1 && floatRound[rest] != "":
		e.ins("cvt.%s.%s.%s %s, %s", floatRound[rest], ft, ft, out.reg, w[0].reg)
	case len(w) == 1 && rest == "roundf":
		e.roundAway(out, w[0])
	case len(w) == 2 && rest == "remf" && ft == "f64":
		out = &val{t: t, reg: e.fmodF64(w[0].reg, w[1].reg)}
	default:
		if ft == "f64" {
			return unsupported(op, "%s on f64", rest)
		}
		r, ok, err := e.mathF32(op, rest, w)
		if err != nil {
			return err
		}
		if !ok {
			return unsupported(op, "no PTX lowering for %s on %s", rest, t)
		}
		out = r
	}
	return e.define(op, 0, e.fromF32(out, t))
}

// floatSuffix is the PTX type of a float as stored (f16, bf16, f32, f64).
func floatSuffix(t *loom.Type) string { return t.Name }

// roundAway rounds to nearest with ties away from zero: the fraction
// |x| - trunc(|x|) is exact, so comparing it with 0.5 decides exactly.
func (e *emitter) roundAway(out, x *val) {
	ft := fType(x.t)
	c := classOf(x.t)
	a, tr, fr, up := e.newReg(c), e.newReg(c), e.newReg(c), e.newReg(c)
	p := e.newReg(cPred)
	half := "0f3F000000"
	one := "0f3F800000"
	if ft == "f64" {
		half, one = "0d3FE0000000000000", "0d3FF0000000000000"
	}
	e.ins("abs.%s %s, %s", ft, a, x.reg)
	e.ins("cvt.rzi.%s.%s %s, %s", ft, ft, tr, a)
	e.ins("sub.rn.%s %s, %s, %s", ft, fr, a, tr)
	e.ins("setp.ge.%s %s, %s, %s", ft, p, fr, half)
	e.ins("add.rn.%s %s, %s, %s", ft, up, tr, one)
	e.ins("selp.%s %s, %s, %s, %s", ft, up, up, tr, p)
	e.ins("copysign.%s %s, %s, %s", ft, out.reg, x.reg, up)
}

var cmpPred = map[string]struct {
	ptx  string
	sign byte
}{
	"eq": {"eq", 'b'}, "ne": {"ne", 'b'},
	"slt": {"lt", 's'}, "sle": {"le", 's'}, "sgt": {"gt", 's'}, "sge": {"ge", 's'},
	"ult": {"lt", 'u'}, "ule": {"le", 'u'}, "ugt": {"gt", 'u'}, "uge": {"ge", 'u'},
}

func (e *emitter) intCompare(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	p, ok := cmpPred[op.Pred]
	if !ok {
		return unsupported(op, "predicate %q", op.Pred)
	}
	x, y := a[0], a[1]
	if x.t == nil || !x.t.IsScalar() || isFloat(x.t) {
		return invalid(op.Pos, "%s on %s", op.Name, typeName(x.t))
	}
	if p.sign == 's' {
		if err := refuseWide(op, a); err != nil {
			return err
		}
	}
	if classOf(x.t) == cPred {
		x, y = e.predToInt(x, p.sign == 's'), e.predToInt(y, p.sign == 's')
	}
	suffix := sType(x.t)
	switch p.sign {
	case 'u':
		suffix = uType(x.t)
		x, y = e.zext(x), e.zext(y)
	case 'b':
		suffix = bType(x.t)
	}
	out := e.newVal(i1Type)
	e.ins("setp.%s.%s %s, %s, %s", p.ptx, suffix, out.reg, x.reg, y.reg)
	return e.define(op, 0, out)
}

var fcmpPred = map[string]string{
	"oeq": "eq", "one": "ne", "olt": "lt", "ole": "le", "ogt": "gt", "oge": "ge",
	"ord": "num", "uno": "nan", "ueq": "equ", "une": "neu", "ult": "ltu",
	"ule": "leu", "ugt": "gtu", "uge": "geu",
}

func (e *emitter) floatCompare(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	p, ok := fcmpPred[op.Pred]
	if !ok {
		return unsupported(op, "predicate %q", op.Pred)
	}
	if !isFloat(a[0].t) {
		return invalid(op.Pos, "%s on %s", op.Name, typeName(a[0].t))
	}
	x, y := e.toF32(a[0]), e.toF32(a[1])
	out := e.newVal(i1Type)
	e.ins("setp.%s.%s %s, %s, %s", p, fType(x.t), out.reg, x.reg, y.reg)
	return e.define(op, 0, out)
}

func (e *emitter) floatClass(op *loom.Op, rest string) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	if !isFloat(v.t) {
		return invalid(op.Pos, "%s on %s", op.Name, typeName(v.t))
	}
	x := e.toF32(v)
	ft := fType(x.t)
	inf := "0f7F800000"
	if ft == "f64" {
		inf = "0d7FF0000000000000"
	}
	out := e.newVal(i1Type)
	switch rest {
	case "isnanf":
		e.ins("setp.nan.%s %s, %s, %s", ft, out.reg, x.reg, x.reg)
	default:
		a := e.newReg(classOf(x.t))
		e.ins("abs.%s %s, %s", ft, a, x.reg)
		if rest == "isinff" {
			e.ins("setp.eq.%s %s, %s, %s", ft, out.reg, a, inf)
		} else {
			e.ins("setp.lt.%s %s, %s, %s", ft, out.reg, a, inf)
		}
	}
	return e.define(op, 0, out)
}

// wordBits is the provenance (val.word) of x shifted right by k: bits
// wordShift… of a 32-bit register, or nothing ("") when x is not a
// 32-bit integer register or the shift leaves fewer than 8 of its bits.
func wordBits(x *val, k int64) (string, int) {
	if x.known || x.t == nil || x.t.Kind != loom.TypeInt || x.t.Bits != 32 || classOf(x.t) != cR {
		return "", 0
	}
	w, sh := x.reg, int64(0)
	if x.word != "" {
		w, sh = x.word, int64(x.wordShift)
	}
	if k < 0 || sh+k > 24 {
		return "", 0
	}
	return w, int(sh + k)
}

// setExact records out = x >> k when no bits of x are lost (exact). For
// an index shrui this reads x as non-negative, as Loom's 64-bit meaning
// does: a negative x would shift to a value past the carrier's range.
func setExact(out, x *val, k int64) {
	if k > 0 && k < 31 && !x.wide && !x.known && pow2Of(x) >= 1<<k {
		out.exact, out.exactShift = x, int(k)
	}
}

// setMag records the magnitude bound of a 32-bit integer shift or mask by
// a constant.
func setMag(rest string, out, x, y *val) {
	t := out.t
	if t == nil || t.Kind != loom.TypeInt || t.Bits != 32 {
		return
	}
	if rest == "andi" && x.known && !y.known {
		x, y = y, x
	}
	if !y.known {
		return
	}
	switch k := y.ci; {
	case rest == "shrsi" && k > 0 && k < 32:
		out.mag = 31 - int(k)
	case rest == "shrui" && k > 0 && k < 32:
		out.mag, out.nonneg = 32-int(k), true
	case rest == "andi" && k >= 0:
		out.mag, out.nonneg = max(bitLen(k), 1), true
	}
}

// bitLen is the number of bits needed for c > 0.
func bitLen(c int64) int {
	n := 0
	for ; c > 0; c >>= 1 {
		n++
	}
	return n
}
