package ptx

import (
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Matrix fragments. A subgroup fragment (loom.FragmentLayout) is a 16×16
// (or 16×K, K×16) tile spread over a warp. Loaded by
// vector.fragment.load it is held in the register layout of mma.sync
// (m16n8k16 for f16/bf16, m16n8k32 for i8) rather than Loom's: a val with
// frag set. vector.mma, vector.fragment.store, loop-carried values and
// yields consume that form directly; any other use sees Loom's layout
// through a per-warp shared-memory round trip (materialize), and a
// Loom-layout vector given to vector.mma is converted the other way
// (nativize). Dense fragments are ordinary row-major vectors, multiplied
// by scalar fused multiply-adds.

// nativeFrag describes a val whose vec holds a subgroup fragment in the
// tensor-core register layout.
type nativeFrag struct {
	lay      loom.FragmentLayout
	elem     *loom.Type // Loom element type (f16, bf16, i8, f32, i32)
	unsigned bool       // i8 elements read as u8 (loom.FragmentUnsigned)
}

// fragPart is one element of a native register: its offset from the
// lane's base coordinate and its position in the 32-bit register.
type fragPart struct{ dr, dc, part int }

// nativeRegs lists, per native register, the elements it packs. Lane
// (g = lane/4, t = lane%4) has base coordinate (g, w·t) for lhs and the
// accumulators and (w·t, g) for rhs, w being the elements per register
// (for accumulators w = 2: a pair of registers or one packed f16 pair).
func nativeRegs(f *nativeFrag) (regs [][]fragPart, w int) {
	bits := f.elem.Bits
	switch f.lay.Role {
	case loom.FragmentLHS, loom.FragmentRHS:
		w = 32 / bits
		kstep := 8 * w // 16 for 16-bit elements, 32 for bytes
		half := kstep / 2
		depth := f.lay.Cols
		if f.lay.Role == loom.FragmentRHS {
			depth = f.lay.Rows
		}
		if f.lay.Role == loom.FragmentLHS {
			for kc := 0; kc < depth/kstep; kc++ {
				for j := range 4 {
					var r []fragPart
					for p := range w {
						r = append(r, fragPart{dr: 8 * (j & 1), dc: kc*kstep + half*(j>>1) + p, part: p})
					}
					regs = append(regs, r)
				}
			}
			return regs, w
		}
		for nh := range 2 {
			for kc := 0; kc < depth/kstep; kc++ {
				for j := range 2 {
					var r []fragPart
					for p := range w {
						r = append(r, fragPart{dr: kc*kstep + half*j + p, dc: nh * 8, part: p})
					}
					regs = append(regs, r)
				}
			}
		}
		return regs, w
	}
	w = 2
	for nh := range 2 {
		if bits == 16 { // f16 accumulators: two halves per register
			for j := range 2 {
				regs = append(regs, []fragPart{{dr: 8 * j, dc: nh * 8, part: 0}, {dr: 8 * j, dc: nh*8 + 1, part: 1}})
			}
			continue
		}
		for j := range 4 {
			regs = append(regs, []fragPart{{dr: 8 * (j >> 1), dc: nh*8 + (j & 1)}})
		}
	}
	return regs, w
}

// packed reports whether native registers pack several elements (.b32).
func (f *nativeFrag) packed() bool { return f.elem.Bits < 32 }

// regType is the Loom type of a native register.
func (f *nativeFrag) regType() *loom.Type {
	if f.packed() {
		return i32Type
	}
	return f.elem
}

// fragAware lists the ops that take native fragments as they are.
var fragAware = map[string]bool{
	"vector.mma": true, "vector.fragment.store": true, "vector.fragment": true,
	"scf.yield": true, "scf.for": true, "scf.while": true, "scf.condition": true,
}

// laneRegs are registers holding functions of the warp lane: the lane,
// g = lane/4, t = lane%4, lane%16, lane/16 and 16·(lane/16).
type laneRegs struct{ lane, g, t, lo, hi, hi16 string }

// fragmentOps are the ops that make a kernel compute laneRegs at entry.
var fragmentOps = map[string]bool{"vector.fragment.load": true, "vector.fragment.store": true, "vector.mma": true, "vector.fragment": true}

// laneRegisters computes laneRegs where it is called.
func (e *emitter) laneRegisters() *laneRegs {
	l := &laneRegs{e.newReg(cR), e.newReg(cR), e.newReg(cR), e.newReg(cR), e.newReg(cR), e.newReg(cR)}
	e.ins("mov.u32 %s, %%laneid", l.lane)
	e.ins("shr.u32 %s, %s, 2", l.g, l.lane)
	e.ins("and.b32 %s, %s, 3", l.t, l.lane)
	e.ins("and.b32 %s, %s, 15", l.lo, l.lane)
	e.ins("shr.u32 %s, %s, 4", l.hi, l.lane)
	e.ins("shl.b32 %s, %s, 4", l.hi16, l.hi)
	return l
}

// lanes returns the kernel's laneRegs (computed at entry when the kernel
// has fragment ops; here otherwise, as in a callee reached indirectly).
func (e *emitter) lanes() *laneRegs {
	if e.lane != nil {
		return e.lane
	}
	return e.laneRegisters()
}

// usesOps reports whether region r, or a function it calls, has one of ops.
func usesOps(p *loom.Program, r *loom.Region, ops map[string]bool, seen map[string]bool) bool {
	if r == nil {
		return false
	}
	for _, op := range r.Ops {
		if ops[op.Name] {
			return true
		}
		if op.Name == "func.call" && !seen[op.Symbol] {
			seen[op.Symbol] = true
			if f := p.Func(op.Symbol); f != nil && usesOps(p, f.Body, ops, seen) {
				return true
			}
		}
		for _, sub := range op.Regions {
			if usesOps(p, sub, ops, seen) {
				return true
			}
		}
	}
	return false
}

// fragmentOp lowers vector.fragment.load/store and vector.fragment.
func (e *emitter) fragmentOp(op *loom.Op, rest string) error {
	if rest == "fragment" {
		if err := need(op, 3); err != nil {
			return err
		}
		if len(op.Operands) > 3 {
			return unsupported(op, "vector.fragment with encoded parameters (using {…})")
		}
		x, err := e.get(op.Operands[0])
		if err != nil {
			return err
		}
		if _, err := e.fragLayout(op, 1, vecResultType(op)); err != nil {
			return err
		}
		return e.define(op, 0, x) // the same payload, now a fragment
	}
	store := rest == "fragment.store"
	if e.wgp != nil && e.wgp.skip[op] {
		// A wgmma group reads this rhs through its descriptor.
		return e.define(op, 0, &val{t: vecResultType(op)})
	}
	at := 0
	if store {
		at = 1
	}
	if err := need(op, at+3); err != nil {
		return err
	}
	v, err := e.view(op.Operands[at])
	if err != nil {
		return err
	}
	rank := len(v.strides)
	if rank < 2 || len(op.Operands) != at+1+rank+2 {
		return invalid(op.Pos, "%s needs a view of rank 2 or more, its indices and shape [rows, columns]", op.Name)
	}
	idx, err := e.operands(op, at+1)
	if err != nil {
		return err
	}
	idx = idx[:rank]
	var vt *loom.Type
	if store {
		vt = op.Types[0]
	} else {
		vt = vecResultType(op)
	}
	if vt == nil || vt.Kind != loom.TypeVector || !sameKind(vt.Elem, v.elem) {
		return invalid(op.Pos, "%s: the fragment type %s does not match a view of %s", op.Name, typeName(vt), typeName(v.elem))
	}
	lay, err := e.fragLayout(op, at+1+rank, vt)
	if err != nil {
		return err
	}
	size := int64(carrierBytes(v.elem))
	// The fragment's rows and columns run along the view's last two axes.
	rowStride, colStride := v.strides[rank-2], v.strides[rank-1]
	if !store && lay.Subgroup && lay.Wave != loom.FragmentWave64 {
		if err := e.fullWarps(op); err != nil {
			return err
		}
		f := &nativeFrag{lay: lay, elem: v.elem, unsigned: loom.FragmentUnsigned(op.Types[len(op.Types)-1])}
		if out, ok := e.ldmatrix(op, f, v, idx, rowStride, colStride, size); ok {
			return e.define(op, 0, out)
		}
	}
	if v.swz > 0 {
		// swizzledViews admits only the fragment loads ldmatrix takes.
		return invalid(op.Pos, "internal: %s of a swizzled workgroup tile not lowered to ldmatrix", op.Name)
	}
	base, err := e.address(op, v, idx)
	if err != nil {
		return err
	}
	if !lay.Subgroup {
		return e.denseFragment(op, store, v, vt, lay, base, rowStride, colStride)
	}
	if lay.Wave == loom.FragmentWave64 {
		return e.wave64Fragment(op, store, v, vt, lay, base, rowStride, colStride)
	}
	if err := e.fullWarps(op); err != nil {
		return err
	}
	f := &nativeFrag{lay: lay, elem: v.elem, unsigned: loom.FragmentUnsigned(op.Types[len(op.Types)-1])}
	if store {
		x, err := e.get(op.Operands[0])
		if err != nil {
			return err
		}
		if x.frag == nil {
			// A Loom-layout payload: each lane stores what it holds.
			return e.storeLoomLayout(op, x, v, lay, base, rowStride, colStride)
		}
		if x.frag.lay.Role.IsAccumulator() != lay.Role.IsAccumulator() || x.frag.lay.Rows != lay.Rows || x.frag.lay.Cols != lay.Cols {
			return invalid(op.Pos, "%s<%s> of a %s fragment [%d, %d]", op.Name, lay.Role, x.frag.lay.Role, x.frag.lay.Rows, x.frag.lay.Cols)
		}
		return e.nativeAccess(op, true, x, x.frag, v, idx, base, rowStride, colStride, size)
	}
	out := &val{t: vt, frag: f}
	if err := e.nativeAccess(op, false, out, f, v, idx, base, rowStride, colStride, size); err != nil {
		return err
	}
	return e.define(op, 0, out)
}

// fragLayout reads the role and the constant shape operands at op.Operands[at:].
func (e *emitter) fragLayout(op *loom.Op, at int, vt *loom.Type) (loom.FragmentLayout, error) {
	role, ok := loom.ParseFragmentRole(op.Param)
	if !ok {
		return loom.FragmentLayout{}, invalid(op.Pos, "%s: unknown fragment role %q", op.Name, op.Param)
	}
	if len(op.Operands) < at+2 {
		return loom.FragmentLayout{}, invalid(op.Pos, "%s needs shape [rows, columns]", op.Name)
	}
	var dims [2]int64
	for i := range dims {
		d, err := e.get(op.Operands[at+i])
		if err != nil {
			return loom.FragmentLayout{}, err
		}
		if !d.known {
			return loom.FragmentLayout{}, unsupported(op, "the fragment shape must be known at compile time")
		}
		dims[i] = d.ci
	}
	_, n, err := vectorShape(op, vt)
	if err != nil {
		return loom.FragmentLayout{}, err
	}
	lay, err := loom.NewFragmentLayout(role, dims[0], dims[1], int64(n), e.fragWave())
	if err != nil {
		return lay, unsupported(op, "%v", err)
	}
	return lay, nil
}

// laneBase is the address of the lane's base coordinate (see nativeRegs).
func (e *emitter) laneBase(f *nativeFrag, base string, rowStride, colStride *val, size int64, w int) string {
	l := e.lanes()
	g, t := l.g, l.t
	r, c := g, e.newReg(cR)
	e.ins("mul.lo.s32 %s, %s, %d", c, t, w)
	if f.lay.Role == loom.FragmentRHS {
		r, c = c, g
	}
	out := e.addrLike(base)
	e.offsetBy(out, base, r, rowStride, size)
	e.offsetBy(out, out, c, colStride, size)
	return out
}

// offsetBy sets dst = base + n·stride·size (n a 32-bit register).
func (e *emitter) offsetBy(dst, base, n string, stride *val, size int64) {
	if stride.known {
		e.addrMad(dst, n, stride.ci*size, base, false)
		return
	}
	t := e.newReg(cR)
	e.ins("mul.lo.s32 %s, %s, %s", t, n, stride.reg)
	e.addrMad(dst, t, size, base, false)
}

// partAddr is the address of element (dr, dc) from the lane base.
func (e *emitter) partAddr(lb string, dr, dc int, rowStride, colStride *val, size int64) string {
	if rowStride.known && colStride.known {
		off := (int64(dr)*rowStride.ci + int64(dc)*colStride.ci) * size
		if off == 0 {
			return lb
		}
		return fmt.Sprintf("%s+%d", lb, off)
	}
	a := e.addrLike(lb)
	r, c := e.newReg(cR), e.newReg(cR)
	e.ins("mov.b32 %s, %d", r, dr)
	e.ins("mov.b32 %s, %d", c, dc)
	e.offsetBy(a, lb, r, rowStride, size)
	e.offsetBy(a, a, c, colStride, size)
	return a
}

// nativeAccess loads or stores a native fragment element by element
// (two 16-bit halves as one 32-bit access where they are provably
// adjacent and aligned).
func (e *emitter) nativeAccess(op *loom.Op, store bool, x *val, f *nativeFrag, v *val, idx []*val, base string, rowStride, colStride *val, size int64) error {
	regs, w := nativeRegs(f)
	lb := e.laneBase(f, base, rowStride, colStride, size, w)
	// Pairs along the row are adjacent in memory when the column stride is
	// 1; their address is 4-aligned when the view's alignment (without a
	// run-time predicate) and the row stride allow.
	pairs := f.packed() && f.elem.Bits == 16 && f.lay.Role != loom.FragmentRHS && colStride.known && colStride.ci == 1 &&
		v.alignPred == "" && rowStride.known && (rowStride.ci*size)%4 == 0 && addrAlign(v, idx) >= 4
	if !store {
		x.vec = make([]*val, len(regs))
	}
	for i, parts := range regs {
		if pairs {
			a := e.partAddr(lb, parts[0].dr, parts[0].dc, rowStride, colStride, size)
			if store {
				e.ins("st.%s.b32 [%s], %s", v.space, a, x.vec[i].reg)
			} else {
				x.vec[i] = e.newVal(i32Type)
				e.ins("ld.%s.b32 %s, [%s]", v.space, x.vec[i].reg, a)
			}
			continue
		}
		var elems []*val
		if store && f.packed() {
			elems = e.unpack(f, x.vec[i], len(parts))
		}
		for pi, p := range parts {
			a := e.partAddr(lb, p.dr, p.dc, rowStride, colStride, size)
			switch {
			case store && f.packed():
				e.storeFrom(f.elem, v.space, "", a, elems[pi])
			case store:
				e.storeFrom(f.elem, v.space, "", a, x.vec[i])
			default:
				elems = append(elems, e.loadInto(f.elem, v.space, "", a))
			}
		}
		if !store {
			if f.packed() {
				x.vec[i] = e.pack(f, elems)
			} else {
				x.vec[i] = elems[0]
			}
		}
	}
	return nil
}

// pack builds one 32-bit register from 16-bit or 8-bit elements.
func (e *emitter) pack(f *nativeFrag, elems []*val) *val {
	out := e.newVal(i32Type)
	if f.elem.Bits == 16 {
		e.ins("mov.b32 %s, {%s, %s}", out.reg, elems[0].reg, elems[1].reg)
		return out
	}
	e.ins("and.b32 %s, %s, 255", out.reg, elems[0].reg)
	for i := 1; i < len(elems); i++ {
		e.ins("bfi.b32 %s, %s, %s, %d, 8", out.reg, elems[i].reg, out.reg, 8*i)
	}
	return out
}

// unpack splits a packed register into n elements of the fragment's type.
func (e *emitter) unpack(f *nativeFrag, r *val, n int) []*val {
	out := make([]*val, n)
	for i := range out {
		out[i] = e.newVal(f.elem)
	}
	if f.elem.Bits == 16 {
		e.ins("mov.b32 {%s, %s}, %s", out[0].reg, out[1].reg, r.reg)
		return out
	}
	for i := range out {
		e.ins("bfe.s32 %s, %s, %d, 8", out[i].reg, r.reg, 8*i)
	}
	return out
}

// ldmatrix loads 16-bit lhs and rhs fragments (and i8 lhs) from workgroup
// memory with ldmatrix.x4 (.trans for rhs): one instruction per 16 (or
// 32) deep step. It applies when every row the warp addresses is 16
// contiguous, 16-byte aligned bytes: a row-major tile with the row stride
// and the origin's column multiples of 16 bytes.
func (e *emitter) ldmatrix(op *loom.Op, f *nativeFrag, v *val, idx []*val, rowStride, colStride *val, size int64) (*val, bool) {
	lhs := f.lay.Role == loom.FragmentLHS
	if v.space != "shared" || !(lhs || f.lay.Role == loom.FragmentRHS) || !(f.elem.Bits == 16 || (f.elem.Bits == 8 && lhs)) ||
		!colStride.known || colStride.ci != 1 || !rowStride.known || (rowStride.ci*size)%16 != 0 || e.sm < 75 {
		return nil, false
	}
	// A swizzled tile's column is a multiple of 16 bytes by swizzleUse and
	// its rows whole 128-byte lines: only the view's base matters.
	if a := addrAlign(v, idx); a < 16 && (v.swz == 0 || v.align < 16) {
		return nil, false
	}
	depth := f.lay.Cols
	if !lhs {
		depth = f.lay.Rows
	}
	kstep := 16
	if f.elem.Bits == 8 {
		kstep = 32
	}
	pitch := rowStride.ci * size
	// at(kc) is lane's address of 16-deep step kc: lane l reads row
	// (l mod 16) of the step at 16·(l / 16) bytes along it; a step moves
	// along the row (lhs) or down the rows (rhs).
	var at func(kc int) string
	if v.swz > 0 {
		var ok bool
		if at, ok = e.swizzledLanes(op, v, idx, lhs, int64(kstep)*size); !ok {
			return nil, false
		}
	} else {
		// The origin's constant offset joins each step's immediate.
		base, imm, err := e.addressParts(op, v, idx)
		if err != nil {
			return nil, false
		}
		l := e.lanes()
		// Shared views hold shared-window addresses, which ldmatrix takes.
		sa := e.addrLike(base)
		e.addrMad(sa, l.lo, pitch, base, false)
		e.addrMad(sa, l.hi16, 1, sa, true)
		at = func(kc int) string {
			off := imm
			if lhs {
				off += int64(kc*kstep) * size
			} else {
				off += int64(kc*kstep) * pitch
			}
			return addrPlus(sa, off)
		}
	}
	steps := depth / kstep
	regs := make([]*val, steps*4)
	for kc := range steps {
		var dst [4]*val
		for i := range dst {
			dst[i] = e.newVal(i32Type)
		}
		trans := ""
		if !lhs {
			trans = ".trans"
		}
		e.ins("ldmatrix.sync.aligned.m8n8.x4%s.shared.b16 {%s, %s, %s, %s}, [%s]", trans, dst[0].reg, dst[1].reg, dst[2].reg, dst[3].reg, at(kc))
		if lhs {
			copy(regs[kc*4:], dst[:])
			continue
		}
		// rhs registers are ordered (n half, k step, j): x4.trans gives
		// both n halves of one step.
		regs[kc*2], regs[kc*2+1] = dst[0], dst[1]
		regs[(steps+kc)*2], regs[(steps+kc)*2+1] = dst[2], dst[3]
	}
	return &val{t: vecResultType(op), frag: f, vec: regs}, true
}

// addrPlus is the operand [reg+off] of a memory instruction.
func addrPlus(reg string, off int64) string {
	if off == 0 {
		return reg
	}
	return fmt.Sprintf("%s+%d", reg, off)
}

// warpTile is this warp's slice of the shared scratch for one tile.
func (e *emitter) warpTile(op *loom.Op, bytes int) (string, error) {
	n := e.wgTotal()
	if n <= 0 {
		return "", unsupported(op, "a matrix fragment in Loom's layout needs a static workgroup size (for its shared-memory exchange)")
	}
	warps := int((n + 31) / 32)
	base := e.needScratch(warps * bytes)
	wid := e.newReg(cR)
	tid := e.linearTid()
	e.ins("shr.u32 %s, %s, 5", wid, tid.reg)
	out := e.addrLike(base)
	e.addrMad(out, wid, int64(bytes), base, true)
	return out, nil
}

// loomLane is the address of Loom-layout component 0 of this lane in a
// row-major tile at base, and the byte step from component e to e+1.
func (e *emitter) loomLane(lay loom.FragmentLayout, base string, size int64) (string, int64) {
	l := e.lanes()
	lo, hi := l.lo, l.hi
	cols := int64(lay.Cols)
	off := e.newReg(cR)
	var step int64
	switch lay.Role {
	case loom.FragmentLHS: // (lane%16, e)
		e.ins("mul.lo.s32 %s, %s, %d", off, lo, cols)
		step = 1
	case loom.FragmentRHS: // (e, lane%16)
		e.ins("mov.b32 %s, %s", off, lo)
		step = cols
	default: // (2e + lane/16, lane%16)
		e.ins("mad.lo.s32 %s, %s, %d, %s", off, hi, cols, lo)
		step = 2 * cols
	}
	a := e.addrLike(base)
	e.addrMad(a, off, size, base, true)
	return a, step * size
}

// exchange moves a subgroup fragment between Loom's layout and the native
// one through the warp's shared scratch: every lane writes the elements
// it holds, the warp synchronizes, and every lane reads the other layout.
func (e *emitter) exchange(op *loom.Op, x *val, f *nativeFrag, toNative bool) (*val, error) {
	size := int64(carrierBytes(f.elem))
	tile, err := e.warpTile(op, f.lay.Rows*f.lay.Cols*int(size))
	if err != nil {
		return nil, err
	}
	cols := &val{known: true, ci: int64(f.lay.Cols)}
	one := &val{known: true, ci: 1}
	regs, w := nativeRegs(f)
	loomAt, step := e.loomLane(f.lay, tile, size)
	loomAddr := func(i int) string {
		if i == 0 {
			return loomAt
		}
		return fmt.Sprintf("%s+%d", loomAt, int64(i)*step)
	}
	if toNative {
		for i, c := range x.vec {
			e.storeFrom(f.elem, "shared", "", loomAddr(i), c)
		}
	} else {
		lb := e.laneBase(f, tile, cols, one, size, w)
		for i, parts := range regs {
			elems := []*val{x.vec[i]}
			if f.packed() {
				elems = e.unpack(f, x.vec[i], len(parts))
			}
			for pi, p := range parts {
				e.storeFrom(f.elem, "shared", "", e.partAddr(lb, p.dr, p.dc, cols, one, size), elems[pi])
			}
		}
	}
	e.ins("bar.warp.sync %s", fullMask)
	out := &val{t: x.t}
	if toNative {
		out.frag = f
		lb := e.laneBase(f, tile, cols, one, size, w)
		for _, parts := range regs {
			var elems []*val
			for _, p := range parts {
				elems = append(elems, e.loadInto(f.elem, "shared", "", e.partAddr(lb, p.dr, p.dc, cols, one, size)))
			}
			if f.packed() {
				out.vec = append(out.vec, e.pack(f, elems))
			} else {
				out.vec = append(out.vec, elems[0])
			}
		}
	} else {
		shape, n, err := vectorShape(op, x.t)
		if err != nil {
			return nil, err
		}
		out.shape = shape
		for i := range n {
			out.vec = append(out.vec, e.loadInto(f.elem, "shared", "", loomAddr(i)))
		}
	}
	e.ins("bar.warp.sync %s", fullMask) // the scratch may be reused next
	return out, nil
}

// materialize returns a native fragment in Loom's layout, for an op that
// reads its lanes.
func (e *emitter) materialize(op *loom.Op, x *val) (*val, error) {
	return e.exchange(op, x, x.frag, false)
}

// nativize returns x (a Loom-layout payload of layout lay) in the native
// layout. A splat (one value in every component) needs no exchange.
func (e *emitter) nativize(op *loom.Op, x *val, f *nativeFrag) (*val, error) {
	if x.frag != nil {
		return x, nil
	}
	if len(x.vec) != f.lay.Payload {
		return nil, invalid(op.Pos, "%s: a %d-component payload for a %s fragment of %d", op.Name, len(x.vec), f.lay.Role, f.lay.Payload)
	}
	splat := true
	for _, c := range x.vec {
		if c.reg != x.vec[0].reg {
			splat = false
		}
	}
	if !splat {
		return e.exchange(op, x, f, true)
	}
	regs, _ := nativeRegs(f)
	out := &val{t: x.t, frag: f}
	r := x.vec[0]
	if f.packed() {
		elems := make([]*val, len(regs[0]))
		for i := range elems {
			elems[i] = r
		}
		r = e.pack(f, elems)
	}
	for range regs {
		out.vec = append(out.vec, r)
	}
	return out, nil
}

// storeLoomLayout stores a Loom-layout subgroup payload: each lane writes
// the elements its components hold.
func (e *emitter) storeLoomLayout(op *loom.Op, x *val, v *val, lay loom.FragmentLayout, base string, rowStride, colStride *val) error {
	if len(x.vec) != lay.Payload {
		return invalid(op.Pos, "%s: a %d-component payload for %d", op.Name, len(x.vec), lay.Payload)
	}
	size := int64(carrierBytes(v.elem))
	l := e.lanes()
	lo, hi := l.lo, l.hi
	for i, c := range x.vec {
		r, col := e.newReg(cR), e.newReg(cR)
		switch lay.Role {
		case loom.FragmentLHS:
			e.ins("mov.b32 %s, %s", r, lo)
			e.ins("mov.b32 %s, %d", col, i)
		case loom.FragmentRHS:
			e.ins("mov.b32 %s, %d", r, i)
			e.ins("mov.b32 %s, %s", col, lo)
		default:
			e.ins("add.s32 %s, %s, %d", r, hi, 2*i)
			e.ins("mov.b32 %s, %s", col, lo)
		}
		a := e.addrLike(base)
		e.offsetBy(a, base, r, rowStride, size)
		e.offsetBy(a, a, col, colStride, size)
		e.storeFrom(v.elem, v.space, "", a, c)
	}
	return nil
}

// denseFragment loads or stores a dense fragment: the whole tile,
// row-major, in every work-item.
func (e *emitter) denseFragment(op *loom.Op, store bool, v *val, vt *loom.Type, lay loom.FragmentLayout, base string, rowStride, colStride *val) error {
	size := int64(carrierBytes(v.elem))
	return e.fragmentElements(op, store, v, vt, lay, func(i int) string {
		row, col := lay.Coord(0, i)
		return e.partAddr(base, row, col, rowStride, colStride, size)
	})
}

// fragmentElements loads or stores a fragment held in Loom's layout (not a
// native one), component i at address addr(i) of view v.
func (e *emitter) fragmentElements(op *loom.Op, store bool, v *val, vt *loom.Type, lay loom.FragmentLayout, addr func(i int) string) error {
	var x *val
	if store {
		var err error
		if x, err = e.vecOperand(op.Operands[0]); err != nil {
			return err
		}
		if x.frag != nil || len(x.vec) != lay.Payload {
			return invalid(op.Pos, "%s: a %d-component payload (native: %v) for a %s fragment of %d in Loom's layout", op.Name, len(x.vec), x.frag != nil, lay.Role, lay.Payload)
		}
	}
	comps := make([]*val, lay.Payload)
	for i := range comps {
		a := addr(i)
		if store {
			e.storeFrom(v.elem, v.space, "", a, x.vec[i])
		} else {
			comps[i] = e.loadInto(v.elem, v.space, "", a)
		}
	}
	if store {
		return nil
	}
	shape, _, err := vectorShape(op, vt)
	if err != nil {
		return err
	}
	return e.define(op, 0, vecVal(vt, shape, comps))
}

// mmaInstr is the mma.sync form for the element types, or "".
func mmaInstr(ab, acc *loom.Type, ua, ub bool) string {
	switch {
	case ab.Name == "f16" && acc.Name == "f32":
		return "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
	case ab.Name == "f16" && acc.Name == "f16":
		return "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
	case ab.Name == "bf16" && acc.Name == "f32":
		return "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
	case ab.Kind == loom.TypeInt && ab.Bits == 8 && acc.Kind == loom.TypeInt && acc.Bits == 32:
		s := map[bool]string{false: "s8", true: "u8"}
		return "mma.sync.aligned.m16n8k32.row.col.s32." + s[ua] + "." + s[ub] + ".s32"
	}
	return ""
}

// mma lowers vector.mma: subgroup fragments to mma.sync, two m16n8 halves
// per 16-deep (32 for i8) step; dense ones to scalar fused multiply-adds.
func (e *emitter) mma(op *loom.Op) error {
	if err := need(op, 3); err != nil {
		return err
	}
	if e.wgp != nil && e.wgp.group[op] != nil {
		return e.wgmma(op, e.wgp.group[op])
	}
	if len(op.Types) != 3 {
		return invalid(op.Pos, "vector.mma needs the types of lhs, rhs and accumulator")
	}
	var counts [3]int
	for i, t := range op.Types {
		_, n, err := vectorShape(op, t)
		if err != nil {
			return err
		}
		counts[i] = n
	}
	m, n, k, sub, err := loom.MMAShape(counts[0], counts[1], counts[2], e.fragWave())
	if err != nil {
		return invalid(op.Pos, "vector.mma: %v", err)
	}
	args, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	ab, acc := op.Types[0].Elem, op.Types[2].Elem
	if !sameKind(ab, op.Types[1].Elem) {
		return unsupported(op, "lhs %s with rhs %s (PTX multiplies equal element types)", ab, op.Types[1].Elem)
	}
	if !sub {
		return e.denseMMA(op, args, m, n, k)
	}
	if e.fragWave() == loom.FragmentWave64 {
		return e.wave64MMA(op, args, k)
	}
	if err := e.fullWarps(op); err != nil {
		return err
	}
	ua := args[0].frag != nil && args[0].frag.unsigned
	ub := args[1].frag != nil && args[1].frag.unsigned
	instr := mmaInstr(ab, acc, ua, ub)
	kstep := 16
	if ab.Bits == 8 {
		kstep = 32
	}
	if instr == "" || k%kstep != 0 || e.sm < 80 {
		return unsupported(op, "mma of %s into %s with K = %d on sm_%d (tensor cores take f16/bf16 -> f32, f16 -> f16, i8 -> i32 in steps of %d on sm_80+)", ab, acc, k, e.sm, kstep)
	}
	lay := func(role loom.FragmentRole, rows, cols, payload int, elem *loom.Type, uns bool) *nativeFrag {
		l, _ := loom.NewFragmentLayout(role, int64(rows), int64(cols), int64(payload), loom.FragmentSubgroupSize)
		return &nativeFrag{lay: l, elem: elem, unsigned: uns}
	}
	fa := lay(loom.FragmentLHS, m, k, counts[0], ab, ua)
	fb := lay(loom.FragmentRHS, k, n, counts[1], ab, ub)
	fc := lay(loom.FragmentResult, m, n, counts[2], acc, false)
	a, err := e.nativize(op, args[0], fa)
	if err != nil {
		return err
	}
	b, err := e.nativize(op, args[1], fb)
	if err != nil {
		return err
	}
	c, err := e.nativize(op, args[2], fc)
	if err != nil {
		return err
	}
	if a.frag.lay.Role != loom.FragmentLHS || b.frag.lay.Role != loom.FragmentRHS || !c.frag.lay.Role.IsAccumulator() {
		return invalid(op.Pos, "vector.mma of %s, %s, %s fragments", a.frag.lay.Role, b.frag.lay.Role, c.frag.lay.Role)
	}
	steps := k / kstep
	perHalf := len(c.vec) / 2
	out := &val{t: resultType(op, 0), frag: fc}
	regs := func(vs []*val) string {
		s := make([]string, len(vs))
		for i, v := range vs {
			s[i] = v.reg
		}
		return "{" + strings.Join(s, ", ") + "}"
	}
	for nh := range 2 {
		cur := c.vec[nh*perHalf : (nh+1)*perHalf]
		for kc := range steps {
			d := make([]*val, perHalf)
			for i := range d {
				d[i] = e.newVal(fc.regType())
			}
			bi := (nh*steps + kc) * 2
			e.ins("%s %s, %s, %s, %s", instr, regs(d), regs(a.vec[kc*4:kc*4+4]), regs(b.vec[bi:bi+2]), regs(cur))
			cur = d
		}
		out.vec = append(out.vec, cur...)
	}
	return e.define(op, 0, out)
}

// denseMMA is a dense vector.mma: every element a chain of fused
// multiply-adds in k order rounded to the accumulator type, as on the CPU.
func (e *emitter) denseMMA(op *loom.Op, args []*val, m, n, k int) error {
	x, y, c := args[0], args[1], args[2]
	for _, v := range args {
		if v.vec == nil || v.frag != nil {
			return invalid(op.Pos, "vector.mma: dense operands must be vectors")
		}
	}
	at, ct := op.Types[0].Elem, op.Types[2].Elem
	out := make([]*val, m*n)
	for i := range m {
		for j := range n {
			s := c.vec[i*n+j]
			for kk := range k {
				p, q := x.vec[i*k+kk], y.vec[kk*n+j]
				next := e.newVal(ct)
				switch {
				case isFloat(ct) && isFloat(at):
					if !sameKind(at, ct) {
						p, q = e.floatToFloat(op, p, ct), e.floatToFloat(op, q, ct)
					}
					e.ins("fma.rn.%s %s, %s, %s, %s", ct.Name, next.reg, p.reg, q.reg, s.reg)
				case !isFloat(ct) && !isFloat(at) && ct.Bits == 32:
					e.ins("mad.lo.s32 %s, %s, %s, %s", next.reg, p.reg, q.reg, s.reg)
				default:
					return unsupported(op, "dense mma of %s into %s", at, ct)
				}
				s = next
			}
			out[i*n+j] = s
		}
	}
	shape, _, err := vectorShape(op, op.Types[2])
	if err != nil {
		return err
	}
	return e.define(op, 0, vecVal(resultType(op, 0), shape, out))
}

// joinFragment brings a value joining a control-flow path to the form of
// the join's value: native fragments of the same layout stay native, a
// Loom-layout payload meeting a native one is converted.
func (e *emitter) joinFragment(dst, src *val) (*val, error) {
	op := e.cur
	switch {
	case dst.frag != nil && src.frag != nil:
		if dst.frag.lay != src.frag.lay && !(dst.frag.lay.Role.IsAccumulator() && src.frag.lay.Role.IsAccumulator()) {
			return nil, invalid(op.Pos, "joined fragments have different layouts (%s, %s)", dst.frag.lay.Role, src.frag.lay.Role)
		}
		return src, nil
	case dst.frag != nil:
		return e.nativize(op, src, dst.frag)
	}
	return e.materialize(op, src)
}

// fragmentInits converts the initial values of loop-carried accumulators
// to the native layout when the loop yields a vector.mma result for them,
// so the loop carries tensor-core registers instead of exchanging layouts
// on every iteration.
func (e *emitter) fragmentInits(op *loom.Op, inits []*val) ([]*val, error) {
	body := op.Regions[0]
	if len(body.Ops) == 0 || e.fragWave() != loom.FragmentSubgroupSize {
		return inits, nil
	}
	y := body.Ops[len(body.Ops)-1]
	if y.Name != "scf.yield" {
		return inits, nil
	}
	out := inits
	for i, o := range y.Operands {
		if i >= len(inits) || inits[i].frag != nil || inits[i].vec == nil || o.Value == nil || o.Value.Def == nil || o.Value.Def.Name != "vector.mma" {
			continue
		}
		f := mmaResultFrag(o.Value.Def)
		if f == nil {
			continue
		}
		v, err := e.nativize(op, inits[i], f)
		if err != nil {
			return nil, err
		}
		if &out[0] == &inits[0] {
			out = append([]*val(nil), inits...)
		}
		out[i] = v
	}
	return out, nil
}

// mmaResultFrag is the native layout of a subgroup vector.mma's result,
// or nil for a dense one.
func mmaResultFrag(op *loom.Op) *nativeFrag {
	if len(op.Types) != 3 {
		return nil
	}
	var counts [3]int
	for i, t := range op.Types {
		if t == nil || t.Kind != loom.TypeVector {
			return nil
		}
		n := 1
		for _, d := range t.Dims {
			n *= int(d.Size)
		}
		counts[i] = n
	}
	// Only wave-32 fragments have a native (tensor-core) form.
	m, n, _, sub, err := loom.MMAShape(counts[0], counts[1], counts[2], loom.FragmentSubgroupSize)
	if err != nil || !sub {
		return nil
	}
	l, err := loom.NewFragmentLayout(loom.FragmentResult, int64(m), int64(n), int64(counts[2]), loom.FragmentSubgroupSize)
	if err != nil {
		return nil
	}
	return &nativeFrag{lay: l, elem: op.Types[2].Elem}
}
