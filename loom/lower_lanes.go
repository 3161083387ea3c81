package loom

import (
	"strconv"
	"strings"
)

// Shared lowerings of the pure lane moves vector.concat, vector.interleave
// and vector.deinterleave: every result lane is one source lane, so each
// becomes lane extracts and a vector.from_elements per result. The lane
// maps work on any rank; the axis is the op's <axis> parameter.

// laneMove is a checked lane-moving op: its static source and result
// shapes and the axis it moves lanes along.
type laneMove struct {
	axis    int
	srcs    [][]int64 // shapes of the sources
	results [][]int64 // shapes of the results
}

// checkLaneMove reads the axis and the static shapes of op's sources
// (srcTypes) and results, checking one element type and one rank.
func (l *lowering) checkLaneMove(op *Op, srcTypes, resTypes []*Type) (*laneMove, error) {
	ax, err := strconv.Atoi(strings.TrimSpace(op.Param))
	if err != nil {
		return nil, l.errorf("needs an integer axis <N>, has <%s>", op.Param)
	}
	m := &laneMove{axis: ax}
	var elem string
	rank := -1
	shape := func(t *Type) ([]int64, error) {
		if t == nil || t.Kind != TypeVector {
			return nil, l.errorf("needs vector types, has %s", t)
		}
		_, s, ok := staticLanes(t)
		if !ok {
			return nil, l.errorf("vector with a dynamic lane count %s (needs static lanes)", t)
		}
		if elem == "" {
			elem, rank = t.Elem.String(), len(s)
		}
		if t.Elem.String() != elem || len(s) != rank {
			return nil, l.errorf("mixes %s with vector<…x%s> of rank %d: needs one element type and rank", t, elem, rank)
		}
		if ax < 0 || ax >= len(s) {
			return nil, l.errorf("axis %d outside the rank-%d %s", ax, len(s), t)
		}
		return s, nil
	}
	for _, t := range srcTypes {
		s, err := shape(t)
		if err != nil {
			return nil, err
		}
		m.srcs = append(m.srcs, s)
	}
	for _, t := range resTypes {
		s, err := shape(t)
		if err != nil {
			return nil, err
		}
		m.results = append(m.results, s)
	}
	return m, nil
}

// sameOffAxis reports whether shapes a and b agree on every axis but ax.
func sameOffAxis(a, b []int64, ax int) bool {
	for i := range a {
		if i != ax && a[i] != b[i] {
			return false
		}
	}
	return true
}

// flatIndex is the row-major flat lane of index idx in shape.
func flatIndex(shape, idx []int64) int {
	f := int64(0)
	for i, s := range shape {
		f = f*s + idx[i]
	}
	return int(f)
}

// eachIndex calls f with every index of shape in row-major order.
func eachIndex(shape []int64, f func(idx []int64)) {
	idx := make([]int64, len(shape))
	n := 1
	for _, s := range shape {
		n *= int(s)
	}
	for k := 0; k < n; k++ {
		rem := int64(k)
		for a := len(shape) - 1; a >= 0; a-- {
			idx[a] = rem % shape[a]
			rem /= shape[a]
		}
		f(idx)
	}
}

// buildAs emits vector.from_elements of lanes defining v itself.
func (l *lowering) buildAs(v *Value, lanes []*Value) {
	t := v.Type
	op := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "vector.from_elements", ResultTypes: []*Type{t}, Results: []*Value{v}}
	for _, x := range lanes {
		op.Types = append(op.Types, x.Type)
		op.Operands = append(op.Operands, &Operand{Pos: l.cur.Pos, Name: x.Name, Value: x})
	}
	l.out = append(l.out, op)
}

// moveLanes builds each result of op from the source lanes pick names:
// pick(r, idx) gives the source and the index in it of result r's lane idx
// (idx is reused between calls).
func (l *lowering) moveLanes(op *Op, srcs []*Value, m *laneMove, pick func(r int, idx []int64) (int, []int64)) error {
	var lanes [][]*Value
	for _, s := range srcs {
		ls, err := l.lanes(s)
		if err != nil {
			return err
		}
		lanes = append(lanes, ls)
	}
	for r, res := range op.Results {
		var out []*Value
		eachIndex(m.results[r], func(idx []int64) {
			s, si := pick(r, idx)
			out = append(out, lanes[s][flatIndex(m.srcs[s], si)])
		})
		l.buildAs(res, out)
	}
	return nil
}

// lowerConcat rewrites vector.concat<axis> into lane moves: the inputs
// follow one another along the axis.
func lowerConcat(l *lowering, op *Op) (bool, error) {
	if len(op.Results) != 1 || len(op.ResultTypes) != 1 || len(op.Operands) == 0 {
		return true, l.errorf("needs one or more inputs and `: A, B, … -> R` types")
	}
	srcs, err := l.operandValues(op, len(op.Operands))
	if err != nil {
		return true, err
	}
	types := make([]*Type, len(srcs))
	for i, s := range srcs {
		types[i] = s.Type
	}
	m, err := l.checkLaneMove(op, types, op.ResultTypes)
	if err != nil {
		return true, err
	}
	ax, res := m.axis, m.results[0]
	starts := make([]int64, len(srcs))
	total := int64(0)
	for i, s := range m.srcs {
		if !sameOffAxis(s, res, ax) {
			return true, l.errorf("input %d %s does not match the result %s off axis %d", i, srcs[i].Type, op.ResultTypes[0], ax)
		}
		starts[i] = total
		total += s[ax]
	}
	if total != res[ax] {
		return true, l.errorf("inputs give %d lanes along axis %d, the result %s has %d", total, ax, op.ResultTypes[0], res[ax])
	}
	si := make([]int64, len(res))
	err = l.moveLanes(op, srcs, m, func(_ int, idx []int64) (int, []int64) {
		s := len(starts) - 1
		for starts[s] > idx[ax] {
			s--
		}
		copy(si, idx)
		si[ax] -= starts[s]
		return s, si
	})
	return true, err
}

// lowerInterleave rewrites vector.interleave<axis>: even positions along
// the axis come from the first operand, odd ones from the second.
func lowerInterleave(l *lowering, op *Op) (bool, error) {
	if len(op.Results) != 1 || len(op.ResultTypes) != 1 {
		return true, l.errorf("needs `%%even, %%odd : A, A -> R`")
	}
	srcs, err := l.operandValues(op, 2)
	if err != nil {
		return true, err
	}
	m, err := l.checkLaneMove(op, []*Type{srcs[0].Type, srcs[1].Type}, op.ResultTypes)
	if err != nil {
		return true, err
	}
	ax, res := m.axis, m.results[0]
	for i, s := range m.srcs {
		if !sameOffAxis(s, res, ax) || 2*s[ax] != res[ax] {
			return true, l.errorf("operand %d %s: the result %s must double axis %d and keep the others", i, srcs[i].Type, op.ResultTypes[0], ax)
		}
	}
	si := make([]int64, len(res))
	err = l.moveLanes(op, srcs, m, func(_ int, idx []int64) (int, []int64) {
		copy(si, idx)
		si[ax] = idx[ax] / 2
		return int(idx[ax] % 2), si
	})
	return true, err
}

// lowerDeinterleave rewrites vector.deinterleave<axis>: the first result
// takes the even positions along the axis, the second the odd ones.
func lowerDeinterleave(l *lowering, op *Op) (bool, error) {
	if len(op.Results) != 2 || len(op.ResultTypes) != 2 {
		return true, l.errorf("needs two results (`%%even, %%odd = … -> A, A`)")
	}
	srcs, err := l.operandValues(op, 1)
	if err != nil {
		return true, err
	}
	m, err := l.checkLaneMove(op, []*Type{srcs[0].Type}, op.ResultTypes)
	if err != nil {
		return true, err
	}
	ax, src := m.axis, m.srcs[0]
	for i, r := range m.results {
		if !sameOffAxis(r, src, ax) || 2*r[ax] != src[ax] {
			return true, l.errorf("result %d %s must halve axis %d of %s and keep the others", i, op.ResultTypes[i], ax, srcs[0].Type)
		}
	}
	si := make([]int64, len(src))
	err = l.moveLanes(op, srcs, m, func(r int, idx []int64) (int, []int64) {
		copy(si, idx)
		si[ax] = 2*idx[ax] + int64(r)
		return 0, si
	})
	return true, err
}

// lowerPartialExtract rewrites a vector.extract with fewer indices than
// the vector's rank: its result is the sub-vector those leading indices
// select (a row of a vector<2x3xi32> for one index), in row-major lane
// order, built from full extracts that append each tail lane's static
// indices to the given (possibly dynamic) ones.
func lowerPartialExtract(l *lowering, op *Op) (bool, error) {
	if len(op.Operands) == 0 || op.Operands[0].Value == nil || len(op.Results) != 1 {
		return false, nil
	}
	v := op.Operands[0].Value
	_, shape, ok := staticLanes(v.Type)
	given := op.Operands[1:]
	if v.Type.Kind != TypeVector || !ok || len(given) >= len(shape) {
		return false, nil // a full extract (or a dynamic shape) the executors take as is
	}
	rt := op.Results[0].Type
	tail := shape[len(given):]
	n := 1
	for _, d := range tail {
		n *= int(d)
	}
	if rt == nil || rt.Kind != TypeVector || !sameType(elemType(rt), v.Type.Elem) {
		return true, l.errorf("%d indices into %s select a vector of %d lanes, not %s", len(given), v.Type, n, rt)
	}
	if rn, _, ok := staticLanes(rt); !ok || rn != n {
		return true, l.errorf("%d indices into %s select a vector of %d lanes, not %s", len(given), v.Type, n, rt)
	}
	lanes := make([]*Value, n)
	for j := range lanes {
		e := &Op{Pos: l.cur.Pos, End: l.cur.End, Name: "vector.extract", Types: []*Type{v.Type}, ResultTypes: []*Type{v.Type.Elem}}
		e.Operands = append(append(e.Operands, op.Operands[0]), given...)
		ix := make([]int64, len(tail))
		rem := int64(j)
		for a := len(tail) - 1; a >= 0; a-- {
			ix[a], rem = rem%tail[a], rem/tail[a]
		}
		for _, x := range ix {
			e.Operands = append(e.Operands, &Operand{Pos: l.cur.Pos, Lit: &Literal{Kind: LitInt, Int: x, Text: strconv.FormatInt(x, 10)}})
		}
		l.n++
		r := &Value{Name: "lower." + strconv.Itoa(l.n), Type: v.Type.Elem, Pos: l.cur.Pos, Def: e}
		e.Results = []*Value{r}
		l.out = append(l.out, e)
		lanes[j] = r
	}
	l.finish(l.build(rt, lanes))
	return true, nil
}

// lowerReduceAxes rewrites vector.reduce.axes<kind> %v, %init axes [a…]:
// each result lane (the kept axes, row-major) is a vector.reduce of the
// lanes of %v along the reduced axes (row-major) into its init lane, so
// the combining kinds keep the executors' one definition and float kinds
// combine in lane order from the init, as vector.reduce does. Fast-math
// flags are dropped (lowerFastMath).
func lowerReduceAxes(l *lowering, op *Op) (bool, error) {
	if len(op.Operands) < 2 || op.Operands[0].Value == nil || op.Operands[1].Value == nil {
		return true, l.errorf("needs an input vector and an init")
	}
	x, init := op.Operands[0].Value, op.Operands[1].Value
	_, shape, ok := staticLanes(x.Type)
	if x.Type.Kind != TypeVector || !ok {
		return true, l.errorf("input %s: the shared lowering needs a vector with static lanes", x.Type)
	}
	reduced := make([]bool, len(shape))
	for _, a := range op.Operands[2:] {
		if a.Lit == nil || a.Lit.Kind != LitInt || a.Lit.Int < 0 || a.Lit.Int >= int64(len(shape)) || reduced[a.Lit.Int] {
			return true, l.errorf("axes must be distinct axis numbers of the rank-%d input", len(shape))
		}
		reduced[a.Lit.Int] = true
	}
	var kept, red []int
	for a := range shape {
		if reduced[a] {
			red = append(red, a)
		} else {
			kept = append(kept, a)
		}
	}
	if len(red) == 0 {
		return true, l.errorf("no axes to reduce")
	}
	var keep []string
	for _, w := range paramWords(op.Param) {
		if !isFastMathFlag(w) {
			keep = append(keep, w)
		}
	}
	kind := strings.Join(keep, ", ")
	count := func(axes []int) int {
		n := 1
		for _, a := range axes {
			n *= int(shape[a])
		}
		return n
	}
	nOut, nRed := count(kept), count(red)
	if (len(kept) == 0) != init.Type.IsScalar() {
		return true, l.errorf("init %s: a scalar exactly when every axis is reduced", init.Type)
	}
	if n, _, ok := staticLanes(init.Type); !ok || n != nOut || !sameType(elemType(init.Type), x.Type.Elem) {
		return true, l.errorf("init %s for %d result lanes of %s", init.Type, nOut, x.Type.Elem)
	}
	coord := make([]int64, len(shape))
	// set writes lane j of the row-major space over axes into coord.
	set := func(axes []int, j int) {
		for k := len(axes) - 1; k >= 0; k-- {
			d := shape[axes[k]]
			coord[axes[k]], j = int64(j)%d, j/int(d)
		}
	}
	gt := vectorOf(nRed, x.Type.Elem)
	outs := make([]*Value, nOut)
	for o := range outs {
		set(kept, o)
		lanes := make([]*Value, nRed)
		for r := range lanes {
			set(red, r)
			flat := 0
			for a, c := range coord {
				flat = flat*int(shape[a]) + int(c)
			}
			lanes[r] = l.extract(x, flat)
		}
		outs[o] = l.emit("vector.reduce", kind, []*Value{l.build(gt, lanes), l.extract(init, o)}, []*Type{gt, x.Type.Elem}, nil, x.Type.Elem)
	}
	l.finish(l.build(init.Type, outs))
	return true, nil
}

// lowerShuffle rewrites vector.shuffle<[m…]> %v: result lane i is source
// lane m[i] (duplicates allowed) of the static rank-1 source, whose type the
// result keeps.
func lowerShuffle(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 1)
	if err != nil {
		return true, err
	}
	v := x[0]
	n, shape, ok := staticLanes(v.Type)
	if v.Type.Kind != TypeVector || !ok || len(shape) != 1 {
		return true, l.errorf("source %s: needs a static rank-1 vector", v.Type)
	}
	words := strings.FieldsFunc(op.Param, func(r rune) bool { return r == '[' || r == ']' || r == ',' || r == ' ' })
	if len(words) != n {
		return true, l.errorf("lane map <%s> has %d entries for %d lanes", op.Param, len(words), n)
	}
	lanes := make([]*Value, n)
	for i, w := range words {
		m, err := strconv.Atoi(w)
		if err != nil || m < 0 || m >= n {
			return true, l.errorf("lane map entry %q is not a lane of %s", w, v.Type)
		}
		lanes[i] = l.extract(v, m)
	}
	l.finish(l.build(v.Type, lanes))
	return true, nil
}
