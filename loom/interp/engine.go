package interp

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// The engines below run one element-wise op over every element of its
// result register (all lanes, active or not: inactive lanes compute
// harmless garbage, which is cheaper than testing the mask). Checks that can
// fail — overflow, division by zero, shift range — only fail for elements of
// active lanes.

// check is a failure test on the operands (pre) of an int op.
type check struct {
	bad   func(x, y int64) bool
	class error
	what  string
}

// postI fixes up int results: wrap to an n-bit type, or range-check a
// carrier.
type postI struct {
	wrap   int // wrap to this many bits (0: none)
	lo, hi int64
	ranged bool
	class  error
	what   string
}

func (c *compiler) postFor(t *loom.Type) postI {
	switch t.Kind {
	case loom.TypeIndex:
		tg := c.k.tgt
		if tg.indexBits >= 64 {
			return postI{}
		}
		return postI{ranged: true, lo: tg.indexMin, hi: tg.indexMax, class: ErrOverflow, what: "index value"}
	case loom.TypeOffset:
		tg := c.k.tgt
		if tg.offsetBits >= 64 {
			return postI{}
		}
		return postI{ranged: true, lo: 0, hi: 1<<tg.offsetBits - 1, class: ErrOverflow, what: "offset value"}
	case loom.TypeInt:
		if t.Bits < 64 {
			return postI{wrap: t.Bits}
		}
	}
	return postI{}
}

func (p postI) apply(fr *frame, op *loom.Op, r *slot, R []int64) error {
	return p.applyAt(fr, op, r, R, 0)
}

// applyAt is apply on R = register[off:].
func (p postI) applyAt(fr *frame, op *loom.Op, r *slot, R []int64, off int) error {
	switch {
	case p.wrap == 1:
		for i, v := range R {
			R[i] = v & 1
		}
	case p.wrap > 0:
		wrapLanes(R, R, p.wrap)
	case p.ranged:
		// One unsigned comparison an element finds whether any lies
		// outside [lo, hi]; only then does the lane-by-lane pass run.
		lo, span := p.lo, uint64(p.hi-p.lo)
		for i, v := range R {
			if uint64(v-lo) > span {
				return p.outside(fr, op, r, R[i:], off+i)
			}
		}
	}
	return nil
}

// outside is applyAt's range check from the first element of R that lies
// outside the carrier: an active lane's traps, an inactive lane's is
// zeroed (its value is never read).
func (p postI) outside(fr *frame, op *loom.Op, r *slot, R []int64, off int) error {
	for i, v := range R {
		if v < p.lo || v > p.hi {
			if fr.elemActive(r, i+off) {
				return newTrap(op, fr.laneOf(r, i+off), p.class, "%s %d does not fit the %d-bit carrier", p.what, v, carrierBits(p.lo, p.hi))
			}
			R[i] = 0
		}
	}
	return nil
}

// wrapLanes sets R to A's elements wrapped to a width of 2–63 bits
// (sign-extended): four at a time with AVX2 where the CPU has it, else one
// sign-extending move per element for 32, 16 and 8 bits (the shift pair
// of the other widths costs several where the count is not a constant).
func wrapLanes(R, A []int64, bits int) {
	A = A[:len(R)]
	if hasAVX2 && len(R) >= 4 {
		n := len(R) &^ 3
		wrapAVX2(R[:n], A[:n], 1<<bits-1, 1<<(bits-1))
		R, A = R[n:], A[n:]
	}
	switch bits {
	case 32:
		wrapTo[int32](R, A)
	case 16:
		wrapTo[int16](R, A)
	case 8:
		wrapTo[int8](R, A)
	default:
		s := uint(64 - bits)
		for i, v := range A {
			R[i] = v << s >> s
		}
	}
}

// zextLanes sets R to A's elements masked by m (their low bits, zero
// extended): four at a time with AVX2 where the CPU has it (the wrap loop
// with no sign bit is the mask alone).
func zextLanes(R, A []int64, m uint64) {
	A = A[:len(R)]
	if hasAVX2 && len(R) >= 4 {
		n := len(R) &^ 3
		wrapAVX2(R[:n], A[:n], int64(m), 0)
		R, A = R[n:], A[n:]
	}
	for i := range R {
		R[i] = int64(uint64(A[i]) & m)
	}
}

// wrapTo sets R to A's elements wrapped to T's width (sign-extended).
func wrapTo[T int8 | int16 | int32](R, A []int64) {
	A = A[:len(R)]
	for i, v := range A {
		R[i] = int64(T(v))
	}
}

// bounds is the range every value of a register p fixes up lies in: its
// carrier's, or its width's as a sign-extended int (i1 holds 0 and 1).
func (p postI) bounds() (lo, hi int64) {
	switch {
	case p.wrap == 1:
		return 0, 1
	case p.wrap > 0:
		return -1 << (p.wrap - 1), 1<<(p.wrap-1) - 1
	case p.ranged:
		return p.lo, p.hi
	}
	return math.MinInt64, math.MaxInt64
}

// keeps reports whether p leaves every value in [lo, hi] as it is, so an
// instruction whose results all lie there needs no fix-up.
func (p postI) keeps(lo, hi int64) bool {
	plo, phi := p.bounds()
	return lo >= plo && hi <= phi
}

// carrierBits is the width of a carrier holding [lo, hi]: a signed one
// when lo < 0 (an index carrier holds [-2^(n-1), 2^n)), else unsigned.
func carrierBits(lo, hi int64) int {
	if lo < 0 {
		return bitsFor(-(lo + 1))
	}
	n := 0
	for ; hi > 0; hi >>= 1 {
		n++
	}
	return n
}

func bitsFor(hi int64) int {
	n := 0
	for hi > 0 {
		n++
		hi >>= 1
	}
	if n < 63 {
		return n + 1
	}
	return 64
}

func width(fr *frame, r *slot) int {
	if r.uni {
		return r.comps
	}
	return r.comps * fr.L
}

func preCheck(fr *frame, op *loom.Op, r *slot, A, B []int64, chk *check, off int) error {
	for i := range A {
		if chk.bad(A[i], B[i]) && fr.elemActive(r, i+off) {
			return newTrap(op, fr.laneOf(r, i+off), chk.class, "%s (operands %d, %d)", chk.what, A[i], B[i])
		}
	}
	return nil
}

// binI: r = f(a, b) on int registers.
func binI(op *loom.Op, r, a, b *slot, f func(x, y int64) int64, pre *check, post postI) instr {
	if r.uni && r.comps == 1 {
		// One value (loop-uniform index arithmetic): no lane machinery.
		return func(fr *frame) error {
			x, y := fr.I[a.idx][0], fr.I[b.idx][0]
			if pre != nil && pre.bad(x, y) {
				return newTrap(op, -1, pre.class, "%s (operands %d, %d)", pre.what, x, y)
			}
			v := f(x, y)
			switch {
			case post.wrap > 0:
				v = wrapBits(v, post.wrap)
			case post.ranged && (v < post.lo || v > post.hi):
				return newTrap(op, -1, post.class, "%s %d does not fit the %d-bit carrier", post.what, v, carrierBits(post.lo, post.hi))
			}
			fr.I[r.idx][0] = v
			return nil
		}
	}
	return func(fr *frame) error {
		v := !r.uni
		lo, hi := fr.span(r)
		A, B, R := fr.ints(a, v, 0)[lo:hi], fr.ints(b, v, 1)[lo:hi], fr.I[r.idx][lo:hi]
		if pre != nil {
			if err := preCheck(fr, op, r, A, B, pre, lo); err != nil {
				return err
			}
		}
		for i := range R {
			R[i] = f(A[i], B[i])
		}
		return post.applyAt(fr, op, r, R, lo)
	}
}

// unI: r = f(a).
func unI(op *loom.Op, r, a *slot, f func(x int64) int64, post postI) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		A, R := fr.ints(a, !r.uni, 0)[lo:hi], fr.I[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i])
		}
		return post.applyAt(fr, op, r, R, lo)
	}
}

// movI is unI for the identity (casts that keep the value): the result
// type's wrap or range check as the elements are copied, or a plain copy
// where every value of a's type passes it.
func (c *compiler) movI(op *loom.Op, r, a *slot, post postI) instr {
	if post.keeps(c.postFor(a.typ).bounds()) {
		post = postI{}
	}
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		R, A := fr.I[r.idx][lo:hi], fr.ints(a, !r.uni, 0)[lo:hi]
		if post.wrap > 1 {
			wrapLanes(R, A, post.wrap)
			return nil
		}
		copy(R, A)
		return post.applyAt(fr, op, r, R, lo)
	}
}

// zextI is unI for zext(v, n): the low n bits, then the result's fix-up
// where some n-bit value would need one.
func zextI(op *loom.Op, r, a *slot, n int, post postI) instr {
	m := zextMask(n)
	if n < 64 && post.keeps(0, int64(m)) {
		post = postI{}
	}
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		A, R := fr.ints(a, !r.uni, 0)[lo:hi], fr.I[r.idx][lo:hi]
		zextLanes(R, A, m)
		return post.applyAt(fr, op, r, R, lo)
	}
}

// terI: r = f(a, b, c).
func terI(op *loom.Op, r, a, b, c *slot, f func(x, y, z int64) int64, post postI) instr {
	return func(fr *frame) error {
		v := !r.uni
		lo, hi := fr.span(r)
		A, B, C, R := fr.ints(a, v, 0)[lo:hi], fr.ints(b, v, 1)[lo:hi], fr.ints(c, v, 2)[lo:hi], fr.I[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i], B[i], C[i])
		}
		return post.applyAt(fr, op, r, R, lo)
	}
}

// maddI: r = a·b + c (index.madd, scalar.fmai). Where a and b are
// uniform and c varies (row·pitch + tx) it is one product, then c plus it
// in the add loop, which checks an index carrier as it stores; the
// product and sum wrap in int64 as the element form's do, so the results
// are the same.
func maddI(op *loom.Op, r, a, b, c *slot, post postI) instr {
	if r.uni || c.uni || !a.uni || !b.uni || r.comps != 1 || a.comps != 1 || b.comps != 1 || c.comps != 1 {
		return terI(op, r, a, b, c, func(x, y, z int64) int64 { return x*y + z }, post)
	}
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		R, C := fr.I[r.idx][lo:hi], fr.I[c.idx][lo:hi]
		u := fr.I[a.idx][0] * fr.I[b.idx][0]
		if post.ranged && post.wrap == 0 {
			if binVSIRanged('+', 64, R, C, u, post.lo, post.hi) {
				return nil
			}
		} else {
			binVSI[int64]('+', 64, R, C, u)
		}
		return post.applyAt(fr, op, r, R, lo)
	}
}

// cmpI: r (i1) = f(a, b).
func cmpI(r, a, b *slot, f func(x, y int64) bool) instr {
	return func(fr *frame) error {
		v := !r.uni
		lo, hi := fr.span(r)
		A, B, R := fr.ints(a, v, 0)[lo:hi], fr.ints(b, v, 1)[lo:hi], fr.I[r.idx][lo:hi]
		for i := range R {
			if f(A[i], B[i]) {
				R[i] = 1
			} else {
				R[i] = 0
			}
		}
		return nil
	}
}

// binF: r = round(f(a, b)).
func binF(r, a, b *slot, f func(x, y float64) float64, rnd ffmt) instr {
	return func(fr *frame) error {
		v := !r.uni
		lo, hi := fr.span(r)
		A, B, R := fr.floats(a, v, 0)[lo:hi], fr.floats(b, v, 1)[lo:hi], fr.F[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i], B[i])
		}
		rnd.roundAll(R)
		return nil
	}
}

func unF(r, a *slot, f func(x float64) float64, rnd ffmt) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		A, R := fr.floats(a, !r.uni, 0)[lo:hi], fr.F[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i])
		}
		rnd.roundAll(R)
		return nil
	}
}

// movF is unF for the identity (float casts): a copy, rounded to the
// result's format.
func movF(r, a *slot, rnd ffmt) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		R := fr.F[r.idx][lo:hi]
		copy(R, fr.floats(a, !r.uni, 0)[lo:hi])
		rnd.roundAll(R)
		return nil
	}
}

func terF(r, a, b, c *slot, f func(x, y, z float64) float64, rnd ffmt) instr {
	return func(fr *frame) error {
		v := !r.uni
		lo, hi := fr.span(r)
		A, B, C, R := fr.floats(a, v, 0)[lo:hi], fr.floats(b, v, 1)[lo:hi], fr.floats(c, v, 2)[lo:hi], fr.F[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i], B[i], C[i])
		}
		rnd.roundAll(R)
		return nil
	}
}

func cmpF(r, a, b *slot, f func(x, y float64) bool) instr {
	return func(fr *frame) error {
		v := !r.uni
		lo, hi := fr.span(r)
		A, B, R := fr.floats(a, v, 0)[lo:hi], fr.floats(b, v, 1)[lo:hi], fr.I[r.idx][lo:hi]
		for i := range R {
			if f(A[i], B[i]) {
				R[i] = 1
			} else {
				R[i] = 0
			}
		}
		return nil
	}
}

// f2i: int r = f(float a); f may report failure with ok=false.
func f2i(op *loom.Op, r, a *slot, f func(x float64) int64, post postI) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		A, R := fr.floats(a, !r.uni, 0)[lo:hi], fr.I[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i])
		}
		return post.applyAt(fr, op, r, R, lo)
	}
}

// i2f: float r = round(f(int a)).
// sitofp32 is i2f for scalar.sitofp to f32: Go's int64 → float32
// conversion rounds once, as the op must, with no call an element.
func sitofp32(r, a *slot) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		A, R := fr.ints(a, !r.uni, 0)[lo:hi], fr.F[r.idx][lo:hi]
		A = A[:len(R)]
		for i, v := range A {
			R[i] = float64(float32(v))
		}
		return nil
	}
}

func i2f(r, a *slot, f func(x int64) float64, rnd ffmt) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		A, R := fr.ints(a, !r.uni, 0)[lo:hi], fr.F[r.idx][lo:hi]
		for i := range R {
			R[i] = f(A[i])
		}
		rnd.roundAll(R)
		return nil
	}
}
