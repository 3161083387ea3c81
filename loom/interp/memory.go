package interp

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// allocaSite is one buffer.alloca<workgroup> op.
type allocaSite struct {
	op *loom.Op
}

// dimSlots resolves the dynamic dimensions of a shaped type to registers
// (nil entries for static dims).
func (c *compiler) dimSlots(b *block, t *loom.Type) ([]*slot, error) {
	out := make([]*slot, len(t.Dims))
	for i, d := range t.Dims {
		if d.Value != nil {
			s, err := c.operand(b, d.Value, nil)
			if err != nil {
				return nil, err
			}
			if s.kind != kInt || s.comps != 1 {
				return nil, compileErr(d.Value.Pos, ErrInvalid, "dimension %%%s is not an index", d.Value.Name)
			}
			out[i] = s
		}
	}
	return out, nil
}

// dimsAt evaluates a type's dims for lane l.
func (fr *frame) dimsAt(t *loom.Type, ds []*slot, l int, out []int64) []int64 {
	out = out[:0]
	for i, d := range t.Dims {
		if ds[i] == nil {
			out = append(out, d.Size)
			continue
		}
		r := fr.I[ds[i].idx]
		if ds[i].uni {
			out = append(out, r[0])
		} else {
			out = append(out, r[l])
		}
	}
	return out
}

func viewResultType(op *loom.Op) (*loom.Type, error) {
	var t *loom.Type
	if len(op.ResultTypes) > 0 {
		t = op.ResultTypes[0]
	} else if len(op.Results) > 0 {
		t = op.Results[0].Type
	}
	if t == nil || t.Kind != loom.TypeView {
		return nil, compileErr(op.Pos, ErrInvalid, "%s must produce a view type", op.Name)
	}
	return t, nil
}

func (c *compiler) memoryOp(b *block, op *loom.Op, name string) (instr, error) {
	switch name {
	case "buffer.view":
		return c.bufferView(b, op)
	case "buffer.alloca":
		return c.alloca(b, op)
	case "buffer.length":
		if err := arity(op, 1); err != nil {
			return nil, err
		}
		src, err := c.operand(b, op.Operands[0], nil)
		if err != nil {
			return nil, err
		}
		r, err := c.result(b, op, 0, src.uni)
		if err != nil {
			return nil, err
		}
		return func(fr *frame) error {
			vs, out := fr.V[src.idx], fr.I[r.idx]
			for i := range out {
				v := &vs[i]
				out[i] = v.lim - v.base
				if v.mem == nil || out[i] < 0 {
					out[i] = 0
				}
			}
			return nil
		}, nil
	case "buffer.assume.noalias", "buffer.assume.alignment", "buffer.assume.memory_space", "buffer.assume.same_root":
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
	case "view.subview":
		return c.subview(b, op)
	case "view.refine":
		return c.refine(b, op)
	case "view.load", "view.store", "view.atomic.load", "view.atomic.store":
		return c.loadStore(b, op, name)
	case "view.atomic.rmw", "view.atomic.reduce", "view.atomic.cmpxchg":
		return c.atomic(b, op, name)
	case "view.prefetch":
		return nil, nil
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", name)
}

func (c *compiler) bufferView(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 2)
	if err != nil {
		return nil, err
	}
	buf, off := ops[0], ops[1]
	t, err := viewResultType(op)
	if err != nil {
		return nil, err
	}
	ds, err := c.dimSlots(b, t)
	if err != nil {
		return nil, err
	}
	uni := buf.uni && off.uni
	for _, d := range ds {
		if d != nil && !d.uni {
			uni = false
		}
	}
	// An encoding.layout.strided layout gives each axis its element stride.
	strideOps, strided := loom.LayoutStrides(t)
	ss := make([]*slot, len(strideOps))
	for k, o := range strideOps {
		if ss[k], err = c.operand(b, o, typeIndex); err != nil {
			return nil, err
		}
		if ss[k].kind != kInt || ss[k].comps != 1 {
			return nil, compileErr(o.Pos, ErrInvalid, "stride %d of the layout is not an index", k)
		}
		uni = uni && ss[k].uni
	}
	r, err := c.result(b, op, 0, uni)
	if err != nil {
		return nil, err
	}
	c.derive(r, buf)
	if uni && !strided {
		return uniformView(op, t, ds, r, buf, off), nil
	}
	return func(fr *frame) error {
		var dims [maxRank]int64
		out := fr.V[r.idx]
		bv, ov := fr.V[buf.idx], fr.I[off.idx]
		for l := range out {
			if !uni && !fr.mask[l] {
				continue
			}
			src := &bv[0]
			if !buf.uni {
				src = &bv[l]
			}
			o := ov[0]
			if !off.uni {
				o = ov[l]
			}
			d := fr.dimsAt(t, ds, l, dims[:0])
			for k, n := range d {
				if n < 0 {
					return newTrap(op, laneOr(uni, l), ErrOutOfBounds, "dimension %d of the view is negative (%d)", k, n)
				}
			}
			v := view{mem: src.mem, base: src.base + o, lim: src.lim, root: src.root, gstride: src.gstride}
			if strided {
				v.rank = int32(len(d))
				for k, n := range d {
					s := fr.I[ss[k].idx]
					v.dims[k], v.strides[k] = n, s[0]
					if !ss[k].uni {
						v.strides[k] = s[l]
					}
				}
			} else {
				v.setDense(d)
			}
			out[l] = v
		}
		return nil
	}, nil
}

// uniformView builds a buffer.view whose operands and dims are uniform: it
// runs once per workgroup (or per loop step), so it writes the one result
// view field by field rather than building a lane loop's temporaries, and a
// shape known at compile time is laid out once here.
func uniformView(op *loom.Op, t *loom.Type, ds []*slot, r, buf, off *slot) instr {
	static := true
	sizes := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		sizes[i] = d.Size
		if ds[i] != nil || d.Size < 0 {
			static = false
		}
	}
	var shape view // rank, dims and strides of a static shape
	shape.setDense(sizes)
	return func(fr *frame) error {
		src, o, out := &fr.V[buf.idx][0], fr.I[off.idx][0], &fr.V[r.idx][0]
		mem, base, lim, root, gs := src.mem, src.base+o, src.lim, src.root, src.gstride
		if static {
			out.rank, out.dims, out.strides = shape.rank, shape.dims, shape.strides
		} else {
			var dims [maxRank]int64
			d := fr.dimsAt(t, ds, 0, dims[:0])
			for k, n := range d {
				if n < 0 {
					return newTrap(op, -1, ErrOutOfBounds, "dimension %d of the view is negative (%d)", k, n)
				}
			}
			// Dims past the rank stay zero, as in a freshly built view.
			out.dims, out.strides = [maxRank]int64{}, [maxRank]int64{}
			out.setDense(d)
		}
		out.mem, out.base, out.lim, out.root, out.gstride = mem, base, lim, root, gs
		return nil
	}
}

func laneOr(uni bool, l int) int {
	if uni {
		return -1
	}
	return l
}

func (c *compiler) alloca(b *block, op *loom.Op) (instr, error) {
	// align(N) may be listed as a literal operand before the size.
	if len(op.Operands) == 0 {
		return nil, compileErr(op.Pos, ErrInvalid, "buffer.alloca needs a size")
	}
	size, err := c.operand(b, op.Operands[len(op.Operands)-1], nil)
	if err != nil {
		return nil, err
	}
	switch op.Param {
	case "workgroup":
		return c.wgAlloc(b, op, size, false)
	case "private":
		r, err := c.result(b, op, 0, false)
		if err != nil {
			return nil, err
		}
		c.fresh(r)
		return func(fr *frame) error {
			out := fr.V[r.idx]
			sz := fr.I[size.idx]
			for l := range out {
				if !fr.mask[l] {
					continue
				}
				n := sz[0]
				if !size.uni {
					n = sz[l]
				}
				if n < 0 || n > 1<<24 {
					return newTrap(op, l, ErrOutOfBounds, "private allocation of %d bytes", n)
				}
				m := make([]byte, n)
				out[l] = view{mem: m, lim: n, root: rootPrivate}
			}
			return nil
		}, nil
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "buffer.alloca<%s>", op.Param)
}

// wgAlloc allocates workgroup memory of size bytes for op (a
// buffer.alloca<workgroup>), or (dynamic) takes it from the launch's
// dynamic workgroup storage for a kernel.workgroup.storage, whose size is
// at most what the launch provides (all of it when size is nil).
func (c *compiler) wgAlloc(b *block, op *loom.Op, size *slot, dynamic bool) (instr, error) {
	if size != nil && !size.uni {
		return nil, compileErr(op.Pos, ErrUnsupported, "%s with a size that differs between work-items", op.Name)
	}
	if dynamic {
		// A batch would need its groups' dynamic storage side by side;
		// such kernels run a workgroup at a time.
		if c.k.noBatch == "" {
			c.k.noBatch = "takes dynamic workgroup storage"
		}
	}
	site := len(c.k.allocas)
	c.k.allocas = append(c.k.allocas, &allocaSite{op: op})
	if size == nil || !size.cst {
		c.wgSlow++ // Run does not batch a size it cannot bound (batchwg.go)
	}
	if size != nil && size.cst && !dynamic {
		align := int64(1)
		if a := op.Attr("align"); a != nil && a.Value.Int > 0 {
			align = a.Value.Int
		}
		c.k.staticWG = int((int64(c.k.staticWG)+align-1)/align*align + size.ci)
	}
	r, err := c.result(b, op, 0, true)
	if err != nil {
		return nil, err
	}
	c.fresh(r)
	c.wgOrigin(r)
	return func(fr *frame) error {
		var n int64
		if size != nil {
			n = fr.I[size.idx][0]
		}
		if dynamic {
			dyn := int64(fr.r.launch.WorkgroupStorage)
			if size == nil {
				n = dyn
			}
			if n < 0 || n > dyn {
				return newTrap(op, -1, ErrOutOfBounds, "kernel.workgroup.storage of %d bytes; the launch provides %d bytes of dynamic workgroup storage (dynamic_workgroup_storage)", n, dyn)
			}
		}
		if n < 0 || n > 1<<30 {
			return newTrap(op, -1, ErrOutOfBounds, "workgroup allocation of %d bytes", n)
		}
		// A batch of K groups gets K blocks, gs bytes apart (batchwg.go).
		K, gs := int64(fr.L/fr.grp), int64(0)
		if K > 1 {
			gs = (n + 63) &^ 63
			if K*gs > wgBatchBytes {
				// Too much for one batch: Run runs its groups alone
				// again (rerun.go), which reports what they do.
				return newTrap(op, -1, ErrOutOfBounds, "workgroup allocation of %d bytes for each of %d workgroups in a batch", n, K)
			}
		}
		total := max(n, K*gs)
		m := fr.wgMem[site]
		if int64(cap(m)) < total {
			m = make([]byte, total)
			fr.wgMem[site] = m
		}
		m = m[:total]
		clear(m)
		if fr.san != nil {
			fr.san.resetWG(m)
		}
		// Field by field: a whole view literal would zero and copy
		// its rank-sized arrays every workgroup.
		out := &fr.V[r.idx][0]
		if out.rank != 0 {
			out.rank, out.dims, out.strides = 0, [maxRank]int64{}, [maxRank]int64{}
		}
		out.mem, out.base, out.lim, out.root, out.gstride = m, 0, n, rootWorkgroup, gs
		return nil
	}, nil
}

// workgroupStorage compiles kernel.workgroup.storage [align(N)] [%bytes].
func (c *compiler) workgroupStorage(b *block, op *loom.Op) (instr, error) {
	var size *slot
	if o := loom.StorageOperand(op); o != nil {
		var err error
		if size, err = c.operand(b, o, nil); err != nil {
			return nil, err
		}
		if size.kind != kInt || size.comps != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "kernel.workgroup.storage takes a byte count")
		}
	}
	return c.wgAlloc(b, op, size, true)
}

func (c *compiler) subview(b *block, op *loom.Op) (instr, error) {
	if len(op.Operands) < 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "view.subview needs a view")
	}
	src, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	if src.typ.Kind != loom.TypeView {
		return nil, compileErr(op.Pos, ErrInvalid, "view.subview of %s", src.typ)
	}
	prank := len(src.typ.Dims)
	offs := make([]*slot, len(op.Operands)-1)
	if len(offs) != prank {
		return nil, compileErr(op.Pos, ErrInvalid, "view.subview of a rank-%d view takes %d offsets, has %d", prank, prank, len(offs))
	}
	uni := src.uni
	for i, o := range op.Operands[1:] {
		if offs[i], err = c.operand(b, o, typeIndex); err != nil {
			return nil, err
		}
		uni = uni && offs[i].uni
	}
	t, err := viewResultType(op)
	if err != nil {
		return nil, err
	}
	if len(t.Dims) > prank {
		return nil, compileErr(op.Pos, ErrUnsupported, "view.subview to a higher rank")
	}
	ds, err := c.dimSlots(b, t)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d != nil && !d.uni {
			uni = false
		}
	}
	r, err := c.result(b, op, 0, uni)
	if err != nil {
		return nil, err
	}
	esize, err := c.elemSize(op.Pos, src.typ.Elem)
	if err != nil {
		return nil, err
	}
	drop := prank - len(t.Dims)
	c.derive(r, src)
	return func(fr *frame) error {
		var dims [maxRank]int64
		var ix [maxRank]int64
		out := fr.V[r.idx]
		sv := fr.V[src.idx]
		for l := range out {
			if !uni && !fr.mask[l] {
				continue
			}
			p := &sv[0]
			if !src.uni {
				p = &sv[l]
			}
			d := fr.dimsAt(t, ds, l, dims[:0])
			base := p.base
			for k := 0; k < prank; k++ {
				ov := fr.I[offs[k].idx]
				o := ov[0]
				if !offs[k].uni {
					o = ov[l]
				}
				ix[k] = o
				ext := int64(1)
				if k >= drop {
					ext = d[k-drop]
				}
				if o < 0 || ext < 0 || o+ext > p.dims[k] {
					return newTrap(op, laneOr(uni, l), ErrOutOfBounds, "subview offset %d with size %d exceeds axis %d of size %d", o, ext, k, p.dims[k])
				}
				base += o * p.strides[k] * int64(esize)
			}
			v := view{mem: p.mem, base: base, lim: p.lim, root: p.root, rank: int32(len(d)), gstride: p.gstride}
			for k := range d {
				v.dims[k] = d[k]
				v.strides[k] = p.strides[k+drop]
			}
			out[l] = v
		}
		return nil
	}, nil
}

func (c *compiler) elemSize(pos loom.Pos, t *loom.Type) (int, error) {
	cd, err := c.codecFor(pos, t)
	if err != nil {
		return 0, err
	}
	return cd.size, nil
}

func (c *compiler) refine(b *block, op *loom.Op) (instr, error) {
	if err := arity(op, 1); err != nil {
		return nil, err
	}
	src, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	t, err := viewResultType(op)
	if err != nil {
		return nil, err
	}
	ds, err := c.dimSlots(b, t)
	if err != nil {
		return nil, err
	}
	uni := src.uni
	for _, d := range ds {
		if d != nil && !d.uni {
			uni = false
		}
	}
	r, err := c.result(b, op, 0, uni)
	if err != nil {
		return nil, err
	}
	sameRank := src.typ.Kind == loom.TypeView && len(src.typ.Dims) == len(t.Dims)
	c.derive(r, src)
	return func(fr *frame) error {
		var dims [maxRank]int64
		out := fr.V[r.idx]
		sv := fr.V[src.idx]
		for l := range out {
			if !uni && !fr.mask[l] {
				continue
			}
			p := sv[0]
			if !src.uni {
				p = sv[l]
			}
			d := fr.dimsAt(t, ds, l, dims[:0])
			if sameRank {
				for k := range d {
					if d[k] > p.dims[k] || d[k] < 0 {
						return newTrap(op, laneOr(uni, l), ErrOutOfBounds, "refined axis %d of size %d exceeds the view's %d", k, d[k], p.dims[k])
					}
					p.dims[k] = d[k]
				}
			} else {
				p.setDense(d)
			}
			out[l] = p
		}
		return nil
	}, nil
}

// access is a compiled memory access: the view register, the index
// registers and the element codec.
type access struct {
	op  *loom.Op
	v   *slot
	idx []*slot
	cd  codec
	// wg: in a batched form, the view may be workgroup memory, whose
	// element differs per group even at a uniform index (batchwg.go).
	wg bool
	// write marks stores and atomics, for sanitizer events.
	write bool
}

func (c *compiler) access(b *block, op *loom.Op, viewAt int, vt *loom.Type) (*access, error) {
	if len(op.Operands) <= viewAt {
		return nil, compileErr(op.Pos, ErrInvalid, "%s needs a view operand", op.Name)
	}
	v, err := c.operand(b, op.Operands[viewAt], nil)
	if err != nil {
		return nil, err
	}
	if v.kind != kView || v.typ.Kind != loom.TypeView {
		return nil, compileErr(op.Operands[viewAt].Pos, ErrInvalid, "%s: %%%s is not a view", op.Name, op.Operands[viewAt].Name)
	}
	rank := len(v.typ.Dims)
	if len(op.Operands) < viewAt+1+rank {
		return nil, compileErr(op.Pos, ErrInvalid, "%s of a rank-%d view needs %d indices", op.Name, rank, rank)
	}
	a := &access{op: op, v: v, wg: c.mayWG(v)}
	c.accessed(op.Name, v)
	for _, o := range op.Operands[viewAt+1 : viewAt+1+rank] {
		s, err := c.operand(b, o, typeIndex)
		if err != nil {
			return nil, err
		}
		a.idx = append(a.idx, s)
	}
	if a.cd, err = c.codecFor(op.Pos, v.typ.Elem); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *access) uni() bool { return !a.wg && a.v.uni && allUni(a.idx...) }

// at computes the byte offset of lane l's element (with extra added to the
// trailing axes), checking bounds.
func (a *access) at(fr *frame, l int, extra []int64) (*view, int64, error) {
	var ix [maxRank]int64
	vv := fr.V[a.v.idx]
	v := &vv[0]
	if !a.v.uni {
		v = &vv[l]
	}
	n := len(a.idx)
	for k, s := range a.idx {
		r := fr.I[s.idx]
		if s.uni {
			ix[k] = r[0]
		} else {
			ix[k] = r[l]
		}
	}
	for j, e := range extra {
		ix[n-len(extra)+j] += e
	}
	off, axis, ok := v.offsetOf(ix[:n], a.cd.size)
	if !ok {
		if v.mem == nil && axis < 0 {
			return nil, 0, newTrap(a.op, l, ErrOutOfBounds, "access through a null buffer")
		}
		t := newTrap(a.op, l, ErrOutOfBounds, "%s", fr.boundsMsg(v, ix[:n], axis, off, a.cd.size))
		t.event = a.outOfBounds(v, off, a.write)
		return nil, 0, t
	}
	if v.gstride != 0 {
		// Checked against the group's own block; lane l's group's bytes.
		off += int64(l/fr.grp) * v.gstride
	}
	return v, off, nil
}

// run is the view and offset of lane l's elements first … last (offsets
// of the access plus each) when both are in bounds and span exactly bytes,
// so that every element between is in bounds too and the run is
// contiguous; ok false otherwise (the caller then goes element by element,
// which reports any failure).
func (a *access) run(fr *frame, l int, first, last []int64, bytes int64) (*view, int64, bool) {
	v, off, err := a.at(fr, l, first)
	if err != nil {
		return nil, 0, false
	}
	w, end, err := a.at(fr, l, last)
	if err != nil || w != v || end-off+int64(a.cd.size) != bytes {
		return nil, 0, false
	}
	return v, off, true
}

func (c *compiler) loadStore(b *block, op *loom.Op, name string) (instr, error) {
	store := name == "view.store" || name == "view.atomic.store"
	atomic := name == "view.atomic.load" || name == "view.atomic.store"
	viewAt := 0
	if store {
		viewAt = 1
	}
	a, err := c.access(b, op, viewAt, nil)
	if err != nil {
		return nil, err
	}
	a.write = store
	if !store {
		r, err := c.result(b, op, 0, a.uni() && !atomic)
		if err != nil {
			return nil, err
		}
		if (r.kind == kFloat) != a.cd.isFloat || r.comps != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s: result type %s does not match the view element %s", name, r.typ, a.v.typ.Elem)
		}
		if c.k.san.on() {
			return checkedAccess(a, r, nil, atomic), nil
		}
		if a.wg {
			if atomic {
				c.wgSlow++
			} else if fast := wgLoad(c, a, r); fast != nil {
				return fast, nil
			} else {
				return wgGeneric(c, a, r, nil), nil
			}
		} else if fast := fastLoad(a, r); fast != nil && !atomic {
			c.metaUse(a.idx[0], op, 1)
			return fast, nil
		}
		generic := func(fr *frame) error {
			for l := range fr.L {
				if !fr.mask[l] {
					continue
				}
				v, off, err := a.at(fr, l, nil)
				if err != nil {
					return err
				}
				dst := l
				if r.uni {
					dst = 0
				}
				if atomic {
					mu := stripeFor(v.mem, off)
					mu.Lock()
				}
				if a.cd.isFloat {
					fr.F[r.idx][dst] = a.cd.loadF(v.mem[off:])
				} else {
					fr.I[r.idx][dst] = a.cd.loadI(v.mem[off:])
				}
				if atomic {
					stripeFor(v.mem, off).Unlock()
				}
				if r.uni {
					return nil
				}
			}
			return nil
		}
		if a.wg {
			return generic, nil
		}
		if fast := gatherN(a, r, generic); fast != nil && !atomic {
			return fast, nil
		}
		if !noFuse && !atomic && !r.uni && a.v.uni && anyVaries(a.idx) {
			return vecGather(a, r, 1, generic), nil
		}
		return generic, nil
	}
	x, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	if (x.kind == kFloat) != a.cd.isFloat || x.comps != 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: value type %s does not match the view element %s", name, x.typ, a.v.typ.Elem)
	}
	if c.k.san.on() {
		return checkedAccess(a, nil, x, atomic), nil
	}
	if a.wg {
		if atomic {
			c.wgSlow++
		} else if fast := wgStore(c, a, x); fast != nil {
			return fast, nil
		} else {
			return wgGeneric(c, a, nil, x), nil
		}
	} else if fast := fastStore(a, x); fast != nil && !atomic {
		c.metaUse(a.idx[0], op, 2)
		return fast, nil
	}
	once := a.uni() && x.uni && !atomic
	generic := func(fr *frame) error {
		for l := range fr.L {
			if !fr.mask[l] {
				continue
			}
			v, off, err := a.at(fr, l, nil)
			if err != nil {
				return err
			}
			src := l
			if x.uni {
				src = 0
			}
			if atomic {
				stripeFor(v.mem, off).Lock()
			}
			if a.cd.isFloat {
				a.cd.storeF(v.mem[off:], fr.F[x.idx][src])
			} else {
				a.cd.storeI(v.mem[off:], fr.I[x.idx][src])
			}
			if atomic {
				stripeFor(v.mem, off).Unlock()
			}
			if once {
				return nil
			}
		}
		return nil
	}
	if a.wg {
		return generic, nil
	}
	if fast := scatterN(a, x, generic); fast != nil && !atomic {
		return fast, nil
	}
	return generic, nil
}

// fastLoad handles the common case: a uniform rank-1 view of f32 read at a
// varying index.
func fastLoad(a *access, r *slot) instr {
	if !a.v.uni || len(a.idx) != 1 || a.idx[0].uni || !a.cd.isFloat || a.cd.size != 4 || a.v.typ.Elem.Name != "f32" {
		return nil
	}
	slow := func(fr *frame) error {
		for l := range fr.L {
			if fr.mask[l] {
				if _, _, err := a.at(fr, l, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		// contiguous checks the whole block against the view and the
		// bound bytes itself.
		if blk, ok := contiguous(fr, v, a.idx[0]); ok {
			decodeF32(fr.F[r.idx][fr.lo:fr.hi], blk)
			return nil
		}
		fr.writeAffine(a.idx[0])
		if !v.fits(4) {
			if err := slow(fr); err != nil {
				return err
			}
		}
		dim, st, base, mem := v.dims[0], v.strides[0]*4, v.base, v.mem
		dense := func(lo, hi int) error {
			ix := fr.I[a.idx[0].idx][lo:hi]
			out := fr.F[r.idx][lo:hi]
			out = out[:len(ix)]
			for l, i := range ix {
				if uint64(i) >= uint64(dim) {
					return slow(fr)
				}
				off := base + i*st
				out[l] = float64(math.Float32frombits(le.Uint32(mem[off : off+4])))
			}
			return nil
		}
		if fr.dense() {
			return dense(fr.lo, fr.hi)
		}
		if wa, wb, ok := fr.window(); ok {
			// A periodic mask of a batch: each group's window is dense.
			for g0 := 0; g0 < fr.L; g0 += fr.grp {
				if err := dense(g0+wa, g0+wb); err != nil {
					return err
				}
			}
			return nil
		}
		lo, hi := fr.lo, fr.hi
		ix := fr.I[a.idx[0].idx][lo:hi]
		out := fr.F[r.idx][lo:hi]
		out = out[:len(ix)]
		mask := fr.mask[lo:hi]
		mask = mask[:len(ix)]
		for l, i := range ix {
			if !mask[l] {
				continue
			}
			if uint64(i) >= uint64(dim) {
				return slow(fr)
			}
			off := base + i*st
			out[l] = float64(math.Float32frombits(le.Uint32(mem[off : off+4])))
		}
		return nil
	}
}

// fastStore is fastLoad's counterpart for stores.
func fastStore(a *access, x *slot) instr {
	if !a.v.uni || len(a.idx) != 1 || a.idx[0].uni || x.uni || !a.cd.isFloat || a.cd.size != 4 || a.v.typ.Elem.Name != "f32" {
		return nil
	}
	slow := func(fr *frame) error {
		for l := range fr.L {
			if fr.mask[l] {
				if _, _, err := a.at(fr, l, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		if blk, ok := contiguous(fr, v, a.idx[0]); ok {
			encodeF32(blk, fr.F[x.idx][fr.lo:fr.hi])
			return nil
		}
		fr.writeAffine(a.idx[0])
		if !v.fits(4) {
			if err := slow(fr); err != nil {
				return err
			}
		}
		dim, st, base, mem := v.dims[0], v.strides[0]*4, v.base, v.mem
		run := func(lo, hi int, full bool) error {
			ix := fr.I[a.idx[0].idx][lo:hi]
			in := fr.F[x.idx][lo:hi]
			in = in[:len(ix)]
			mask := fr.mask[lo:hi]
			mask = mask[:len(ix)]
			for l, i := range ix {
				if !full && !mask[l] {
					continue
				}
				if uint64(i) >= uint64(dim) {
					return slow(fr)
				}
				off := base + i*st
				le.PutUint32(mem[off:off+4], math.Float32bits(float32(in[l])))
			}
			return nil
		}
		if wa, wb, ok := fr.window(); ok && !fr.dense() {
			// A periodic mask of a batch: each group's window is dense.
			for g0 := 0; g0 < fr.L; g0 += fr.grp {
				if err := run(g0+wa, g0+wb, true); err != nil {
					return err
				}
			}
			return nil
		}
		return run(fr.lo, fr.hi, fr.dense())
	}
}

// checkedAccess is the checked mode's load (r set) or store (x set): every
// active lane makes its own access, even at a uniform address, and each
// is recorded by the sanitizer before it happens; atomics are exempt from
// race checks.
func checkedAccess(a *access, r, x *slot, atomic bool) instr {
	return func(fr *frame) error {
		for l := range fr.L {
			if !fr.mask[l] {
				continue
			}
			v, off, err := a.at(fr, l, nil)
			if err != nil {
				return err
			}
			if !atomic {
				if err := fr.touch(a, v, off, l, x != nil); err != nil {
					return err
				}
			}
			if atomic {
				stripeFor(v.mem, off).Lock()
			}
			mem := v.mem[off:]
			switch {
			case x != nil:
				src := l
				if x.uni {
					src = 0
				}
				if a.cd.isFloat {
					a.cd.storeF(mem, fr.F[x.idx][src])
				} else {
					a.cd.storeI(mem, fr.I[x.idx][src])
				}
			default:
				dst := l
				if r.uni {
					dst = 0
				}
				if a.cd.isFloat {
					fr.F[r.idx][dst] = a.cd.loadF(mem)
				} else {
					fr.I[r.idx][dst] = a.cd.loadI(mem)
				}
			}
			if atomic {
				stripeFor(v.mem, off).Unlock()
			}
		}
		return nil
	}
}
