package loom

import (
	"fmt"
	"strconv"
	"strings"
)

// TransposeLanes reads the permutation of a vector.transpose (its <[…]>
// parameter: result axis i is source axis perm[i]) and returns, for each
// lane of the result in row-major order, the row-major lane of the source
// vector of shape src it takes (errors carry no position: the caller adds
// it). Backends that scalarize vectors lower the
// op as this gather.
func TransposeLanes(op *Op, src []int64) ([]int, error) {
	text := strings.TrimSpace(op.Param)
	if !strings.HasPrefix(text, "[") || !strings.HasSuffix(text, "]") {
		return nil, fmt.Errorf("vector.transpose needs a permutation <[…]>, have <%s>", op.Param)
	}
	var perm []int
	seen := make([]bool, len(src))
	for _, f := range strings.Split(text[1:len(text)-1], ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 0 || p >= len(src) || seen[p] {
			return nil, fmt.Errorf("vector.transpose permutation %s is not a permutation of %d axes", text, len(src))
		}
		seen[p] = true
		perm = append(perm, p)
	}
	if len(perm) != len(src) {
		return nil, fmt.Errorf("vector.transpose permutation %s is not a permutation of %d axes", text, len(src))
	}
	dst := make([]int64, len(src))
	n := int64(1)
	for i, p := range perm {
		dst[i] = src[p]
		n *= src[p]
	}
	// Row-major strides of the source, read through the permutation.
	stride := make([]int64, len(src))
	s := int64(1)
	for k := len(src) - 1; k >= 0; k-- {
		stride[k] = s
		s *= src[k]
	}
	out := make([]int, n)
	for i := range out {
		rem, f := int64(i), int64(0)
		for k := len(dst) - 1; k >= 0; k-- {
			f += rem % dst[k] * stride[perm[k]]
			rem /= dst[k]
		}
		out[i] = int(f)
	}
	return out, nil
}
