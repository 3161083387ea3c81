package loom

import "fmt"

// Loom's async stream legality (its kernel-async-legality analysis), per
// block: what makes a copy that completes when it starts equivalent to one
// that completes at its wait. Checked by Lower for every block of every
// body, whatever the backend.
//
//   - a group's tokens come from transfer ops, each token committed to
//     exactly one group; a group value is used only by waits, at least one;
//   - a wait names a group committed earlier in the same block and not yet
//     completed, and its newer_groups is exactly the number of younger
//     groups still outstanding; it completes that group and all older ones;
//   - a transfer committed to a group may not write bytes that an
//     outstanding group's destination may overlap, and no other op of the
//     block (nested regions included, which is stricter than Loom) may read
//     or write a view that may overlap an outstanding destination;
//   - every group is completed before the block ends.
//
// "May overlap" is Loom's: views of different roots (launch buffers,
// allocations) never overlap; views of one root overlap unless both byte
// ranges are provably disjoint. Loom proves it on symbolic byte ranges
// refined by value facts; here a range is static (constant offsets, dense
// layouts), or, for a subview at offsets that are not constants, its
// source's static range: a subview lies within its source (the CPU
// executor traps one that does not), so the stages of a pipeline can be
// static views of one allocation, each copied into through subviews at
// run-time offsets.

// asyncGroup is one committed group of a block's stream.
type asyncGroup struct {
	v     *Value
	dests []viewSpan
	done  bool
}

// viewSpan is the bytes a view may touch within its root.
type viewSpan struct {
	root   *Value // nil: unknown, may overlap anything
	lo, hi int64
	known  bool // lo, hi hold
}

func (a viewSpan) mayOverlap(b viewSpan) bool {
	if a.root == nil || b.root == nil {
		return true
	}
	if a.root != b.root {
		return false
	}
	return !a.known || !b.known || (a.lo < b.hi && b.lo < a.hi)
}

// spanOf follows v to its root through buffer.view, view.subview and the
// identity assumes, with static offsets and dense strides where it can.
func spanOf(v *Value) viewSpan {
	type frame struct {
		base    int64
		strides []int64 // in elements; nil when not static
		esize   int64
		ok      bool
		// within, when set, is a static range the view lies in (a
		// subview at run-time offsets of a view with a static range).
		within *viewSpan
	}
	var walk func(v *Value) (root *Value, f frame)
	walk = func(v *Value) (*Value, frame) {
		op := v.Def
		if op == nil {
			return v, frame{} // a parameter or block argument: all of it
		}
		switch op.Name {
		case "buffer.assume.memory_space", "buffer.assume.alignment", "buffer.assume.noalias", "view.refine":
			if len(op.Operands) > 0 && op.Operands[0].Value != nil {
				return walk(op.Operands[0].Value)
			}
		case "buffer.alloca", "kernel.workgroup.storage":
			return v, frame{}
		case "buffer.view":
			if len(op.Operands) < 2 || op.Operands[0].Value == nil {
				break
			}
			root, _ := walk(op.Operands[0].Value)
			f := frame{}
			t := v.Type
			off, okOff := constOperand(op.Operands[1])
			if okOff && t != nil && t.Kind == TypeView && DenseLayout(t) {
				if st, ok := denseStrides(t); ok {
					f = frame{base: off, strides: st, esize: int64(TargetGPU.ByteSizeOn(t.Elem)), ok: true}
				}
			}
			return root, f
		case "view.subview":
			if len(op.Operands) == 0 || op.Operands[0].Value == nil {
				break
			}
			root, f := walk(op.Operands[0].Value)
			if f.within != nil {
				return root, frame{within: f.within}
			}
			if !f.ok || len(op.Operands)-1 != len(f.strides) {
				return root, frame{}
			}
			base := f.base
			for k, o := range op.Operands[1:] {
				c, ok := constOperand(o)
				if !ok {
					if src := spanOf(op.Operands[0].Value); src.known {
						return root, frame{within: &src}
					}
					return root, frame{}
				}
				base += c * f.strides[k] * f.esize
			}
			f.base = base
			return root, f
		}
		return nil, frame{}
	}
	root, f := walk(v)
	if f.within != nil {
		return *f.within
	}
	s := viewSpan{root: root}
	t := v.Type
	if !f.ok || t == nil || t.Kind != TypeView || len(t.Dims) != len(f.strides) {
		return s
	}
	hi := f.base + f.esize
	for k, d := range t.Dims {
		if d.Value != nil {
			return s
		}
		if d.Size == 0 {
			return viewSpan{root: root, lo: f.base, hi: f.base, known: true}
		}
		hi += (d.Size - 1) * f.strides[k] * f.esize
	}
	return viewSpan{root: root, lo: f.base, hi: hi, known: true}
}

// denseStrides are the row-major element strides of a view type with
// static dims.
func denseStrides(t *Type) ([]int64, bool) {
	st := make([]int64, len(t.Dims))
	s := int64(1)
	for k := len(t.Dims) - 1; k >= 0; k-- {
		if t.Dims[k].Value != nil {
			return nil, false
		}
		st[k] = s
		s *= t.Dims[k].Size
	}
	return st, true
}

// constOperand is the value of an integer literal operand or of one
// defined by a constant op.
func constOperand(o *Operand) (int64, bool) {
	if o.Lit != nil {
		return o.Lit.Int, o.Lit.Kind == LitInt
	}
	if o.Value == nil || o.Value.Def == nil || o.Value.Def.Literal == nil {
		return 0, false
	}
	switch o.Value.Def.Name {
	case "index.constant", "scalar.constant":
		return o.Value.Def.Literal.Int, o.Value.Def.Literal.Kind == LitInt
	}
	return 0, false
}

// isAsyncProducer reports a transfer op of any kind (also the AMDGPU ones
// the backends do not run).
func isAsyncProducer(name string) bool { return asyncCopyOps[name] }

// checkAsyncStream checks the blocks of a region (split at cfg block
// labels); it returns the first violation.
func checkAsyncStream(ops []*Op) *Error {
	start := 0
	for i, op := range ops {
		if isBlockLabel(op) {
			if e := checkAsyncBlock(ops[start:i]); e != nil {
				return e
			}
			start = i + 1
		}
	}
	return checkAsyncBlock(ops[start:])
}

// checkAsyncBlock checks one block's ops.
func checkAsyncBlock(ops []*Op) *Error {
	has := false
	for _, op := range ops {
		if op.Name == "kernel.async.group" || op.Name == "kernel.async.wait" || isAsyncProducer(op.Name) {
			has = true
			break
		}
	}
	if !has {
		return nil
	}
	fail := func(op *Op, format string, args ...any) *Error {
		return &Error{Pos: op.Pos, Class: ErrInvalid, Msg: op.Name + ": " + fmt.Sprintf(format, args...)}
	}
	uses := map[*Value][]*Op{}
	var count func(ops []*Op)
	count = func(ops []*Op) {
		for _, op := range ops {
			for _, o := range op.Operands {
				if o.Value != nil {
					uses[o.Value] = append(uses[o.Value], op)
				}
			}
			for _, r := range op.Regions {
				count(r.Ops)
			}
		}
	}
	count(ops)
	var stream []*asyncGroup
	pending := func(s viewSpan) bool {
		for _, g := range stream {
			if g.done {
				continue
			}
			for _, d := range g.dests {
				if d.mayOverlap(s) {
					return true
				}
			}
		}
		return false
	}
	for _, op := range ops {
		switch {
		case isAsyncProducer(op.Name):
			for _, r := range op.Results {
				if u := uses[r]; len(u) != 1 || u[0].Name != "kernel.async.group" {
					return fail(op, "token %%%s must be committed to exactly one kernel.async.group of its block", r.Name)
				}
			}
		case op.Name == "kernel.async.group":
			if len(op.Results) != 1 {
				return fail(op, "needs one group result")
			}
			g := &asyncGroup{v: op.Results[0]}
			u := uses[g.v]
			if len(u) == 0 {
				return fail(op, "group %%%s is never waited in its block", g.v.Name)
			}
			for _, w := range u {
				if w.Name != "kernel.async.wait" {
					return fail(op, "group %%%s is used by %s; a group may only be waited", g.v.Name, w.Name)
				}
			}
			for _, o := range op.Operands {
				if o.Value == nil || o.Value.Def == nil || !isAsyncProducer(o.Value.Def.Name) {
					return fail(op, "token %%%s is not the result of an asynchronous transfer", o.Name)
				}
				p := o.Value.Def
				if len(p.Operands) < 2 || p.Operands[1].Value == nil {
					return fail(op, "cannot tell the destination of %s", p.Name)
				}
				d := spanOf(p.Operands[1].Value)
				if pending(d) {
					return fail(op, "the destination of %s at %s may overlap a destination still in flight", p.Name, p.Pos)
				}
				g.dests = append(g.dests, d)
			}
			stream = append(stream, g)
		case op.Name == "kernel.async.wait":
			if len(op.Operands) != 1 || op.Operands[0].Value == nil {
				return fail(op, "needs one group operand")
			}
			at := -1
			for i, g := range stream {
				if g.v == op.Operands[0].Value {
					at = i
				}
			}
			if at < 0 {
				return fail(op, "waits %%%s, which no kernel.async.group earlier in this block committed", op.Operands[0].Name)
			}
			if stream[at].done {
				return fail(op, "waits %%%s, which an earlier wait already completed", op.Operands[0].Name)
			}
			younger := 0
			for _, g := range stream[at+1:] {
				if !g.done {
					younger++
				}
			}
			a := op.Attr("newer_groups")
			if a == nil || a.Value.Kind != LitInt {
				return fail(op, "needs an integer newer_groups")
			}
			if a.Value.Int != int64(younger) {
				return fail(op, "newer_groups = %d, but %d younger groups are outstanding here", a.Value.Int, younger)
			}
			for _, g := range stream[:at+1] {
				g.done = true
			}
		default:
			if bad := touchesPending(op, pending); bad != nil {
				return fail(bad, "touches a view that may overlap an asynchronous destination before its kernel.async.wait")
			}
		}
	}
	for _, g := range stream {
		if !g.done {
			return fail(g.v.Def, "group %%%s is not waited before its block ends", g.v.Name)
		}
	}
	return nil
}

// touchesPending returns op, or an op nested in it, that reads or writes a
// view for which pending holds.
func touchesPending(op *Op, pending func(viewSpan) bool) *Op {
	_, mem := effectOps[op.Name]
	switch op.Name {
	case "func.call", "template.call", "func.apply", "template.apply":
		mem = true
	}
	if mem {
		for _, o := range op.Operands {
			if o.Value != nil && o.Value.Type != nil && (o.Value.Type.Kind == TypeView || o.Value.Type.Kind == TypeBuffer) && pending(spanOf(o.Value)) {
				return op
			}
		}
	}
	for _, r := range op.Regions {
		for _, in := range r.Ops {
			if bad := touchesPending(in, pending); bad != nil {
				return bad
			}
		}
	}
	return nil
}
