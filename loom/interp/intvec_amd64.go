package interp

// cpuHasAVX2 reports whether the CPU has AVX2.
func cpuHasAVX2() bool

// hasAVX2 selects the vector loops of the 32-bit int ops; tests switch it
// off to cover the portable loops too.
var hasAVX2 = cpuHasFMA() && cpuHasAVX2()

// The AVX2 lane loops of binVVI[int32] and binVSI[int32] (intvec_amd64.s),
// for the first len(R)&^3 elements; A and B are at least len(R) long, and
// shift counts are below 32.

//go:noescape
func addI32VV(R, A, B []int64)

//go:noescape
func subI32VV(R, A, B []int64)

//go:noescape
func mulI32VV(R, A, B []int64)

//go:noescape
func andI32VV(R, A, B []int64)

//go:noescape
func orI32VV(R, A, B []int64)

//go:noescape
func xorI32VV(R, A, B []int64)

//go:noescape
func shlI32VV(R, A, B []int64)

//go:noescape
func shrI32VV(R, A, B []int64)

//go:noescape
func sarI32VV(R, A, B []int64)

//go:noescape
func addI32VS(R, A []int64, s int64)

//go:noescape
func subI32VS(R, A []int64, s int64)

//go:noescape
func mulI32VS(R, A []int64, s int64)

//go:noescape
func andI32VS(R, A []int64, s int64)

//go:noescape
func orI32VS(R, A []int64, s int64)

//go:noescape
func xorI32VS(R, A []int64, s int64)

//go:noescape
func shlI32VS(R, A []int64, s int64)

//go:noescape
func shrI32VS(R, A []int64, s int64)

//go:noescape
func sarI32VS(R, A []int64, s int64)

// wrapAVX2 sets R[i] to A[i]'s low bits, those under the mask m (a width
// of 2–63 bits), sign-extended from the width's sign bit h (with h = 0,
// zero-extended: A[i] & m), for the first len(R)&^3 elements; R may be A.
// Only call it when hasAVX2 is set.
//
//go:noescape
func wrapAVX2(R, A []int64, m, h int64)

// vecI32VV and vecI32VS are those loops by intKinds kind (arrays, so
// the lookup each run is an index, not a map probe).
var (
	vecI32VV = [256]func(R, A, B []int64){
		'+': addI32VV, '-': subI32VV, '*': mulI32VV, '&': andI32VV, '|': orI32VV,
		'^': xorI32VV, 'l': shlI32VV, 'r': shrI32VV, 's': sarI32VV,
	}
	vecI32VS = [256]func(R, A []int64, s int64){
		'+': addI32VS, '-': subI32VS, '*': mulI32VS, '&': andI32VS, '|': orI32VS,
		'^': xorI32VS, 'l': shlI32VS, 'r': shrI32VS, 's': sarI32VS,
	}
)

// The AVX2 lane loops of the index ops that keep the carrier check
// (binVVIRanged, binVSIRanged), for the first len(R)&^3 elements; each
// reports whether every result lies in [lo, hi].

//go:noescape
func addI64VVR(R, A, B []int64, lo, hi int64) bool

//go:noescape
func subI64VVR(R, A, B []int64, lo, hi int64) bool

//go:noescape
func andI64VVR(R, A, B []int64, lo, hi int64) bool

//go:noescape
func orI64VVR(R, A, B []int64, lo, hi int64) bool

//go:noescape
func xorI64VVR(R, A, B []int64, lo, hi int64) bool

//go:noescape
func addI64VSR(R, A []int64, s, lo, hi int64) bool

//go:noescape
func subI64VSR(R, A []int64, s, lo, hi int64) bool

//go:noescape
func andI64VSR(R, A []int64, s, lo, hi int64) bool

//go:noescape
func orI64VSR(R, A []int64, s, lo, hi int64) bool

//go:noescape
func xorI64VSR(R, A []int64, s, lo, hi int64) bool

// vecI64VVR and vecI64VSR are those loops by intKinds kind.
var (
	vecI64VVR = [256]func(R, A, B []int64, lo, hi int64) bool{
		'+': addI64VVR, '-': subI64VVR, '&': andI64VVR, '|': orI64VVR, '^': xorI64VVR,
	}
	vecI64VSR = [256]func(R, A []int64, s, lo, hi int64) bool{
		'+': addI64VSR, '-': subI64VSR, '&': andI64VSR, '|': orI64VSR, '^': xorI64VSR,
	}
)
