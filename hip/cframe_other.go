//go:build !amd64

package hip

import (
	"sync"

	"github.com/ebitengine/purego"
)

// argArrays holds argument arrays for purego: its variadic slice escapes,
// so an array from the pool (not f, often on the caller's stack) is passed.
var argArrays = sync.Pool{New: func() any { return new([11]uintptr) }}

// call runs f.fn(f.a[0], ..., f.a[10]) through purego and stores its
// result in f.r.
func (f *cframe) call() {
	a := argArrays.Get().(*[11]uintptr)
	*a = f.a
	f.r, _, _ = purego.SyscallN(f.fn, a[:]...)
	argArrays.Put(a)
}
