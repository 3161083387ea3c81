package hip

import (
	"math"
	"runtime"
	"testing"
)

// TestThreadContexts: the table answers per thread, a colliding thread
// evicts but is never mistaken for the slot's previous owner, forgetting
// only drops the caller's own record, and an unknown thread (id 0) never
// counts as current.
func TestThreadContexts(t *testing.T) {
	var tc threadContexts
	const a, b = 5, 5 + threadSlots // same slot
	if tc.current(a, 1) {
		t.Fatal("empty table says thread is current")
	}
	tc.record(a, 1)
	if !tc.current(a, 1) {
		t.Fatal("recorded context not current")
	}
	if tc.current(a, 2) {
		t.Fatal("another context counts as current")
	}
	if tc.current(b, 1) {
		t.Fatal("a colliding thread inherits the slot's record")
	}
	if tc.slots[(a+1)%threadSlots].Load() != 0 {
		t.Fatal("recording wrote a neighbouring slot")
	}
	tc.record(b, 2)
	if tc.current(a, 1) {
		t.Fatal("evicted thread still current")
	}
	if !tc.current(b, 2) {
		t.Fatal("colliding thread's record lost")
	}
	tc.forget(a) // a no longer owns the slot: b's record stays
	if !tc.current(b, 2) {
		t.Fatal("forgetting one thread dropped a colliding thread's record")
	}
	tc.forget(b)
	if tc.current(b, 2) {
		t.Fatal("forgotten record still current")
	}
	tc.record(0, 3)
	if tc.current(0, 3) || tc.slots[0].Load() != 0 {
		t.Fatal("thread id 0 (unknown) was recorded")
	}
	tc.record(a, math.MaxUint32)
	if !tc.current(a, math.MaxUint32) || tc.current(a, 0) {
		t.Fatal("the largest serial does not round-trip")
	}
}

// TestContextSerials: serials are never 0, the table's empty value, even
// when the counter wraps.
func TestContextSerials(t *testing.T) {
	saved := contextSerials.Load()
	defer contextSerials.Store(saved)
	contextSerials.Store(math.MaxUint32 - 1)
	if s := nextContextSerial(); s != math.MaxUint32 {
		t.Fatalf("serial %d", s)
	}
	if s := nextContextSerial(); s != 1 {
		t.Fatalf("serial after the wrap is %d, want 1", s)
	}
}

// TestGettid: a locked goroutine reads its own thread's id, and two
// goroutines locked at the same time read different ones.
func TestGettid(t *testing.T) {
	if runtime.GOOS != "linux" {
		if gettid() != 0 {
			t.Fatal("gettid without a thread id must report 0")
		}
		t.Skip("thread ids are read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	mine := gettid()
	if mine == 0 || gettid() != mine {
		t.Fatalf("gettid %d, then %d, on one locked thread", mine, gettid())
	}
	other := make(chan uint32)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		other <- gettid()
		<-release
	}()
	o := <-other
	close(release)
	if o == 0 || o == mine {
		t.Fatalf("two locked goroutines read thread ids %d and %d", mine, o)
	}
}
