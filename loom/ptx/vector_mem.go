package ptx

import (
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// maxAlign caps alignment facts: 16 bytes is the widest access emitted.
const maxAlign = 16

// pow2Of is the largest power of two (capped) known to divide an integer
// value: exact for constants, else the p2 fact, else 1.
func pow2Of(v *val) int64 {
	if v.known {
		if v.ci == 0 {
			return 1 << 30
		}
		c := v.ci
		if c < 0 {
			c = -c
		}
		return min(c&-c, 1<<30)
	}
	return max(v.p2, 1)
}

// setP2 records the power-of-two divisor of an integer op's result from
// its operands; the facts survive 32-bit wrapping (2^32 is a multiple).
func setP2(rest string, out *val, a []*val) {
	if out.known || len(a) < 2 {
		return
	}
	x, y := pow2Of(a[0]), pow2Of(a[1])
	switch rest {
	case "add", "sub", "addi", "subi":
		out.p2 = min(x, y)
	case "mul", "muli":
		out.p2 = min(x*y, 1<<30)
	case "min", "max", "minsi", "maxsi", "minui", "maxui":
		// The result is one of the operands.
		out.p2 = min(x, y)
	case "shli":
		if a[1].known && a[1].ci >= 0 && a[1].ci < 30 {
			out.p2 = min(x<<a[1].ci, 1<<30)
		}
	case "madd", "fmai":
		if len(a) == 3 {
			out.p2 = min(min(x*y, 1<<30), pow2Of(a[2]))
		}
	case "shrui", "shrsi":
		// A right shift by k of a multiple of 2^(k+m) is a multiple of
		// 2^m: the low k+m bits were zero (in two's complement too).
		if c := a[1].ci; a[1].known && c >= 0 && c < 30 && x > 1<<c {
			out.p2 = x >> c
		}
	case "div", "divui", "divsi":
		// An exact division by a known power of two keeps the rest.
		if c := a[1].ci; a[1].known && c > 0 && c&(c-1) == 0 && x%c == 0 {
			out.p2 = x / c
		}
	}
}

// usesVectorMemory reports whether the kernel (or a function it calls)
// has vector loads or stores: only then do buffer parameters get the
// run-time alignment predicate.
func usesVectorMemory(p *loom.Program, r *loom.Region, seen map[string]bool) bool {
	if r == nil {
		return false
	}
	for _, op := range r.Ops {
		if loom.IsAsyncTransfer(op.Name) {
			return true // chunked copies use the same entry predicate
		}
		switch op.Name {
		case "vector.load", "vector.store":
			return true
		case "func.apply", "template.apply", "template.call":
			// Providers are chosen later; the predicate costs nothing
			// where no access ends up using it.
			return true
		case "func.call":
			if !seen[op.Symbol] {
				seen[op.Symbol] = true
				if f := p.Func(op.Symbol); f != nil && usesVectorMemory(p, f.Body, seen) {
					return true
				}
			}
		}
		for _, sub := range op.Regions {
			if usesVectorMemory(p, sub, seen) {
				return true
			}
		}
	}
	return false
}

// launchFacts records `where [mul(%x, k)]` on launch scalars as
// power-of-two divisors: the generated Dispatch checks these predicates
// before launch, so a row stride known to be a multiple of 4 elements
// lets vector rows be proven 16-byte aligned.
func (e *emitter) launchFacts() {
	for _, p := range e.k.LaunchWhere {
		if p.Name != "mul" || len(p.Args) != 2 || p.Args[0].Value == nil || p.Args[1].Lit == nil || p.Args[1].Lit.Kind != loom.LitInt {
			continue
		}
		v, ok := e.vals[p.Args[0].Value]
		k := p.Args[1].Lit.Int
		if !ok || v.t == nil || !v.t.IsScalar() || isFloat(v.t) || k <= 0 {
			continue
		}
		v.p2 = max(v.p2, min(k&-k, 1<<30))
	}
}

// alignBufferParam gives a buffer parameter its alignment fact. Device
// allocations are 256-byte aligned, but a runtime Region may bind a
// sub-range at any element-aligned offset, so the 16-byte fact holds only
// under a predicate tested once at entry; vector accesses fall back to
// scalar ones when it fails.
func (e *emitter) alignBufferParam(v *val) {
	t := e.newReg(cRd)
	p := e.newReg(cPred)
	e.ins("and.b64 %s, %s, %d", t, v.reg, maxAlign-1)
	e.ins("setp.eq.b64 %s, %s, 0", p, t)
	v.align, v.alignPred = maxAlign, p
}

// addrAlign is the alignment of base + Σ idx_k·stride_k·size relative to
// the view's own alignment fact.
func addrAlign(v *val, idx []*val) int64 {
	size := int64(carrierBytes(v.elem))
	a := min(max(v.align, 1), maxAlign)
	for k, i := range idx {
		if k >= len(v.strides) {
			break
		}
		term := min(pow2Of(i)*pow2Of(v.strides[k]), 1<<30) * size
		a = min(a, term)
	}
	return a
}

// natAlign is natural-alignment fact of base + Σ idx_k·stride_k·size: the
// view's, lowered by index terms that are not multiples of it.
func natAlign(v *val, idx []*val) int64 {
	size := int64(carrierBytes(v.elem))
	a := min(max(v.nat, 1), 1<<30)
	for k, i := range idx {
		if k >= len(v.strides) {
			break
		}
		a = min(a, min(pow2Of(i)*pow2Of(v.strides[k]), 1<<30)*size)
	}
	return a
}

// vecMemory lowers vector.load/store and their .mask forms. The vector's
// axes map onto the view's trailing axes. Each row of the vector (its
// last axis) is contiguous in a dense view; unmasked rows of 32- or 64-bit
// elements go through ld/st .v4/.v2 when the address is provably aligned
// (under the buffers' run-time alignment predicate, with a scalar
// fallback), and component by component otherwise.
func (e *emitter) vecMemory(op *loom.Op, rest string) error {
	store := strings.HasPrefix(rest, "store")
	masked := strings.HasSuffix(rest, ".mask")
	at := 0
	if store {
		at = 1
	}
	if err := need(op, at+1); err != nil {
		return err
	}
	v, err := e.view(op.Operands[at])
	if err != nil {
		return err
	}
	rank := len(v.strides)
	if len(op.Operands) < at+1+rank {
		return invalid(op.Pos, "%s: %d indices for a rank-%d view", op.Name, len(op.Operands)-at-1, rank)
	}
	idx, err := e.operands(op, at+1)
	if err != nil {
		return err
	}
	after := idx[rank:]
	idx = idx[:rank]
	var x, mask, pass *val
	var vt *loom.Type
	if store {
		if x, err = e.vecOperand(op.Operands[0]); err != nil {
			return err
		}
		vt = x.t
	} else {
		vt = vecResultType(op)
	}
	if masked {
		want := 2
		if store {
			want = 1
		}
		if len(after) < want {
			return invalid(op.Pos, "%s needs a mask%s", op.Name, map[bool]string{false: " and a pass-through value", true: ""}[store])
		}
		mask = after[0]
		if !store {
			pass = after[1]
		}
	}
	shape, n, err := vectorShape(op, vt)
	if err != nil {
		return err
	}
	if len(shape) > rank {
		return invalid(op.Pos, "%s: vector rank %d exceeds view rank %d", op.Name, len(shape), rank)
	}
	if !sameKind(vt.Elem, v.elem) {
		return invalid(op.Pos, "%s: %s does not match a view of %s", op.Name, vt, v.elem)
	}
	for _, m := range []*val{x, mask, pass} {
		if m != nil && (m.vec == nil || len(m.vec) != n) {
			return invalid(op.Pos, "%s: operand shape does not match %s", op.Name, vt)
		}
	}
	base, err := e.address(op, v, idx)
	if err != nil {
		return err
	}
	if n == 0 {
		return e.define(op, 0, vecVal(vt, shape, nil))
	}
	acc := loom.CacheLoad
	if store {
		acc = loom.CacheStore
	}
	v = cached(op, v, acc, false)
	size := int64(carrierBytes(v.elem))
	baseAlign := addrAlign(v, idx)
	row := int64(1)
	if len(shape) > 0 {
		row = shape[len(shape)-1]
	}
	lastStride := v.strides[rank-1]
	contiguous := lastStride.known && lastStride.ci == 1
	comps := make([]*val, n)
	for r := 0; r < n/int(row); r++ {
		// Address of the row start: the leading vector axes step through
		// the view's trailing axes (all but the last).
		addr, rowAlign := base, baseAlign
		rem := int64(r)
		for k := len(shape) - 2; k >= 0; k-- {
			pos := rem % shape[k]
			rem /= shape[k]
			if pos == 0 {
				continue
			}
			s := v.strides[rank-len(shape)+k]
			next := e.addrLike(addr)
			if s.known {
				e.addrAddImm(next, addr, pos*s.ci*size)
				rowAlign = min(rowAlign, pow2Of(&val{known: true, ci: pos * s.ci * size}))
			} else {
				e.addrMad(next, s.reg, pos*size, addr, false)
				rowAlign = min(rowAlign, pow2Of(s)*pow2Of(&val{known: true, ci: pos * size}))
			}
			addr = next
		}
		for j := int64(0); j < row; {
			c := r*int(row) + int(j)
			elemAddr := func(j int64) string {
				if contiguous {
					if j == 0 {
						return addr
					}
					return fmt.Sprintf("%s+%d", addr, j*size)
				}
				t := e.addrLike(addr)
				e.addrMad(t, lastStride.reg, j*size, addr, false)
				return t
			}
			if !store {
				if wn := packedWords(v, row-j, size, rowAlign, j, contiguous && !masked && !needsGuard(v)); wn > 0 {
					e.packedLoad(v, comps, c, int(wn), addr, j*size)
					j += wn * 4 / size
					continue
				}
			}
			if w := e.vectorWidth(v, row-j, size, rowAlign, j, contiguous && !masked && !needsGuard(v)); w > 1 {
				e.wideAccess(v, store, x, comps, c, int(w), addr, j*size)
				j += w
				continue
			}
			ea := elemAddr(j)
			switch {
			case store && mask != nil && needsGuard(v):
				e.noteGuard(v)
				e.guardedStore(v.elem, v.space, "", ea, mask.vec[c].reg, x.vec[c])
			case store && mask != nil:
				e.storePred(v.elem, v.space, ea, x.vec[c], mask.vec[c])
			case store:
				e.storeElem(v, "", ea, x.vec[c])
			case mask != nil:
				out := &val{t: v.elem, reg: e.newReg(classOf(v.elem))}
				e.mov(out, pass.vec[c])
				if needsGuard(v) {
					e.noteGuard(v)
					e.guardedLoad(v.elem, v.space, "", ea, mask.vec[c].reg, out)
				} else {
					e.loadPred(out, v.space, ea, mask.vec[c])
				}
				comps[c] = out
			default:
				comps[c] = e.loadElem(v, "", ea)
			}
			j++
		}
	}
	if store {
		return nil
	}
	return e.define(op, 0, vecVal(vt, shape, comps))
}

// vectorWidth picks how many contiguous components (4, 2 or 1) the access
// at element j of a row can move in one instruction: 32- or 64-bit
// elements, at most 16 bytes, and an address provably a multiple of the
// access size.
func (e *emitter) vectorWidth(v *val, left, size, rowAlign, j int64, ok bool) int64 {
	if !ok || (size != 4 && size != 8) || classOf(v.elem) == cPred || v.space == "local" {
		return 1
	}
	for _, w := range []int64{4, 2} {
		bytes := w * size
		if w > left || bytes > maxAlign {
			continue
		}
		if rowAlign >= bytes && (j*size)%bytes == 0 {
			return w
		}
	}
	return 1
}

// packedWords is how many 32-bit words (4, 2 or 1) one load takes for the
// 8- or 16-bit integer or 16-bit float lanes j… of a contiguous row (left
// lanes remain), or 0 where those lanes load one by one: a vector<32xbf16>
// row is four 16-byte loads, not 32 two-byte ones.
func packedWords(v *val, left, size, rowAlign, j int64, ok bool) int64 {
	if !ok || (size != 1 && size != 2) || v.space == "local" || !packable(v.elem) {
		return 0
	}
	for _, wn := range []int64{4, 2, 1} {
		bytes := 4 * wn
		if bytes/size > left || bytes > maxAlign {
			continue
		}
		if rowAlign >= bytes && (j*size)%bytes == 0 {
			return wn
		}
	}
	return 0
}

// packable reports element types packedLoad splits out of words: i8, i16,
// f16 and bf16 (not i1, nor the f8 formats).
func packable(t *loom.Type) bool {
	switch {
	case t.Kind == loom.TypeInt:
		return t.Bits == 8 || t.Bits == 16
	case t.Kind == loom.TypeFloat:
		return t.Name == "f16" || t.Name == "bf16"
	}
	return false
}

// packedLoad loads wn words at addr+off and splits them into the lanes
// c… of comps (little-endian: lane 0 is the low bits), as ld.s8/ld.s16
// would have loaded each (sign-extended integers, 16-bit float registers).
// Under a run-time alignment predicate the lanes load one by one where it
// fails. Byte lanes split out of a word remember it (val.word), so a
// vector.dot4i of four of them passes the word to dp4a as loaded; only
// where no fallback can have loaded them instead.
func (e *emitter) packedLoad(v *val, comps []*val, c, wn int, addr string, off int64) {
	t := v.elem
	size := carrierBytes(t)
	at := addr
	if off != 0 {
		at = fmt.Sprintf("%s+%d", addr, off)
	}
	words := make([]string, wn)
	for i := range words {
		words[i] = e.newReg(cR)
	}
	guard, fallback := "", ""
	if v.alignPred != "" {
		guard, fallback = "@"+v.alignPred+" ", "@!"+v.alignPred+" "
	}
	if wn == 1 {
		e.ins("%sld.%s.b32 %s, [%s]", guard, v.space, words[0], at)
	} else {
		e.ins("%sld.%s.v%d.b32 {%s}, [%s]", guard, v.space, wn, strings.Join(words, ", "), at)
	}
	per := 4 / size
	for i := 0; i < wn*per; i++ {
		comps[c+i] = e.newVal(t)
	}
	for w, word := range words {
		lane := func(k int) *val { return comps[c+w*per+k] }
		switch {
		case classOf(t) == cH:
			e.ins("%smov.b32 {%s, %s}, %s", guard, lane(0).reg, lane(1).reg, word)
			if fallback == "" {
				lane(0).word, lane(1).word, lane(1).wordShift = word, word, 16
			}
		default:
			for k := 0; k < per; k++ {
				e.ins("%sbfe.s32 %s, %s, %d, %d", guard, lane(k).reg, word, 8*size*k, 8*size)
				if fallback == "" {
					lane(k).word, lane(k).wordShift = word, int(8*size)*k
				}
			}
		}
	}
	if fallback == "" {
		return
	}
	for i := 0; i < wn*per; i++ {
		e.ins("%sld.%s.%s %s, [%s]", fallback, v.space, ldType(t), comps[c+i].reg, byteAddr(at, i*size))
	}
}

// wideAccess emits one ld/st .v2/.v4 of components c..c+w-1 at addr+off;
// when the view's alignment rests on a run-time predicate, the scalar
// accesses run instead where it fails.
func (e *emitter) wideAccess(v *val, store bool, x *val, comps []*val, c, w int, addr string, off int64) {
	t := v.elem
	at := addr
	if off != 0 {
		at = fmt.Sprintf("%s+%d", addr, off)
	}
	regs := make([]string, w)
	for i := range regs {
		if store {
			regs[i] = x.vec[c+i].reg
		} else {
			comps[c+i] = e.newVal(t)
			regs[i] = comps[c+i].reg
		}
	}
	list := "{" + strings.Join(regs, ", ") + "}"
	guard, fallback := "", ""
	if v.alignPred != "" {
		guard, fallback = "@"+v.alignPred+" ", "@!"+v.alignPred+" "
	}
	size := int64(carrierBytes(t))
	if store {
		e.ins("%sst.%s.v%d.%s [%s], %s", guard, v.space, w, stType(t), at, list)
	} else {
		e.ins("%sld.%s.v%d.%s %s, [%s]", guard, v.space, w, ldType(t), list, at)
	}
	if fallback == "" {
		return
	}
	for i := range regs {
		a := addr
		if o := off + int64(i)*size; o != 0 {
			a = fmt.Sprintf("%s+%d", addr, o)
		}
		if store {
			e.ins("%sst.%s.%s [%s], %s", fallback, v.space, stType(t), a, regs[i])
		} else {
			e.ins("%sld.%s.%s %s, [%s]", fallback, v.space, ldType(t), regs[i], a)
		}
	}
}

// loadPred loads into out only where the mask component is set.
func (e *emitter) loadPred(out *val, space, addr string, m *val) {
	if classOf(out.t) == cPred {
		r := e.newReg(cR)
		e.ins("selp.u32 %s, 1, 0, %s", r, out.reg)
		e.ins("@%s ld.%s.u8 %s, [%s]", m.reg, space, r, addr)
		e.ins("setp.ne.b32 %s, %s, 0", out.reg, r)
		return
	}
	e.ins("@%s ld.%s.%s %s, [%s]", m.reg, space, ldType(out.t), out.reg, addr)
}

// storePred stores x only where the mask component is set.
func (e *emitter) storePred(t *loom.Type, space, addr string, x, m *val) {
	if classOf(t) == cPred {
		r := e.newReg(cR)
		e.ins("selp.u32 %s, 1, 0, %s", r, x.reg)
		e.ins("@%s st.%s.u8 [%s], %s", m.reg, space, addr, r)
		return
	}
	e.ins("@%s st.%s.%s [%s], %s", m.reg, space, stType(t), addr, x.reg)
}
