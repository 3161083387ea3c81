package ptx

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Element accesses at addresses not proven naturally aligned.
//
// NVIDIA GPUs fault on a misaligned load or store (the context is then
// lost), while the CPU executor reads any byte offset. A view's base is
// proven aligned when it is a buffer parameter (Dispatch binds a buffer at
// a multiple of its views' element size: loom.ParamAccess.Alignment), an
// alloca, or either of those offset by a multiple of the element size
// (constants, `where [mul(…)]` facts, element indices). Through any other
// view an access tests its address: aligned, the one plain instruction
// runs; misaligned, the element moves byte by byte, little-endian, as the
// CPU executor does. Both branches are predicated, so the aligned case
// costs three extra instructions and no divergence.

// needsGuard reports whether accesses through v may be misaligned.
func needsGuard(v *val) bool {
	size := int64(carrierBytes(v.elem))
	return size > 1 && classOf(v.elem) != cPred && max(v.nat, 1) < size
}

// byteAddr is addr (a register, or register+immediate) plus k bytes.
func byteAddr(addr string, k int) string {
	if k == 0 {
		return addr
	}
	if base, off, ok := strings.Cut(addr, "+"); ok {
		n, err := strconv.Atoi(off)
		if err == nil {
			return fmt.Sprintf("%s+%d", base, n+k)
		}
	}
	return fmt.Sprintf("%s+%d", addr, k)
}

// alignPreds returns the predicates under which the plain access (aligned)
// and the byte-wise one (misaligned) run, each also under mask when set.
func (e *emitter) alignPreds(addr string, size int, mask string) (plain, bytewise string) {
	a := addr
	if base, off, ok := strings.Cut(addr, "+"); ok {
		a = e.addrLike(base)
		e.ins("add.s%s %s, %s, %s", addrBits(base)[1:], a, base, off)
	}
	t := e.addrLike(a)
	al := e.newReg(cPred)
	e.ins("and.%s %s, %s, %d", addrBits(a), t, a, size-1)
	e.ins("setp.eq.%s %s, %s, 0", addrBits(a), al, t)
	mis := e.newReg(cPred)
	e.ins("not.pred %s, %s", mis, al)
	if mask == "" {
		return al, mis
	}
	p, q := e.newReg(cPred), e.newReg(cPred)
	e.ins("and.pred %s, %s, %s", p, al, mask)
	e.ins("and.pred %s, %s, %s", q, mis, mask)
	return p, q
}

// guardedLoad loads an element of type t at addr into out, where mask
// (a predicate register, or "" for always) holds.
func (e *emitter) guardedLoad(t *loom.Type, space, qual, addr, mask string, out *val) {
	size := carrierBytes(t)
	plain, bw := e.alignPreds(addr, size, mask)
	e.ins("@%s ld%s.%s.%s %s, [%s]", plain, qual, space, ldType(t), out.reg, addr)
	// Little-endian words of up to four bytes each.
	words := make([]string, (size+3)/4)
	for w := range words {
		acc := e.newReg(cR)
		for k := 0; k < min(4, size-4*w); k++ {
			b := e.newReg(cR)
			e.ins("@%s ld%s.%s.u8 %s, [%s]", bw, qual, space, b, byteAddr(addr, 4*w+k))
			if k == 0 {
				e.ins("@%s mov.b32 %s, %s", bw, acc, b)
				continue
			}
			e.ins("@%s bfi.b32 %s, %s, %s, %d, 8", bw, acc, b, acc, 8*k)
		}
		words[w] = acc
	}
	switch {
	case size == 8:
		e.ins("@%s mov.b64 %s, {%s, %s}", bw, out.reg, words[0], words[1])
	case classOf(t) == cH:
		e.ins("@%s cvt.u16.u32 %s, %s", bw, out.reg, words[0])
	case size == 2:
		e.ins("@%s bfe.s32 %s, %s, 0, 16", bw, out.reg, words[0])
	default:
		e.ins("@%s mov.b32 %s, %s", bw, out.reg, words[0])
	}
}

// guardedStore stores x of type t at addr where mask ("" for always) holds.
func (e *emitter) guardedStore(t *loom.Type, space, qual, addr, mask string, x *val) {
	size := carrierBytes(t)
	plain, bw := e.alignPreds(addr, size, mask)
	e.ins("@%s st%s.%s.%s [%s], %s", plain, qual, space, stType(t), addr, x.reg)
	var words []string
	switch {
	case size == 8:
		lo, hi := e.newReg(cR), e.newReg(cR)
		e.ins("mov.b64 {%s, %s}, %s", lo, hi, x.reg)
		words = []string{lo, hi}
	case classOf(t) == cH:
		w := e.newReg(cR)
		e.ins("cvt.u32.u16 %s, %s", w, x.reg)
		words = []string{w}
	case classOf(t) == cF:
		w := e.newReg(cR)
		e.ins("mov.b32 %s, %s", w, x.reg)
		words = []string{w}
	default:
		words = []string{x.reg}
	}
	for k := 0; k < size; k++ {
		b := words[k/4]
		if k%4 != 0 {
			b = e.newReg(cR)
			e.ins("shr.b32 %s, %s, %d", b, words[k/4], 8*(k%4))
		}
		e.ins("@%s st%s.%s.u8 [%s], %s", bw, qual, space, byteAddr(addr, k), b)
	}
}

// loadElem loads one element of view v at addr, guarded when v's
// alignment is not proven.
func (e *emitter) loadElem(v *val, qual, addr string) *val {
	if !needsGuard(v) {
		return e.loadInto(v.elem, v.space, qual, addr)
	}
	e.noteGuard(v)
	out := e.newVal(v.elem)
	e.guardedLoad(v.elem, v.space, qual, addr, "", out)
	return out
}

// storeElem stores x into one element of view v at addr, guarded when v's
// alignment is not proven.
func (e *emitter) storeElem(v *val, qual, addr string, x *val) {
	if !needsGuard(v) {
		e.storeFrom(v.elem, v.space, qual, addr, x)
		return
	}
	e.noteGuard(v)
	e.guardedStore(v.elem, v.space, qual, addr, "", x)
}
