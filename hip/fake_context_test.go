package hip

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/ebitengine/purego"
)

// everyCall exercises each context-bound entry point of the package once,
// calling before ahead of each, and returns the first failure.
func everyCall(c *Context, before func()) error {
	var (
		s    *Stream
		e    *Event
		m    *DeviceMemory
		h    *HostMemory
		mod  *Module
		f    *Function
		g    *Graph
		x    *GraphExec
		node GraphNode
		err  error
	)
	buf := make([]byte, 16)
	args := NewArgs(8, 8)
	defer func() {
		// After a failure, close what was made; a second Close is a no-op.
		if x != nil {
			x.Close()
		}
		if g != nil {
			g.Close()
		}
		if mod != nil {
			mod.Close()
		}
		if e != nil {
			e.Close()
		}
		if s != nil {
			s.Close()
		}
		if h != nil {
			h.Close()
		}
		if m != nil {
			m.Close()
		}
	}()
	steps := []struct {
		name string
		call func() error
	}{
		{"Context.Synchronize", func() error { return c.Synchronize() }},
		{"Context.MemInfo", func() error { _, _, err := c.MemInfo(); return err }},
		{"Context.CopyHtoD", func() error { return c.CopyHtoD(0x10, buf) }},
		{"Context.CopyDtoH", func() error { return c.CopyDtoH(buf, 0x10) }},
		{"Context.Alloc", func() error { m, err = c.Alloc(64); return err }},
		{"DeviceMemory.Close", func() error { return m.Close() }},
		{"Context.AllocHost", func() error { h, err = c.AllocHost(64); return err }},
		{"HostMemory.Close", func() error { return h.Close() }},
		{"Context.NewStream", func() error { s, err = c.NewStream(); return err }},
		{"Context.NewEvent", func() error { e, err = c.NewEvent(); return err }},
		{"Context.LoadModule", func() error { mod, err = c.LoadModule([]byte("fake")); return err }},
		{"Module.Function", func() error { f, err = mod.Function("k"); return err }},
		{"Context.NewGraph", func() error { g, err = c.NewGraph(); return err }},
		{"Graph.AddKernel", func() error { node, err = g.AddKernel(f, Dim3{X: 1}, Dim3{X: 32}, 0, args); return err }},
		{"Graph.AddMemset", func() error { _, err := g.AddMemset(0x10, 1, 4, 4, node); return err }},
		{"Graph.Instantiate", func() error { x, err = g.Instantiate(); return err }},
		{"Stream.CopyHtoD", func() error { return s.CopyHtoD(0x10, buf) }},
		{"Stream.CopyDtoH", func() error { return s.CopyDtoH(buf, 0x10) }},
		{"Stream.CopyDtoD", func() error { return s.CopyDtoD(0x10, 0x20, 16) }},
		{"Stream.MemsetD8", func() error { return s.MemsetD8(0x10, 1, 16) }},
		{"Stream.MemsetD32", func() error { return s.MemsetD32(0x10, 1, 4) }},
		{"Stream.Launch", func() error { return s.Launch(f, Dim3{X: 1}, Dim3{X: 32}, 0, args) }},
		{"GraphExec.Launch", func() error { return x.Launch(s) }},
		{"Event.Record", func() error { return e.Record(s) }},
		{"Event.Synchronize", func() error { return e.Synchronize() }},
		{"Elapsed", func() error { _, err := Elapsed(e, e); return err }},
		{"Stream.Done", func() error { _, err := s.Done(); return err }},
		{"Stream.Synchronize", func() error { return s.Synchronize() }},
		{"GraphExec.Close", func() error { return x.Close() }},
		{"Graph.Close", func() error { return g.Close() }},
		{"Module.Close", func() error { return mod.Close() }},
		{"Event.Close", func() error { return e.Close() }},
		{"Stream.Close", func() error { return s.Close() }},
	}
	for _, step := range steps {
		before()
		if err := step.call(); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	return nil
}

// fakeHooks are the fake driver's test controls, loaded from its library.
type fakeHooks struct {
	clearFn, countFn uintptr
}

func loadFakeHooks(t *testing.T, so string) fakeHooks {
	t.Helper()
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	var k fakeHooks
	if k.clearFn, err = purego.Dlsym(h, "fake_clear_current"); err != nil {
		t.Fatal(err)
	}
	if k.countFn, err = purego.Dlsym(h, "fake_set_count"); err != nil {
		t.Fatal(err)
	}
	return k
}

// clearCurrent empties the current context of the calling thread, as a dead
// thread's reused id or foreign code would leave it.
func (k fakeHooks) clearCurrent() { purego.SyscallN(k.clearFn) }

// sets is the number of cuCtxSetCurrent calls so far.
func (k fakeHooks) sets() int64 { r, _, _ := purego.SyscallN(k.countFn); return int64(r) }

// TestFakeDriverContextEveryCall: the fake driver keeps a current context
// per OS thread, like the real one, and refuses context-bound calls on a
// thread where it is not current. Goroutines clear the current context of
// their thread right before each call, behind the thread table's back, so
// every call passes only if the package makes its context current on the
// calling thread itself, including when its table wrongly says it already
// is (the retry after CUDA_ERROR_INVALID_CONTEXT).
func TestFakeDriverContextEveryCall(t *testing.T) {
	so := fakeDriver(t)
	l, err := OpenPath(CUDA, so)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	k := loadFakeHooks(t, so)

	// The fake really is strict: a call with nothing current fails.
	runtime.LockOSThread()
	k.clearCurrent()
	r := l.raw(fnStreamSynchronize, 0)
	runtime.UnlockOSThread()
	if r != 201 {
		t.Fatalf("fake driver accepted a call without a current context (%d)", r)
	}

	for _, mode := range []struct {
		name   string
		locked bool // whole sequence on one thread, cleared before each call
		before func()
	}{
		{"cleared on a locked thread", true, k.clearCurrent},
		// Unlocked, goroutines wander between threads, some of which were
		// cleared behind the table's back by another goroutine's step.
		{"cleared and moved", false, func() {
			runtime.LockOSThread()
			k.clearCurrent()
			runtime.UnlockOSThread()
			runtime.Gosched()
		}},
		{"moved only", false, runtime.Gosched},
	} {
		t.Run(mode.name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if mode.locked {
						runtime.LockOSThread()
						defer runtime.UnlockOSThread()
					}
					for range 20 {
						if err := everyCall(c, mode.before); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// TestFakeDriverSetCurrentOnlyWhenNeeded: on one thread, the context is set
// once and then trusted; a stale record costs exactly one set and one retry;
// a failed set forgets the record; and a call that fails with
// CUDA_ERROR_INVALID_CONTEXT for its own reasons is retried once, not looped.
func TestFakeDriverSetCurrentOnlyWhenNeeded(t *testing.T) {
	so := fakeDriver(t)
	l := must2(OpenPath(CUDA, so))
	c := must2(l.NewContext(0))
	defer c.Close()
	k := loadFakeHooks(t, so)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := must2(c.NewStream())
	defer s.Close()
	mod := must2(c.LoadModule([]byte("fake")))
	defer mod.Close()
	f := must2(mod.Function("k"))
	g := must2(c.NewGraph())
	defer g.Close()
	x := must2(g.Instantiate())
	defer x.Close()
	args := NewArgs(8, 8)
	launch := func() error { return s.Launch(f, Dim3{X: 1}, Dim3{X: 32}, 0, args) }

	n := k.sets()
	for range 100 {
		if err := launch(); err != nil {
			t.Fatal(err)
		}
		if err := x.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if d := k.sets() - n; d != 0 {
		t.Fatalf("%d cuCtxSetCurrent calls for launches and a sync on one thread whose context was already current", d)
	}

	// Stale record: the call fails, the package sets the context and retries.
	k.clearCurrent()
	n = k.sets()
	if err := launch(); err != nil {
		t.Fatalf("launch after the context was cleared behind the package: %v", err)
	}
	if d := k.sets() - n; d != 1 {
		t.Fatalf("%d cuCtxSetCurrent calls to recover a stale record, want 1", d)
	}

	// A failing set forgets the record: the next call sets again up front.
	k.clearCurrent()
	t.Setenv("FAKE_SET_RC", "999")
	err := launch()
	var e *Error
	if !errors.As(err, &e) || e.Call != "cuCtxSetCurrent" || e.Code != 999 {
		t.Fatalf("launch with a failing cuCtxSetCurrent: %v", err)
	}
	if tid := gettid(); l.threads.current(tid, c.serial) {
		t.Fatal("a failed cuCtxSetCurrent left the thread recorded as current")
	}
	os.Unsetenv("FAKE_SET_RC")
	n = k.sets()
	if err := x.Launch(s); err != nil {
		t.Fatal(err)
	}
	if d := k.sets() - n; d != 1 {
		t.Fatalf("%d cuCtxSetCurrent calls after a forgotten record, want 1", d)
	}

	// A genuine CUDA_ERROR_INVALID_CONTEXT is retried once and returned.
	t.Setenv("FAKE_RC_cuStreamSynchronize", "201")
	n = k.sets()
	err = s.Synchronize()
	if !errors.As(err, &e) || e.Call != "cuStreamSynchronize" || e.Name != "CUDA_ERROR_INVALID_CONTEXT" {
		t.Fatalf("Synchronize failing with 201: %v", err)
	}
	if d := k.sets() - n; d != 1 {
		t.Fatalf("%d cuCtxSetCurrent calls for a call that keeps failing with 201, want 1", d)
	}
}

// TestFakeDriverCloseTwice: every handle closes once; a second Close is a
// no-op, and using a closed handle is ErrClosed, not a driver call.
func TestFakeDriverCloseTwice(t *testing.T) {
	so := fakeDriver(t)
	l, err := OpenPath(CUDA, so)
	if err != nil {
		t.Fatal(err)
	}
	c := must2(l.NewContext(0))
	s := must2(c.NewStream())
	e := must2(c.NewEvent())
	m := must2(c.Alloc(64))
	h := must2(c.AllocHost(64))
	mod := must2(c.LoadModule([]byte("fake")))
	f := must2(mod.Function("k"))
	g := must2(c.NewGraph())
	x := must2(g.Instantiate())
	closers := map[string]func() error{
		"GraphExec": x.Close, "Graph": g.Close, "Module": mod.Close, "HostMemory": h.Close,
		"DeviceMemory": m.Close, "Event": e.Close, "Stream": s.Close,
	}
	for name, cl := range closers {
		if err := cl(); err != nil {
			t.Errorf("%s.Close: %v", name, err)
		}
		if err := cl(); err != nil {
			t.Errorf("second %s.Close: %v", name, err)
		}
	}
	for name, err := range map[string]error{
		"Stream.Synchronize": s.Synchronize(),
		"Stream.Launch":      s.Launch(f, Dim3{X: 1}, Dim3{X: 1}, 0, NewArgs(8, 8)),
		"Event.Record":       e.Record(s),
		"GraphExec.Launch":   x.Launch(s),
		"Module.Function":    second2(mod.Function("k")),
		"Graph.Instantiate":  second2(g.Instantiate()),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Context.Close: %v", err)
	}
	if _, err := c.Alloc(8); !errors.Is(err, ErrClosed) {
		t.Errorf("Alloc on closed context: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.NewContext(0); !errors.Is(err, ErrClosed) {
		t.Errorf("NewContext on closed library: %v", err)
	}
}

func must2[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func second2[T any](_ T, err error) error { return err }

// TestGraphLaunchAllocatesNothing: replaying an instantiated graph goes
// through the stream's preallocated argument array, like Launch.
func TestGraphLaunchAllocatesNothing(t *testing.T) {
	so := fakeDriver(t)
	l, err := OpenPath(CUDA, so)
	if err != nil {
		t.Fatal(err)
	}
	c := must2(l.NewContext(0))
	defer c.Close()
	s := must2(c.NewStream())
	defer s.Close()
	g := must2(c.NewGraph())
	defer g.Close()
	x := must2(g.Instantiate())
	defer x.Close()
	allocs := testing.AllocsPerRun(1000, func() {
		if err := x.Launch(s); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("GraphExec.Launch allocates %v times per call", allocs)
	}
}
