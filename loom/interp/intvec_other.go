//go:build !amd64

package interp

// hasAVX2 is false where no vector int loops exist.
var hasAVX2 = false

// vecI32VV, vecI32VS, vecI64VVR and vecI64VSR hold no loops here.
var (
	vecI32VV  [256]func(R, A, B []int64)
	vecI32VS  [256]func(R, A []int64, s int64)
	vecI64VVR [256]func(R, A, B []int64, lo, hi int64) bool
	vecI64VSR [256]func(R, A []int64, s, lo, hi int64) bool
)

func gatherF32AVX(out []float64, i0, i1 []int64, src *float32, b int64, d *gatherDims) bool {
	panic("interp: no vector gather")
}

func scatterF32AVX(in []float64, i0, i1 []int64, dst *float32, b int64, d *gatherDims) bool {
	panic("interp: no vector scatter")
}

func wrapAVX2(R, A []int64, m, h int64) { panic("interp: no vector wrap") }
