//go:build !amd64

package interp

// hasAVX2 is false where no vector int loops exist.
var hasAVX2 = false

// vecI32VV and vecI32VS hold no loops here.
var (
	vecI32VV map[byte]func(R, A, B []int64)
	vecI32VS map[byte]func(R, A []int64, s int64)
)
