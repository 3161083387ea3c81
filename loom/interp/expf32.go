package interp

import "math"

// An f32 expf is e^x rounded once to f32: float32(math.Exp(x)). math.Exp
// took a quarter of a decode-attention kernel's time (one online-softmax
// step per position), most of it for accuracy f32 does not need, so
// expF32Slice computes e^x in float64 to about 2^-50 and rounds that, and
// only where the value lies so near an f32 rounding midpoint that the
// two float64 approximations might round apart does it ask math.Exp. The
// result is float32(math.Exp(x)) bit for bit: TestExpF32 checks every
// f32 input with -exhaustive, a spread of 2^24 of them otherwise.

// expTable holds 2^(j/256), j < 256.
var expTable = func() (t [256]float64) {
	for j := range t {
		t[j] = math.Exp2(float64(j) / 256)
	}
	return t
}()

const (
	// exp256Ln2 is 256/ln 2; ln2by256Hi + ln2by256Lo is ln2/256 to 90
	// bits, the high part with its low 20 bits zero so k·ln2by256Hi is
	// exact for |k| < 2^20.
	exp256Ln2  = 256 / math.Ln2
	ln2by256Hi = 0x1.62e42fefa0000p-9
	ln2by256Lo = 0x1.cf79abc9e3b3ap-48
	// roundMagic rounds a float64 below 2^51 in magnitude to an integer
	// k: the sum's bits are roundMagic's plus k.
	roundMagic = 0x1.8p52
)

// expF32Slice sets R[i] to float32(math.Exp(A[i])) for f32 values A[i]:
// first the float64 approximation of every element, in a loop without
// branches or calls, then each rounded, or recomputed by math.Exp where
// that approximation is out of its range or near an f32 midpoint.
func expF32Slice(R, A []float64) {
	expNear(R, A)
	for i, x := range A[:len(R)] {
		y := R[i]
		// Past this range the result is subnormal, infinite or NaN (a NaN
		// fails both tests): math.Exp and the f32 rounding decide those.
		// Within it y is within 2^-50 of e^x, math.Exp within 2^-52: they
		// round to the same f32 unless e^x is within a few float64 units
		// of an f32 midpoint, whose low 29 mantissa bits are 1<<28. 2^10
		// units of margin make that certain, and cost math.Exp once in
		// 2^18 inputs. (Over every f32 input none of those would have
		// rounded apart: the margin makes the result certain by
		// construction, not by test.)
		low := math.Float64bits(y) & (1<<29 - 1)
		if !(x > -87.3 && x < 88.7) || low-(1<<28-1<<10) < 1<<11 {
			y = math.Exp(x)
		}
		R[i] = float64(float32(y))
	}
}

// expNear sets Y[i] to e^A[i] within 2^-50 (relative) where
// −87.3 < A[i] < 88.7 (e^x a normal f32); elsewhere to a value of no
// meaning.
func expNear(Y, A []float64) {
	for i, x := range A[:len(Y)] {
		// x = k·ln2/256 + r, |r| ≤ ln2/512 (k's rounding at a half may
		// leave a little more), so e^x = 2^(k>>8)·2^((k&255)/256)·e^r.
		kf := x*exp256Ln2 + roundMagic
		k := int64(math.Float64bits(kf) - math.Float64bits(roundMagic))
		kf -= roundMagic
		r := (x - kf*ln2by256Hi) - kf*ln2by256Lo
		// e^r − 1 to degree 4: the next term, r^5/120, is below 2^-54.
		r2 := r * r
		p := r + r2*(1.0/2+r*(1.0/6)) + r2*r2*(1.0/24)
		t := expTable[k&255]
		y := t + t*p
		// The scale 2^(k>>8) goes into the exponent field: y is normal.
		Y[i] = math.Float64frombits(math.Float64bits(y) + uint64(k>>8)<<52)
	}
}

// expF32Lanes is unF for expf with an f32 result: R[i] = e^A[i], rounded.
func expF32Lanes(r, a *slot) instr {
	return func(fr *frame) error {
		lo, hi := fr.span(r)
		expF32Slice(fr.F[r.idx][lo:hi], fr.floats(a, !r.uni, 0)[lo:hi])
		return nil
	}
}
