package hip

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeDriver builds testdata/fakedriver.c, plus a stub for every other
// symbol in the CUDA table except those in omit, into a shared library.
// Tests using it skip where no C compiler is installed.
func fakeDriver(t testing.TB, omit ...string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake driver")
	}
	src, err := os.ReadFile("testdata/fakedriver.c")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^int (cu\w+)\(`).FindAllStringSubmatch(string(src), -1) {
		defined[m[1]] = true
	}
	skip := map[string]bool{}
	flags := []string{"-shared", "-fPIC", "-O1"}
	for _, o := range omit {
		skip[o] = true
		flags = append(flags, "-DFAKE_OMIT_"+o) // drops a definition fakedriver.c guards so
	}
	var b strings.Builder
	b.Write(src)
	for _, names := range cudaSpec.symbols {
		for _, n := range names {
			switch {
			case defined[n] || skip[n]:
			case contextFree[n]:
				fmt.Fprintf(&b, "int %s(void) { return 0; }\n", n)
			case streamOrdered[n]:
				fmt.Fprintf(&b, "int %s(void) { return fake_stream_stub(%q); }\n", n, n)
			default:
				fmt.Fprintf(&b, "int %s(void) { return fake_stub(%q); }\n", n, n)
			}
		}
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(c, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libfakecuda.so")
	if out, err := exec.Command(cc, append(flags, "-o", so, c)...).CombinedOutput(); err != nil {
		t.Fatalf("building fake driver: %v\n%s", err, out)
	}
	return so
}

// streamOrdered are the calls Stream makes without a current context where
// the driver takes it from the stream (fake: after fake_stream_context(1)).
var streamOrdered = map[string]bool{
	"cuStreamSynchronize": true, "cuStreamQuery": true, "cuEventRecord": true, "cuGraphLaunch": true,
	"cuMemcpyHtoDAsync_v2": true, "cuMemcpyDtoHAsync_v2": true, "cuMemcpyDtoDAsync_v2": true,
	"cuMemsetD8Async": true, "cuMemsetD32Async": true,
}

// contextFree are the driver calls that need no current context.
var contextFree = map[string]bool{
	"cuInit": true, "cuDriverGetVersion": true, "cuDeviceGetCount": true, "cuDeviceGet": true,
	"cuDeviceGetName": true, "cuDeviceTotalMem_v2": true, "cuDeviceGetAttribute": true,
	"cuDevicePrimaryCtxRetain": true, "cuDevicePrimaryCtxRelease_v2": true, "cuDevicePrimaryCtxRelease": true,
	"cuCtxSetCurrent": true, "cuGetErrorName": true,
}

func TestFakeDriverOpen(t *testing.T) {
	so := fakeDriver(t)
	tests := []struct {
		name string
		env  map[string]string
		want error // nil: opens
	}{
		{"one device", nil, nil},
		{"no device count", map[string]string{"FAKE_DEVICES": "0"}, ErrNoDevice},
		{"no device at init", map[string]string{"FAKE_INIT": "100"}, ErrNoDevice},
		{"old driver", map[string]string{"FAKE_VERSION": "11080"}, ErrOldDriver},
		{"init fails otherwise", map[string]string{"FAKE_INIT": "3"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			l, err := OpenPath(CUDA, so)
			switch {
			case tc.name == "init fails otherwise":
				var e *Error
				if !errors.As(err, &e) || e.Call != "cuInit" || e.Name != "CUDA_ERROR_NOT_INITIALIZED" {
					t.Fatalf("got %v, want cuInit's CUDA_ERROR_NOT_INITIALIZED", err)
				}
			case tc.want == nil:
				if err != nil {
					t.Fatal(err)
				}
				if l.Vendor() != CUDA || l.DriverVersion() != 13000 {
					t.Fatalf("vendor %v version %d", l.Vendor(), l.DriverVersion())
				}
			default:
				if !errors.Is(err, tc.want) {
					t.Fatalf("got %v, want %v", err, tc.want)
				}
			}
		})
	}
}

func TestFakeDriverMissingSymbol(t *testing.T) {
	so := fakeDriver(t, "cuGraphAddKernelNode_v2", "cuGraphAddKernelNode", "cuMemsetD32Async")
	_, err := OpenPath(CUDA, so)
	if !errors.Is(err, ErrMissingSymbol) {
		t.Fatalf("got %v, want ErrMissingSymbol", err)
	}
	for _, want := range []string{"cuGraphAddKernelNode_v2 or cuGraphAddKernelNode", "cuMemsetD32Async", "update"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFakeDriverEnvVar(t *testing.T) {
	so := fakeDriver(t)
	t.Setenv("LOOM_CUDA_LIB", so)
	l, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != so {
		t.Fatalf("loaded %s, want %s", l.Path(), so)
	}
	t.Setenv("FAKE_DEVICES", "0")
	t.Setenv("LOOM_HIP_LIB", "/nonexistent/libamdhip64.so")
	if _, err := Open(); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("a driver without devices: got %v, want ErrNoDevice", err)
	}
}

// TestOpenStream opens the fake driver's device 0 with a stream, and
// reports a missing device or driver as ErrNoDevice or ErrNoLibrary.
func TestOpenStream(t *testing.T) {
	so := fakeDriver(t)
	t.Setenv("LOOM_CUDA_LIB", so)
	s, err := OpenStream(CUDA, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Context().Library().Path() != so {
		t.Errorf("library %s, want %s", s.Context().Library().Path(), so)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(s.Close(), s.Context().Close()); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStream(CUDA, 3); !errors.Is(err, ErrNoDevice) {
		t.Errorf("device 3 of 1: %v, want ErrNoDevice", err)
	}
	t.Setenv("LOOM_CUDA_LIB", "/nonexistent/libcuda.so.1")
	if _, err := OpenStream(CUDA, 0); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("no driver: %v, want ErrNoLibrary", err)
	}
}

func TestFakeDriverErrors(t *testing.T) {
	so := fakeDriver(t)
	t.Setenv("FAKE_RETAIN", "2")
	l, err := OpenPath(CUDA, so)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.NewContext(0)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrOutOfMemory) || e.Call != "cuDevicePrimaryCtxRetain" || e.Name != "CUDA_ERROR_OUT_OF_MEMORY" {
		t.Fatalf("got %v", err)
	}
	// A code this package does not know is named by the driver.
	if got := l.newError(fnLaunchKernel, 12345); got.Name != "CUDA_ERROR_FROM_THE_FUTURE" || errors.Is(got, ErrDeviceFault) {
		t.Fatalf("unknown code: %+v", got)
	}
	if _, err := l.NewContext(3); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("device 3 of 1: %v", err)
	}
}

// TestLaunchAllocatesNothing drives the real launch path into the fake
// driver, which reads the parameters through the pointer array.
func TestLaunchAllocatesNothing(t *testing.T) {
	so := fakeDriver(t)
	l, err := OpenPath(CUDA, so)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.NewContext(0)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := c.LoadModule([]byte("fake"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := mod.Function("k")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(f.ParamSizes()); got != "[8 8]" {
		t.Fatalf("param sizes %s", got)
	}
	s, err := c.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	args := NewArgs(8, 8)
	args.SetPtr(0, 0x1234)
	args.SetUint64(1, 7)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := s.Launch(f, Dim1(4), Dim1(256), 0, args); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Launch allocates %v times per call", allocs)
	}
	if err := s.Launch(f, Dim1(1), Dim1(2048), 0, args); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("oversized block: %v", err)
	}
	if err := s.Launch(f, Dim1(1), Dim1(32), 0, NewArgs(8)); !errors.Is(err, ErrBadArguments) {
		t.Fatalf("too few arguments: %v", err)
	}
	t.Setenv("FAKE_LAUNCH", "700")
	if err := s.Launch(f, Dim1(1), Dim1(32), 0, args); !errors.Is(err, ErrDeviceFault) {
		t.Fatalf("faulting launch: %v", err)
	}
	if err := c.Err(); !errors.Is(err, ErrDeviceFault) {
		t.Fatalf("context after fault: %v", err)
	}
	if _, err := c.Alloc(8); !errors.Is(err, ErrDeviceFault) {
		t.Fatalf("alloc after fault: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewStream(); !errors.Is(err, ErrClosed) {
		t.Fatalf("stream on closed context: %v", err)
	}
}
