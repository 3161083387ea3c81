package loom

import (
	"strconv"
	"strings"
)

// Vectors with a dynamic lane count, vector<[%n]xT>. Neither backend
// holds a vector whose length is known only at run time, so the shared
// pass turns the ops computing such vectors in a region into one scf.for
// over the lanes: loads become element loads at offset j, lane-wise ops
// their scalar forms, stores element stores, and reductions (vector.reduce,
// vector.dotf) loop-carried accumulators, combined in lane order — the
// order the static forms use. It applies when the group is self-contained:
// 1-D vectors sharing one dynamic dimension (each dimension is a group of
// its own, rewritten in turn), every use of a dynamic vector
// inside the group or a reduction of it, no other op writing memory among
// the group's ops, and the reductions' results used only after the group.
// Anything else is left to the backends, which refuse it with its position.

// dynLaneDim is the dynamic dimension of a 1-D vector type, or nil.
func dynLaneDim(t *Type) *Value {
	if t == nil || t.Kind != TypeVector || len(t.Dims) != 1 || t.Dims[0].Value == nil {
		return nil
	}
	return t.Dims[0].Value.Value
}

// dynReduceOps are the reductions a dynamic group may end in.
var dynReduceOps = map[string]bool{"vector.reduce": true, "vector.dotf": true}

// writesMemory reports whether op may write memory or synchronize.
func writesMemory(op *Op) bool {
	n := op.Name
	return strings.Contains(n, "store") || strings.Contains(n, "atomic") || strings.HasPrefix(n, "func.") ||
		strings.HasPrefix(n, "template.") || strings.Contains(n, "barrier") || op.Opaque || len(op.Regions) > 0
}

// dynamicLanes returns ops with one dynamic-lane group rewritten into a
// loop, or nil when there is none it can rewrite.
func (l *lowering) dynamicLanes(ops []*Op) []*Op {
	var dim *Value
	inGroup := map[*Op]bool{}
	dynVal := map[*Value]bool{}
	first, last := -1, -1
	for i, op := range ops {
		d := (*Value)(nil)
		for _, r := range op.Results {
			if x := dynLaneDim(r.Type); x != nil {
				d = x
			}
		}
		usesDyn := false
		for _, o := range op.Operands {
			if dynVal[o.Value] {
				usesDyn = true
			}
		}
		if d == nil && !usesDyn {
			continue
		}
		if d != nil && dim != nil && d != dim {
			continue // another lane count: its own group, after this one
		}
		if d != nil {
			dim = d
		}
		if d == nil && !dynReduceOps[op.Name] && op.Name != "vector.store" {
			return nil // a dynamic vector escapes the group
		}
		inGroup[op] = true
		for _, r := range op.Results {
			if dynLaneDim(r.Type) != nil {
				dynVal[r] = true
			}
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	if dim == nil {
		return nil
	}
	// Nothing between the group's ops may write memory, and the
	// reductions' results must not be used before the loop ends.
	for i := first; i <= last; i++ {
		op := ops[i]
		if !inGroup[op] && writesMemory(op) {
			return nil
		}
		if inGroup[op] {
			continue
		}
		for _, o := range op.Operands {
			if o.Value != nil && o.Value.Def != nil && inGroup[o.Value.Def] {
				return nil
			}
		}
	}
	// Uses inside nested regions and terminators of later ops are fine;
	// a dynamic vector used by anything outside the group was refused.
	l.cur = ops[last]
	l.out = nil
	loop, ok := l.lanesLoop(ops[first:last+1], inGroup, dim)
	l.cur = nil
	if !ok {
		l.out = nil
		return nil
	}
	out := append([]*Op(nil), ops[:first]...)
	for i := first; i <= last; i++ {
		if !inGroup[ops[i]] {
			out = append(out, ops[i])
		}
	}
	out = append(out, loop...)
	out = append(out, ops[last+1:]...)
	l.out = nil
	return out
}

// lanesLoop builds the loop over the lanes for the group's ops.
func (l *lowering) lanesLoop(group []*Op, inGroup map[*Op]bool, n *Value) ([]*Op, bool) {
	idx := &Type{Kind: TypeIndex, Name: "index"}
	c0 := l.intConst(idx, 0)
	c1 := l.intConst(idx, 1)
	pre := l.out
	l.out = nil
	l.n++
	body := &Region{Pos: l.cur.Pos, End: l.cur.End}
	j := &Value{Name: "lower.j" + strconv.Itoa(l.n), Type: idx, Pos: l.cur.Pos, Owner: body}
	body.Args = []*Value{j}
	lane := map[*Value]*Value{}
	get := func(v *Value) *Value {
		if x, ok := lane[v]; ok {
			return x
		}
		return v
	}
	type red struct {
		op   *Op
		acc  *Value // the body's accumulator argument
		next *Value // its value after this lane
	}
	var reds []*red
	for _, op := range group {
		if !inGroup[op] {
			continue
		}
		rest := strings.TrimPrefix(op.Name, "vector.")
		var elem *Type
		if len(op.Results) > 0 && dynLaneDim(op.Results[0].Type) != nil {
			elem = op.Results[0].Type.Elem
		}
		switch {
		case rest == "load":
			if len(op.Operands) < 2 || len(op.Types) == 0 {
				return nil, false
			}
			ix := valuesOf(op.Operands[1:])
			if ix == nil {
				return nil, false
			}
			ix[len(ix)-1] = l.emit("index.add", "", []*Value{ix[len(ix)-1], j}, []*Type{idx}, nil, idx)
			v := l.emit("view.load", "", append([]*Value{op.Operands[0].Value}, ix...), []*Type{op.Types[0]}, []*Type{elem}, elem)
			lane[op.Results[0]] = v
		case rest == "store":
			if len(op.Operands) < 3 || len(op.Types) < 2 {
				return nil, false
			}
			ix := valuesOf(op.Operands[2:])
			if ix == nil {
				return nil, false
			}
			ix[len(ix)-1] = l.emit("index.add", "", []*Value{ix[len(ix)-1], j}, []*Type{idx}, nil, idx)
			x := get(op.Operands[0].Value)
			l.emit("view.store", "", append([]*Value{x, op.Operands[1].Value}, ix...), []*Type{x.Type, op.Types[1]}, nil, nil)
		case rest == "splat" || rest == "broadcast":
			lane[op.Results[0]] = op.Operands[0].Value
		case rest == "constant":
			v := l.constant(elem, op.Literal)
			lane[op.Results[0]] = v
		case rest == "reduce" || rest == "dotf":
			words := paramWords(op.Param)
			init := op.Operands[len(op.Operands)-1].Value
			acc := &Value{Name: "lower.acc" + strconv.Itoa(len(reds)) + "_" + strconv.Itoa(l.n), Type: init.Type, Pos: op.Pos, Owner: body, Index: len(body.Args)}
			body.Args = append(body.Args, acc)
			var next *Value
			if rest == "dotf" {
				next = l.fma(get(op.Operands[0].Value), get(op.Operands[1].Value), acc)
			} else {
				if len(words) == 0 {
					return nil, false
				}
				next = l.bin(words[0], acc, get(op.Operands[0].Value))
			}
			reds = append(reds, &red{op: op, acc: acc, next: next})
		case elem != nil:
			// A lane-wise op: its scalar form on the lanes.
			args := make([]*Value, len(op.Operands))
			for i, o := range op.Operands {
				if o.Value == nil {
					return nil, false
				}
				args[i] = get(o.Value)
				if args[i].Type != nil && args[i].Type.Kind == TypeVector {
					return nil, false // a static vector operand
				}
			}
			name := "scalar." + rest
			if rest == "select" {
				name = "scf.select"
			}
			if lowerRules[op.Name] != nil && lowerRules["scalar."+rest] == nil {
				name = op.Name // e.g. vector.dot8i4: its rule takes scalars
			}
			types := make([]*Type, len(op.Types))
			for i, t := range op.Types {
				types[i] = elemType(t)
			}
			var rts []*Type
			for _, t := range op.ResultTypes {
				rts = append(rts, elemType(t))
			}
			v := l.emit(name, op.Param, args, types, rts, elem)
			last := l.out[len(l.out)-1]
			last.Pred, last.Attrs, last.Literal, last.Words = op.Pred, op.Attrs, op.Literal, op.Words
			lane[op.Results[0]] = v
		default:
			return nil, false
		}
	}
	// scf.for %j = [0 to n step 1] (accs = inits) -> (types) { body }
	var yieldArgs []*Value
	var types []*Type
	for _, r := range reds {
		yieldArgs = append(yieldArgs, r.next)
		types = append(types, r.acc.Type)
	}
	y := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "scf.yield", Types: types}
	for _, a := range yieldArgs {
		y.Operands = append(y.Operands, &Operand{Pos: l.cur.Pos, Name: a.Name, Value: a})
	}
	body.Ops = append(l.out, y)
	cur := l.cur
	body = l.region(body) // lower what the scalar forms still need (dot8i4, powf, …)
	l.out, l.cur = pre, cur
	forOp := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "scf.for", ResultTypes: types, Regions: []*Region{body}}
	for _, v := range append([]*Value{c0, n, c1}, func() []*Value {
		var in []*Value
		for _, r := range reds {
			in = append(in, r.op.Operands[len(r.op.Operands)-1].Value)
		}
		return in
	}()...) {
		forOp.Operands = append(forOp.Operands, &Operand{Pos: l.cur.Pos, Name: v.Name, Value: v})
	}
	for _, r := range reds {
		forOp.Results = append(forOp.Results, r.op.Results[0])
	}
	return append(pre, forOp), true
}

// valuesOf is the values of operands, or nil when one is a literal or
// there are none.
func valuesOf(os []*Operand) []*Value {
	if len(os) == 0 {
		return nil
	}
	out := make([]*Value, len(os))
	for i, o := range os {
		if o.Value == nil {
			return nil
		}
		out[i] = o.Value
	}
	return out
}
