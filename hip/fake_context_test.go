package hip

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// everyCall exercises each context-bound entry point of the package once
// and returns the first failure.
func everyCall(c *Context) error {
	buf := make([]byte, 16)
	steps := []func() error{
		c.Synchronize,
		func() error { _, _, err := c.MemInfo(); return err },
		func() error { return c.CopyHtoD(0x10, buf) },
		func() error { return c.CopyDtoH(buf, 0x10) },
		func() error {
			m, err := c.Alloc(64)
			if err != nil {
				return err
			}
			return m.Close()
		},
		func() error {
			h, err := c.AllocHost(64)
			if err != nil {
				return err
			}
			return h.Close()
		},
		func() error {
			s, err := c.NewStream()
			if err != nil {
				return err
			}
			defer s.Close()
			e, err := c.NewEvent()
			if err != nil {
				return err
			}
			defer e.Close()
			mod, err := c.LoadModule([]byte("fake"))
			if err != nil {
				return err
			}
			defer mod.Close()
			f, err := mod.Function("k")
			if err != nil {
				return err
			}
			args := NewArgs(8, 8)
			g, err := c.NewGraph()
			if err != nil {
				return err
			}
			defer g.Close()
			n, err := g.AddKernel(f, Dim1(1), Dim1(32), 0, args)
			if err != nil {
				return err
			}
			if _, err := g.AddMemset(0x10, 1, 4, 4, n); err != nil {
				return err
			}
			x, err := g.Instantiate()
			if err != nil {
				return err
			}
			defer x.Close()
			for _, step := range []func() error{
				func() error { return s.CopyHtoD(0x10, buf) },
				func() error { return s.CopyDtoH(buf, 0x10) },
				func() error { return s.CopyDtoD(0x10, 0x20, 16) },
				func() error { return s.MemsetD8(0x10, 1, 16) },
				func() error { return s.MemsetD32(0x10, 1, 4) },
				func() error { return s.Launch(f, Dim1(1), Dim1(32), 0, args) },
				func() error { return x.Launch(s) },
				func() error { return e.Record(s) },
				e.Synchronize,
				func() error { _, err := Elapsed(e, e); return err },
				func() error { _, err := s.Done(); return err },
				s.Synchronize,
			} {
				if err := step(); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

// TestFakeDriverContextEveryCall: the fake driver keeps a current context
// per OS thread, like the real one, and refuses context-bound calls on a
// thread where it is not current. Goroutines clear the current context of
// their thread right before each call, so every call passes only if the
// package makes its context current on the calling thread itself.
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
	clearCurrent := loadFakeHooks(t, so).clearCurrent

	// The fake really is strict: a call with nothing current fails.
	runtime.LockOSThread()
	clearCurrent()
	r := l.raw(fnStreamSynchronize, 0)
	runtime.UnlockOSThread()
	if r != 201 {
		t.Fatalf("fake driver accepted a call without a current context (%d)", r)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				runtime.LockOSThread()
				clearCurrent()
				err := everyCall(c)
				runtime.UnlockOSThread()
				if err != nil {
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
		"Stream.Launch":      s.Launch(f, Dim1(1), Dim1(1), 0, NewArgs(8, 8)),
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

// fakeHooks are the fake driver's test controls.
type fakeHooks struct {
	clearCurrent  func()
	setCount      func() int64
	streamContext func(on bool)
	// lastLaunch is the last cuLaunchKernel's grid x, block x, dynamic
	// shared bytes and the 8-byte slots of its first four parameters
	// (those FAKE_READ_PARAMS lets it read; zero past them).
	lastLaunch func() [7]uint64
}

func loadFakeHooks(t testing.TB, so string) fakeHooks {
	t.Helper()
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	sym := func(name string) uintptr {
		p, err := purego.Dlsym(h, name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	clear, count, stream, last := sym("fake_clear_current"), sym("fake_set_count"), sym("fake_stream_context"), sym("fake_last_launch")
	return fakeHooks{
		lastLaunch: func() (v [7]uint64) {
			purego.SyscallN(last, uintptr(unsafe.Pointer(&v[0])))
			return v
		},
		clearCurrent: func() { purego.SyscallN(clear) },
		setCount:     func() int64 { r, _, _ := purego.SyscallN(count); return int64(r) },
		streamContext: func(on bool) {
			v := uintptr(0)
			if on {
				v = 1
			}
			purego.SyscallN(stream, v)
		},
	}
}

// streamCalls makes every stream-ordered call once.
func streamCalls(s *Stream, f *Function, x *GraphExec, e *Event) error {
	buf := make([]byte, 16)
	args := NewArgs(8, 8)
	for _, step := range []func() error{
		func() error { return s.Launch(f, Dim1(1), Dim1(32), 0, args) },
		func() error {
			p, err := s.Pack(f, Dim1(1), Dim1(32), 0, args)
			if err != nil {
				return err
			}
			return p.Launch()
		},
		func() error { return x.Launch(s) },
		func() error { return s.CopyHtoD(0x10, buf) },
		func() error { return s.CopyDtoH(buf, 0x10) },
		func() error { return s.CopyDtoD(0x10, 0x20, 8) },
		func() error { return s.MemsetD8(0x10, 1, 8) },
		func() error { return s.MemsetD32(0x10, 1, 2) },
		func() error { return e.Record(s) },
		func() error { _, err := s.Done(); return err },
		s.Synchronize,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// TestFakeDriverStreamContext: where the driver takes the context from the
// stream, stream-ordered calls skip cuCtxSetCurrent entirely, from any
// thread; where it refuses them (201), each call still succeeds by making
// the context current and retrying, and the context stops skipping.
func TestFakeDriverStreamContext(t *testing.T) {
	for _, streamContext := range []bool{true, false} {
		t.Run(fmt.Sprintf("driver takes stream context %v", streamContext), func(t *testing.T) {
			so := fakeDriver(t)
			hooks := loadFakeHooks(t, so)
			hooks.streamContext(streamContext)
			l, err := OpenPath(CUDA, so)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			c := must2(l.NewContext(0))
			defer c.Close()
			s := must2(c.NewStream())
			defer s.Close()
			e := must2(c.NewEvent())
			defer e.Close()
			mod := must2(c.LoadModule([]byte("fake")))
			defer mod.Close()
			f := must2(mod.Function("k"))
			g := must2(c.NewGraph())
			defer g.Close()
			x := must2(g.Instantiate())
			defer x.Close()

			before := hooks.setCount()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					for range 10 {
						runtime.LockOSThread()
						hooks.clearCurrent()
						err := streamCalls(s, f, x, e)
						runtime.UnlockOSThread()
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			sets := hooks.setCount() - before
			if streamContext {
				if sets != 0 || c.setForStreams.Load() {
					t.Fatalf("stream-ordered calls set the context %d times (setForStreams %v); want none", sets, c.setForStreams.Load())
				}
				return
			}
			if !c.setForStreams.Load() || sets < 8*10*10 {
				t.Fatalf("strict driver: setForStreams %v after %d context sets for %d calls", c.setForStreams.Load(), sets, 8*10*10)
			}
		})
	}
}

// TestPackedLaunch: a packed launch reaches the driver with the grid, block,
// shared bytes and parameter values given to Pack, later changes to the
// Args it was packed from change nothing, it allocates nothing per launch,
// and it is refused like Stream.Launch: bad arguments at Pack, a closed
// stream or a faulted context at Launch.
func TestPackedLaunch(t *testing.T) {
	so := fakeDriver(t)
	l := must2(OpenPath(CUDA, so))
	hooks := loadFakeHooks(t, so)
	c := must2(l.NewContext(0))
	defer c.Close()
	f := must2(must2(c.LoadModule([]byte("fake"))).Function("k"))
	s := must2(c.NewStream())
	args := NewArgs(8, 8)
	args.SetPtr(0, 0x1234)
	args.SetUint64(1, 7)
	p := must2(s.Pack(f, Dim1(4), Dim1(256), 96, args))
	args.SetUint64(1, 8)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := p.Launch(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("PackedLaunch.Launch allocates %v times per call", allocs)
	}
	if got, want := hooks.lastLaunch(), [7]uint64{4, 256, 96, 0x1234, 7, 0, 0}; got != want {
		t.Fatalf("driver saw (grid x, block x, shared, params) %v, want %v", got, want)
	}
	if _, err := s.Pack(f, Dim1(1), Dim1(32), 0, NewArgs(8)); !errors.Is(err, ErrBadArguments) {
		t.Fatalf("packing too few arguments: %v", err)
	}
	big := must2(s.Pack(f, Dim1(1), Dim1(2048), 0, args))
	if err := big.Launch(); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "block {2048 1 1}") {
		t.Fatalf("oversized block: %v", err)
	}
	t.Setenv("FAKE_LAUNCH", "700")
	if err := p.Launch(); !errors.Is(err, ErrDeviceFault) {
		t.Fatalf("faulting launch: %v", err)
	}
	t.Setenv("FAKE_LAUNCH", "0")
	if err := p.Launch(); !errors.Is(err, ErrDeviceFault) {
		t.Fatalf("launch on a faulted context: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Launch(); !errors.Is(err, ErrClosed) {
		t.Fatalf("launch on a closed stream: %v", err)
	}
}

// TestProgrammaticDependency: AddProgrammaticDependency passes one edge from
// the programmatic port of the upstream kernel node, typed programmatic,
// and refuses where the device predates compute capability 9.0 or the
// driver lacks cuGraphAddDependencies_v2.
func TestProgrammaticDependency(t *testing.T) {
	add := func(t *testing.T, so string) (from, to GraphNode, err error) {
		l, err := OpenPath(CUDA, so)
		if err != nil {
			t.Fatal(err)
		}
		c := must2(l.NewContext(0))
		t.Cleanup(func() { c.Close() })
		mod := must2(c.LoadModule([]byte("fake")))
		f := must2(mod.Function("k"))
		g := must2(c.NewGraph())
		t.Cleanup(func() { g.Close() })
		args := NewArgs(8, 8)
		from = must2(g.AddKernel(f, Dim1(1), Dim1(32), 0, args))
		to = must2(g.AddKernel(f, Dim1(1), Dim1(32), 0, args))
		return from, to, g.AddProgrammaticDependency(from, to)
	}
	t.Run("hopper", func(t *testing.T) {
		t.Setenv("FAKE_CC_MAJOR", "9")
		so := fakeDriver(t)
		from, to, err := add(t, so)
		if err != nil {
			t.Fatal(err)
		}
		h := must2(purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_GLOBAL))
		var got [4]uint64
		purego.SyscallN(must2(purego.Dlsym(h, "fake_last_edge")), uintptr(unsafe.Pointer(&got[0])))
		// from_port 1 (programmatic), to_port 0, type 1 (programmatic).
		want := [4]uint64{uint64(from), uint64(to), 1, 0x01_00_01}
		if from == to || got != want {
			t.Fatalf("edge (from, to, count, data) = %#x, want %#x", got, want)
		}
	})
	t.Run("ampere", func(t *testing.T) {
		t.Setenv("FAKE_CC_MAJOR", "8")
		if _, _, err := add(t, fakeDriver(t)); !errors.Is(err, ErrNotSupported) {
			t.Fatalf("err = %v, want ErrNotSupported", err)
		}
	})
	t.Run("old driver", func(t *testing.T) {
		t.Setenv("FAKE_CC_MAJOR", "9")
		if _, _, err := add(t, fakeDriver(t, "cuGraphAddDependencies_v2")); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "CUDA 12.3") {
			t.Fatalf("err = %v, want ErrNotSupported naming CUDA 12.3", err)
		}
	})
}

// TestLaunchProgrammatic: LaunchProgrammatic hands cuLaunchKernelEx the
// launch's sizes and stream with one attribute, programmatic stream
// serialization allowed, and refuses before compute capability 9.0.
func TestLaunchProgrammatic(t *testing.T) {
	launch := func(t *testing.T, so string) (*Stream, error) {
		l, err := OpenPath(CUDA, so)
		if err != nil {
			t.Fatal(err)
		}
		c := must2(l.NewContext(0))
		t.Cleanup(func() { c.Close() })
		s := must2(c.NewStream())
		t.Cleanup(func() { s.Close() })
		f := must2(must2(c.LoadModule([]byte("fake"))).Function("k"))
		return s, s.LaunchProgrammatic(f, Dim1(7), Dim1(96), 48, NewArgs(8, 8))
	}
	t.Run("hopper", func(t *testing.T) {
		t.Setenv("FAKE_CC_MAJOR", "9")
		so := fakeDriver(t)
		s, err := launch(t, so)
		if err != nil {
			t.Fatal(err)
		}
		h := must2(purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_GLOBAL))
		var got [7]uint64
		purego.SyscallN(must2(purego.Dlsym(h, "fake_last_config")), uintptr(unsafe.Pointer(&got[0])))
		want := [7]uint64{7, 96, 48, uint64(s.h), 1, 6, 1}
		if got != want {
			t.Fatalf("config (grid, block, shared, stream, attrs, id, value) = %v, want %v", got, want)
		}
	})
	t.Run("ampere", func(t *testing.T) {
		t.Setenv("FAKE_CC_MAJOR", "8")
		if _, err := launch(t, fakeDriver(t)); !errors.Is(err, ErrNotSupported) {
			t.Fatalf("err = %v, want ErrNotSupported", err)
		}
	})
}
