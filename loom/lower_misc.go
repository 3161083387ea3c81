package loom

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Shared lowerings that settle annotations: fast-math flags on reductions
// and dot products, and the test dialect's fact ops that real kernels leave
// in.

// lowerFastMath drops fast-math flags (reassoc|nnan|ninf|nsz|contract|…)
// from the <kind, flags> parameter of a combining op. The flags permit a
// backend to reorder or assume; ours never use the permission: vector.reduce
// and vector.dotf combine in lane order on both backends (an order every
// flag set allows), so dropping them keeps the results the written order
// gives, bit for bit across backends.
func lowerFastMath(l *lowering, op *Op) (bool, error) {
	if op.Name == "vector.reduce" && len(op.Operands) == 2 {
		// Loom: init and result have one scalar type (SameType), the
		// input's element type.
		if v := op.Operands[1].Value; v != nil && v.Type != nil && !v.Type.IsScalar() {
			return true, l.errorf("init %%%s is %s: the init of a reduction is a scalar of the input's element type", v.Name, v.Type)
		}
	}
	words := paramWords(op.Param)
	var keep []string
	for _, w := range words {
		if !isFastMathFlag(w) {
			keep = append(keep, w)
		}
	}
	if len(keep) == len(words) {
		return false, nil
	}
	c := *op
	c.Param = strings.Join(keep, ", ")
	l.out = append(l.out, &c)
	return true, nil
}

// lowerTestFact materializes the test dialect's analysis probes as the
// constants their definitions call for: test.fact_uniform is 1 when the
// value is provably uniform across the workgroup (uniformOf below),
// test.fact_lane_varying and test.fact_lane_predicate 1 when it provably
// depends on the invocation; the other probes (non_negative, non_zero,
// positive) answer 0, "not proven", and fact_divisor 1, the divisor every
// value has, as their definitions allow; fact_power_of_two is 1 for a
// constant power of two, fact_subgroup_lane_mask for a ballot, active or
// match mask, fact_buffer/view_memory_space MemorySpaceFact (the range
// probes are lowerRangeFact). test.use, a sink that keeps values alive, has no
// effect on results and is dropped.
func lowerTestFact(l *lowering, op *Op) (bool, error) {
	if op.Name == "test.use" || op.Name == "test.typed_use" {
		return true, nil // the replacement is empty
	}
	if len(op.Operands) != 1 || len(op.Results) != 1 || op.Operands[0].Value == nil {
		return true, l.errorf("takes one operand and one result")
	}
	v := op.Operands[0].Value
	var bit int64
	switch op.Name {
	case "test.fact_uniform":
		if WorkgroupUniform(v) {
			bit = 1
		}
	case "test.fact_lane_varying", "test.fact_lane_predicate":
		if l.laneDependent(v) {
			bit = 1
		}
	case "test.fact_non_negative", "test.fact_non_zero", "test.fact_positive":
	case "test.fact_divisor":
		bit = 1 // every integer is a multiple of 1
	case "test.fact_power_of_two":
		if c, ok := intLiteral(v); ok && c > 0 && c&(c-1) == 0 {
			bit = 1
		}
	case "test.fact_subgroup_lane_mask":
		if d := v.Def; d != nil && v.Index == 0 && laneMaskOps[d.Name] {
			bit = 1
		}
	case "test.fact_buffer_memory_space", "test.fact_view_memory_space":
		bit = MemorySpaceFact(v, func(a *Value) bool { return a.Owner != nil && a.Owner.Label == "launch" })
	default:
		return true, l.errorf("analysis probe is not supported")
	}
	t := op.Results[0].Type
	if t == nil {
		t = typeOfBits(1)
	}
	l.finish(l.intConst(t, bit))
	return true, nil
}

// laneMaskOps are the ops whose first result is a subgroup lane mask.
var laneMaskOps = map[string]bool{
	"kernel.subgroup.vote.ballot": true, "kernel.subgroup.active.mask": true,
	"kernel.subgroup.match.any": true, "kernel.subgroup.match.all": true,
}

// intLiteral is the value of an integer constant op's result.
func intLiteral(v *Value) (int64, bool) {
	if d := v.Def; d != nil && (d.Name == "index.constant" || d.Name == "scalar.constant") && d.Literal != nil && d.Literal.Kind == LitInt {
		return d.Literal.Int, true
	}
	return 0, false
}

// laneSources are ops whose results differ between invocations of one
// workgroup.
var laneSources = map[string]bool{
	"kernel.workitem.id": true, "kernel.workitem.dispatch.id": true, "kernel.subgroup.lane.id": true,
	"kernel.subgroup.id": true,
}

// WorkgroupUniform reports whether v is provably the same in every
// invocation of a workgroup: computed by pure ops from launch parameters,
// constants, config values and workgroup-level ids. Loads, atomics,
// collectives and region arguments other than the kernel's parameters
// count as varying. (test.fact_uniform states it; loom/ptx relies on it
// to give a warpgroup one wgmma.)
func WorkgroupUniform(v *Value) bool {
	return walkDeps(v, func(op *Op) (bool, bool) {
		d, _, _ := strings.Cut(op.Name, ".")
		switch {
		case laneSources[op.Name]:
			return false, true
		case strings.HasPrefix(op.Name, "kernel.workgroup.id") || strings.HasPrefix(op.Name, "kernel.workgroup.size") ||
			strings.HasPrefix(op.Name, "kernel.workgroup.count") || strings.HasPrefix(op.Name, "kernel.subgroup.size") ||
			strings.HasPrefix(op.Name, "kernel.subgroup.count"):
			return true, true
		case d == "index" || d == "scalar" || d == "config" || op.Name == "scf.select" || op.Name == "target.subgroup.size":
			return true, false
		}
		return false, true
	}, func(a *Value) bool { return a.Owner != nil && a.Owner.Label == "launch" })
}

// laneDependent reports whether v is computed from an invocation id.
func (l *lowering) laneDependent(v *Value) bool {
	return !walkDeps(v, func(op *Op) (bool, bool) {
		if laneSources[op.Name] {
			return false, true
		}
		return true, false
	}, func(*Value) bool { return true })
}

// walkDeps follows v's definitions: visit returns (ok, stop) for an op and
// arg decides a region argument. The answer is whether everything visited
// was ok.
func walkDeps(v *Value, visit func(*Op) (bool, bool), arg func(*Value) bool) bool {
	seen := map[*Value]bool{}
	var walk func(v *Value) bool
	walk = func(v *Value) bool {
		if v == nil || seen[v] {
			return true
		}
		seen[v] = true
		if v.Def == nil {
			return arg(v)
		}
		ok, stop := visit(v.Def)
		if !ok || stop {
			return ok
		}
		for _, o := range v.Def.Operands {
			if !walk(o.Value) {
				return false
			}
		}
		return true
	}
	return walk(v)
}

// lowerAlloca settles buffer.alloca's spellings: the attribute form
// `{base_alignment = A, memory_space = S}` becomes `<S> align(A)`, the form
// the backends read, and an alloca naming no memory space is private — the
// invocation's own scratch, the one scratch space that needs no agreement
// between invocations.
func lowerAlloca(l *lowering, op *Op) (bool, error) {
	space := AllocaSpace(op)
	align := op.Attr("align")
	base := op.Attr("base_alignment")
	if space == op.Param && (align != nil || base == nil) {
		return false, nil
	}
	if space != "workgroup" && space != "private" {
		return true, l.errorf("memory space %q (an alloca is workgroup or private scratch)", space)
	}
	c := *op
	c.Param = space
	if align == nil && base != nil {
		c.Attrs = append(append([]*Attr(nil), op.Attrs...), &Attr{Pos: base.Pos, Key: "align", Value: base.Value})
	}
	l.out = append(l.out, &c)
	return true, nil
}

// LayoutStrides returns the per-axis element strides of views of type t
// laid out by encoding.layout.strided (seen through
// encoding.layout.assume.strided): one operand per axis, an index value or
// an integer literal. ok is false for any other layout.
func LayoutStrides(t *Type) (strides []*Operand, ok bool) {
	if t == nil || t.LayoutValue == nil || t.LayoutValue.Value == nil {
		return nil, false
	}
	op := t.LayoutValue.Value.Def
	for op != nil && op.Name == "encoding.layout.assume.strided" && len(op.Operands) == 1 && op.Operands[0].Value != nil {
		op = op.Operands[0].Value.Def
	}
	if op == nil || op.Name != "encoding.layout.strided" || len(op.Operands) != len(t.Dims) {
		return nil, false
	}
	for _, o := range op.Operands {
		if o.Lit != nil && o.Lit.Kind != LitInt {
			return nil, false
		}
	}
	return op.Operands, true
}

// LayoutOnly reports whether op only defines an address layout that view
// types name (DenseStorage, encoding.layout.strided and its assume): the
// backends compile it to nothing and read it from the types.
func LayoutOnly(op *Op) bool {
	if DenseStorage(op) {
		return true
	}
	return op != nil && (op.Name == "encoding.layout.strided" || op.Name == "encoding.layout.assume.strided")
}

// lowerCollective rewrites a collective on a vector into one collective per
// lane (every invocation runs the same lanes in the same order, so they
// stay convergent) and one on i8/i16 into the i32 collective of the
// widened value, truncated back: sign-extended, or zero-extended for the
// unsigned kinds minui/maxui (wrapping sums and bit operations keep their
// low bits either way). Fast-math flags are dropped as lowerFastMath does.
func lowerCollective(l *lowering, op *Op) (bool, error) {
	if len(op.Operands) == 0 || op.Operands[0].Value == nil || op.Operands[0].Value.Type == nil || len(op.Results) == 0 {
		return lowerFastMath(l, op)
	}
	x := op.Operands[0].Value
	t := x.Type
	e := elemType(t)
	narrow := e.Kind == TypeInt && e.Bits > 1 && e.Bits < 32
	if len(op.Types) == 0 && (t.Kind == TypeVector || narrow) {
		// Split per lane, each lane's op is written with its types.
		return true, l.errorf("on %s without its operand types (write `: type, …` after the operands)", t)
	}
	scan := (op.Name == "kernel.subgroup.scan" || op.Name == "kernel.workgroup.scan") && l.opts.ShuffleScans
	if t.Kind != TypeVector && !narrow && !scan {
		return lowerFastMath(l, op)
	}
	n, _, ok := staticLanes(t)
	if !ok {
		return true, l.errorf("collective on a vector with a dynamic lane count")
	}
	var keep []string
	for _, w := range paramWords(op.Param) {
		if !isFastMathFlag(w) {
			keep = append(keep, w)
		}
	}
	param := strings.Join(keep, ", ")
	lanes, err := l.lanes(x)
	if err != nil {
		return true, err
	}
	unsigned := param == "minui" || param == "maxui"
	out := make([]*Value, n)
	for i, v := range lanes {
		w := v
		if narrow {
			w = l.resizeInt(v, 32, !unsigned)
		}
		if scan {
			var r *Value
			var err error
			if op.Name == "kernel.workgroup.scan" {
				r, err = l.workgroupScan(param, w, attrWord(op, "mode") == "exclusive", attrWord(op, "direction") == "reverse")
			} else {
				size, stride := clusterAttrs(op)
				r, err = l.shuffleScan(param, w, attrWord(op, "mode") == "exclusive", attrWord(op, "direction") == "reverse", size, stride)
			}
			if err != nil {
				return true, err
			}
			if narrow {
				r = l.resizeInt(r, e.Bits, false)
			}
			out[i] = r
			continue
		}
		c := *op
		c.Param = param
		c.Operands = append([]*Operand{{Pos: op.Pos, Name: w.Name, Value: w}}, op.Operands[1:]...)
		c.Types = append([]*Type{w.Type}, op.Types[1:]...)
		c.ResultTypes = nil
		l.n++
		r := &Value{Name: "lower." + strconv.Itoa(l.n), Type: w.Type, Pos: op.Pos, Def: &c}
		c.Results = []*Value{r}
		if len(op.Results) > 1 {
			if i == 0 {
				c.Results = append(c.Results, op.Results[1]) // shuffle's valid bit: the same in every lane
			} else {
				l.n++
				c.Results = append(c.Results, &Value{Name: "lower." + strconv.Itoa(l.n), Type: op.Results[1].Type, Pos: op.Pos, Def: &c})
			}
		}
		l.out = append(l.out, &c)
		if narrow {
			r = l.resizeInt(r, e.Bits, false)
		}
		out[i] = r
	}
	l.finish(l.build(t, out))
	return true, nil
}

// lowerRangeFact answers test.fact_range_lo/hi, "the analysis range bound":
// the constant itself for a constant, 0 as the lower bound of an id
// query, else the bounds of the value's type (index and iN signed, offset
// from 0) — the range an analysis that knows nothing else proves.
func lowerRangeFact(l *lowering, op *Op) (bool, error) {
	if len(op.Operands) != 1 || op.Operands[0].Value == nil || len(op.Results) != 1 {
		return true, l.errorf("takes one operand and one result")
	}
	v := op.Operands[0].Value
	hi := op.Name == "test.fact_range_hi"
	var lo, up int64
	bits := 64
	switch t := v.Type; {
	case t == nil:
		return true, l.errorf("operand without a type")
	case t.Kind == TypeIndex:
		bits = TargetGPU.IndexBits
	case t.Kind == TypeInt:
		bits = t.Bits
	case t.Kind != TypeOffset:
		return true, l.errorf("range of a %s value", t)
	}
	lo, up = -1<<(bits-1), 1<<(bits-1)-1
	if v.Type.Kind == TypeOffset {
		lo, up = 0, 1<<63-1
	}
	if d := v.Def; d != nil {
		switch {
		case (d.Name == "index.constant" || d.Name == "scalar.constant") && d.Literal != nil && d.Literal.Kind == LitInt:
			lo, up = d.Literal.Int, d.Literal.Int
		case laneSources[d.Name] || strings.HasPrefix(d.Name, "kernel.workgroup.id") || strings.HasPrefix(d.Name, "kernel.workitem.id"):
			lo = 0
		}
	}
	rt := op.Results[0].Type
	if rt == nil {
		rt = typeOfBits(64)
	}
	if hi {
		lo = up
	}
	l.finish(l.intConst(rt, lo))
	return true, nil
}

// lowerTableLookup rewrites vector.table.lookup %table[%indices]: result
// lane i is the table lane the index lane i names (read unsigned), each an
// extract at a run-time position (an index outside the table is the
// extract's error).
func lowerTableLookup(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 2)
	if err != nil {
		return true, err
	}
	table, idx := x[0], x[1]
	if len(op.ResultTypes) == 0 || table.Type.Kind != TypeVector || len(table.Type.Dims) != 1 {
		return true, l.errorf("needs a rank-1 table and a result type")
	}
	rt := op.ResultTypes[0]
	ie := elemType(idx.Type)
	if ie.Kind != TypeInt && ie.Kind != TypeIndex {
		return true, l.errorf("index lanes of type %s", ie)
	}
	lanes, err := l.lanes(idx)
	if err != nil {
		return true, err
	}
	it := &Type{Kind: TypeIndex, Name: "index"}
	out := make([]*Value, len(lanes))
	for i, v := range lanes {
		p := v
		if ie.Kind == TypeInt {
			p = l.emit("index.cast", "", []*Value{l.resizeInt(v, 32, false)}, []*Type{typeOfBits(32)}, []*Type{it}, it)
		}
		e := l.emit("vector.extract", "", []*Value{table, p}, []*Type{table.Type}, []*Type{table.Type.Elem}, table.Type.Elem)
		out[i] = e
	}
	l.finish(l.build(rt, out))
	return true, nil
}

// scanIdentity is the identity of a combining kind on type t.
func (l *lowering) scanIdentity(kind string, t *Type) (*Value, bool) {
	if t.Kind == TypeFloat {
		v := map[string]float64{"addf": 0, "mulf": 1, "minnumf": math.Inf(1), "minimumf": math.Inf(1),
			"maxnumf": math.Inf(-1), "maximumf": math.Inf(-1)}
		f, ok := v[kind]
		if !ok {
			return nil, false
		}
		return l.floatConst(t, f), true
	}
	bits := 32
	if t.Kind == TypeInt {
		bits = t.Bits
	}
	v := map[string]int64{"addi": 0, "ori": 0, "xori": 0, "maxui": 0, "muli": 1, "andi": -1, "minui": -1,
		"minsi": 1<<(bits-1) - 1, "maxsi": -1 << (bits - 1)}
	i, ok := v[kind]
	if !ok {
		return nil, false
	}
	return l.intConst(t, i), true
}

// clusterAttrs reads a collective's cluster_size (0 when absent: the
// whole subgroup) and cluster_stride (1 when absent).
func clusterAttrs(op *Op) (size, stride int64) {
	stride = 1
	if a := op.Attr("cluster_size"); a != nil && a.Value.Kind == LitInt {
		size = a.Value.Int
	}
	if a := op.Attr("cluster_stride"); a != nil && a.Value.Kind == LitInt && a.Value.Int > 0 {
		stride = a.Value.Int
	}
	return size, stride
}

// shuffleScan emits kernel.subgroup.scan<kind> of scalar x as log-step
// shuffles (Hillis–Steele): for d = 1, 2, 4, … 32, each invocation combines
// the running value of the invocation d before it (after it, in reverse)
// when that one exists; an exclusive scan then takes its neighbour's value,
// the identity at the start. Subgroups of up to 64 invocations. A
// clustered scan (size > 0: clusters of size lanes stride apart) shuffles
// by d·stride within blocks of size·stride lanes, d < size.
func (l *lowering) shuffleScan(kind string, x *Value, excl, rev bool, size, stride int64) (*Value, error) {
	t := x.Type
	ident, ok := l.scanIdentity(kind, t)
	if !ok {
		return nil, l.errorf("scan kind %s on %s", kind, t)
	}
	mode := "up"
	if rev {
		mode = "down"
	}
	idx, i32 := &Type{Kind: TypeIndex, Name: "index"}, typeOfBits(32)
	var width *Value
	steps := int64(64)
	if span := size * stride; size > 0 && (span&(span-1) != 0 || span > 64) {
		return nil, l.errorf("a clustered scan needs clusters spanning a power of two of at most 64 lanes (cluster_size %d, cluster_stride %d)", size, stride)
	}
	if size > 0 {
		width, steps = l.intConst(i32, size*stride), size
	} else {
		sg := l.emit("target.subgroup.size", "", nil, []*Type{idx}, nil, idx)
		width = l.emit("index.cast", "", []*Value{sg}, []*Type{idx}, []*Type{i32}, i32)
		stride = 1
	}
	shuffle := func(v *Value, d int) (*Value, *Value) {
		r := l.emit("kernel.subgroup.shuffle", mode, []*Value{v, l.intConst(i32, int64(d)*stride), width}, []*Type{t, i32, i32}, nil, t)
		sh := l.out[len(l.out)-1]
		l.n++
		valid := &Value{Name: "lower." + strconv.Itoa(l.n), Type: typeOfBits(1), Pos: l.cur.Pos, Def: sh}
		sh.Results = append(sh.Results, valid)
		return r, valid
	}
	acc := x
	for d := 1; int64(d) < steps; d *= 2 {
		y, valid := shuffle(acc, d)
		acc = l.sel(valid, l.bin(kind, y, acc), acc)
	}
	if excl {
		y, valid := shuffle(acc, 1)
		acc = l.sel(valid, y, ident)
	}
	return acc, nil
}

// attrWord is an enum attribute's word (mode = exclusive), or "".
func attrWord(op *Op, key string) string {
	if a := op.Attr(key); a != nil {
		if a.Value.Str != "" {
			return a.Value.Str
		}
		return a.Value.Text
	}
	return ""
}

// workgroupScan emits kernel.workgroup.scan<kind> of scalar x from subgroup
// pieces: each subgroup scans its own lanes (shuffleScan) and its first
// invocation stores the subgroup's total (kernel.subgroup.reduce) in a
// workgroup array of 32; after a barrier every invocation folds the totals
// of the subgroups before its own (after it, in reverse) in order, then
// combines that with its subgroup scan; a second barrier keeps the array
// until everyone has read it. Workgroups of up to 32 subgroups.
func (l *lowering) workgroupScan(kind string, x *Value, excl, rev bool) (*Value, error) {
	t := x.Type
	ident, ok := l.scanIdentity(kind, t)
	if !ok {
		return nil, l.errorf("scan kind %s on %s", kind, t)
	}
	size := TargetGPU.ByteSizeOn(t)
	idx := &Type{Kind: TypeIndex, Name: "index"}
	off := &Type{Kind: TypeOffset, Name: "offset"}
	part, err := l.shuffleScan(kind, x, excl, rev, 0, 1)
	if err != nil {
		return nil, err
	}
	total := l.emit("kernel.subgroup.reduce", kind, []*Value{x}, []*Type{t}, nil, t)
	lane := l.emit("kernel.subgroup.lane.id", "", nil, []*Type{idx}, nil, idx)
	sgid := l.emit("kernel.subgroup.id", "", nil, []*Type{idx}, nil, idx)
	bytes := l.intConst(off, int64(32*size))
	buf := l.emit("buffer.alloca", "workgroup", []*Value{bytes}, []*Type{{Kind: TypeBuffer, Name: "buffer"}}, nil, &Type{Kind: TypeBuffer, Name: "buffer"})
	l.out[len(l.out)-1].Attrs = []*Attr{{Pos: l.cur.Pos, Key: "align", Value: Literal{Kind: LitInt, Int: 16, Text: "16"}}}
	vt := &Type{Kind: TypeView, Name: "view", Dims: []Dim{{Size: 32}}, Elem: t}
	zero := l.intConst(off, 0)
	tv := l.emit("buffer.view", "", []*Value{buf, zero}, []*Type{{Kind: TypeBuffer, Name: "buffer"}}, []*Type{vt}, vt)
	first := l.emit("index.cmp", "", []*Value{lane, l.intConst(idx, 0)}, []*Type{idx}, nil, typeOfBits(1))
	l.out[len(l.out)-1].Pred = "eq"
	// scf.if %first { view.store %total, %tv[%sgid] }
	saved := l.out
	l.out = nil
	l.emit("view.store", "", []*Value{total, tv, sgid}, []*Type{t, vt}, nil, nil)
	then := &Region{Pos: l.cur.Pos, End: l.cur.End, Ops: l.out}
	l.out = saved
	ifOp := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "scf.if", Regions: []*Region{then},
		Operands: []*Operand{{Pos: l.cur.Pos, Name: first.Name, Value: first}}}
	l.out = append(l.out, ifOp)
	barrier := func() {
		l.out = append(l.out, &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "kernel.barrier", Param: "workgroup", Attrs: []*Attr{
			{Pos: l.cur.Pos, Key: "ordering", Value: Literal{Kind: LitWord, Str: "acq_rel", Text: "acq_rel"}},
			{Pos: l.cur.Pos, Key: "scope", Value: Literal{Kind: LitWord, Str: "workgroup", Text: "workgroup"}}}})
	}
	barrier()
	// The fold over the other subgroups' totals: [0, sgid) forward,
	// (sgid, count) in reverse, count = ⌈invocations / subgroup size⌉.
	lo, hi := l.intConst(idx, 0), sgid
	if rev {
		n := l.intConst(idx, 1)
		for _, ax := range []string{"x", "y", "z"} {
			n = l.emit("index.mul", "", []*Value{n, l.emit("kernel.workgroup.size", ax, nil, []*Type{idx}, nil, idx)}, []*Type{idx}, nil, idx)
		}
		sgs := l.emit("target.subgroup.size", "", nil, []*Type{idx}, nil, idx)
		n = l.emit("index.add", "", []*Value{n, l.emit("index.sub", "", []*Value{sgs, l.intConst(idx, 1)}, []*Type{idx}, nil, idx)}, []*Type{idx}, nil, idx)
		lo = l.emit("index.add", "", []*Value{sgid, l.intConst(idx, 1)}, []*Type{idx}, nil, idx)
		hi = l.emit("index.div", "", []*Value{n, sgs}, []*Type{idx}, nil, idx)
	}
	one := l.intConst(idx, 1)
	saved = l.out
	l.out = nil
	l.n++
	body := &Region{Pos: l.cur.Pos, End: l.cur.End}
	j := &Value{Name: "lower.wj" + strconv.Itoa(l.n), Type: idx, Pos: l.cur.Pos, Owner: body}
	acc := &Value{Name: "lower.wacc" + strconv.Itoa(l.n), Type: t, Pos: l.cur.Pos, Owner: body, Index: 1}
	body.Args = []*Value{j, acc}
	v := l.emit("view.load", "", []*Value{tv, j}, []*Type{vt}, []*Type{t}, t)
	next := l.bin(kind, acc, v)
	y := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "scf.yield", Types: []*Type{t},
		Operands: []*Operand{{Pos: l.cur.Pos, Name: next.Name, Value: next}}}
	body.Ops = append(l.out, y)
	l.out = saved
	l.n++
	prefix := &Value{Name: "lower." + strconv.Itoa(l.n), Type: t, Pos: l.cur.Pos}
	forOp := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "scf.for", ResultTypes: []*Type{t}, Regions: []*Region{body}, Results: []*Value{prefix}}
	prefix.Def = forOp
	for _, a := range []*Value{lo, hi, one, ident} {
		forOp.Operands = append(forOp.Operands, &Operand{Pos: l.cur.Pos, Name: a.Name, Value: a})
	}
	l.out = append(l.out, forOp)
	barrier()
	if rev {
		return l.bin(kind, part, prefix), nil
	}
	return l.bin(kind, prefix, part), nil
}

// lowerMatch rewrites kernel.subgroup.match.any/all with broadcasts and
// ballots: for each lane d of the subgroup (up to 64), the ballot of
// "my value equals lane d's" is the match mask of lane d, which lane d
// keeps. Floats compare by their bits. match.all's mask is the active
// mask when every active lane matched (its own mask equals the ballot of
// true), else 0, with that predicate as its second result.
func lowerMatch(l *lowering, op *Op) (bool, error) {
	if len(op.Operands) != 1 || op.Operands[0].Value == nil || op.Operands[0].Value.Type == nil || len(op.Results) == 0 {
		return true, l.errorf("takes one value")
	}
	x := op.Operands[0].Value
	if !x.Type.IsScalar() {
		return true, l.errorf("on %s (a scalar is matched)", x.Type)
	}
	mt := op.Results[0].Type
	if mt == nil {
		mt = typeOfBits(64)
	}
	if x.Type.Kind == TypeFloat {
		x = l.cast("bitcast", x, typeOfBits(x.Type.Bits))
	}
	idx, i1, i32 := &Type{Kind: TypeIndex, Name: "index"}, typeOfBits(1), typeOfBits(32)
	lane := l.emit("kernel.subgroup.lane.id", "", nil, []*Type{idx}, nil, idx)
	cmpName := "cmpi"
	if x.Type.Kind == TypeIndex || x.Type.Kind == TypeOffset {
		cmpName = "cmp"
	}
	ballot := func(p *Value) *Value {
		return l.emit("kernel.subgroup.vote.ballot", "", []*Value{p}, []*Type{i1}, []*Type{mt}, mt)
	}
	mask := l.intConst(mt, 0)
	size := l.emit("target.subgroup.size", "", nil, []*Type{idx}, nil, idx)
	for d := 0; d < 64; d++ {
		// Lane d mod the subgroup size: a valid source; only lane d (when
		// it exists) keeps the result.
		src := l.emit("index.rem", "", []*Value{l.intConst(idx, int64(d)), size}, []*Type{idx}, nil, idx)
		src = l.emit("index.cast", "", []*Value{src}, []*Type{idx}, []*Type{i32}, i32)
		peer := l.emit("kernel.subgroup.broadcast", "", []*Value{x, src}, []*Type{x.Type, i32}, nil, x.Type)
		l.out[len(l.out)-1].Words = []string{"from"}
		var eq *Value
		if cmpName == "cmp" {
			eq = l.emit("index.cmp", "", []*Value{x, peer}, []*Type{x.Type}, nil, i1)
			l.out[len(l.out)-1].Pred = "eq"
		} else {
			eq = l.cmp("cmpi", "eq", x, peer)
		}
		mine := l.emit("index.cmp", "", []*Value{lane, l.intConst(idx, int64(d))}, []*Type{idx}, nil, i1)
		l.out[len(l.out)-1].Pred = "eq"
		mask = l.sel(mine, ballot(eq), mask)
	}
	if op.Name == "kernel.subgroup.match.any" {
		l.finish(mask)
		return true, nil
	}
	yes := l.constant(i1, &Literal{Kind: LitBool, Int: 1, Text: "true"})
	active := ballot(yes)
	all := l.cmp("cmpi", "eq", mask, active)
	res := l.sel(all, active, l.intConst(mt, 0))
	if len(op.Results) > 1 {
		// The predicate is an earlier value: define the op's second result
		// from it, then the mask last.
		fwd := &Op{Pos: op.Pos, End: op.End, Name: "scf.select", Types: []*Type{i1}, Results: []*Value{op.Results[1]}}
		for _, a := range []*Value{all, all, all} {
			fwd.Operands = append(fwd.Operands, &Operand{Pos: op.Pos, Name: a.Name, Value: a})
		}
		l.out = append(l.out, fwd)
		res = l.sel(all, res, res)
	}
	l.finish(res)
	return true, nil
}

// lowerGlobalLoad folds `global.load @g : T` of a scalar global.constant
// with an initializer (`global.constant @eps : f32 = 1.0e-5`) into that
// constant, as Loom's canonicalizer does. Other globals are module state
// the host would have to bind (a global.variable, a constant without an
// initializer, a tile or view), which loomgen does not do yet: those loads
// are refused where a backend reaches them.
func lowerGlobalLoad(l *lowering, op *Op) (bool, error) {
	g := l.globals[op.Symbol]
	if g == nil {
		return true, l.errorf("@%s is not a global of this package", op.Symbol)
	}
	t := g.Type
	switch {
	case g.Mutable:
		return true, l.refuse("@%s is a global.variable: module state bound by the host is not supported (only scalar global.constant values with an initializer are)", op.Symbol)
	case t == nil || !t.IsScalar() || len(op.Results) != 1:
		return true, l.refuse("@%s holds a %s: only scalar global.constant values with an initializer are supported", op.Symbol, t)
	case g.Init == nil:
		return true, l.refuse("@%s has no initializer: its value would come from the host, which loomgen does not bind", op.Symbol)
	}
	lit := g.Init
	switch {
	case t.Kind == TypeFloat && (lit.Kind == LitFloat || lit.Kind == LitInt):
		l.finish(l.floatConst(t, lit.Float))
	case t.Kind == TypeInt && t.Bits == 1 && lit.Kind == LitBool:
		l.finish(l.intConst(t, lit.Int))
	case (t.Kind == TypeInt || t.Kind == TypeIndex || t.Kind == TypeOffset) && lit.Kind == LitInt:
		if t.Kind == TypeInt && t.Bits < 64 && wrapInt(lit.Int, t.Bits) != lit.Int && uint64(lit.Int)>>t.Bits != 0 {
			return true, &Error{Pos: g.Op.Pos, Class: ErrInvalid, Msg: fmt.Sprintf("global.constant @%s: initializer %s does not fit %s", g.Symbol, lit.Text, t.Name)}
		}
		if t.Kind == TypeIndex || t.Kind == TypeOffset {
			v := l.emit("index.constant", "", nil, []*Type{t}, nil, t)
			l.out[len(l.out)-1].Literal = &Literal{Kind: LitInt, Int: lit.Int, Text: strconv.FormatInt(lit.Int, 10)}
			l.finish(v)
		} else {
			l.finish(l.intConst(t, lit.Int))
		}
	default:
		return true, &Error{Pos: g.Op.Pos, Class: ErrInvalid, Msg: fmt.Sprintf("global.constant @%s: initializer %s is not a %s value", g.Symbol, lit.Text, t.Name)}
	}
	return true, nil
}
