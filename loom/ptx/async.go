package ptx

import (
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

// Asynchronous copies (LOOM.md 11.9). The shared pass has checked the
// stream (waits in the block, exact newer_groups, nothing touching a
// destination in flight); here a transfer moves the source's bytes as one
// contiguous run:
//
//   - global → workgroup, a multiple of 4 bytes, both addresses aligned to
//     the chunk (16, 8 or 4 bytes: the largest dividing the footprint):
//     cp.async.{ca,cg}.shared.global per chunk; .cg (L2 only, 16-byte
//     chunks) for a device- or system-scope or non-temporal copy;
//   - any other direction or size: ld/st of the same chunks, synchronous
//     (Loom's rules make that indistinguishable);
//   - addresses not provably aligned to the chunk are tested at run time:
//     misaligned, the copy takes the chunks their known alignment allows
//     (4-byte cp.async from a buffer of 4-byte elements, single bytes at
//     worst), so no legal input faults the device;
//   - a view whose footprint is not provably contiguous: element by
//     element (equal element types, at most maxElemCopy elements).
//
// kernel.async.group is cp.async.commit_group (an empty group too: Loom's
// pipeline marker) and kernel.async.wait is cp.async.wait_group
// newer_groups. Groups are per thread in PTX as in Loom; the wait is no
// barrier in either.

// asyncNative are the kernel.async ops lowered here, not by the shared pass.
var asyncNative = []string{"kernel.async.copy", "kernel.async.copy.mask", "kernel.async.gather",
	"kernel.async.gather.mask", "kernel.async.group", "kernel.async.wait"}

func init() {
	for _, n := range asyncNative {
		nativeOps[n] = true
	}
}

// isAsyncOp reports an op async lowers.
func isAsyncOp(name string) bool {
	return loom.IsAsyncTransfer(name) || name == "kernel.async.group" || name == "kernel.async.wait"
}

// maxElemCopy bounds the element-by-element fallback (unrolled).
const maxElemCopy = 64

// maxChunksUnrolled bounds the chunks a contiguous copy emits without a loop.
const maxChunksUnrolled = 32

func (e *emitter) async(op *loom.Op) error {
	switch op.Name {
	case "kernel.async.group":
		e.ins("cp.async.commit_group")
		return nil
	case "kernel.async.wait":
		a := op.Attr("newer_groups")
		if a == nil || a.Value.Kind != loom.LitInt || a.Value.Int < 0 || a.Value.Int > 1<<20 {
			return invalid(op.Pos, "kernel.async.wait needs a non-negative newer_groups")
		}
		e.asyncWait(op, a.Value.Int)
		return nil
	}
	tr, err := loom.ParseAsyncTransfer(op)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	src, err := e.view(op.Operands[0])
	if err != nil {
		return err
	}
	dst, err := e.view(op.Operands[1])
	if err != nil {
		return err
	}
	done := e.newLabel("async_done")
	if tr.Predicate != nil {
		p, err := e.get(op.Operands[2])
		if err != nil {
			return err
		}
		e.ins("@!%s bra %s", p.reg, done)
	}
	zeros := func(n int) []*val {
		z := make([]*val, n)
		for i := range z {
			z[i] = e.constInt(indexType, 0)
		}
		return z
	}
	dstIdx := zeros(len(dst.strides))
	slot := dst.strides
	if tr.Gather {
		dstIdx[0] = e.special("%laneid")
		slot = dst.strides[1:]
	}
	if contiguous(src.dims, src.strides) && contiguous(dst.dims[len(dst.dims)-len(slot):], slot) {
		S, err := e.address(op, src, zeros(len(src.strides)))
		if err != nil {
			return err
		}
		D, err := e.address(op, dst, dstIdx)
		if err != nil {
			return err
		}
		nat := min(natAlign(src, nil), natAlign(dst, dstIdx))
		// Under the buffers' entry alignment predicates (alignBufferParam)
		// the addresses may be aligned further: then those predicates
		// are the run-time test, not the addresses.
		cond := min(addrAlign(src, zeros(len(src.strides))), addrAlign(dst, dstIdx))
		e.copyBytes(op, tr, src.space, dst.space, S, D, nat, cond, e.bothPreds(src.alignPred, dst.alignPred), done)
	} else if err := e.copyElems(op, tr, src, dst, dstIdx); err != nil {
		return err
	}
	e.label(done)
	return nil
}

// bothPreds is a predicate holding when both a and b hold ("" for always).
func (e *emitter) bothPreds(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	p := e.newReg(cPred)
	e.ins("and.pred %s, %s, %s", p, a, b)
	return p
}

// contiguous reports whether a view with these (static) dims and strides
// covers one dense run: every axis longer than 1 has the row-major stride.
func contiguous(dims, strides []*val) bool {
	want := int64(1)
	for k := len(dims) - 1; k >= 0; k-- {
		d := dims[k]
		if !d.known {
			return false
		}
		if d.ci > 1 && (!strides[k].known || strides[k].ci != want) {
			return false
		}
		want *= d.ci
	}
	return true
}

// copyBytes moves tr.Bytes bytes from S (in space ss) to D (in ds);
// nat is a power of two both addresses are known multiples of, cond one
// they are multiples of when the predicate pred holds ("" for always).
func (e *emitter) copyBytes(op *loom.Op, tr *loom.AsyncTransfer, ss, ds, S, D string, nat, cond int64, pred, done string) {
	n := int64(tr.Bytes)
	if n == 0 {
		return
	}
	g := int64(16)
	for n%g != 0 {
		g /= 2
	}
	async := ss == "global" && ds == "shared" && !tr.ToGlobal && g >= 4
	if g > 1 && nat < g {
		// Test the alignment of both addresses; misaligned, copy in the
		// chunks the known alignment allows (bytes at worst).
		slowG := max(min(g, nat), 1)
		slow := e.newLabel("async_bytes")
		if pred != "" && cond >= g {
			e.ins("@!%s bra %s", pred, slow)
		} else {
			p := e.newReg(cPred)
			e.ins("or.pred %s, %s, %s", p, e.addrMisaligned(S, g), e.addrMisaligned(D, g))
			e.ins("@%s bra %s", p, slow)
		}
		e.copyChunks(op, ss, ds, S, D, n, g, async)
		e.ins("bra.uni %s", done)
		e.label(slow)
		e.copyChunks(op, ss, ds, S, D, n, slowG, async && slowG >= 4)
		return
	}
	e.copyChunks(op, ss, ds, S, D, n, g, async)
}

// copyChunks copies n bytes in chunks of g (aligned) bytes: cp.async when
// async, else a load and a store per chunk; unrolled up to
// maxChunksUnrolled chunks, else in a loop.
func (e *emitter) copyChunks(op *loom.Op, ss, ds, S, D string, n, g int64, async bool) {
	one := func(s, d string) {
		if async {
			cache := "ca"
			if g == 16 && (attrWord(op, "cache_scope") == "device" || attrWord(op, "cache_scope") == "system" || attrWord(op, "cache_temporal") == "non_temporal") {
				cache = "cg"
			}
			e.ins("cp.async.%s.shared.global [%s], [%s], %d", cache, d, s, g)
			return
		}
		switch g {
		case 16:
			r := [4]string{e.newReg(cR), e.newReg(cR), e.newReg(cR), e.newReg(cR)}
			e.ins("ld.%s.v4.u32 {%s, %s, %s, %s}, [%s]", ss, r[0], r[1], r[2], r[3], s)
			e.ins("st.%s.v4.u32 [%s], {%s, %s, %s, %s}", ds, d, r[0], r[1], r[2], r[3])
		case 8:
			r := e.newReg(cRd)
			e.ins("ld.%s.u64 %s, [%s]", ss, r, s)
			e.ins("st.%s.u64 [%s], %s", ds, d, r)
		default:
			r := e.newReg(cR)
			w := map[int64]string{4: "u32", 2: "u16", 1: "u8"}[g]
			e.ins("ld.%s.%s %s, [%s]", ss, w, r, s)
			e.ins("st.%s.%s [%s], %s", ds, w, d, r)
		}
	}
	if n/g <= maxChunksUnrolled {
		for off := int64(0); off < n; off += g {
			one(byteAddr(S, int(off)), byteAddr(D, int(off)))
		}
		return
	}
	// for (off = 0; off < n; off += g) one(S+off, D+off)
	// n is a static footprint (far below 2^31): a 32-bit counter.
	off, s, d, p := e.newReg(cR), e.addrLike(S), e.addrLike(D), e.newReg(cPred)
	loop := e.newLabel("async_loop")
	e.ins("mov.u32 %s, 0", off)
	e.label(loop)
	e.addrAddU32(s, S, off)
	e.addrAddU32(d, D, off)
	one(s, d)
	e.ins("add.s32 %s, %s, %d", off, off, g)
	e.ins("setp.lt.u32 %s, %s, %d", p, off, n)
	e.ins("@%s bra %s", p, loop)
}

// copyElems copies element by element in row-major order of both views,
// for views not provably one contiguous run.
func (e *emitter) copyElems(op *loom.Op, tr *loom.AsyncTransfer, src, dst *val, dstIdx []*val) error {
	if !sameKind(src.elem, dst.elem) || carrierBytes(src.elem) != carrierBytes(dst.elem) {
		return unsupported(op, "a copy between %s and %s through views not provably contiguous", src.elem, dst.elem)
	}
	n := tr.Bytes / carrierBytes(src.elem)
	if n > maxElemCopy {
		return unsupported(op, "a copy of %d elements through views not provably contiguous (at most %d)", n, maxElemCopy)
	}
	unravel := func(k int, dims []*val) []*val {
		ix := make([]*val, len(dims))
		for a := len(dims) - 1; a >= 0; a-- {
			ix[a] = e.constInt(indexType, int64(k)%dims[a].ci)
			k /= int(dims[a].ci)
		}
		return ix
	}
	lead := 0 // a gather's lane axis
	if tr.Gather {
		lead = 1
	}
	for k := 0; k < n; k++ {
		sa, err := e.address(op, src, unravel(k, src.dims))
		if err != nil {
			return err
		}
		x := e.loadElem(src, "", sa)
		ix := append(append([]*val(nil), dstIdx[:lead]...), unravel(k, dst.dims[lead:])...)
		da, err := e.address(op, dst, ix)
		if err != nil {
			return err
		}
		e.storeElem(dst, "", da, x)
	}
	return nil
}
