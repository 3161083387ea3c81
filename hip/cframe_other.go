//go:build !amd64

package hip

import "github.com/ebitengine/purego"

// call runs f.fn(f.a[0], ..., f.a[10]) through purego and stores its
// result in f.r.
func (f *cframe) call() {
	f.r, _, _ = purego.SyscallN(f.fn, f.a[:]...)
}
