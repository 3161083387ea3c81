package interp

import (
	"sync/atomic"
	"unsafe"

	"github.com/loomgen/loomgen/loom"
)

// Fused load-load-op-store. The step of a tree reduction (and of many
// element-wise kernels) is
//
//	%a = view.load %va[%i] ; %b = view.load %vb[%j]
//	%s = scalar.addf %a, %b : f32 ; view.store %s, %vs[%k]
//
// Run one by one, it widens two f32 blocks into float64 registers, adds and
// rounds them, and narrows the result back: four passes over the lanes and
// four dispatches. When %a, %b and %s have no other use, their registers
// need not be written at all, and when all three accesses are contiguous
// blocks (affine indices over a dense bound, each checked against its view
// and bound bytes by contiguous) the four ops are one float32 loop.
// Otherwise the four compiled ops run as they are, with their own checks
// and errors.

// useCounts counts, per top-level op (kernel.def, func.def, …) and SSA
// name, the operand uses in its body, and maps every op to its top-level
// op's counts. A name cannot be seen from another top-level op (function
// bodies are isolated), so counting within one is exact; a name defined
// twice inside one body counts the uses of both, which is conservative.
func useCounts(mods []*loom.Module) map[*loom.Op]map[string]int {
	out := map[*loom.Op]map[string]int{}
	for _, m := range mods {
		if m == nil {
			continue
		}
		for _, top := range m.Ops {
			n := map[string]int{}
			var typ func(t *loom.Type)
			typ = func(t *loom.Type) {
				if t == nil {
					return
				}
				for _, d := range t.Dims {
					if d.Value != nil {
						n[d.Value.Name]++
					}
				}
				typ(t.Elem)
			}
			ops := func(os []*loom.Operand) {
				for _, o := range os {
					if o != nil && o.Lit == nil {
						n[o.Name]++
					}
				}
			}
			var walk func(op *loom.Op)
			walk = func(op *loom.Op) {
				out[op] = n
				ops(op.Operands)
				for _, p := range op.Preds {
					ops(p.Args)
				}
				for _, c := range op.Cases {
					ops(c.Values)
				}
				for _, t := range op.Types {
					typ(t)
				}
				for _, t := range op.ResultTypes {
					typ(t)
				}
				for _, r := range op.Regions {
					for _, o := range r.Ops {
						walk(o)
					}
				}
			}
			walk(top)
		}
	}
	return out
}

// countFused, set by tests before running, makes fused steps that took
// the float32 block loop count themselves in fusedRuns (a shared counter
// is too dear to bump on every step otherwise).
var (
	countFused bool
	fusedRuns  atomic.Int64
	// noFuse, set by tests, compiles load-load-op-store op by op so the
	// fused and unfused forms can be compared.
	noFuse bool
)

// fuseCandidate reports whether ops[i:i+4] is the load-load-op-store shape
// with single-use intermediates; it looks only at syntax, the slots are
// checked after the four ops compiled.
func (c *compiler) fuseCandidate(ops []*loom.Op, i int) bool {
	if noFuse || i+4 > len(ops) {
		return false
	}
	la, lb, ar, st := ops[i], ops[i+1], ops[i+2], ops[i+3]
	if la.Name != "view.load" || lb.Name != "view.load" || st.Name != "view.store" {
		return false
	}
	switch ar.Name {
	case "scalar.addf", "scalar.subf", "scalar.mulf", "scalar.divf":
	default:
		return false
	}
	if len(la.Results) != 1 || len(lb.Results) != 1 || len(ar.Results) != 1 || len(ar.Operands) != 2 || len(st.Operands) != 3 || len(la.Operands) != 2 || len(lb.Operands) != 2 {
		return false
	}
	a, b, s := la.Results[0].Name, lb.Results[0].Name, ar.Results[0].Name
	if a == b || ar.Operands[0].Lit != nil || ar.Operands[1].Lit != nil || ar.Operands[0].Name != a || ar.Operands[1].Name != b {
		return false
	}
	if st.Operands[0].Lit != nil || st.Operands[0].Name != s {
		return false
	}
	for _, o := range []*loom.Operand{la.Operands[0], la.Operands[1], lb.Operands[0], lb.Operands[1], st.Operands[1], st.Operands[2]} {
		if o.Lit != nil {
			return false
		}
	}
	n := c.uses[la]
	return n != nil && n[a] == 1 && n[b] == 1 && n[s] == 1
}

// fuse builds the fused instruction over the four compiled ops code, or
// returns nil when the slots do not have the f32 rank-1 shape.
func (c *compiler) fuse(b *block, ops []*loom.Op, code []instr) instr {
	if len(code) != 4 {
		return nil
	}
	la, lb, ar, st := ops[0], ops[1], ops[2], ops[3]
	look := func(o *loom.Operand) *slot { return b.sc.lookup(o.Name) }
	va, ia, vb, ib, vs, is := look(la.Operands[0]), look(la.Operands[1]), look(lb.Operands[0]), look(lb.Operands[1]), look(st.Operands[1]), look(st.Operands[2])
	r := look(ar.Operands[0])
	for _, v := range []*slot{va, vb, vs} {
		if v == nil || v.kind != kView || !v.uni || v.typ.Kind != loom.TypeView || len(v.typ.Dims) != 1 || v.typ.Elem == nil || v.typ.Elem.Name != "f32" {
			return nil
		}
	}
	for _, x := range []*slot{ia, ib, is} {
		if x == nil || x.kind != kInt || x.uni || x.comps != 1 {
			return nil
		}
	}
	if r == nil || r.kind != kFloat || r.typ.Name != "f32" || r.comps != 1 {
		return nil
	}
	var op byte
	switch ar.Name {
	case "scalar.addf":
		op = '+'
	case "scalar.subf":
		op = '-'
	case "scalar.mulf":
		op = '*'
	case "scalar.divf":
		op = '/'
	}
	if c.mayWG(va) || c.mayWG(vb) || c.mayWG(vs) {
		return fusePeriodic(op, va, ia, vb, ib, vs, is, code)
	}
	// An in-place update (x[i] = x[i] op y[j]) stores to the block one
	// of its loads already checked.
	storeA, storeB := vs == va && is == ia, vs == vb && is == ib
	sameB := vb == va
	return func(fr *frame) error {
		lo, hi := fr.lo, fr.hi
		if lo < hi && fr.nact == hi-lo && ia.aff && ib.aff {
			ma, mb := &fr.meta[ia.idx], &fr.meta[ib.idx]
			if ma.aff && mb.aff && lo >= ma.alo && hi <= ma.ahi && lo >= mb.alo && hi <= mb.ahi {
				// Both views are checked once, each index block against
				// the elements its view can address (view32).
				pa, ea, ok := view32(&fr.V[va.idx][0])
				pb, eb := pa, ea
				if ok && !sameB {
					pb, eb, ok = view32(&fr.V[vb.idx][0])
				}
				n := int64(hi - lo)
				a0, b0 := ma.a0+int64(lo), mb.a0+int64(lo)
				if ok && a0 >= 0 && a0+n <= ea && b0 >= 0 && b0+n <= eb {
					fa := unsafe.Slice((*float32)(unsafe.Add(pa, 4*a0)), n)
					fb := unsafe.Slice((*float32)(unsafe.Add(pb, 4*b0)), n)
					var fs []float32
					switch {
					case storeA: // the same view and index: the same block
						fs = fa
					case storeB:
						fs = fb
					default:
						fs, ok = block32(fr, &fr.V[vs.idx][0], is, lo, hi)
					}
					if ok && inPlace32(fs, fa) && inPlace32(fs, fb) {
						if countFused {
							fusedRuns.Add(1)
						}
						binBlock32(op, fs, fa, fb)
						return nil
					}
				}
			}
		}
		// The compiled loads and store write any index lanes left
		// unwritten (lazy.go) before reading them.
		for _, in := range code {
			if err := in(fr); err != nil {
				return err
			}
		}
		return nil
	}
}

// view32 returns the f32 elements of a rank-1, unit-stride view: element
// i, for 0 <= i < n, is the float32 at p+4i, inside the view's extent and
// the bound bytes, 4-byte aligned on a little-endian host; ok is false
// when that does not hold for the view as a whole (the per-lane path
// decides then). Small enough to inline: it runs at every fused step.
func view32(v *view) (p unsafe.Pointer, n int64, ok bool) {
	end := min(v.lim, int64(len(v.mem)))
	if v.strides[0] != 1 || !nativeLE || v.base < 0 || v.base > end {
		return nil, 0, false
	}
	p = unsafe.Add(unsafe.Pointer(unsafe.SliceData(v.mem)), v.base)
	return p, min(v.dims[0], (end-v.base)/4), uintptr(p)%4 == 0
}

// block32 is contiguous for the fused f32 loops, returning the checked
// block as float32 values: the dense active bound [lo, hi) is nonempty
// (the caller checked), ix's facts must cover it, and the whole block must
// lie inside the rank-1 view and the bound bytes, 4-byte aligned on a
// little-endian host. Written out rather than through contiguous and asF32:
// it runs at every step of a tree reduction.
func block32(fr *frame, v *view, ix *slot, lo, hi int) ([]float32, bool) {
	if !ix.aff || !nativeLE || v.strides[0] != 1 {
		return nil, false
	}
	m := &fr.meta[ix.idx]
	if !m.aff || lo < m.alo || hi > m.ahi {
		return nil, false
	}
	n := int64(hi - lo)
	first := m.a0 + int64(lo)
	if first < 0 || first+n > v.dims[0] {
		return nil, false
	}
	off := v.base + first*4
	if off < 0 || off+n*4 > v.lim || off+n*4 > int64(len(v.mem)) {
		return nil, false
	}
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(v.mem)), off)
	if uintptr(p)%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(p), n), true
}

// inPlace32 is inPlace for float32 blocks of equal length.
func inPlace32(dst, src []float32) bool {
	d := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	s := uintptr(unsafe.Pointer(unsafe.SliceData(src)))
	n := uintptr(len(dst)) * 4
	return d == s || d+n <= s || s+uintptr(len(src))*4 <= d
}

// inPlace reports whether an element-wise loop writing dst while reading
// src (blocks of equal length) sees only the old values of src: the blocks
// are disjoint or exactly the same.
func inPlace(dst, src []byte) bool {
	d := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	s := uintptr(unsafe.Pointer(unsafe.SliceData(src)))
	n := uintptr(len(dst))
	return d == s || d+n <= s || s+uintptr(len(src)) <= d
}

// sameStart reports whether two blocks start at the same byte.
func sameStart(x, y []byte) bool {
	return len(x) > 0 && len(y) > 0 && &x[0] == &y[0]
}

// binBlock32 is R = A op B in float32 arithmetic, which rounds exactly as
// the float64 operation rounded to f32 does (53 >= 2*24+2 bits).
func binBlock32(op byte, R, A, B []float32) {
	A, B = A[:len(R)], B[:len(R)]
	if hasFMA && len(R) >= 8 {
		n := len(R) &^ 7
		full := n == len(R) // no tail: the tree steps of 8 and more lanes
		switch op {
		case '+':
			addF32AVX(R[:n], A[:n], B[:n])
		case '-':
			subF32AVX(R[:n], A[:n], B[:n])
		case '*':
			mulF32AVX(R[:n], A[:n], B[:n])
		case '/':
			divF32AVX(R[:n], A[:n], B[:n])
		}
		if full {
			return
		}
		R, A, B = R[n:], A[n:], B[n:]
	}
	switch op {
	case '+':
		for i := range R {
			R[i] = A[i] + B[i]
		}
	case '-':
		for i := range R {
			R[i] = A[i] - B[i]
		}
	case '*':
		for i := range R {
			R[i] = A[i] * B[i]
		}
	case '/':
		for i := range R {
			R[i] = A[i] / B[i]
		}
	}
}

// Fused guarded copy. Loading a tile into workgroup memory under a bounds
// guard is
//
//	%x = scf.if %ok -> (f32) { %v = view.load %in[%i] ; scf.yield %v }
//	     else { scf.yield %c }
//	view.store %x, %tile[%k]
//
// With %ok a lane range (affineCmp) and both accesses contiguous, this is
// a block copy of the then lanes and a fill of the else lanes, in f32,
// without widening into the if's result register. Otherwise the two
// compiled ops run as they are.

// guardCandidate reports whether ops[i:i+2] has that shape syntactically.
func (c *compiler) guardCandidate(ops []*loom.Op, i int) bool {
	if i+2 > len(ops) {
		return false
	}
	ifo, st := ops[i], ops[i+1]
	if ifo.Name != "scf.if" || len(ifo.Results) != 1 || len(ifo.Regions) != 2 || len(ifo.Operands) != 1 || ifo.Operands[0].Lit != nil {
		return false
	}
	th, el := ifo.Regions[0].Ops, ifo.Regions[1].Ops
	if len(th) != 2 || len(el) != 1 || th[0].Name != "view.load" || th[1].Name != "scf.yield" || el[0].Name != "scf.yield" {
		return false
	}
	ld := th[0]
	if len(ld.Results) != 1 || len(ld.Operands) != 2 || len(th[1].Operands) != 1 || len(el[0].Operands) != 1 {
		return false
	}
	v := ld.Results[0].Name
	if th[1].Operands[0].Lit != nil || th[1].Operands[0].Name != v || el[0].Operands[0].Lit != nil {
		return false
	}
	if st.Name != "view.store" || len(st.Operands) != 3 || st.Operands[0].Lit != nil || st.Operands[0].Name != ifo.Results[0].Name {
		return false
	}
	for _, o := range []*loom.Operand{ld.Operands[0], ld.Operands[1], st.Operands[1], st.Operands[2]} {
		if o.Lit != nil {
			return false
		}
	}
	n := c.uses[ifo]
	return n != nil && n[v] == 1 && n[ifo.Results[0].Name] == 1
}

// guard builds the fused guarded copy over the two compiled ops, or nil.
func (c *compiler) guard(b *block, ops []*loom.Op, code []instr) instr {
	if len(code) != 2 {
		return nil
	}
	ifo, st := ops[0], ops[1]
	ld, ey := ifo.Regions[0].Ops[0], ifo.Regions[1].Ops[0]
	look := func(o *loom.Operand) *slot { return b.sc.lookup(o.Name) }
	cond, vi, ii, vs, is, e, x := look(ifo.Operands[0]), look(ld.Operands[0]), look(ld.Operands[1]), look(st.Operands[1]), look(st.Operands[2]), look(ey.Operands[0]), look(st.Operands[0])
	for _, v := range []*slot{vi, vs} {
		if v == nil || v.kind != kView || !v.uni || v.typ.Kind != loom.TypeView || len(v.typ.Dims) != 1 || v.typ.Elem == nil || v.typ.Elem.Name != "f32" {
			return nil
		}
	}
	for _, s := range []*slot{cond, ii, is} {
		if s == nil || s.kind != kInt || s.uni || s.comps != 1 {
			return nil
		}
	}
	if e == nil || e.kind != kFloat || !e.uni || e.comps != 1 || e.typ.Name != "f32" || x == nil || x.kind != kFloat || x.typ.Name != "f32" || x.comps != 1 {
		return nil
	}
	if c.mayWG(vi) {
		return nil
	}
	if c.mayWG(vs) {
		return guardPeriodic(cond, vi, ii, vs, is, e, code)
	}
	return func(fr *frame) error {
		if fr.lo < fr.hi && fr.dense() {
			if a, bnd, ok := fr.rangeMask(cond); ok {
				clo, chi, n := fr.lo, fr.hi, fr.nact
				dst, ok := contiguous(fr, &fr.V[vs.idx][0], is)
				var src []byte
				if ok && a < bnd {
					fr.lo, fr.hi, fr.nact = a, bnd, bnd-a
					src, ok = contiguous(fr, &fr.V[vi.idx][0], ii)
					fr.lo, fr.hi, fr.nact = clo, chi, n
				}
				// The fills must not clobber src before it is copied: src
				// is the then part of dst itself, or apart from all of dst.
				if ok && (src == nil || sameStart(dst[4*(a-clo):], src) || inPlace(dst, src) && !sameStart(dst, src)) {
					fd, okd := asF32(dst)
					fs, oks := asF32(src)
					if okd && (oks || src == nil) {
						if countFused {
							fusedRuns.Add(1)
						}
						c := float32(fr.F[e.idx][0])
						for i := range fd[:a-clo] {
							fd[i] = c
						}
						copy(fd[a-clo:bnd-clo], fs)
						for i := range fd[bnd-clo:] {
							fd[bnd-clo+i] = c
						}
						return nil
					}
				}
			}
		}
		for _, in := range code {
			if err := in(fr); err != nil {
				return err
			}
		}
		return nil
	}
}
