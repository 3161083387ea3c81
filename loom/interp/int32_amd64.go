package interp

// cpuHasAVX2 reports whether the CPU has AVX2.
func cpuHasAVX2() bool

// hasAVX2 selects the vector loops of the 32-bit int ops; tests switch it
// off to cover the portable loops too.
var hasAVX2 = cpuHasFMA() && cpuHasAVX2()

// The AVX2 lane loops of binVVI[int32] and binVSI[int32] (int32_amd64.s),
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

// vecI32VV and vecI32VS are those loops by intKinds kind.
var (
	vecI32VV = map[byte]func(R, A, B []int64){
		'+': addI32VV, '-': subI32VV, '*': mulI32VV, '&': andI32VV, '|': orI32VV,
		'^': xorI32VV, 'l': shlI32VV, 'r': shrI32VV, 's': sarI32VV,
	}
	vecI32VS = map[byte]func(R, A []int64, s int64){
		'+': addI32VS, '-': subI32VS, '*': mulI32VS, '&': andI32VS, '|': orI32VS,
		'^': xorI32VS, 'l': shlI32VS, 'r': shrI32VS, 's': sarI32VS,
	}
)
