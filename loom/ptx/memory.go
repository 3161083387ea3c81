package ptx

import (
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

func (e *emitter) memory(op *loom.Op, rest string) error {
	switch op.Name {
	case "buffer.view":
		return e.bufferView(op)
	case "buffer.alloca":
		return e.alloca(op)
	case "buffer.assume.noalias", "buffer.assume.alignment", "buffer.assume.memory_space", "buffer.assume.same_root":
		for i, r := range op.Results {
			if i < len(op.Operands) {
				v, err := e.get(op.Operands[i])
				if err != nil {
					return err
				}
				if op.Name == "buffer.assume.noalias" && v.ro && !v.nc {
					// A read-only parameter no other root aliases: read
					// through the non-coherent path from here on.
					c := *v
					c.nc = true
					v = &c
				}
				e.vals[r] = v
			}
		}
		return nil
	case "view.subview":
		return e.subview(op)
	case "view.prefetch":
		return e.prefetch(op)
	case "view.refine":
		if err := need(op, 1); err != nil {
			return err
		}
		v, err := e.view(op.Operands[0])
		if err != nil {
			return err
		}
		out := &val{t: resultType(op, 0), reg: v.reg, space: v.space, elem: v.elem, strides: v.strides, align: v.align, alignPred: v.alignPred, nat: v.nat, nc: v.nc}
		if err := e.dimsOf(out, out.t, op.Pos); err != nil {
			return err
		}
		if len(out.dims) != len(v.strides) {
			return unsupported(op, "refining to a different rank")
		}
		return e.define(op, 0, out)
	case "view.load":
		return e.load(op)
	case "view.store":
		return e.store(op)
	case "view.atomic.rmw", "view.atomic.reduce", "view.atomic.cmpxchg", "view.atomic.load", "view.atomic.store":
		return e.atomic(op, rest[len("atomic."):])
	}
	return unsupported(op, "op is not lowered to PTX")
}

// view returns an operand that must be a view.
func (e *emitter) view(o *loom.Operand) (*val, error) {
	v, err := e.get(o)
	if err != nil {
		return nil, err
	}
	if v.elem == nil || v.strides == nil {
		return nil, invalid(o.Pos, "%%%s is not a view", o.Name)
	}
	return v, nil
}

// dimsOf binds the dims of a view type, static or named by SSA values.
func (e *emitter) dimsOf(v *val, t *loom.Type, pos loom.Pos) error {
	if t == nil || t.Kind != loom.TypeView || t.Elem == nil {
		return invalid(pos, "expected a view type, have %s", typeName(t))
	}
	if _, strided := loom.LayoutStrides(t); !loom.DenseLayout(t) && !strided {
		return fmt.Errorf("%s: %w: view layout %s (only dense and encoding.layout.strided views are lowered)", pos, ErrUnsupported, t.Layout)
	}
	if !supportedScalar(t.Elem) && !isF8(t.Elem) {
		return fmt.Errorf("%s: %w: view element type %s", pos, ErrUnsupported, t.Elem)
	}
	v.elem = t.Elem
	v.dims = nil
	for _, d := range t.Dims {
		if d.Value == nil {
			v.dims = append(v.dims, e.constInt(indexType, d.Size))
			continue
		}
		dv, err := e.get(d.Value)
		if err != nil {
			return err
		}
		if dv.t == nil || classOf(dv.t) != cR {
			return fmt.Errorf("%s: %w: view dimension %%%s of type %s", pos, ErrUnsupported, d.Value.Name, typeName(dv.t))
		}
		v.dims = append(v.dims, dv)
	}
	return nil
}

// shapeView sets dims and dense row-major element strides from type t.
func (e *emitter) shapeView(v *val, t *loom.Type, pos loom.Pos) error {
	if err := e.dimsOf(v, t, pos); err != nil {
		return err
	}
	n := len(v.dims)
	v.strides = make([]*val, n)
	if n == 0 {
		return nil
	}
	if ops, strided := loom.LayoutStrides(t); strided {
		// encoding.layout.strided: each axis's element stride as written.
		for k, o := range ops {
			s, err := e.get(o)
			if err != nil {
				return err
			}
			if s.t == nil || classOf(s.t) != cR {
				return fmt.Errorf("%s: %w: stride %d of the layout has type %s, want index", pos, ErrUnsupported, k, typeName(s.t))
			}
			v.strides[k] = s
		}
		return nil
	}
	v.strides[n-1] = e.constInt(indexType, 1)
	for k := n - 2; k >= 0; k-- {
		next, d := v.strides[k+1], v.dims[k+1]
		if next.known && d.known {
			v.strides[k] = e.constInt(indexType, next.ci*d.ci)
			continue
		}
		s := e.newVal(indexType)
		e.ins("mul.lo.s32 %s, %s, %s", s.reg, next.reg, d.reg)
		s.p2 = min(pow2Of(next)*pow2Of(d), 1<<30)
		v.strides[k] = s
	}
	return nil
}

func (e *emitter) bufferView(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	a, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	b, off := a[0], a[1]
	if b.space == "" {
		return invalid(op.Pos, "buffer.view of a non-buffer value")
	}
	if off.t == nil || classOf(off.t) != cRd {
		return invalid(op.Pos, "buffer.view offset must be an offset, have %s", typeName(off.t))
	}
	out := &val{t: resultType(op, 0), space: b.space, reg: b.reg, alignPred: b.alignPred, nc: b.nc}
	out.align = min(b.align, pow2Of(off)) // off counts bytes
	out.nat = min(b.nat, pow2Of(off))
	switch {
	case off.known && off.ci == 0:
	case off.known:
		out.reg = e.addrLike(b.reg)
		e.addrAddImm(out.reg, b.reg, off.ci)
	default:
		out.reg = e.addrLike(b.reg)
		e.addrAddOffset(out.reg, b.reg, off.reg)
	}
	if err := e.shapeView(out, out.t, op.Pos); err != nil {
		return err
	}
	out.swz = e.swz[op.Results[0]]
	return e.define(op, 0, out)
}

func (e *emitter) alloca(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	n, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	if !n.known || n.ci < 0 {
		return unsupported(op, "size %%%s is not a compile-time constant", op.Operands[0].Name)
	}
	align := int64(16)
	if a := op.Attr("align"); a != nil && a.Value.Kind == loom.LitInt && a.Value.Int > 0 {
		align = a.Value.Int
	}
	if len(op.Results) == 1 && e.wgp.atomBuffer(op.Results[0]) {
		// wgmma descriptors address its swizzled tiles by atoms: a
		// stricter alignment than asked for is still the one asked for.
		align = max(align, wgmmaAtomBytes)
	}
	if len(e.allocaReplay) > 0 {
		d := e.allocaReplay[0]
		e.allocaReplay = e.allocaReplay[1:]
		out := &val{t: resultType(op, 0), reg: e.addrSymbol(d.space, d.name), space: d.space, align: d.align, nat: d.align}
		return e.define(op, 0, out)
	}
	size := max(n.ci, 1)
	var space, prefix string
	switch op.Param {
	case "workgroup":
		space, prefix = "shared", "__loom_smem"
		e.sharedSize = int((int64(e.sharedSize)+align-1)/align*align + size)
	case "private":
		space, prefix = "local", "__loom_local"
	default:
		return unsupported(op, "alloca in memory space %q", op.Param)
	}
	name := fmt.Sprintf("%s_%d", prefix, len(e.statics))
	e.statics = append(e.statics, fmt.Sprintf(".%s .align %d .b8 %s[%d]", space, align, name, size))
	e.allocas = append(e.allocas, allocaDecl{space, name, align})
	out := &val{t: resultType(op, 0), reg: e.addrSymbol(space, name), space: space, align: align, nat: align}
	return e.define(op, 0, out)
}

// address computes base + Σ idx_k·stride_k·size: for global and local
// views in 64 bits, each index (a 32-bit index) widened by
// mad.wide/mul.wide so the sum does not wrap even when the element offset
// exceeds 2^31; for workgroup views in 32 bits (addr.go).
func (e *emitter) address(op *loom.Op, v *val, idx []*val) (string, error) {
	acc, imm, err := e.addressParts(op, v, idx)
	if err != nil || imm == 0 {
		return acc, err
	}
	n := e.addrLike(acc)
	e.addrAddImm(n, acc, imm)
	return n, nil
}

// addressParts is address as a register and a constant byte offset still
// to add, for callers that add further register terms first.
func (e *emitter) addressParts(op *loom.Op, v *val, idx []*val) (string, int64, error) {
	if len(idx) != len(v.strides) {
		return "", 0, invalid(op.Pos, "%s: %d indices for a rank-%d view", op.Name, len(idx), len(v.strides))
	}
	size := int64(carrierBytes(v.elem))
	acc := v.reg
	// The constant parts of affine indices (addr.go): bytes by known
	// strides, and multiples of run-time strides, added last.
	var imm int64
	type strideTerm struct {
		stride string
		bytes  int64
	}
	var late []strideTerm
	for k, i := range idx {
		if i.t == nil || classOf(i.t) != cR {
			return "", 0, invalid(op.Pos, "%s: index %d has type %s, want index", op.Name, k, typeName(i.t))
		}
		s := v.strides[k]
		if b, off := affineParts(i); off != 0 && !s.wide {
			switch {
			case s.known && s.ci*size <= 1<<30 && s.ci*size >= -1<<30:
				imm += off * s.ci * size
				i = b
			case !s.known:
				late = append(late, strideTerm{s.reg, off * size})
				i = b
			}
		}
		if off, ok := constTerm(i, s, size); ok {
			// A constant term joins the immediate offset (none for 0).
			imm += off
			continue
		}
		n := e.addrLike(acc)
		unsigned := false
		if i.wide || s.wide {
			// A wide index is non-negative, held unsigned: zero-extended
			// against a stride known non-negative.
			if !(s.wide || s.known && s.ci >= 0) || !(i.wide || i.known && i.ci >= 0) {
				return "", 0, unsupported(op, "an index that may exceed 2^31-1 times a stride of unknown sign")
			}
			unsigned = true
		}
		if s.known && s.ci*size <= 1<<30 {
			reg, scale := i.reg, s.ci*size
			if x := i.exact; x != nil && !unsigned && scale%(1<<i.exactShift) == 0 {
				reg, scale = x.reg, scale>>i.exactShift // (x >> k)·scale = x·(scale >> k)
			}
			e.addrMad(n, reg, scale, acc, unsigned)
		} else {
			e.addrMadReg(n, i.reg, s.reg, size, acc, unsigned)
		}
		acc = n
	}
	for _, t := range late {
		n := e.addrLike(acc)
		e.addrMad(n, t.stride, t.bytes, acc, false)
		acc = n
	}
	return acc, imm, nil
}

// constTerm is the byte offset i·s·size of a constant index against a
// constant stride, when both are and it lies within ±2^30.
func constTerm(i, s *val, size int64) (int64, bool) {
	const lim = 1 << 30
	if !i.known || !s.known || i.wide || s.wide || i.ci < -lim || i.ci > lim || s.ci < -lim || s.ci > lim {
		return 0, false
	}
	off := i.ci * s.ci // below 2^60 in magnitude
	if off < -lim || off > lim {
		return 0, false
	}
	off *= size
	return off, off >= -lim && off <= lim
}

func (e *emitter) subview(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.view(op.Operands[0])
	if err != nil {
		return err
	}
	offs, err := e.operands(op, 1)
	if err != nil {
		return err
	}
	var base string
	if v.swz > 0 {
		// One 16-byte chunk of a swizzled tile: contiguous at its
		// permuted place, aligned to 16 there (swizzle.go).
		if len(offs) != 2 {
			return invalid(op.Pos, "view.subview of a swizzled workgroup tile needs a row and a column")
		}
		base, err = e.swizzledChunk(op, v, offs[0], offs[1])
	} else {
		base, err = e.address(op, v, offs)
	}
	if err != nil {
		return err
	}
	out := &val{t: resultType(op, 0), reg: base, space: v.space, strides: v.strides, alignPred: v.alignPred, nc: v.nc}
	out.align = addrAlign(v, offs)
	out.nat = natAlign(v, offs)
	if v.swz > 0 {
		// base + r·P + (c XOR 16·(r mod 8)) with c a multiple of 16 bytes
		// (swizzleUse) and P of 128: the chunk is as aligned as the view
		// up to 16, whatever the column's known alignment says.
		out.align, out.nat = min(max(out.align, v.align), 16), min(max(out.nat, v.nat), 16)
	}
	if err := e.dimsOf(out, out.t, op.Pos); err != nil {
		return err
	}
	if len(out.dims) != len(v.strides) {
		return unsupported(op, "rank-changing subview (%d to %d axes)", len(v.strides), len(out.dims))
	}
	if !sameKind(out.elem, v.elem) {
		return unsupported(op, "subview changing the element type from %s to %s", v.elem, out.elem)
	}
	return e.define(op, 0, out)
}

// loadInto loads one element of type t at addr into a fresh value.
func (e *emitter) loadInto(t *loom.Type, space, qual, addr string) *val {
	out := e.newVal(t)
	if classOf(t) == cPred {
		r := e.newReg(cR)
		e.ins("ld%s.%s.u8 %s, [%s]", qual, space, r, addr)
		e.ins("setp.ne.b32 %s, %s, 0", out.reg, r)
		return out
	}
	e.ins("ld%s.%s.%s %s, [%s]", qual, space, ldType(t), out.reg, addr)
	return out
}

// storeFrom stores x of type t at addr.
func (e *emitter) storeFrom(t *loom.Type, space, qual, addr string, x *val) {
	if classOf(t) == cPred {
		r := e.newReg(cR)
		e.ins("selp.u32 %s, 1, 0, %s", r, x.reg)
		e.ins("st%s.%s.u8 [%s], %s", qual, space, addr, r)
		return
	}
	e.ins("st%s.%s.%s [%s], %s", qual, space, stType(t), addr, x.reg)
}

func (e *emitter) load(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.view(op.Operands[0])
	if err != nil {
		return err
	}
	idx, err := e.operands(op, 1)
	if err != nil {
		return err
	}
	addr, err := e.address(op, v, idx)
	if err != nil {
		return err
	}
	qual := ""
	if op.Param == "volatile" || op.HasWord("volatile") {
		qual = ".volatile"
	}
	return e.define(op, 0, e.loadElem(cached(op, v, loom.CacheLoad, qual != ""), qual, addr))
}

// prefetch lowers view.prefetch, a hint with no effect on results (the
// CPU executor ignores it): on a view of global memory, PTX prefetch of
// the element's cache line into L1 (locality = l1) or L2 (l2, l3, none),
// where the issuing invocation does not wait for it and no register holds
// the data — bytes in flight beyond what registers carry. Loom's prefetch
// may not fault, so it is issued only when every index is below its
// dimension. Other spaces have nothing to prefetch.
func (e *emitter) prefetch(op *loom.Op) error {
	if err := need(op, 1); err != nil {
		return err
	}
	v, err := e.view(op.Operands[0])
	if err != nil {
		return err
	}
	idx, err := e.operands(op, 1)
	if err != nil {
		return err
	}
	if v.space != "global" {
		return nil
	}
	addr, err := e.address(op, v, idx)
	if err != nil {
		return err
	}
	in := ""
	for k, i := range idx {
		if i.known && v.dims[k].known && uint64(i.ci) < uint64(v.dims[k].ci) {
			continue
		}
		p := e.newReg(cPred)
		e.ins("setp.lt.u32 %s, %s, %s", p, i.reg, v.dims[k].reg)
		if in != "" {
			e.ins("and.pred %s, %s, %s", p, p, in)
		}
		in = p
	}
	level := "L2"
	if attrWord(op, "locality") == "l1" {
		level = "L1"
	}
	if in != "" {
		in = "@" + in + " "
	}
	e.ins("%sprefetch.global.%s [%s]", in, level, addr)
	return nil
}

func (e *emitter) store(op *loom.Op) error {
	if err := need(op, 2); err != nil {
		return err
	}
	x, err := e.get(op.Operands[0])
	if err != nil {
		return err
	}
	v, err := e.view(op.Operands[1])
	if err != nil {
		return err
	}
	idx, err := e.operands(op, 2)
	if err != nil {
		return err
	}
	if x.t == nil || classOf(x.t) != classOf(v.elem) {
		return invalid(op.Pos, "storing %s into a view of %s", typeName(x.t), v.elem)
	}
	addr, err := e.address(op, v, idx)
	if err != nil {
		return err
	}
	qual := ""
	if op.Param == "volatile" || op.HasWord("volatile") {
		qual = ".volatile"
	}
	e.storeElem(cached(op, v, loom.CacheStore, qual != ""), qual, addr, x)
	return nil
}

// attrWord reads an enum attribute such as ordering = acq_rel.
func attrWord(op *loom.Op, key string) string {
	a := op.Attr(key)
	if a == nil {
		return ""
	}
	if a.Value.Str != "" {
		return a.Value.Str
	}
	return a.Value.Text
}

// memScope maps a Loom scope to a PTX scope.
func memScope(op *loom.Op) (string, error) {
	switch s := attrWord(op, "scope"); s {
	case "", "device":
		return ".gpu", nil
	case "thread", "subgroup", "workgroup":
		return ".cta", nil
	case "system":
		return ".sys", nil
	default:
		return "", unsupported(op, "scope %q", s)
	}
}

// atomKind maps an atomic kind on element type t to the PTX op and type.
func atomKind(kind string, t *loom.Type) (string, string, bool) {
	if isFloat(t) {
		if isHalf(t) {
			return "", "", false
		}
		switch kind {
		case "addf":
			return "add", t.Name, true
		case "xchgf":
			return "exch", "b" + t.Name[1:], true
		}
		return "", "", false
	}
	bits := intBits(t)
	if bits != 32 && bits != 64 {
		return "", "", false
	}
	b := fmt.Sprint(bits)
	switch kind {
	case "addi", "subi":
		return "add", "u" + b, true
	case "andi", "ori", "xori":
		return kind[:len(kind)-1], "b" + b, true
	case "minsi", "maxsi":
		return kind[:3], "s" + b, true
	case "minui", "maxui":
		return kind[:3], "u" + b, true
	case "xchgi":
		return "exch", "b" + b, true
	}
	return "", "", false
}

func (e *emitter) atomic(op *loom.Op, kind string) error {
	scope, err := memScope(op)
	if err != nil {
		return err
	}
	ordKey := "ordering"
	if kind == "cmpxchg" {
		ordKey = "success_ordering"
	}
	ord := attrWord(op, ordKey)
	if ord == "" {
		ord = "relaxed"
	}
	if ord == "seq_cst" {
		e.ins("fence.sc%s", scope)
		ord = "acq_rel"
	}
	switch ord {
	case "relaxed", "acquire", "release", "acq_rel":
	default:
		return unsupported(op, "ordering %q", ord)
	}
	nval := 1 // value operands before the view
	switch kind {
	case "cmpxchg":
		nval = 2
	case "load":
		nval = 0
	}
	if err := need(op, nval+1); err != nil {
		return err
	}
	xs, err := e.operands(op, 0)
	if err != nil {
		return err
	}
	v, err := e.view(op.Operands[nval])
	if err != nil {
		return err
	}
	addr, err := e.address(op, v, xs[nval+1:])
	if err != nil {
		return err
	}
	t := v.elem
	if v.space == "local" {
		return unsupported(op, "atomics on private memory")
	}
	switch kind {
	case "load", "store":
		if classOf(t) == cPred {
			return unsupported(op, "atomic %s of i1", kind)
		}
		sem := ord
		if sem == "acq_rel" {
			sem = map[string]string{"load": "acquire", "store": "release"}[kind]
		}
		if kind == "load" {
			if sem == "release" {
				return unsupported(op, "atomic load with release ordering")
			}
			return e.define(op, 0, e.loadInto(t, v.space, "."+sem+scope, addr))
		}
		if sem == "acquire" {
			return unsupported(op, "atomic store with acquire ordering")
		}
		e.storeFrom(t, v.space, "."+sem+scope, addr, xs[0])
		return nil
	case "cmpxchg":
		bits := carrierBytes(t) * 8
		if bits != 32 && bits != 64 || classOf(t) == cH {
			return unsupported(op, "compare-exchange on %s", t)
		}
		out := e.newVal(t)
		e.ins("atom.%s%s.%s.cas.b%d %s, [%s], %s, %s", ord, scope, v.space, bits, out.reg, addr, xs[0].reg, xs[1].reg)
		return e.define(op, 0, out)
	}
	k := op.Param
	if _, cas := casFloatKinds[k]; cas && isFloat(t) {
		out, err := e.atomicFloatCAS(op, k, ord, scope, v.space, addr, t, xs[0])
		if err != nil {
			return err
		}
		if kind == "reduce" {
			return nil
		}
		return e.define(op, 0, out)
	}
	m, pt, ok := atomKind(k, t)
	if !ok {
		return unsupported(op, "atomic %s on %s", k, t)
	}
	x := xs[0]
	if k == "subi" {
		n := e.newVal(x.t)
		e.ins("neg.%s %s, %s", sType(x.t), n.reg, x.reg)
		x = n
	}
	if kind == "reduce" && (ord == "relaxed" || ord == "release") {
		e.ins("red.%s%s.%s.%s.%s [%s], %s", ord, scope, v.space, m, pt, addr, x.reg)
		return nil
	}
	out := e.newVal(t)
	e.ins("atom.%s%s.%s.%s.%s %s, [%s], %s", ord, scope, v.space, m, pt, out.reg, addr, x.reg)
	return e.define(op, 0, out)
}
