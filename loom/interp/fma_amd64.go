package interp

// fmaSVV32AVX computes R[i] = fmaf(x, B[i], C[i]) for the first len(R)&^3
// lanes with the hardware's single-precision fused multiply-add, which IEEE
// 754 requires to round once, exactly as fma32 does. B and C hold f32
// values as float64 (narrowing them is exact) and are at least len(R) long.
// Only call it when hasFMA is set.
//
//go:noescape
func fmaSVV32AVX(R, B, C []float64, x float32)

// fmaVVV32AVX is fmaSVV32AVX with a varying multiplier: R[i] =
// fmaf(A[i], B[i], C[i]) for the first len(R)&^3 lanes; R may be any of
// the sources.
//
//go:noescape
func fmaVVV32AVX(R, A, B, C []float64)

// cpuHasFMA reports whether the CPU and OS support AVX and FMA3.
func cpuHasFMA() bool

// hasFMA selects the vector fmaf lane loop; tests switch it off to cover
// the portable loop too.
var hasFMA = cpuHasFMA()

// widenF32AVX sets out[i] = float64(in[i]) for the first len(out)&^3
// elements; in is at least as long. Only call it when hasFMA is set (AVX).
//
//go:noescape
func widenF32AVX(out []float64, in []float32)

// narrowF64AVX sets out[i] = float32(in[i]) (round to nearest even, as Go's
// conversion) for the first len(out)&^3 elements; in is at least as long.
// Only call it when hasFMA is set (AVX).
//
//go:noescape
func narrowF64AVX(out []float32, in []float64)

// roundF32AVX rounds R[i] to f32 in place (R[i] = float64(float32(R[i])))
// for the first len(R)&^3 elements. Only call it when hasFMA is set (AVX).
//
//go:noescape
func roundF32AVX(R []float64)

// addF32AVX, subF32AVX, mulF32AVX and divF32AVX set R[i] = A[i] op B[i]
// for the first len(R)&^7 elements (A and B at least as long; R may be A
// or B exactly, or disjoint from both). IEEE single-precision operations
// round exactly as Go's float32 arithmetic. Only call them when hasFMA is
// set (AVX).
//
//go:noescape
func addF32AVX(R, A, B []float32)

//go:noescape
func subF32AVX(R, A, B []float32)

//go:noescape
func mulF32AVX(R, A, B []float32)

//go:noescape
func divF32AVX(R, A, B []float32)
