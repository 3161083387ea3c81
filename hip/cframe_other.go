//go:build !amd64

package hip

import (
	"sync"

	"github.com/ebitengine/purego"
)

// argArrays holds argument arrays for purego: its variadic slice escapes,
// so an array from the pool (not f, often on the caller's stack or shared)
// is passed.
var argArrays = sync.Pool{New: func() any { return new([11]uintptr) }}

// status calls f.fn(f.a[0], ..., f.a[10]) through purego and returns its
// result as a driver status code (the low 32 bits of the C return value).
func (f *cframe) status() int32 {
	a := argArrays.Get().(*[11]uintptr)
	*a = f.a
	r, _, _ := purego.SyscallN(f.fn, a[:]...)
	argArrays.Put(a)
	return int32(r)
}
