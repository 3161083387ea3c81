package hip

import (
	"runtime"
	"testing"
)

// BenchmarkFakeLaunch is Stream.Launch into the fake driver: the binding's
// own per-launch cost (checks, thread lock, thread table, purego calls)
// without a GPU behind it (the fake's launch reads two environment
// variables, a few hundred ns of it). BenchmarkFakeSetCurrent is a purego
// call of the fake's cuCtxSetCurrent, the floor of what the thread table
// saves per call (BenchmarkSetCurrent has the real driver's), and
// BenchmarkGettid what the table adds.
func BenchmarkFakeLaunch(b *testing.B) {
	so := fakeDriver(b)
	l := must2(OpenPath(CUDA, so))
	c := must2(l.NewContext(0))
	defer c.Close()
	s := must2(c.NewStream())
	defer s.Close()
	mod := must2(c.LoadModule([]byte("fake")))
	defer mod.Close()
	f := must2(mod.Function("k"))
	args := NewArgs(8, 8)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Launch(f, Dim3{X: 1}, Dim3{X: 32}, 0, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFakeSetCurrent(b *testing.B) {
	so := fakeDriver(b)
	l := must2(OpenPath(CUDA, so))
	c := must2(l.NewContext(0))
	defer c.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		c.lib.callArgs(fnCtxSetCurrent, c.setArgs[:])
	}
}

func BenchmarkGettid(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for b.Loop() {
		gettid()
	}
}
