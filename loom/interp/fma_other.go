//go:build !amd64

package interp

// hasFMA is false where no vector fmaf lane loop exists.
var hasFMA = false

// fmaSVV32AVX is never called where hasFMA is false.
func fmaSVV32AVX(R, B, C []float64, x float32) { panic("interp: no vector fma") }
