package interp

import (
	"math"
	"testing"
)

// The lane loop of fmaf with a uniform multiplier must agree with fma32 on
// every lane, including batches where only one lane sits on a rounding tie
// or in the subnormal range (the loop then redoes the batch exactly). Both
// the vector loop (where the CPU has one) and the portable loop are run.
func TestFMALaneLoopMatchesFMA32(t *testing.T) {
	vec := hasFMA
	defer func() { hasFMA = vec }()
	for _, hasFMA = range []bool{vec, false} {
		t.Run(map[bool]string{true: "vector", false: "portable"}[hasFMA], testFMALaneLoop)
	}
}

func testFMALaneLoop(t *testing.T) {
	u := float32(1 + 0x1p-12)
	xs := ramp(600, 7, 1000)
	traps := []struct{ b, c float32 }{
		{u, 0x1p-60}, {u, -0x1p-60}, {u, 0}, {1e-30, 1e-20}, {-u, 0x1p-61},
		{float32(math.Inf(1)), 1}, {float32(math.NaN()), 1}, {0x1p-130, 0},
	}
	for ti := -1; ti < len(traps); ti++ {
		for _, x := range []float32{u, 1.5, -3.25, 0x1p-100} {
			B := make([]float64, 256)
			C := make([]float64, 256)
			for i := range B {
				B[i], C[i] = float64(xs[i]), float64(xs[i+300])
			}
			if ti >= 0 {
				B[77], C[77] = float64(traps[ti].b), float64(traps[ti].c)
			}
			// 255 lanes leave a tail past the vector loop's groups of 4.
			R := make([]float64, 255)
			fmaSVV32(R, float64(x), B, C)
			for i := range R {
				want := fma32(float64(x), B[i], C[i])
				if R[i] != want && !(math.IsNaN(R[i]) && math.IsNaN(want)) {
					t.Fatalf("trap %d, x=%v, lane %d: got %v, want %v", ti, x, i, R[i], want)
				}
			}
		}
	}
}

// The lane loop of fmaf with every operand varying agrees with fma32 bit
// for bit on random patterns (subnormals, infinities, NaNs), on
// near-cancelling sums where ties hide, on the ties of testFMALaneLoop's
// traps, on tails of 0–3 lanes past the groups of 4, and written in place
// over its addend (the accumulator shape); both loops are run.
func TestFMAVaryingLaneLoop(t *testing.T) {
	vec := hasFMA
	defer func() { hasFMA = vec }()
	next := f32Bits(777)
	u := float64(float32(1 + 0x1p-12))
	traps := [][3]float64{
		{u, u, 0x1p-60}, {u, u, -0x1p-60}, {1e-30, 1e-30, 1e-20}, {-u, u, 0x1p-61},
		{math.Inf(1), 0, 1}, {0x1p-130, 0x1p-10, 0}, {0x1p-100, 0x1p-40, -0x1p-140},
	}
	for _, n := range []int{0, 1, 3, 4, 7, 255, 1026} {
		A, B, C := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := range A {
			A[i], B[i], C[i] = next(), next(), next()
			switch i % 4 {
			case 1:
				C[i] = -float64(float32(A[i] * B[i]))
			case 2:
				tr := traps[i%len(traps)]
				A[i], B[i], C[i] = tr[0], tr[1], tr[2]
			}
		}
		for _, hasFMA = range []bool{vec, false} {
			R := make([]float64, n)
			fmaVVV32(R, A, B, C)
			inPlace := append([]float64(nil), C...)
			fmaVVV32(inPlace, A, B, inPlace)
			for i := range R {
				want := fma32(A[i], B[i], C[i])
				for _, got := range []float64{R[i], inPlace[i]} {
					if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
						t.Fatalf("vector=%v n=%d lane %d (%v, %v, %v): got %v, want %v", hasFMA, n, i, A[i], B[i], C[i], got, want)
					}
				}
			}
		}
	}
}

// Random bit patterns (subnormals, infinities, NaNs, wide exponent spreads)
// through the lane loop agree with fma32, on both loops.
func TestFMALaneLoopRandomBits(t *testing.T) {
	vec := hasFMA
	defer func() { hasFMA = vec }()
	next := f32Bits(12345)
	B, C, R := make([]float64, 4099), make([]float64, 4099), make([]float64, 4099)
	for round := 0; round < 20; round++ {
		x := next()
		for i := range B {
			B[i], C[i] = next(), next()
			if i%3 == 0 { // near-cancelling sums, where ties and subnormals hide
				C[i] = -float64(float32(x * B[i]))
			}
		}
		for _, hasFMA = range []bool{vec, false} {
			fmaSVV32(R, x, B, C)
			for i := range R {
				want := fma32(x, B[i], C[i])
				if math.Float64bits(R[i]) != math.Float64bits(want) && !(math.IsNaN(R[i]) && math.IsNaN(want)) {
					t.Fatalf("vector=%v x=%v lane %d (%v, %v): got %v, want %v", hasFMA, x, i, B[i], C[i], R[i], want)
				}
			}
		}
	}
}

// The f32 block codecs agree bit for bit with Go's conversions on random
// bit patterns, vector loops or not, at lengths that leave tails.
func TestF32CodecRandomBits(t *testing.T) {
	vec := hasFMA
	defer func() { hasFMA = vec }()
	s := uint32(777)
	for _, n := range []int{1, 3, 4, 7, 16, 21, 1029} {
		blk := make([]byte, 4*n)
		in := make([]float64, n)
		for i := range n {
			s ^= s << 13
			s ^= s >> 17
			s ^= s << 5
			le.PutUint32(blk[4*i:], s)
			in[i] = math.Float64frombits(uint64(s)<<32 | uint64(s*2654435761))
		}
		for _, hasFMA = range []bool{vec, false} {
			out := make([]float64, n)
			decodeF32(out, blk)
			enc := make([]byte, 4*n)
			encodeF32(enc, in)
			for i := range n {
				w := float64(math.Float32frombits(le.Uint32(blk[4*i:])))
				if math.Float64bits(out[i]) != math.Float64bits(w) && !(math.IsNaN(w) && math.IsNaN(out[i])) {
					t.Fatalf("vector=%v n=%d decode %d: got %v, want %v", hasFMA, n, i, out[i], w)
				}
				g, w32 := math.Float32frombits(le.Uint32(enc[4*i:])), float32(in[i])
				if math.Float32bits(g) != math.Float32bits(w32) && !(g != g && w32 != w32) {
					t.Fatalf("vector=%v n=%d encode %d: got %v, want %v", hasFMA, n, i, g, w32)
				}
			}
		}
	}
}

// The f32 binary lane loops round like Go's float32 arithmetic, through the
// vector rounding pass or not.
func TestBinF32LoopsRandomBits(t *testing.T) {
	vec := hasFMA
	defer func() { hasFMA = vec }()
	s := uint32(4242)
	next := func() float64 {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		return float64(math.Float32frombits(s))
	}
	A, B, R := make([]float64, 1031), make([]float64, 1031), make([]float64, 1031)
	for i := range A {
		A[i], B[i] = next(), next()
	}
	want := func(op byte, a, b float32) float32 {
		switch op {
		case '+':
			return a + b
		case '-':
			return a - b
		case '*':
			return a * b
		}
		return a / b
	}
	same := func(g float64, w float32) bool {
		return math.Float64bits(g) == math.Float64bits(float64(w)) || (g != g && w != w)
	}
	for _, hasFMA = range []bool{vec, false} {
		for _, op := range []byte{'+', '-', '*', '/'} {
			binVV32(op, R, A, B)
			for i := range R {
				if w := want(op, float32(A[i]), float32(B[i])); !same(R[i], w) {
					t.Fatalf("vector=%v %c lane %d: got %v, want %v", hasFMA, op, i, R[i], w)
				}
			}
			binVS32(op, R, A, B[5])
			for i := range R {
				if w := want(op, float32(A[i]), float32(B[5])); !same(R[i], w) {
					t.Fatalf("vector=%v %c scalar lane %d: got %v, want %v", hasFMA, op, i, R[i], w)
				}
			}
		}
	}
}

// f32Bits returns a generator of f32 values from random bit patterns
// (xorshift from seed): subnormals, infinities and NaNs included.
func f32Bits(seed uint32) func() float64 {
	s := seed
	return func() float64 {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		return float64(math.Float32frombits(s))
	}
}
