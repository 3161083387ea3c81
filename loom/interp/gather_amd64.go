package interp

// gatherF32AVX sets out[l] = float64(src[b + i0[l]·st0 + i1[l]·st1]) for
// the first len(out)&^3 lanes (i0 and i1 at least as long), four at a
// time, testing each group's indices (0 ≤ i < dim) and elements
// (0 ≤ element < n) before it reads them. It returns false at the first
// group with a lane outside any, having written the groups before it. The
// dims and |strides| must be below 2^31 and 0 ≤ b ≤ n; only call it when
// hasAVX2 is set.
//
//go:noescape
func gatherF32AVX(out []float64, i0, i1 []int64, src *float32, b int64, d *gatherDims) bool

// scatterF32AVX is the store of gatherF32AVX: dst[b + i0[l]·st0 +
// i1[l]·st1] = float32(in[l]) for the first len(in)&^3 lanes in lane
// order, with the same tests, returning false at the first group with a
// lane outside, having stored the groups before it.
//
//go:noescape
func scatterF32AVX(in []float64, i0, i1 []int64, dst *float32, b int64, d *gatherDims) bool
