package loom

import (
	"fmt"
	"strconv"
	"strings"
)

// The shared lowering pass. Ops that other ops express exactly (bit
// packing, lane-count bitcasts, integer dot products, clamps) or that a
// backend has no instruction for (pow, sin, cos) are rewritten here once,
// on the syntax tree, into the basic ops both backends lower: lane-wise
// integer and float arithmetic, casts, compares, selects, vector.extract and
// vector.from_elements. A backend keeps its own lowering of an op by naming
// it in LowerOptions.Native, where its instruction is faster or more exact.
//
// The pass never mutates its input: a region with a rewritten op is copied,
// and everything unchanged is shared with the input modules. A rewritten
// op's result keeps its *Value, so later uses resolve unchanged; the values
// the pass introduces are named "lower.N", which no source name can spell.

// LowerOptions configures Lower for one backend.
type LowerOptions struct {
	// Native names the ops (full names: "scalar.powf", "vector.dot4i") the
	// backend lowers itself; Lower leaves them as written.
	Native map[string]bool
	// ShuffleScans lowers kernel.subgroup.scan to log-step subgroup
	// shuffles, for a backend without a scan of its own.
	ShuffleScans bool
}

// lowerRule rewrites one op, appending its replacement to l.out; it
// returns false to keep the op as written.
type lowerRule func(l *lowering, op *Op) (bool, error)

// lowerRules maps op names to their shared lowering.
var lowerRules map[string]lowerRule

func init() {
	lowerRules = map[string]lowerRule{
		"vector.bitcast":                  lowerBitcast,
		"scalar.bitcast":                  lowerBitcast,
		"vector.bitunpacku":               lowerBitunpack,
		"vector.bitunpacks":               lowerBitunpack,
		"vector.bitpack":                  lowerBitpack,
		"vector.bitfield.extractu":        lowerBitfieldExtract,
		"vector.bitfield.extracts":        lowerBitfieldExtract,
		"vector.bitfield.insert":          lowerBitfieldInsert,
		"vector.dot4i":                    lowerDot4i,
		"vector.dot8i4":                   lowerDot8i4,
		"vector.dot2f":                    lowerDot2f,
		"vector.dot4f8":                   lowerDot4f8,
		"vector.extract":                  lowerPartialExtract,
		"vector.shuffle":                  lowerShuffle,
		"scalar.clampf":                   lowerClampf,
		"vector.clampf":                   lowerClampf,
		"scalar.powf":                     lowerPowf,
		"vector.powf":                     lowerPowf,
		"scalar.sinf":                     lowerSinCos,
		"vector.sinf":                     lowerSinCos,
		"scalar.cosf":                     lowerSinCos,
		"vector.cosf":                     lowerSinCos,
		"scalar.sinturnsf":                lowerTurns,
		"vector.sinturnsf":                lowerTurns,
		"scalar.costurnsf":                lowerTurns,
		"vector.costurnsf":                lowerTurns,
		"scalar.softplusf":                lowerSoftplus,
		"vector.softplusf":                lowerSoftplus,
		"scalar.log1pf":                   lowerLog1p,
		"vector.log1pf":                   lowerLog1p,
		"scalar.expm1f":                   lowerExpm1,
		"vector.expm1f":                   lowerExpm1,
		"scalar.atanf":                    lowerAtan,
		"vector.atanf":                    lowerAtan,
		"scalar.atan2f":                   lowerAtan,
		"vector.atan2f":                   lowerAtan,
		"scalar.sinhf":                    lowerSinhCosh,
		"vector.sinhf":                    lowerSinhCosh,
		"scalar.coshf":                    lowerSinhCosh,
		"vector.coshf":                    lowerSinhCosh,
		"scalar.tanf":                     lowerTan,
		"vector.tanf":                     lowerTan,
		"scalar.asinf":                    lowerAsinAcos,
		"vector.asinf":                    lowerAsinAcos,
		"scalar.acosf":                    lowerAsinAcos,
		"vector.acosf":                    lowerAsinAcos,
		"scalar.asinhf":                   lowerInvHyp,
		"vector.asinhf":                   lowerInvHyp,
		"scalar.acoshf":                   lowerInvHyp,
		"vector.acoshf":                   lowerInvHyp,
		"scalar.atanhf":                   lowerInvHyp,
		"vector.atanhf":                   lowerInvHyp,
		"scalar.cbrtf":                    lowerCbrt,
		"vector.cbrtf":                    lowerCbrt,
		"scalar.erfcf":                    lowerErfc,
		"vector.erfcf":                    lowerErfc,
		"scalar.geluf":                    lowerGelu,
		"vector.geluf":                    lowerGelu,
		"scalar.rotli":                    lowerRotate,
		"scalar.rotri":                    lowerRotate,
		"vector.rotli":                    lowerRotate,
		"vector.rotri":                    lowerRotate,
		"scalar.signi":                    lowerSign,
		"vector.signi":                    lowerSign,
		"scalar.signf":                    lowerSign,
		"vector.signf":                    lowerSign,
		"vector.reduce":                   lowerFastMath,
		"vector.reduce.axes":              lowerReduceAxes,
		"vector.dotf":                     lowerFastMath,
		"kernel.subgroup.reduce":          lowerCollective,
		"kernel.subgroup.scan":            lowerCollective,
		"kernel.workgroup.reduce":         lowerCollective,
		"kernel.workgroup.scan":           lowerCollective,
		"global.load":                     lowerGlobalLoad,
		"test.fact_uniform":               lowerTestFact,
		"test.fact_lane_varying":          lowerTestFact,
		"test.fact_lane_predicate":        lowerTestFact,
		"test.fact_non_negative":          lowerTestFact,
		"test.fact_non_zero":              lowerTestFact,
		"test.use":                        lowerTestFact,
		"test.typed_use":                  lowerTestFact,
		"buffer.alloca":                   lowerAlloca,
		"vector.table.lookup":             lowerTableLookup,
		"kernel.subgroup.match.any":       lowerMatch,
		"kernel.subgroup.match.all":       lowerMatch,
		"test.fact_positive":              lowerTestFact,
		"test.fact_divisor":               lowerTestFact,
		"test.fact_power_of_two":          lowerTestFact,
		"test.fact_subgroup_lane_mask":    lowerTestFact,
		"test.fact_buffer_memory_space":   lowerTestFact,
		"test.fact_view_memory_space":     lowerTestFact,
		"test.fact_range_lo":              lowerRangeFact,
		"test.fact_range_hi":              lowerRangeFact,
		"kernel.subgroup.broadcast":       lowerCollective,
		"kernel.subgroup.broadcast.first": lowerCollective,
		"kernel.subgroup.shuffle":         lowerCollective,
		"encoding.define":                 lowerWitness,
		"vector.concat":                   lowerConcat,
		"vector.interleave":               lowerInterleave,
		"vector.deinterleave":             lowerDeinterleave,
		"vector.decode":                   lowerDecode,
		"vector.encode":                   lowerEncode,
		"vector.table.quantize":           lowerTableQuantize,
		"vector.transform":                lowerTransform,
	}
}

// SharedLowered reports whether Lower has a rewrite for the op name.
func SharedLowered(name string) bool { return lowerRules[name] != nil }

// Lower returns mods with every kernel and function body rewritten by the
// shared lowering pass. Modules, kernels, functions, ops and regions that
// hold nothing to rewrite are returned as they are. A malformed op the
// pass would rewrite (a bitcast between different bit counts, a bitfield
// outside its lane) is an error at the op's position.
func Lower(mods []*Module, opts LowerOptions) (out []*Module, err error) {
	l := &lowering{opts: opts, globals: map[string]*Global{}}
	for _, m := range mods {
		if m != nil {
			for _, g := range m.Globals {
				l.globals[g.Symbol] = g
			}
		}
	}
	defer func() {
		// A rewrite bug must not take the caller down: report it at the
		// op being rewritten.
		if r := recover(); r != nil {
			pos := Pos{}
			if l.cur != nil {
				pos = l.cur.Pos
			}
			out, err = nil, &Error{Pos: pos, Class: ErrInvalid, Msg: fmt.Sprintf("internal error in the shared lowering: %v", r)}
		}
	}()
	out = make([]*Module, len(mods))
	var errs ErrorList
	for i, m := range mods {
		if m == nil {
			continue
		}
		nm, err := l.module(m)
		if err != nil {
			if el, ok := err.(ErrorList); ok {
				errs = append(errs, el...)
			} else {
				return nil, err
			}
		}
		out[i] = nm
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return out, nil
}

// lowering is the state of one Lower call.
type lowering struct {
	opts LowerOptions
	n    int   // counter for fresh value names
	out  []*Op // the replacement of the op being rewritten
	cur  *Op
	errs ErrorList
	// cfgMade holds the regions structureCFG built (lower_cfg.go).
	cfgMade map[*Region]bool
	// globals are the package's global.constant/variable declarations
	// by symbol (global.load folds the constant ones).
	globals map[string]*Global
}

func (l *lowering) module(m *Module) (*Module, error) {
	repl := map[*Op]*Op{}
	// body lowers one kernel or function body; it returns the new body
	// and op, or nil when nothing changed.
	body := func(b *Region, op *Op) (*Region, *Op) {
		if b == nil {
			return nil, nil
		}
		nb := l.region(b)
		if nb == b {
			return nil, nil
		}
		nop := replaceRegion(op, b, nb)
		repl[op] = nop
		return nb, nop
	}
	kernels := append([]*Kernel(nil), m.Kernels...)
	for i, k := range kernels {
		if k == nil {
			continue
		}
		if nb, nop := body(k.Body, k.Op); nb != nil {
			nk := *k
			nk.Body, nk.Op = nb, nop
			kernels[i] = &nk
		}
	}
	funcs := append([]*Func(nil), m.Funcs...)
	for i, f := range funcs {
		if f == nil {
			continue
		}
		if nb, nop := body(f.Body, f.Op); nb != nil {
			nf := *f
			nf.Body, nf.Op = nb, nop
			funcs[i] = &nf
		}
	}
	if len(l.errs) > 0 {
		errs := l.errs
		l.errs = nil
		return nil, errs
	}
	if len(repl) == 0 {
		return m, nil
	}
	nm := *m
	nm.Kernels, nm.Funcs = kernels, funcs
	nm.Ops = make([]*Op, len(m.Ops))
	for i, op := range m.Ops {
		if r, ok := repl[op]; ok {
			op = r
		}
		nm.Ops[i] = op
	}
	return &nm, nil
}

// replaceRegion returns a copy of op whose region old is new.
func replaceRegion(op *Op, old, new *Region) *Op {
	if op == nil {
		return nil
	}
	c := *op
	c.Regions = append([]*Region(nil), op.Regions...)
	for i, r := range c.Regions {
		if r == old {
			c.Regions[i] = new
		}
	}
	return &c
}

// region rewrites the ops of r, returning r itself when nothing changed.
func (l *lowering) region(r *Region) *Region {
	var ops []*Op
	changed := false
	src := r.Ops
	if e := checkAsyncStream(src); e != nil && !l.cfgMade[r] {
		l.errs = append(l.errs, e)
	}
	if hasCFG(src) {
		l.cur = nil
		ops, err := l.structureCFG(r, src)
		l.out, l.cur = nil, nil
		if err != nil {
			l.errs = append(l.errs, err.(*Error))
			return r
		}
		src, changed = ops, true
	}
	for d := l.dynamicLanes(src); d != nil; d = l.dynamicLanes(src) {
		src, changed = d, true
	}
	for i, op := range src {
		nop := op
		if len(op.Regions) > 0 {
			var regs []*Region
			for j, sub := range op.Regions {
				ns := l.region(sub)
				if ns != sub && regs == nil {
					regs = append([]*Region(nil), op.Regions...)
				}
				if regs != nil {
					regs[j] = ns
				}
			}
			if regs != nil {
				c := *op
				c.Regions = regs
				nop = &c
			}
		}
		var repl []*Op
		rewritten := false
		if rule := lowerRules[op.Name]; rule != nil && !l.opts.Native[op.Name] && (!op.Opaque || strings.HasPrefix(op.Name, "test.") || strings.HasPrefix(op.Name, "kernel.async.") || op.Name == "encoding.define" || op.Name == "global.load") {
			l.out, l.cur = nil, nop
			ok, err := rule(l, nop)
			if r, isRefusal := err.(refusal); isRefusal {
				// Left for the backends to refuse where they reach it: a
				// function nothing calls keeps compiling.
				c := *nop
				c.Opaque, c.Refused = true, r.msg
				ok, err, l.out = true, nil, []*Op{&c}
			}
			if err != nil {
				var e *Error
				if le, isErr := err.(*Error); isErr {
					e = le
				} else {
					e = &Error{Pos: op.Pos, Msg: err.Error(), Class: ErrInvalid}
				}
				l.errs = append(l.errs, e)
			} else if ok {
				repl, rewritten = l.out, true
			}
			l.out, l.cur = nil, nil
		}
		if !rewritten && nop == op && !changed {
			continue
		}
		if !changed {
			changed = true
			ops = append([]*Op(nil), src[:i]...)
		}
		if rewritten {
			ops = append(ops, repl...)
		} else {
			ops = append(ops, nop)
		}
	}
	if !changed {
		return r
	}
	nr := *r
	nr.Ops = ops
	return &nr
}

// refusal is a rule's verdict that it has no rewrite for an op's form (an
// encoding family it does not know, a schema it cannot see): the op is
// kept, marked Refused, and refused by a backend that compiles it.
type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

// refuse is a refusal of the op being rewritten.
func (l *lowering) refuse(format string, args ...any) error {
	return refusal{msg: fmt.Sprintf("%s: ", l.cur.Name) + fmt.Sprintf(format, args...)}
}

// errorf is an error at the position of the op being rewritten.
func (l *lowering) errorf(format string, args ...any) error {
	return &Error{Pos: l.cur.Pos, Class: ErrInvalid, Msg: fmt.Sprintf("%s: ", l.cur.Name) + fmt.Sprintf(format, args...)}
}

// emit appends a new op to the replacement and returns its result, a
// fresh value of type rt (nil for no result).
func (l *lowering) emit(name, param string, args []*Value, types, rtypes []*Type, rt *Type) *Value {
	op := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: name, Param: param, Types: types, ResultTypes: rtypes}
	for _, a := range args {
		op.Operands = append(op.Operands, &Operand{Pos: l.cur.Pos, Name: a.Name, Value: a})
	}
	var v *Value
	if rt != nil {
		l.n++
		v = &Value{Name: "lower." + strconv.Itoa(l.n), Type: rt, Pos: l.cur.Pos, Def: op}
		op.Results = []*Value{v}
	}
	l.out = append(l.out, op)
	return v
}

// finish makes the last emitted op define the rewritten op's result.
func (l *lowering) finish(v *Value) {
	if len(l.cur.Results) == 0 {
		return
	}
	last := l.out[len(l.out)-1]
	if len(last.Results) == 1 && last.Results[0] == v {
		last.Results = []*Value{l.cur.Results[0]}
		return
	}
	// The value comes from earlier: forward it through a no-op select.
	t := l.cur.Results[0].Type
	c := l.intConst(typeOfBits(1), 1)
	sel := "scf.select"
	args := []*Value{c, v, v}
	op := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: sel, Types: []*Type{t}, Results: []*Value{l.cur.Results[0]}}
	for _, a := range args {
		op.Operands = append(op.Operands, &Operand{Pos: l.cur.Pos, Name: a.Name, Value: a})
	}
	l.out = append(l.out, op)
}

// Types.

// typeOfBits is the integer type iN.
func typeOfBits(n int) *Type {
	return &Type{Kind: TypeInt, Name: "i" + strconv.Itoa(n), Bits: n}
}

var lowerF32 = &Type{Kind: TypeFloat, Name: "f32", Bits: 32}

// withElem is t with its element type replaced (t's shape, element e); for
// a scalar t it is e.
func withElem(t, e *Type) *Type {
	if t.Kind != TypeVector {
		return e
	}
	c := *t
	c.Elem = e
	c.Layout, c.LayoutValue = "", nil
	return &c
}

// vectorOf is vector<n x e>.
func vectorOf(n int, e *Type) *Type {
	return &Type{Kind: TypeVector, Name: "vector", Dims: []Dim{{Size: int64(n)}}, Elem: e}
}

// elemType is the element type of a vector, or t itself.
func elemType(t *Type) *Type {
	if t != nil && t.Kind == TypeVector {
		return t.Elem
	}
	return t
}

// staticLanes is the lane count and shape of a vector type with static
// dims (1 and nil for a scalar); ok is false for a dynamic dimension.
func staticLanes(t *Type) (n int, shape []int64, ok bool) {
	if t.Kind != TypeVector {
		return 1, nil, true
	}
	n = 1
	for _, d := range t.Dims {
		if d.Value != nil {
			return 0, nil, false
		}
		n *= int(d.Size)
		shape = append(shape, d.Size)
	}
	return n, shape, true
}

// opPrefix is the dialect of a lane-wise op on values of type t.
func opPrefix(t *Type) string {
	if t.Kind == TypeVector {
		return "vector."
	}
	return "scalar."
}

// Building blocks.

// intConst is an integer constant of type t (a splat for a vector).
func (l *lowering) intConst(t *Type, v int64) *Value {
	if e := elemType(t); e.Bits > 0 && e.Bits < 64 {
		v = wrapInt(v, e.Bits)
	}
	lit := &Literal{Kind: LitInt, Int: v, Text: strconv.FormatInt(v, 10)}
	return l.constant(t, lit)
}

// floatConst is a float constant of type t (a splat for a vector).
func (l *lowering) floatConst(t *Type, f float64) *Value {
	lit := &Literal{Kind: LitFloat, Float: f, Text: strconv.FormatFloat(f, 'g', -1, 64)}
	return l.constant(t, lit)
}

func (l *lowering) constant(t *Type, lit *Literal) *Value {
	name := "scalar.constant"
	if t.Kind == TypeVector {
		name = "vector.constant"
	}
	l.emit(name, "", nil, []*Type{t}, nil, t)
	v := l.out[len(l.out)-1].Results[0]
	l.out[len(l.out)-1].Literal = lit
	return v
}

// wrapInt sign-extends the low n bits of v.
func wrapInt(v int64, n int) int64 {
	s := 64 - uint(n)
	return v << s >> s
}

// bin emits a lane-wise binary op (addi, shli, mulf, …) on values of type t.
func (l *lowering) bin(name string, a, b *Value) *Value {
	t := a.Type
	return l.emit(opPrefix(t)+name, "", []*Value{a, b}, []*Type{t}, nil, t)
}

// un emits a lane-wise unary op.
func (l *lowering) un(name string, a *Value) *Value {
	return l.emit(opPrefix(a.Type)+name, "", []*Value{a}, []*Type{a.Type}, nil, a.Type)
}

// fma emits fmaf(a, b, c).
func (l *lowering) fma(a, b, c *Value) *Value {
	t := a.Type
	return l.emit(opPrefix(t)+"fmaf", "", []*Value{a, b, c}, []*Type{t}, nil, t)
}

// cast emits `op %x : A to B`; it returns x when the types are one.
func (l *lowering) cast(name string, x *Value, to *Type) *Value {
	if sameType(x.Type, to) {
		return x
	}
	return l.emit(opPrefix(x.Type)+name, "", []*Value{x}, []*Type{x.Type}, []*Type{to}, to)
}

// resizeInt converts integer x to n-bit lanes: zero- or sign-extends or
// truncates.
func (l *lowering) resizeInt(x *Value, n int, signed bool) *Value {
	from := elemType(x.Type).Bits
	to := withElem(x.Type, typeOfBits(n))
	switch {
	case from == n:
		return x
	case from > n:
		return l.cast("trunci", x, to)
	case signed:
		return l.cast("extsi", x, to)
	}
	return l.cast("extui", x, to)
}

// cmp emits a compare of a and b giving i1 lanes.
func (l *lowering) cmp(name, pred string, a, b *Value) *Value {
	t := a.Type
	rt := withElem(t, typeOfBits(1))
	var rts []*Type
	if t.Kind == TypeVector {
		rts = []*Type{rt}
	}
	v := l.emit(opPrefix(t)+name, "", []*Value{a, b}, []*Type{t}, rts, rt)
	l.out[len(l.out)-1].Pred = pred
	return v
}

// sel emits c ? a : b lane-wise (scf.select for scalars).
func (l *lowering) sel(c, a, b *Value) *Value {
	t := a.Type
	name := "scf.select"
	if t.Kind == TypeVector {
		name = "vector.select"
	}
	return l.emit(name, "", []*Value{c, a, b}, []*Type{t}, nil, t)
}

// extract emits vector.extract of flat lane i of v (v itself for a scalar).
func (l *lowering) extract(v *Value, i int) *Value {
	t := v.Type
	if t.Kind != TypeVector {
		return v
	}
	_, shape, _ := staticLanes(t)
	op := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "vector.extract", Types: []*Type{t}, ResultTypes: []*Type{t.Elem}}
	op.Operands = append(op.Operands, &Operand{Pos: l.cur.Pos, Name: v.Name, Value: v})
	idx := make([]int64, len(shape))
	rem := int64(i)
	for a := len(shape) - 1; a >= 0; a-- {
		idx[a] = rem % shape[a]
		rem /= shape[a]
	}
	for _, x := range idx {
		op.Operands = append(op.Operands, &Operand{Pos: l.cur.Pos, Lit: &Literal{Kind: LitInt, Int: x, Text: strconv.FormatInt(x, 10)}})
	}
	l.n++
	r := &Value{Name: "lower." + strconv.Itoa(l.n), Type: t.Elem, Pos: l.cur.Pos, Def: op}
	op.Results = []*Value{r}
	l.out = append(l.out, op)
	return r
}

// lanes extracts every lane of v.
func (l *lowering) lanes(v *Value) ([]*Value, error) {
	n, _, ok := staticLanes(v.Type)
	if !ok {
		return nil, l.errorf("vector with a dynamic lane count %s (the shared lowering needs static lanes)", v.Type)
	}
	out := make([]*Value, n)
	for i := range out {
		out[i] = l.extract(v, i)
	}
	return out, nil
}

// build makes a value of type t from its lanes (the lane itself for a
// scalar t).
func (l *lowering) build(t *Type, lanes []*Value) *Value {
	if t.Kind != TypeVector {
		return lanes[0]
	}
	types := make([]*Type, len(lanes))
	for i, x := range lanes {
		types[i] = x.Type
	}
	return l.emit("vector.from_elements", "", lanes, types, []*Type{t}, t)
}

// sameType reports whether two types are spelled alike.
func sameType(a, b *Type) bool { return a.String() == b.String() }

// operandValues returns the resolved values of op's operands, checking
// there are n.
func (l *lowering) operandValues(op *Op, n int) ([]*Value, error) {
	if len(op.Operands) != n {
		return nil, l.errorf("takes %d operands, has %d", n, len(op.Operands))
	}
	out := make([]*Value, n)
	for i, o := range op.Operands {
		if o.Value == nil || o.Value.Type == nil {
			return nil, &Error{Pos: o.Pos, Class: ErrInvalid, Msg: fmt.Sprintf("%s: operand %%%s has no known type", op.Name, o.Name)}
		}
		out[i] = o.Value
	}
	return out, nil
}

// intAttr reads an integer attribute such as offset or width.
func (l *lowering) intAttr(op *Op, key string) (int, error) {
	a := op.Attr(key)
	if a == nil || a.Value.Kind != LitInt {
		return 0, l.errorf("needs an integer %s attribute", key)
	}
	return int(a.Value.Int), nil
}

// paramWords splits an op's <…> parameter: "number, nnan|nsz" gives
// ["number", "nnan|nsz"].
func paramWords(p string) []string {
	var out []string
	for _, w := range strings.Split(p, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}
