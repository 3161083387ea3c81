package hip

import (
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// TestCallFrame: the hot-path call frame passes all eleven arguments in
// order (six in registers, five on the stack on amd64), returns the low 32
// bits of the result as purego does, and leaves the frame as it was, from
// many goroutines at once, each with a frame of its own and all sharing one
// (as the goroutines launching one PackedLaunch do).
func TestCallFrame(t *testing.T) {
	so := fakeDriver(t)
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := purego.Dlsym(h, "fake_args11")
	if err != nil {
		t.Fatal(err)
	}
	want := func(a [11]uintptr) int32 {
		h := uint64(17)
		for _, v := range a {
			h = h*1000003 ^ uint64(v)
		}
		return int32(h)
	}
	shared := &cframe{fn: fn}
	for j := range shared.a {
		shared.a[j] = uintptr(j+1) << (4 * j)
	}
	sharedCopy := *shared
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			f := &cframe{fn: fn}
			for i := range 2000 {
				for j := range f.a {
					f.a[j] = uintptr(g*1_000_000_007 + i*131 + j*(1<<40) + j)
				}
				before := *f
				if f.status() != want(f.a) {
					errs <- "call frame result differs from the C fold"
					return
				}
				if *f != before {
					errs <- "the call changed its frame"
					return
				}
				if shared.status() != want(sharedCopy.a) {
					errs <- "shared call frame result differs from the C fold"
					return
				}
				if i%500 == 0 {
					if r, _, _ := purego.SyscallN(fn, f.a[:]...); int32(r) != f.status() {
						errs <- "call frame and purego disagree"
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if *shared != sharedCopy {
		t.Fatal("the calls changed the shared frame")
	}
}
