//go:build !amd64

package interp

// hasAVX2 is false where no vector int loops exist.
var hasAVX2 = false

// vecI32VV, vecI32VS, vecI64VVR and vecI64VSR hold no loops here.
var (
	vecI32VV  map[byte]func(R, A, B []int64)
	vecI32VS  map[byte]func(R, A []int64, s int64)
	vecI64VVR map[byte]func(R, A, B []int64, lo, hi int64) bool
	vecI64VSR map[byte]func(R, A []int64, s, lo, hi int64) bool
)
