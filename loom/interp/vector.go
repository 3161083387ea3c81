package interp

import (
	"github.com/loomgen/loomgen/loom"
)

// vectorOp compiles vector.*: construction, rearrangement, reductions and
// memory transfers are scalarized per component; everything else is the
// lane-wise form of a scalar op.
func (c *compiler) vectorOp(b *block, op *loom.Op, rest string) (instr, error) {
	switch rest {
	case "constant", "poison", "empty":
		if rest == "constant" {
			return c.arith(b, op, rest)
		}
		return c.arith(b, op, "poison")
	case "splat", "broadcast":
		return c.vecBroadcast(b, op)
	case "from_elements":
		return c.vecFromElements(b, op)
	case "iota":
		return c.vecIota(b, op)
	case "mask.range":
		return c.vecMaskRange(b, op)
	case "extract":
		return c.vecExtractInsert(b, op, false)
	case "insert":
		return c.vecExtractInsert(b, op, true)
	case "slice":
		return c.vecSlice(b, op)
	case "transpose":
		return c.vecTranspose(b, op)
	case "select":
		ops, err := c.operandsN(b, op, 3)
		if err != nil {
			return nil, err
		}
		r, err := c.result(b, op, 0, allUni(ops...))
		if err != nil {
			return nil, err
		}
		if r.kind != ops[1].kind || ops[1].kind != ops[2].kind || r.kind == kView {
			return nil, compileErr(op.Pos, ErrInvalid, "vector.select operands of different kinds")
		}
		return selectInstr(ops[0], ops[1], ops[2], r), nil
	case "reduce":
		return c.vecReduce(b, op)
	case "dotf":
		return c.vecDot(b, op)
	case "load", "load.mask", "store", "store.mask":
		return c.vecMemory(b, op, rest)
	case "fragment", "fragment.load", "fragment.store":
		return c.fragmentOp(b, op, rest)
	case "mma":
		return c.mma(b, op)
	}
	return c.arith(b, op, rest)
}

func shapeOf(t *loom.Type) []int64 {
	if t == nil || t.Kind != loom.TypeVector {
		return nil
	}
	out := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		out[i] = d.Size
	}
	return out
}

// vecType returns the vector result type of op.
func vecType(op *loom.Op) *loom.Type {
	if len(op.Results) > 0 && op.Results[0].Type != nil {
		return op.Results[0].Type
	}
	if len(op.ResultTypes) > 0 {
		return op.ResultTypes[len(op.ResultTypes)-1]
	}
	if len(op.Types) > 0 {
		return op.Types[len(op.Types)-1]
	}
	return nil
}

// gatherInstr builds r's components from sources: component i of r is
// component srcComp[i] of src[i].
func gatherInstr(r *slot, src []*slot, srcComp []int) instr {
	return func(fr *frame) error {
		L := fr.L
		w := 1
		if !r.uni {
			w = L
		}
		for i := range r.comps {
			s, sc := src[i], srcComp[i]
			switch r.kind {
			case kInt:
				d, x := fr.I[r.idx][i*w:(i+1)*w], fr.I[s.idx]
				if s.uni {
					v := x[sc]
					for l := range d {
						d[l] = v
					}
				} else {
					copy(d, x[sc*L:(sc+1)*L])
				}
			case kFloat:
				d, x := fr.F[r.idx][i*w:(i+1)*w], fr.F[s.idx]
				if s.uni {
					v := x[sc]
					for l := range d {
						d[l] = v
					}
				} else {
					copy(d, x[sc*L:(sc+1)*L])
				}
			}
		}
		return nil
	}
}

func (c *compiler) vecBroadcast(b *block, op *loom.Op) (instr, error) {
	if err := arity(op, 1); err != nil {
		return nil, err
	}
	x, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	r, err := c.newSlot(op.Pos, vecType(op), x.uni)
	if err != nil {
		return nil, err
	}
	if r.kind != x.kind || r.comps%x.comps != 0 {
		return nil, compileErr(op.Pos, ErrInvalid, "%s from %s to %s", op.Name, x.typ, vecType(op))
	}
	b.sc.vals[op.Results[0].Name] = r
	src := make([]*slot, r.comps)
	comp := make([]int, r.comps)
	for i := range src {
		src[i], comp[i] = x, i%x.comps
	}
	return gatherInstr(r, src, comp), nil
}

func (c *compiler) vecFromElements(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	r, err := c.newSlot(op.Pos, vecType(op), allUni(ops...))
	if err != nil {
		return nil, err
	}
	if r.comps != len(ops) {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.from_elements: %d elements for %d lanes", len(ops), r.comps)
	}
	for _, s := range ops {
		if s.kind != r.kind || s.comps != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "vector.from_elements: element %s for %s", s.typ, r.typ)
		}
	}
	b.sc.vals[op.Results[0].Name] = r
	return gatherInstr(r, ops, make([]int, len(ops))), nil
}

func (c *compiler) vecIota(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 2)
	if err != nil {
		return nil, err
	}
	base, step := ops[0], ops[1]
	r, err := c.newSlot(op.Pos, vecType(op), allUni(ops...))
	if err != nil {
		return nil, err
	}
	b.sc.vals[op.Results[0].Name] = r
	if r.kind != base.kind {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.iota base %s for %s", base.typ, r.typ)
	}
	post := c.postFor(r.typ)
	rnd, _ := floatFormat(op.Pos, r.typ)
	return func(fr *frame) error {
		w := width(fr, r) / r.comps
		for i := range r.comps {
			for l := range w {
				bi, si := 0, 0
				if !base.uni {
					bi = l
				}
				if !step.uni {
					si = l
				}
				if r.kind == kInt {
					fr.I[r.idx][i*w+l] = fr.I[base.idx][bi] + int64(i)*fr.I[step.idx][si]
				} else {
					fr.F[r.idx][i*w+l] = rnd.round(fr.F[base.idx][bi] + float64(i)*fr.F[step.idx][si])
				}
			}
		}
		if r.kind == kInt {
			return post.apply(fr, op, r, fr.I[r.idx][:width(fr, r)])
		}
		return nil
	}, nil
}

// vecMaskRange: lane i of the mask is set when lo + i*step < hi.
func (c *compiler) vecMaskRange(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 3)
	if err != nil {
		return nil, err
	}
	r, err := c.newSlot(op.Pos, vecType(op), allUni(ops...))
	if err != nil {
		return nil, err
	}
	b.sc.vals[op.Results[0].Name] = r
	return func(fr *frame) error {
		w := width(fr, r) / r.comps
		for i := range r.comps {
			for l := range w {
				get := func(s *slot) int64 {
					if s.uni {
						return fr.I[s.idx][0]
					}
					return fr.I[s.idx][l]
				}
				fr.I[r.idx][i*w+l] = b2i(get(ops[0])+int64(i)*get(ops[2]) < get(ops[1]))
			}
		}
		return nil
	}, nil
}

// flatIndex turns per-axis positions into a row-major component index.
func flatIndex(shape []int64, ix []int64) (int64, bool) {
	f := int64(0)
	for k, n := range shape {
		if ix[k] < 0 || ix[k] >= n {
			return 0, false
		}
		f = f*n + ix[k]
	}
	return f, true
}

func (c *compiler) vecExtractInsert(b *block, op *loom.Op, insert bool) (instr, error) {
	vi := 0
	if insert {
		vi = 1
	}
	if len(op.Operands) <= vi {
		return nil, compileErr(op.Pos, ErrInvalid, "%s needs a vector", op.Name)
	}
	v, err := c.operand(b, op.Operands[vi], nil)
	if err != nil {
		return nil, err
	}
	shape := v.shape
	if shape == nil {
		return nil, compileErr(op.Pos, ErrInvalid, "%s of a non-vector %s", op.Name, v.typ)
	}
	idx := make([]*slot, 0, len(op.Operands)-vi-1)
	for _, o := range op.Operands[vi+1:] {
		s, err := c.operand(b, o, typeIndex)
		if err != nil {
			return nil, err
		}
		idx = append(idx, s)
	}
	if len(idx) != len(shape) {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: %d indices for a rank-%d vector", op.Name, len(idx), len(shape))
	}
	var x *slot
	if insert {
		if x, err = c.operand(b, op.Operands[0], nil); err != nil {
			return nil, err
		}
	}
	uni := v.uni && allUni(idx...)
	if insert {
		uni = uni && x.uni
	}
	var r *slot
	if insert {
		r, err = c.newSlot(op.Pos, vecType(op), uni)
		if err == nil && (r.comps != v.comps || r.kind != v.kind) {
			err = compileErr(op.Pos, ErrInvalid, "vector.insert changes the vector type")
		}
		if err == nil {
			b.sc.vals[op.Results[0].Name] = r
		}
	} else {
		r, err = c.result(b, op, 0, uni)
		if err == nil && (r.comps != 1 || r.kind != v.kind) {
			err = compileErr(op.Pos, ErrInvalid, "vector.extract result type")
		}
	}
	if err != nil {
		return nil, err
	}
	if fast := constExtractInsert(idx, shape, insert, r, v, x); fast != nil {
		return fast, nil
	}
	return func(fr *frame) error {
		L := fr.L
		var ix [8]int64
		w := 1
		if !r.uni {
			w = L
		}
		if insert {
			fr.copySlotAll(r, v)
		}
		for l := range w {
			if !r.uni && !fr.mask[l] {
				continue
			}
			for k, s := range idx {
				if s.uni {
					ix[k] = fr.I[s.idx][0]
				} else {
					ix[k] = fr.I[s.idx][l]
				}
			}
			f, ok := flatIndex(shape, ix[:len(idx)])
			if !ok {
				return newTrap(op, laneOr(r.uni, l), ErrOutOfBounds, "vector position %v outside shape %v", ix[:len(idx)], shape)
			}
			ci := int(f)
			if insert {
				src, dst := 0, ci*w+l
				if !x.uni {
					src = l
				}
				if r.kind == kInt {
					fr.I[r.idx][dst] = fr.I[x.idx][src]
				} else {
					fr.F[r.idx][dst] = fr.F[x.idx][src]
				}
				continue
			}
			src := ci
			if !v.uni {
				src = ci*L + l
			}
			if r.kind == kInt {
				fr.I[r.idx][l] = fr.I[v.idx][src]
			} else {
				fr.F[r.idx][l] = fr.F[v.idx][src]
			}
		}
		return nil
	}, nil
}

// constExtractInsert is vector.extract / vector.insert at constant
// positions inside the shape: whole-slice copies of one component instead
// of a position computed lane by lane (nil otherwise; a position outside
// the shape traps at run time on the general path). Like the element-wise
// engines it writes the inactive lanes of the active span too.
func constExtractInsert(idx []*slot, shape []int64, insert bool, r, v, x *slot) instr {
	ix := make([]int64, len(idx))
	for k, s := range idx {
		if !s.cst {
			return nil
		}
		ix[k] = s.ci
	}
	f, ok := flatIndex(shape, ix)
	if !ok {
		return nil
	}
	ci := int(f)
	if insert {
		return func(fr *frame) error {
			fr.copySlotAll(r, v)
			if r.uni {
				if r.kind == kInt {
					fr.I[r.idx][ci] = fr.I[x.idx][0]
				} else {
					fr.F[r.idx][ci] = fr.F[x.idx][0]
				}
				return nil
			}
			L, lo, hi := fr.L, fr.lo, fr.hi
			if r.kind == kInt {
				dst := fr.I[r.idx][ci*L+lo : ci*L+hi]
				if x.uni {
					fill(dst, fr.I[x.idx][0])
				} else {
					copy(dst, fr.I[x.idx][lo:hi])
				}
			} else {
				dst := fr.F[r.idx][ci*L+lo : ci*L+hi]
				if x.uni {
					fill(dst, fr.F[x.idx][0])
				} else {
					copy(dst, fr.F[x.idx][lo:hi])
				}
			}
			return nil
		}
	}
	return func(fr *frame) error {
		if r.uni {
			if r.kind == kInt {
				fr.I[r.idx][0] = fr.I[v.idx][ci]
			} else {
				fr.F[r.idx][0] = fr.F[v.idx][ci]
			}
			return nil
		}
		L, lo, hi := fr.L, fr.lo, fr.hi
		if r.kind == kInt {
			copy(fr.I[r.idx][lo:hi], fr.I[v.idx][ci*L+lo:ci*L+hi])
		} else {
			copy(fr.F[r.idx][lo:hi], fr.F[v.idx][ci*L+lo:ci*L+hi])
		}
		return nil
	}
}

// fill sets every element of s to x.
func fill[T any](s []T, x T) {
	for i := range s {
		s[i] = x
	}
}

// copySlotAll copies src into dst on every lane (dst at least as varying).
func (fr *frame) copySlotAll(dst, src *slot) {
	saved, n, lo, hi := fr.mask, fr.nact, fr.lo, fr.hi
	fr.mask, fr.nact, fr.lo, fr.hi = fr.all, fr.L, 0, fr.L
	fr.copySlot(dst, src)
	fr.mask, fr.nact, fr.lo, fr.hi = saved, n, lo, hi
}

func (c *compiler) vecSlice(b *block, op *loom.Op) (instr, error) {
	if len(op.Operands) < 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.slice needs a vector")
	}
	v, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	rt := vecType(op)
	if v.shape == nil || rt == nil {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.slice needs a vector source and result type")
	}
	src, dst := v.shape, shapeOf(rt)
	offs := make([]int64, len(src))
	if len(op.Operands)-1 != len(src) || len(dst) != len(src) {
		return nil, compileErr(op.Pos, ErrUnsupported, "vector.slice with %d offsets from rank %d to rank %d", len(op.Operands)-1, len(src), len(dst))
	}
	for i, o := range op.Operands[1:] {
		s, err := c.operand(b, o, typeIndex)
		if err != nil {
			return nil, err
		}
		if !s.cst {
			return nil, compileErr(o.Pos, ErrUnsupported, "vector.slice with a non-constant offset")
		}
		offs[i] = s.ci
	}
	r, err := c.newSlot(op.Pos, rt, v.uni)
	if err != nil {
		return nil, err
	}
	b.sc.vals[op.Results[0].Name] = r
	srcs := make([]*slot, r.comps)
	comps := make([]int, r.comps)
	ix := make([]int64, len(dst))
	for i := range r.comps {
		rem := int64(i)
		for k := len(dst) - 1; k >= 0; k-- {
			ix[k] = rem%dst[k] + offs[k]
			rem /= dst[k]
		}
		f, ok := flatIndex(src, ix)
		if !ok {
			return nil, compileErr(op.Pos, ErrInvalid, "vector.slice outside the source shape %v", src)
		}
		srcs[i], comps[i] = v, int(f)
	}
	return gatherInstr(r, srcs, comps), nil
}

// vecTranspose gathers the source lanes in the permuted order.
func (c *compiler) vecTranspose(b *block, op *loom.Op) (instr, error) {
	if err := arity(op, 1); err != nil {
		return nil, err
	}
	v, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	if v.shape == nil {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.transpose of %s", v.typ)
	}
	lanes, err := loom.TransposeLanes(op, v.shape)
	if err != nil {
		return nil, compileErr(op.Pos, ErrInvalid, "%v", err)
	}
	r, err := c.newSlot(op.Pos, vecType(op), v.uni)
	if err != nil {
		return nil, err
	}
	if r.kind != v.kind || r.comps != len(lanes) {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.transpose of %s to %s", v.typ, vecType(op))
	}
	b.sc.vals[op.Results[0].Name] = r
	srcs := make([]*slot, r.comps)
	for i := range srcs {
		srcs[i] = v
	}
	return gatherInstr(r, srcs, lanes), nil
}

func (c *compiler) vecReduce(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 2)
	if err != nil {
		return nil, err
	}
	v, init := ops[0], ops[1]
	r, err := c.result(b, op, 0, v.uni && init.uni)
	if err != nil {
		return nil, err
	}
	if r.comps != 1 || r.kind != v.kind || init.kind != v.kind {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.reduce types")
	}
	cb, err := c.combinerFor(op.Pos, op.Param, v.typ)
	if err != nil {
		return nil, err
	}
	// f32 and f64 sums, the common reduction, add without a call per
	// element.
	addF32 := op.Param == "addf" && cb.isFloat && cb.rnd.kind == fF32
	addF64 := op.Param == "addf" && cb.isFloat && cb.rnd.kind == fF64
	return func(fr *frame) error {
		L := fr.L
		w := width(fr, r)
		if !v.uni && !r.uni && w == L && r.idx != v.idx {
			// Component by component over all lanes: each lane still
			// combines its components in order, and the loads run along
			// the register instead of L elements apart.
			if cb.isFloat {
				R, in := fr.F[r.idx][:L], fr.F[init.idx]
				if init.uni {
					fill(R, in[0])
				} else {
					copy(R, in[:L])
				}
				for i := range v.comps {
					V := fr.F[v.idx][i*L : (i+1)*L]
					switch {
					case addF32:
						for l, x := range V {
							R[l] = float64(float32(R[l] + x))
						}
					case addF64:
						for l, x := range V {
							R[l] += x
						}
					default:
						for l, x := range V {
							R[l] = cb.ff(R[l], x)
						}
					}
				}
				return nil
			}
			R, in := fr.I[r.idx][:L], fr.I[init.idx]
			if init.uni {
				fill(R, in[0])
			} else {
				copy(R, in[:L])
			}
			for i := range v.comps {
				for l, x := range fr.I[v.idx][i*L : (i+1)*L] {
					R[l] = cb.fi(R[l], x)
				}
			}
			return nil
		}
		for l := range w {
			vi := func(i int) int {
				if v.uni {
					return i
				}
				return i*L + l
			}
			ii := l
			if init.uni {
				ii = 0
			}
			if cb.isFloat {
				acc := fr.F[init.idx][ii]
				for i := range v.comps {
					acc = cb.ff(acc, fr.F[v.idx][vi(i)])
				}
				fr.F[r.idx][l] = acc
			} else {
				acc := fr.I[init.idx][ii]
				for i := range v.comps {
					acc = cb.fi(acc, fr.I[v.idx][vi(i)])
				}
				fr.I[r.idx][l] = acc
			}
		}
		return nil
	}, nil
}

// vecDot is vector.dotf: a sequence of fused multiply-adds into acc, in
// component order, rounded to the accumulator type at each step.
func (c *compiler) vecDot(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 3)
	if err != nil {
		return nil, err
	}
	x, y, acc := ops[0], ops[1], ops[2]
	r, err := c.result(b, op, 0, allUni(ops...))
	if err != nil {
		return nil, err
	}
	if x.kind != kFloat || y.kind != kFloat || acc.kind != kFloat || x.comps != y.comps || r.comps != 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.dotf types")
	}
	rnd, err := floatFormat(op.Pos, r.typ)
	if err != nil {
		return nil, err
	}
	// Each step one fused multiply-add rounded once (ffmt.fma: a float64
	// FMA rounded again to f32 or bf16 could round twice).
	f32 := rnd.kind == fF32
	return func(fr *frame) error {
		L := fr.L
		w := width(fr, r)
		X, Y, A := fr.F[x.idx], fr.F[y.idx], fr.F[acc.idx]
		if f32 && !r.uni {
			// Component by component over all lanes (uniform operands
			// spread over them): the same chain per lane, four lanes at
			// a time where the CPU has FMA.
			R := fr.F[r.idx][:w]
			copy(R, fr.floats(acc, true, 2)[:w])
			X, Y := fr.floats(x, true, 0), fr.floats(y, true, 1)
			for i := range x.comps {
				fmaVVV32(R, X[i*L:i*L+w], Y[i*L:i*L+w], R)
			}
			return nil
		}
		for l := range w {
			at := func(s *slot, i int) int {
				if s.uni {
					return i
				}
				return i*L + l
			}
			ai := l
			if acc.uni {
				ai = 0
			}
			s := A[ai]
			for i := range x.comps {
				s = rnd.fma(X[at(x, i)], Y[at(y, i)], s)
			}
			fr.F[r.idx][l] = s
		}
		return nil
	}, nil
}

// vecMemory compiles vector.load/store[.mask]: vector axes map onto the
// view's trailing axes; each component is a checked element access.
func (c *compiler) vecMemory(b *block, op *loom.Op, rest string) (instr, error) {
	store := rest == "store" || rest == "store.mask"
	masked := rest == "load.mask" || rest == "store.mask"
	viewAt := 0
	if store {
		viewAt = 1
	}
	a, err := c.access(b, op, viewAt, nil)
	if err != nil {
		return nil, err
	}
	a.write = store
	checked := c.k.san.on()
	if a.wg {
		c.wgSlow++ // lane by lane in a batch (batchwg.go)
	}
	after := op.Operands[viewAt+1+len(a.idx):]
	var mask, pass, val *slot
	if masked {
		if len(after) < 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s needs a mask", op.Name)
		}
		if mask, err = c.operand(b, after[0], nil); err != nil {
			return nil, err
		}
		if !store {
			if len(after) < 2 {
				return nil, compileErr(op.Pos, ErrInvalid, "%s needs a pass-through value", op.Name)
			}
			if pass, err = c.operand(b, after[1], nil); err != nil {
				return nil, err
			}
		}
	}
	var vt *loom.Type
	if store {
		if val, err = c.operand(b, op.Operands[0], nil); err != nil {
			return nil, err
		}
		for _, t := range op.Types {
			if t.Kind == loom.TypeVector {
				vt = t
				break
			}
		}
	} else {
		vt = vecType(op)
	}
	if vt == nil || vt.Kind != loom.TypeVector {
		return nil, compileErr(op.Pos, ErrInvalid, "%s needs a vector type", op.Name)
	}
	shape := shapeOf(vt)
	if len(shape) > len(a.idx) {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: vector rank %d exceeds view rank %d", op.Name, len(shape), len(a.idx))
	}
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	extras := make([][]int64, n)
	for i := range n {
		e := make([]int64, len(shape))
		rem := int64(i)
		for k := len(shape) - 1; k >= 0; k-- {
			e[k] = rem % shape[k]
			rem /= shape[k]
		}
		extras[i] = e
	}
	var r *slot
	if !store {
		uni := a.uni() && (mask == nil || mask.uni) && (pass == nil || pass.uni)
		if r, err = c.newSlot(op.Pos, vt, uni); err != nil {
			return nil, err
		}
		b.sc.vals[op.Results[0].Name] = r
		if r.comps != n || (r.kind == kFloat) != a.cd.isFloat {
			return nil, compileErr(op.Pos, ErrInvalid, "%s: vector type does not match the view", op.Name)
		}
	} else if val.comps != n || (val.kind == kFloat) != a.cd.isFloat {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: vector type does not match the view", op.Name)
	}
	// A rank-1 vector lies along the view's last axis: when its first and
	// last elements are in bounds and n·size bytes apart, so is every
	// element between, and they are read or written as one run (the
	// sanitizer's checked mode and masked forms keep the element loop).
	run := len(shape) == 1 && n > 1 && mask == nil && !checked
	size := int64(a.cd.size)
	generic := func(fr *frame) error {
		L := fr.L
		for l := range L {
			if !fr.mask[l] {
				continue
			}
			if run {
				if v, off, ok := a.run(fr, l, extras[0], extras[n-1], int64(n)*size); ok {
					// Component i of the register is at at0 + i·st.
					at0, st, reg := l, L, val
					if !store {
						reg = r
					}
					if reg.uni {
						at0, st = 0, 1
					}
					mem := v.mem[off : off+int64(n)*size]
					switch {
					case store && a.cd.isFloat:
						for i, at := 0, at0; i < n; i, at = i+1, at+st {
							a.cd.storeF(mem[int64(i)*size:], fr.F[val.idx][at])
						}
					case store:
						for i, at := 0, at0; i < n; i, at = i+1, at+st {
							a.cd.storeI(mem[int64(i)*size:], fr.I[val.idx][at])
						}
					case a.cd.isFloat:
						loadRunF(&a.cd, fr.F[r.idx][at0:], st, mem, n)
					default:
						loadRunI(&a.cd, fr.I[r.idx][at0:], st, mem, n)
					}
					if !store && r.uni {
						return nil
					}
					continue
				}
			}
			for i, e := range extras {
				at := func(s *slot) int {
					if s.uni {
						return i
					}
					return i*L + l
				}
				if mask != nil && fr.I[mask.idx][at(mask)]&1 == 0 {
					if !store {
						if r.kind == kFloat {
							fr.F[r.idx][at(r)] = fr.F[pass.idx][at(pass)]
						} else {
							fr.I[r.idx][at(r)] = fr.I[pass.idx][at(pass)]
						}
					}
					continue
				}
				v, off, err := a.at(fr, l, e)
				if err != nil {
					return err
				}
				if checked {
					if err := fr.touch(a, v, off, l, store); err != nil {
						return err
					}
				}
				mem := v.mem[off:]
				switch {
				case store && a.cd.isFloat:
					a.cd.storeF(mem, fr.F[val.idx][at(val)])
				case store:
					a.cd.storeI(mem, fr.I[val.idx][at(val)])
				case a.cd.isFloat:
					fr.F[r.idx][at(r)] = a.cd.loadF(mem)
				default:
					fr.I[r.idx][at(r)] = a.cd.loadI(mem)
				}
			}
			if !store && r.uni && !checked {
				return nil
			}
		}
		return nil
	}
	if !noFuse && !store && len(shape) == 1 && mask == nil && !checked && !r.uni && a.v.uni && anyVaries(a.idx) {
		return vecGather(a, r, n, generic), nil
	}
	return generic, nil
}
