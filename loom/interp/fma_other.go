//go:build !amd64

package interp

// hasFMA is false where no vector fmaf lane loop exists.
var hasFMA = false

// fmaSVV32AVX is never called where hasFMA is false.
func fmaSVV32AVX(R, B, C []float64, x float32) { panic("interp: no vector fma") }

func fmaVVV32AVX(R, A, B, C []float64) { panic("interp: no vector fma") }

func widenF32AVX(out []float64, in []float32) { panic("interp: no vector conversion") }

func narrowF64AVX(out []float32, in []float64) { panic("interp: no vector conversion") }

func roundF32AVX(R []float64) { panic("interp: no vector conversion") }

func addF32AVX(R, A, B []float32) { panic("interp: no vector arithmetic") }

func subF32AVX(R, A, B []float32) { panic("interp: no vector arithmetic") }

func mulF32AVX(R, A, B []float32) { panic("interp: no vector arithmetic") }

func divF32AVX(R, A, B []float32) { panic("interp: no vector arithmetic") }
