package interp

import (
	"math"
	"testing"
)

// decodeF8 is an independent reference decoder of one OCP 8-bit float:
// E4M3 (ebits 4, finite: S.1111.111 is NaN, no infinity) or E5M2 (IEEE-like).
func decodeF8(b byte, ebits int) float64 {
	mbits := 7 - ebits
	bias := 1<<(ebits-1) - 1
	e := int(b>>mbits) & (1<<ebits - 1)
	m := int(b) & (1<<mbits - 1)
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	switch {
	case ebits == 4 && e == 15 && m == 7, ebits == 5 && e == 31 && m != 0:
		return math.NaN()
	case ebits == 5 && e == 31:
		return sign * math.Inf(1)
	case e == 0:
		return sign * math.Ldexp(float64(m), 1-bias-mbits)
	}
	return sign * math.Ldexp(float64(m|1<<mbits), e-bias-mbits)
}

// TestDot4f8 pins vector.dot4f8 against a Go reference: for each kind,
// the four field products are added in field order to the accumulator in
// float64 (each product of two f8 values is exact there) and rounded to
// f32 once, as Loom's folder does (a double fma chain).
func TestDot4f8(t *testing.T) {
	const n = 40 // invocations, 4 lanes each
	lhs := make([]int32, 4*n)
	rhs := make([]int32, 4*n)
	acc := make([]float32, 4*n)
	s := uint32(12345)
	next := func() uint32 { s = s*1664525 + 1013904223; return s }
	for i := range lhs {
		lhs[i], rhs[i] = int32(next()), int32(next())
		acc[i] = float32(int32(next()>>8)%2000) / 16
	}
	// Fields that exercise ones, subnormals, maxima and sign.
	lhs[0], rhs[0], acc[0] = 0x38383838, 0x3c3c3c3c, 5
	lhs[1], rhs[1] = 0x017f7e01, 0x01fb7b80
	r := compileRun(t, corpus(t, "dot4f8.loom"), "dot4f8_kinds", Options{})
	out := make([]byte, 4*16*n)
	r.run(wl(n), idx(n), buf(i32bytes(lhs)), buf(i32bytes(rhs)), buf(f32bytes(acc)), buf(out))
	got := bytesF32(out)
	kinds := [][2]int{{4, 4}, {4, 5}, {5, 4}, {5, 5}}
	for k, kind := range kinds {
		for i := range lhs {
			sum := float64(acc[i])
			for f := 0; f < 4; f++ {
				a := decodeF8(byte(uint32(lhs[i])>>(8*f)), kind[0])
				b := decodeF8(byte(uint32(rhs[i])>>(8*f)), kind[1])
				sum += a * b
			}
			want := float32(sum)
			g := got[k*4*n+i]
			if g != want && !(g != g && want != want) {
				t.Fatalf("kind %d lane %d (lhs %#08x rhs %#08x acc %g): got %g, want %g", k, i, uint32(lhs[i]), uint32(rhs[i]), acc[i], g, want)
			}
		}
	}
	if got[4*n] != 9 { // Loom's own sample: 5 + 4 × fp8(1.0) × bf8(1.0)
		t.Errorf("fp8bf8 of 0x38383838, 0x3c3c3c3c, 5: got %g, want 9", got[4*n])
	}
}
