package hip

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/loomgen/loomgen/internal/le"
)

func TestDeviceInfo(t *testing.T) {
	c := gpu(t)
	d := c.Device()
	name, err := d.Name()
	if err != nil || name == "" {
		t.Fatalf("Name() = %q, %v", name, err)
	}
	mem, err := d.TotalMemory()
	if err != nil || mem < 1<<30 {
		t.Fatalf("TotalMemory() = %d, %v", mem, err)
	}
	arch, err := d.Arch()
	if err != nil || !strings.HasPrefix(arch, "sm_") {
		t.Fatalf("Arch() = %q, %v", arch, err)
	}
	lim, err := d.Limits()
	if err != nil || lim.MaxThreadsPerBlock < 256 || lim.WarpSize != 32 || lim.Multiprocessors < 1 {
		t.Fatalf("Limits() = %+v, %v", lim, err)
	}
	free, total, err := c.MemInfo()
	if err != nil || free == 0 || free > total {
		t.Fatalf("MemInfo() = %d, %d, %v", free, total, err)
	}
	t.Logf("%s %s, driver %d, %d MiB, %+v", name, arch, c.Library().DriverVersion(), mem>>20, lim)
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31) ^ seed
	}
	return b
}

func TestRoundTrips(t *testing.T) {
	c := gpu(t)
	s, err := c.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{1, 3, 4, 1000, 4096, 65537, 1 << 20, 16<<20 + 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a, err := c.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := c.Alloc(n)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			want := pattern(n, byte(n))
			// Synchronous upload, device copy, asynchronous pinned readback.
			if err := c.CopyHtoD(a.Ptr(), want); err != nil {
				t.Fatal(err)
			}
			if err := s.CopyDtoD(b.Ptr(), a.Ptr(), n); err != nil {
				t.Fatal(err)
			}
			h, err := c.AllocHost(n)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := s.CopyDtoH(h.Bytes(), b.Ptr()); err != nil {
				t.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(h.Bytes(), want) {
				t.Fatalf("pinned readback differs")
			}
			// Asynchronous pinned upload, memset of the tail, sync readback.
			copy(h.Bytes(), pattern(n, 0x5a))
			if err := s.CopyHtoD(a.Ptr(), h.Bytes()); err != nil {
				t.Fatal(err)
			}
			if err := s.MemsetD8(a.Ptr().Add(n/2), 0xee, n-n/2); err != nil {
				t.Fatal(err)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n)
			if err := c.CopyDtoH(got, a.Ptr()); err != nil {
				t.Fatal(err)
			}
			want = pattern(n, 0x5a)
			for i := n / 2; i < n; i++ {
				want[i] = 0xee
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("upload+memset readback differs")
			}
		})
	}
}

func TestMemsetD32(t *testing.T) {
	c := gpu(t)
	s, _ := c.NewStream()
	defer s.Close()
	m, err := c.Alloc(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := s.MemsetD32(m.Ptr(), 0xdeadbeef, 1024); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4096)
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyDtoH(got, m.Ptr()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1024; i++ {
		if v := binary.LittleEndian.Uint32(got[4*i:]); v != 0xdeadbeef {
			t.Fatalf("word %d = %#x", i, v)
		}
	}
}

// f32bytes and bytesF32 convert buffers (package le).
var f32bytes, bytesF32 = le.F32Bytes, le.BytesF32

// saxpyCase sets up x and y on the device with values whose saxpy is exact.
type saxpyCase struct {
	n    int
	a    float32
	x, y *DeviceMemory
	args *Args
}

func newSaxpy(t testing.TB, c *Context, n int) *saxpyCase {
	t.Helper()
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i%1000) * 0.5
	}
	x, err := c.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CopyHtoD(x.Ptr(), f32bytes(xs)); err != nil {
		t.Fatal(err)
	}
	sc := &saxpyCase{n: n, a: 2, x: x, y: y, args: NewArgs(8, 8, 4, 4)}
	sc.args.SetPtr(0, x.Ptr())
	sc.args.SetPtr(1, y.Ptr())
	sc.args.SetFloat32(2, sc.a)
	sc.args.SetUint32(3, uint32(n))
	return sc
}

func (sc *saxpyCase) close() { sc.x.Close(); sc.y.Close() }

// want is y after one saxpy over y filled with y0.
func (sc *saxpyCase) want(y0 float32) []float32 {
	w := make([]float32, sc.n)
	for i := range w {
		w[i] = sc.a*(float32(i%1000)*0.5) + y0
	}
	return w
}

func (sc *saxpyCase) read(t testing.TB, c *Context) []float32 {
	t.Helper()
	b := make([]byte, 4*sc.n)
	if err := c.CopyDtoH(b, sc.y.Ptr()); err != nil {
		t.Fatal(err)
	}
	return bytesF32(b)
}

func equalF32(t testing.TB, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestSaxpyDirectPackedAndGraph(t *testing.T) {
	c, k := kernels(t)
	attrs := k.saxpy.Attributes()
	if attrs.MaxThreadsPerBlock < 256 || attrs.NumRegs <= 0 || attrs.BinaryVersion != 90 {
		t.Fatalf("saxpy attributes %+v", attrs)
	}
	if p := k.saxpy.ParamSizes(); p != nil && fmt.Sprint(p) != "[8 8 4 4]" {
		t.Fatalf("saxpy params %v", p)
	}
	s, _ := c.NewStream()
	defer s.Close()
	const n = 100_003
	sc := newSaxpy(t, c, n)
	defer sc.close()
	grid, block := Dim1((n+255)/256), Dim1(256)

	// Direct: fill y with 1.0, then saxpy.
	if err := s.MemsetD32(sc.y.Ptr(), math.Float32bits(1), n); err != nil {
		t.Fatal(err)
	}
	if err := s.Launch(k.saxpy, grid, block, 0, sc.args); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	direct := sc.read(t, c)
	equalF32(t, direct, sc.want(1))

	// Packed: the same launch packed once; the values are Pack's copy, so
	// a later change of the Args does not reach it.
	p, err := s.Pack(k.saxpy, grid, block, 0, sc.args)
	if err != nil {
		t.Fatal(err)
	}
	sc.args.SetFloat32(2, 1000)
	for rep := 0; rep < 2; rep++ {
		if err := s.MemsetD32(sc.y.Ptr(), math.Float32bits(1), n); err != nil {
			t.Fatal(err)
		}
		if err := p.Launch(); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		equalF32(t, sc.read(t, c), direct)
	}
	sc.args.SetFloat32(2, sc.a)

	// Graph: the same two steps as nodes with an explicit edge, replayed
	// twice over a poisoned y so only the graph can make it right.
	g, err := c.NewGraph()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fill, err := g.AddMemset(sc.y.Ptr(), math.Float32bits(1), 4, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddKernel(k.saxpy, grid, block, 0, sc.args, fill); err != nil {
		t.Fatal(err)
	}
	sc.args.SetFloat32(2, 1000) // values were copied into the graph
	defer sc.args.SetFloat32(2, sc.a)
	e, err := g.Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for rep := 0; rep < 2; rep++ {
		if err := s.MemsetD8(sc.y.Ptr(), 0xff, 4*n); err != nil {
			t.Fatal(err)
		}
		if err := e.Launch(s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		equalF32(t, sc.read(t, c), direct)
	}
}

func TestEventTiming(t *testing.T) {
	c, k := kernels(t)
	s, _ := c.NewStream()
	defer s.Close()
	const n = 1 << 24
	sc := newSaxpy(t, c, n)
	defer sc.close()
	start, err := c.NewEvent()
	if err != nil {
		t.Fatal(err)
	}
	defer start.Close()
	end, _ := c.NewEvent()
	defer end.Close()
	if err := start.Record(s); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if err := s.Launch(k.saxpy, Dim1(n/256), Dim1(256), 0, sc.args); err != nil {
			t.Fatal(err)
		}
	}
	if err := end.Record(s); err != nil {
		t.Fatal(err)
	}
	if err := end.Synchronize(); err != nil {
		t.Fatal(err)
	}
	d, err := Elapsed(start, end)
	if err != nil {
		t.Fatal(err)
	}
	// 10 passes over 3*64 MiB: well above zero, well below a second.
	if d <= 0 || d > 1e9 {
		t.Fatalf("elapsed %v", d)
	}
	t.Logf("10 saxpy over %d floats: %v (%.0f GB/s)", n, d, 10*12*float64(n)/d.Seconds()/1e9)
}

func TestBadLaunches(t *testing.T) {
	c, k := kernels(t)
	s, _ := c.NewStream()
	defer s.Close()
	sc := newSaxpy(t, c, 1024)
	defer sc.close()
	err := s.Launch(k.saxpy, Dim1(1), Dim1(4096), 0, sc.args)
	if !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("4096 threads per block: got %v, want ErrInvalidValue", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Call != "cuLaunchKernel" || e.Name != "CUDA_ERROR_INVALID_VALUE" {
		t.Fatalf("error %#v does not name the call and code", e)
	}
	// A zero grid is refused by hip (no *Error: the driver never saw it),
	// not run as one block.
	if err := s.Launch(k.saxpy, Dim1(0), Dim1(256), 0, sc.args); !errors.Is(err, ErrInvalidValue) || errors.As(err, &e) {
		t.Fatalf("a zero grid: got %v, want hip's ErrInvalidValue", err)
	}
	if k.saxpy.ParamSizes() != nil {
		if err := s.Launch(k.saxpy, Dim1(1), Dim1(32), 0, NewArgs(8, 8)); !errors.Is(err, ErrBadArguments) {
			t.Fatalf("two arguments for four parameters: got %v", err)
		}
		if err := s.Launch(k.saxpy, Dim1(1), Dim1(32), 0, NewArgs(8, 8, 8, 4)); !errors.Is(err, ErrBadArguments) {
			t.Fatalf("8-byte a: got %v", err)
		}
	}
	// The context is still usable after rejected launches.
	if err := s.Launch(k.saxpy, Dim1(4), Dim1(256), 0, sc.args); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.mod.Function("no_such_kernel"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing kernel: got %v", err)
	}
}

func TestBadPTX(t *testing.T) {
	c := gpu(t)
	bad := strings.Replace(string(testPTX(t)), "fma.rn.f32 %f3, %f1, %f2, %f3;", "fma.rn.f32 %f3, %f1, %f9, %f3;", 1)
	_, err := c.LoadModule([]byte(bad))
	var je *JITError
	if !errors.As(err, &je) || !errors.Is(err, ErrInvalidImage) {
		t.Fatalf("got %v, want a JITError of class ErrInvalidImage", err)
	}
	if !strings.Contains(je.Log, "f9") {
		t.Fatalf("JIT log does not point at the bad register:\n%s", je.Log)
	}
	t.Logf("%v", err)
}

func TestManyGoroutines(t *testing.T) {
	c, k := kernels(t)
	shared, _ := c.NewStream()
	defer shared.Close()
	const workers, n = 32, 4099
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs <- func() error {
				own, err := c.NewStream()
				if err != nil {
					return err
				}
				defer own.Close()
				s := own
				if w%2 == 0 {
					s = shared // half the workers share one stream
				}
				sc := newSaxpy(t, c, n)
				defer sc.close()
				for rep := 0; rep < 20; rep++ {
					if err := s.MemsetD32(sc.y.Ptr(), math.Float32bits(float32(w)), n); err != nil {
						return err
					}
					if err := s.Launch(k.saxpy, Dim1((n+127)/128), Dim1(128), 0, sc.args); err != nil {
						return err
					}
					b := make([]byte, 4*n)
					if err := s.CopyDtoH(b, sc.y.Ptr()); err != nil {
						return err
					}
					if err := s.Synchronize(); err != nil {
						return err
					}
					got, want := bytesF32(b), sc.want(float32(w))
					for i := range want {
						if got[i] != want[i] {
							return fmt.Errorf("worker %d rep %d element %d = %v, want %v", w, rep, i, got[i], want[i])
						}
					}
				}
				return nil
			}()
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestDeviceFault runs a faulting kernel in a child process (a fault
// poisons the process's primary context, which the other tests share) and
// checks that the child reports it and survives.
func TestDeviceFault(t *testing.T) {
	if os.Getenv("HIP_FAULT_CHILD") == "1" {
		deviceFaultChild(t)
		return
	}
	gpu(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeviceFault$", "-test.v")
	cmd.Env = append(os.Environ(), "HIP_FAULT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "FAULT-REPORTED") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "FAULT-REPORTED") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

func deviceFaultChild(t *testing.T) {
	c, k := kernels(t)
	s, _ := c.NewStream()
	a := NewArgs(8)
	a.SetPtr(0, 8) // an unmapped address
	if err := s.Launch(k.poke, Dim1(1), Dim1(1), 0, a); err != nil {
		t.Fatalf("launch itself failed: %v", err)
	}
	err := s.Synchronize()
	if !errors.Is(err, ErrDeviceFault) {
		t.Fatalf("sync after faulting kernel: %v, want ErrDeviceFault", err)
	}
	if err2 := s.Launch(k.empty, Dim1(1), Dim1(1), 0, NewArgs()); !errors.Is(err2, ErrDeviceFault) {
		t.Fatalf("launch after fault: %v, want ErrDeviceFault", err2)
	}
	if _, err3 := c.Alloc(16); !errors.Is(err3, ErrDeviceFault) {
		t.Fatalf("alloc after fault: %v", err3)
	}
	s.Close()
	fmt.Printf("FAULT-REPORTED: %v\n", err)
}

// TestStreamCallsWithoutCurrentContext: on CUDA, stream-ordered calls made
// from threads where nothing is current do the work, with no fallback to
// setting the context: the driver takes it from the stream. Results are
// checked, not just statuses.
func TestStreamCallsWithoutCurrentContext(t *testing.T) {
	c, k := kernels(t)
	const n, workers, rounds = 4099, 4, 5
	grid, block := Dim1((n+255)/256), Dim1(256)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	onesBytes := f32bytes(ones) // reachable until every stream is past its copies
	type lane struct {
		s   *Stream
		sc  *saxpyCase
		got []byte
		err error
	}
	lanes := make([]*lane, workers)
	for i := range lanes {
		s, err := c.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sc := newSaxpy(t, c, n)
		defer sc.close()
		lanes[i] = &lane{s: s, sc: sc, got: make([]byte, 4*n)}
	}
	want := f32bytes(lanes[0].sc.want(1))
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for r := range rounds {
				c.lib.raw(fnCtxSetCurrent, 0)
				l.err = errors.Join(
					l.s.CopyHtoD(l.sc.y.Ptr(), onesBytes),
					l.s.Launch(k.saxpy, grid, block, 0, l.sc.args),
					l.s.CopyDtoH(l.got, l.sc.y.Ptr()),
					l.s.Synchronize())
				if l.err == nil && !bytes.Equal(l.got, want) {
					l.err = fmt.Errorf("round %d: saxpy result differs", r)
				}
				if l.err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for i, l := range lanes {
		if l.err != nil {
			t.Fatalf("goroutine %d: %v", i, l.err)
		}
	}
	if c.setForStreams.Load() {
		t.Fatal("the driver refused a stream-ordered call without a current context; calls now set it")
	}
}
