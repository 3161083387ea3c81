package interp

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// fastBinF specializes the hottest float ops (add, sub, mul, div on f32 and
// f64) so their lane loops carry no indirect call, including the common
// vector-times-uniform-scalar shape.
func fastBinF(name string, r, a, b *slot, rnd ffmt) instr {
	if rnd.kind == fMini {
		return nil
	}
	f32 := rnd.kind == fF32
	var op byte
	switch name {
	case "addf":
		op = '+'
	case "subf":
		op = '-'
	case "mulf":
		op = '*'
	case "divf":
		op = '/'
	default:
		return nil
	}
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		R := fr.F[r.idx][lo:hi]
		A, B := fr.F[a.idx], fr.F[b.idx]
		switch {
		case a.uni == r.uni && b.uni == r.uni:
			A, B = A[lo:hi], B[lo:hi]
			A, B = A[:len(R)], B[:len(R)]
			if f32 {
				binVV32(op, R, A, B)
			} else {
				binVV64(op, R, A, B)
			}
		case b.uni && b.comps == 1 && !a.uni:
			A = A[lo:hi]
			A = A[:len(R)]
			if f32 {
				binVS32(op, R, A, B[0])
			} else {
				binVS64(op, R, A, B[0])
			}
		case a.uni && a.comps == 1 && !b.uni && (op == '+' || op == '*'):
			B = B[lo:hi]
			B = B[:len(R)]
			if f32 {
				binVS32(op, R, B, A[0])
			} else {
				binVS64(op, R, B, A[0])
			}
		default:
			A, B = fr.floats(a, !r.uni, 0)[lo:hi], fr.floats(b, !r.uni, 1)[lo:hi]
			f := floatBinary[name]
			for i := range R {
				R[i] = f(A[i], B[i])
			}
			if f32 {
				for i, x := range R {
					R[i] = float64(float32(x))
				}
			}
		}
		return nil
	}
}

// binVV32 is R = A op B rounded to f32 (exact in float64 then rounded once:
// float64 carries more than twice f32's precision, so +, -, *, / round as
// f32 arithmetic would).
func binVV32(op byte, R, A, B []float64) {
	A, B = A[:len(R)], B[:len(R)] // one bounds check, not one an element
	if hasFMA && len(R) >= 8 {
		// Exact (or, for /, correctly rounded) in float64, then one
		// vector rounding pass: scalar float32(x) conversions merge into
		// their destination register and chain lane to lane.
		binVV64(op, R, A, B)
		round32(R)
		return
	}
	switch op {
	case '+':
		for i := range R {
			R[i] = float64(float32(A[i] + B[i]))
		}
	case '-':
		for i := range R {
			R[i] = float64(float32(A[i] - B[i]))
		}
	case '*':
		for i := range R {
			R[i] = float64(float32(A[i] * B[i]))
		}
	case '/':
		for i := range R {
			R[i] = float64(float32(A[i] / B[i]))
		}
	}
}

func binVV64(op byte, R, A, B []float64) {
	A, B = A[:len(R)], B[:len(R)]
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

// binVS32 is R = A op s rounded to f32.
func binVS32(op byte, R, A []float64, s float64) {
	A = A[:len(R)]
	if hasFMA && len(R) >= 8 {
		binVS64(op, R, A, s)
		round32(R)
		return
	}
	switch op {
	case '+':
		for i := range R {
			R[i] = float64(float32(A[i] + s))
		}
	case '-':
		for i := range R {
			R[i] = float64(float32(A[i] - s))
		}
	case '*':
		for i := range R {
			R[i] = float64(float32(A[i] * s))
		}
	case '/':
		for i := range R {
			R[i] = float64(float32(A[i] / s))
		}
	}
}

func binVS64(op byte, R, A []float64, s float64) {
	A = A[:len(R)]
	switch op {
	case '+':
		for i := range R {
			R[i] = A[i] + s
		}
	case '-':
		for i := range R {
			R[i] = A[i] - s
		}
	case '*':
		for i := range R {
			R[i] = A[i] * s
		}
	case '/':
		for i := range R {
			R[i] = A[i] / s
		}
	}
}

// fma32 is fmaf on f32 values held as float64. The product of two f32
// values is exact in float64, so the sum rounds once to s; rounding s to f32
// is then the correctly rounded fused result unless s sits exactly on a
// midpoint between two f32 values while the exact sum does not. In that
// rare case the rounding error of the sum (recovered exactly by TwoSum)
// tells which way to break the tie.
func fma32(a, b, c float64) float64 {
	p := float64(a * b)
	s := p + c
	if math.Float64bits(s)&(1<<29-1) == 1<<28 || math.Abs(s) < 0x1p-126 {
		bb := float64(s - p)
		e := float64(p-float64(s-bb)) + float64(c-bb)
		if e != 0 && isMid32(s) {
			s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
		}
	}
	return float64(float32(s))
}

// isMid32 reports whether s lies exactly halfway between two f32 values.
func isMid32(s float64) bool {
	r := float32(s)
	if float64(r) == s || math.IsInf(float64(r), 0) {
		return false
	}
	o := math.Nextafter32(r, float32(math.Copysign(math.Inf(1), s-float64(r))))
	return float64(r)+float64(o) == 2*s || (float64(o)-s) == (s-float64(r))
}

// fastFMA runs fmaf over lanes with uniform operands read in place.
func fastFMA(r, a, b, c *slot, f32 bool) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		n := hi - lo
		R := fr.F[r.idx][lo:hi]
		A, B, C := fr.F[a.idx], fr.F[b.idx], fr.F[c.idx]
		sa, sb, sc := 1, 1, 1
		if a.uni != r.uni {
			sa = 0
		}
		if b.uni != r.uni {
			sb = 0
		}
		if c.uni != r.uni {
			sc = 0
		}
		if r.comps != 1 && (sa == 0 || sb == 0 || sc == 0) {
			A, B, C = fr.floats(a, !r.uni, 0), fr.floats(b, !r.uni, 1), fr.floats(c, !r.uni, 2)
			sa, sb, sc = 1, 1, 1
		}
		// Varying operands are read from lo on; uniform ones at 0.
		A, B, C = A[lo*sa:], B[lo*sb:], C[lo*sc:]
		if f32 {
			if sa == 0 && sb == 1 && sc == 1 {
				x, B, C := A[0], B[:n], C[:n]
				fmaSVV32(R, x, B, C)
				return nil
			}
			if sa == 1 && sb == 1 && sc == 1 {
				fmaVVV32(R, A, B, C)
				return nil
			}
			for i := range R {
				R[i] = fma32(A[i*sa], B[i*sb], C[i*sc])
			}
			return nil
		}
		for i := range R {
			R[i] = math.FMA(A[i*sa], B[i*sb], C[i*sc])
		}
		return nil
	}
}

// fastCmpI specializes index/integer comparisons of the common predicates.
func fastCmpI(pred string, nb int, r, a, b *slot) instr {
	if r.comps != 1 {
		return nil
	}
	mask := uint64(1)<<uint(nb) - 1
	if nb >= 64 {
		mask = ^uint64(0)
	}
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		R := fr.I[r.idx][lo:hi]
		A, B := fr.I[a.idx], fr.I[b.idx]
		if !r.uni && b.uni && !a.uni {
			// The common varying-versus-uniform shape (i < n, tid < stride).
			A := A[lo:hi]
			A = A[:len(R)]
			y := B[0]
			uy := uint64(y) & mask
			switch pred {
			case "ult":
				for i := range R {
					R[i] = b2i(uint64(A[i])&mask < uy)
				}
				return nil
			case "slt":
				for i := range R {
					R[i] = b2i(A[i] < y)
				}
				return nil
			case "eq":
				for i := range R {
					R[i] = b2i(A[i] == y)
				}
				return nil
			case "ne":
				for i := range R {
					R[i] = b2i(A[i] != y)
				}
				return nil
			}
		}
		sa, sb := 1, 1
		if a.uni != r.uni {
			sa = 0
		}
		if b.uni != r.uni {
			sb = 0
		}
		A, B = A[lo*sa:], B[lo*sb:]
		switch pred {
		case "ult":
			for i := range R {
				R[i] = b2i(uint64(A[i*sa])&mask < uint64(B[i*sb])&mask)
			}
		case "slt":
			for i := range R {
				R[i] = b2i(A[i*sa] < B[i*sb])
			}
		case "sge":
			for i := range R {
				R[i] = b2i(A[i*sa] >= B[i*sb])
			}
		case "uge":
			for i := range R {
				R[i] = b2i(uint64(A[i*sa])&mask >= uint64(B[i*sb])&mask)
			}
		case "eq":
			for i := range R {
				R[i] = b2i(A[i*sa] == B[i*sb])
			}
		case "ne":
			for i := range R {
				R[i] = b2i(A[i*sa] != B[i*sb])
			}
		default:
			f := intCompare(pred, nb)
			for i := range R {
				R[i] = b2i(f(A[i*sa], B[i*sb]))
			}
		}
		return nil
	}
}

// fmaVVV32 is R = fma32(A, B, C) with every operand varying: four lanes
// at a time by the hardware's single-precision FMA where there is one
// (rounding once, as fma32), the rest by fma32.
func fmaVVV32(R, A, B, C []float64) {
	A, B, C = A[:len(R)], B[:len(R)], C[:len(R)]
	if hasFMA && len(R) >= 4 {
		n := len(R) &^ 3
		fmaVVV32AVX(R[:n], A[:n], B[:n], C[:n])
		R, A, B, C = R[n:], A[n:], B[n:], C[n:]
	}
	for i := range R {
		R[i] = fma32(A[i], B[i], C[i])
	}
}

// fmaSVV32 is R = fma32(x, B, C), the a*x+y shape, in one tight loop. The
// product p is exact in float64, so only the sum s = p+c rounds; rounding s
// to f32 is correct unless s sits on an f32 tie while the sum was inexact.
// The loop computes the sum's rounding error (TwoSum) and flags such lanes,
// and those in the subnormal range, without branching; only then does a
// second pass redo the lanes with fma32's exact tie break.
func fmaSVV32(R []float64, x float64, B, C []float64) {
	B, C = B[:len(R)], C[:len(R)]
	if hasFMA && len(R) >= 4 {
		n := len(R) &^ 3
		fmaSVV32AVX(R[:n], B[:n], C[:n], float32(x))
		R, B, C = R[n:], B[n:], C[n:]
	}
	var flag uint64
	for i := range R {
		p := float64(x * B[i])
		c := C[i]
		s := p + c
		R[i] = float64(float32(s))
		bb := float64(s - p)
		e := float64(p-float64(s-bb)) + float64(c-bb)
		b := math.Float64bits(s)
		tie := ((b & (1<<29 - 1)) ^ (1 << 28)) - 1 // top bit: s is an f32 tie
		nz := math.Float64bits(e) << 1
		nz |= -nz // top bit: e != 0
		flag |= tie&nz | ((b>>52)&0x7ff - 897)
	}
	if flag>>63 != 0 {
		for i := range R {
			R[i] = fma32(x, B[i], C[i])
		}
	}
}

// round32 rounds every element of R to f32 precision in place.
func round32(R []float64) {
	if hasFMA && len(R) >= 4 {
		n := len(R) &^ 3
		roundF32AVX(R[:n])
		R = R[n:]
	}
	for i, x := range R {
		R[i] = float64(float32(x))
	}
}

// intKinds are the int ops fastBinI runs without calling a function value
// per element: add, sub, mul, and, or, xor and the three shifts.
var intKinds = map[string]byte{
	"addi": '+', "subi": '-', "muli": '*', "andi": '&', "ori": '|', "xori": '^',
	"shli": 'l', "shrui": 'r', "shrsi": 's',
}

// commutes is whether an int kind may take its uniform operand first.
func commutes(k byte) bool { return k == '+' || k == '*' || k == '&' || k == '|' || k == '^' }

// fastBinI specializes binI for the int kinds of intKinds when both
// operands vary with the result or the second (or, for a commuting kind,
// the first) is one uniform value; nil otherwise. Where an operand check
// could fail (a shift count out of range) it runs generic, binI's own
// instruction, which finds the failing lane and reports it.
func fastBinI(name string, nb int, op *loom.Op, r, a, b *slot, pre *check, post postI, generic instr) instr {
	k := intKinds[name]
	shift := k == 'l' || k == 'r' || k == 's'
	if post.wrap == 1 && (k == '&' || k == '|' || k == '^') {
		// i1 registers hold 0 or 1, and so do these ops of them: no wrap.
		post = postI{}
	}
	if k == 0 || post.wrap == 1 || pre != nil && !shift || r.uni && r.comps == 1 {
		return nil
	}
	// A 32-bit result wraps in the loop itself (int32 arithmetic).
	vv, vs := binVVI[int64], binVSI[int64]
	if post.wrap == 32 && nb == 32 {
		vv, vs, post = binVVI32, binVSI32, postI{}
	}
	// An index result's carrier check rides along in the loops that can
	// do it (binVVIRanged, binVSIRanged); checked says they did.
	ranged := post.ranged && !shift
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		R := fr.I[r.idx][lo:hi]
		A, B := fr.I[a.idx], fr.I[b.idx]
		checked := false
		switch {
		case a.uni == r.uni && b.uni == r.uni:
			A, B = A[lo:hi][:len(R)], B[lo:hi][:len(R)]
			if shift {
				for _, y := range B {
					if uint64(y) >= uint64(nb) {
						return generic(fr)
					}
				}
			}
			if ranged {
				checked = binVVIRanged(k, nb, R, A, B, post.lo, post.hi)
			} else {
				vv(k, nb, R, A, B)
			}
		case b.uni && b.comps == 1 && !a.uni:
			if shift && uint64(B[0]) >= uint64(nb) {
				return generic(fr)
			}
			if ranged {
				checked = binVSIRanged(k, nb, R, A[lo:hi][:len(R)], B[0], post.lo, post.hi)
			} else {
				vs(k, nb, R, A[lo:hi][:len(R)], B[0])
			}
		case a.uni && a.comps == 1 && !b.uni && commutes(k):
			if ranged {
				checked = binVSIRanged(k, nb, R, B[lo:hi][:len(R)], A[0], post.lo, post.hi)
			} else {
				vs(k, nb, R, B[lo:hi][:len(R)], A[0])
			}
		default:
			return generic(fr)
		}
		if checked {
			return nil
		}
		return post.applyAt(fr, op, r, R, lo)
	}
}

// binVVI is R = A k B elementwise on int carriers of nb bits (shift
// counts already checked below nb), computed in T: int64, or int32 for a
// 32-bit result, whose wrap to 32 bits the conversion back does.
func binVVI[T int32 | int64](k byte, nb int, R, A, B []int64) {
	A, B = A[:len(R)], B[:len(R)] // one bounds check, not one an element
	switch k {
	case '+':
		for i := range R {
			R[i] = int64(T(A[i]) + T(B[i]))
		}
	case '-':
		for i := range R {
			R[i] = int64(T(A[i]) - T(B[i]))
		}
	case '*':
		for i := range R {
			R[i] = int64(T(A[i]) * T(B[i]))
		}
	case '&':
		for i := range R {
			R[i] = int64(T(A[i]) & T(B[i]))
		}
	case '|':
		for i := range R {
			R[i] = int64(T(A[i]) | T(B[i]))
		}
	case '^':
		for i := range R {
			R[i] = int64(T(A[i]) ^ T(B[i]))
		}
	case 'l':
		for i := range R {
			R[i] = int64(T(A[i]) << uint64(B[i]&63))
		}
	case 'r':
		m := zextMask(nb)
		for i := range R {
			R[i] = int64(T(uint64(A[i]) & m >> uint64(B[i]&63)))
		}
	case 's':
		for i := range R {
			R[i] = int64(T(A[i]) >> uint64(B[i]&63))
		}
	}
}

// binVVI32 is binVVI[int32], four lanes at a time with AVX2 where the CPU
// has it.
func binVVI32(k byte, nb int, R, A, B []int64) {
	if f := vecI32VV[k]; hasAVX2 && f != nil && len(R) >= 4 {
		n := len(R) &^ 3
		f(R[:n], A[:n], B[:n])
		R, A, B = R[n:], A[n:], B[n:]
	}
	binVVI[int32](k, nb, R, A, B)
}

// binVSI32 is binVSI[int32], four lanes at a time with AVX2 where the CPU
// has it.
func binVSI32(k byte, nb int, R, A []int64, s int64) {
	if f := vecI32VS[k]; hasAVX2 && f != nil && len(R) >= 4 {
		n := len(R) &^ 3
		f(R[:n], A[:n], s)
		R, A = R[n:], A[n:]
	}
	binVSI[int32](k, nb, R, A, s)
}

// binVVIRanged is binVVI[int64] for an index result: where an AVX2 loop
// exists for k, it checks the carrier's bounds [lo, hi] as it goes. It
// reports whether every element is known to lie inside them; false sends
// the caller to postI.applyAt, which finds the element and its lane.
func binVVIRanged(k byte, nb int, R, A, B []int64, lo, hi int64) bool {
	f := vecI64VVR[k]
	if !hasAVX2 || f == nil || len(R) < 4 {
		binVVI[int64](k, nb, R, A, B)
		return false
	}
	n := len(R) &^ 3
	ok := f(R[:n], A[:n], B[:n], lo, hi)
	binVVI[int64](k, nb, R[n:], A[n:], B[n:])
	return ok && inBounds(R[n:], lo, hi)
}

// binVSIRanged is binVVIRanged with one value s for B.
func binVSIRanged(k byte, nb int, R, A []int64, s, lo, hi int64) bool {
	f := vecI64VSR[k]
	if !hasAVX2 || f == nil || len(R) < 4 {
		binVSI[int64](k, nb, R, A, s)
		return false
	}
	n := len(R) &^ 3
	ok := f(R[:n], A[:n], s, lo, hi)
	binVSI[int64](k, nb, R[n:], A[n:], s)
	return ok && inBounds(R[n:], lo, hi)
}

// inBounds reports whether every element of R lies in [lo, hi].
func inBounds(R []int64, lo, hi int64) bool {
	for _, v := range R {
		if v < lo || v > hi {
			return false
		}
	}
	return true
}

// binVSI is binVVI with one value s for B.
func binVSI[T int32 | int64](k byte, nb int, R, A []int64, s int64) {
	A = A[:len(R)]
	t, c := T(s), uint64(s&63)
	switch k {
	case '+':
		for i := range R {
			R[i] = int64(T(A[i]) + t)
		}
	case '-':
		for i := range R {
			R[i] = int64(T(A[i]) - t)
		}
	case '*':
		for i := range R {
			R[i] = int64(T(A[i]) * t)
		}
	case '&':
		for i := range R {
			R[i] = int64(T(A[i]) & t)
		}
	case '|':
		for i := range R {
			R[i] = int64(T(A[i]) | t)
		}
	case '^':
		for i := range R {
			R[i] = int64(T(A[i]) ^ t)
		}
	case 'l':
		for i := range R {
			R[i] = int64(T(A[i]) << c)
		}
	case 'r':
		m := zextMask(nb)
		for i := range R {
			R[i] = int64(T(uint64(A[i]) & m >> c))
		}
	case 's':
		for i := range R {
			R[i] = int64(T(A[i]) >> c)
		}
	}
}

// zextMask keeps the low nb bits (all 64 for nb ≥ 64), as zext does.
func zextMask(nb int) uint64 {
	if nb >= 64 || nb <= 0 {
		return ^uint64(0)
	}
	return 1<<uint(nb) - 1
}
