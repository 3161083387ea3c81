// Package le converts number slices to and from their little-endian bytes,
// the layout device buffers and the CPU executor's memory hold them in.
// Tests and benchmarks of several packages fill and read buffers with it.
package le

import (
	"encoding/binary"
	"math"
)

// F32Bytes is v as little-endian bytes, 4 per value.
func F32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// BytesF32 reads b as little-endian float32 values; a trailing partial
// value is ignored.
func BytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
