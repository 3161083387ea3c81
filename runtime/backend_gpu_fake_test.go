package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/loomgen/loomgen/hip"
)

// fakeCUDA builds hip's stand-in driver (hip/testdata/fakedriver.c) with a
// stub for every other CUDA entry point hip binds, so the CUDA backend's
// session paths (allocation, graphs, replay, failure) run without a GPU.
// The stubs succeed unless FAKE_RC_<symbol> names a status to return.
func fakeCUDA(t testing.TB) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the fake driver")
	}
	src, err := os.ReadFile("../hip/testdata/fakedriver.c")
	if err != nil {
		t.Skip("hip's fake driver source is not next to this package:", err)
	}
	table, err := os.ReadFile("../hip/vendor_cuda.go")
	if err != nil {
		t.Skip(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^int (cu\w+)\(`).FindAllSubmatch(src, -1) {
		defined[string(m[1])] = true
	}
	free := map[string]bool{"cuDeviceGetName": true, "cuDeviceTotalMem_v2": true, "cuDeviceGetAttribute": true,
		"cuDevicePrimaryCtxRelease_v2": true, "cuDevicePrimaryCtxRelease": true}
	var b strings.Builder
	b.Write(src)
	for _, m := range regexp.MustCompile(`"(cu\w+)"`).FindAllSubmatch(table, -1) {
		n := string(m[1])
		switch {
		case defined[n]:
		case free[n]:
			fmt.Fprintf(&b, "int %s(void) { return 0; }\n", n)
		default:
			fmt.Fprintf(&b, "int %s(void) { return fake_stub(%q); }\n", n, n)
		}
		defined[n] = true
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "fake.c")
	if err := os.WriteFile(c, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libfakecuda.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", so, c).CombinedOutput(); err != nil {
		t.Fatalf("building fake driver: %v\n%s", err, out)
	}
	return so
}

// fakeLastLaunch returns the fake driver's record of its last launch:
// grid x, block x, dynamic shared bytes and the first four parameter slots.
func fakeLastLaunch(t testing.TB, so string) func() [7]uint64 {
	t.Helper()
	sym := fakeSym(t, so, "fake_last_launch")
	return func() (v [7]uint64) {
		purego.SyscallN(sym, uintptr(unsafe.Pointer(&v[0])))
		return v
	}
}

// openFakeCUDA opens a "cuda" session on the fake driver with a pipeline
// compiled by loom/ptx, a recorded graph and its regions.
func openFakeCUDA(t testing.TB, so string) (*Session, *pipeline, Slice[float32], Slice[float32]) {
	t.Helper()
	t.Setenv("LOOM_CUDA_LIB", so)
	t.Setenv("LOOM_BACKEND", "")
	t.Setenv("FAKE_PARAMS", "0")      // the fake cannot describe parameters: no layout check
	t.Setenv("FAKE_READ_PARAMS", "1") // every kernel here has at least one
	s, err := Open(Options{Backend: "cuda"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if s.Backend() != "cuda" {
		t.Fatalf("backend %s", s.Backend())
	}
	p := newPipeline(t, s)
	x := must(Alloc[float32](s, 64))
	y := must(Alloc[float32](s, 64))
	empty := must(s.Allocate(0))
	must(s.AllocateShared(0))
	cmds := []Command{
		Fill{Region: x.Region(), Value: 0x3f800000},
		Fill{Region: empty},                          // no bytes: no graph node
		Fill{Region: must(x.Region().Slice(256, 0))}, // empty at the end
		p.squareD(64, x, y),
		p.nopD(y.Read()),
	}
	if err := s.Record("step", cmds); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(cmds); err != nil {
		t.Fatal(err)
	}
	return s, p, x, y
}

// TestCUDABackendFakeDriver runs the session's CUDA paths on the fake
// driver: compile through loom/ptx, zero-byte allocations, graphs with an
// empty fill, replay, direct runs and staged reads all succeed; then each
// kind of driver failure (upload, replay, synchronize, readback, direct
// fill, direct launch, graph build) makes the session unusable and says
// what failed, and Close still succeeds.
func TestCUDABackendFakeDriver(t *testing.T) {
	so := fakeCUDA(t)
	s, _, x, y := openFakeCUDA(t, so)
	// A kernel loom/ptx refuses is a compile error naming kernel and op;
	// the session stays usable.
	opaque := []byte("kernel.def export(\"opaque\") @opaque() {\n  %one = index.constant 1 : index\n" +
		"  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index\n" +
		"} launch(%n: index) {\n  vendor.thing %n : index\n  kernel.return\n}\n")
	_, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "opaque.loom", Text: opaque}}, Export: "opaque"}})
	if !errors.Is(err, ErrCompile) || !strings.Contains(err.Error(), "kernel opaque") || !strings.Contains(err.Error(), "vendor.thing") {
		t.Fatalf("refused kernel: %v", err)
	}
	if err := s.Replay("step"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadMany([]Region{x.Region(), y.Region()}); err != nil {
		t.Fatal(err)
	}
	if err := Upload(s, x, make([]float32, 64)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	const fault = "700" // CUDA_ERROR_ILLEGAL_ADDRESS: poisons the context
	cases := []struct {
		env, val string
		do       func(s *Session, p *pipeline, x, y Slice[float32]) error
		what     string
	}{
		{"FAKE_RC_cuMemcpyHtoDAsync_v2", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error {
			return Upload(s, x, make([]float32, 64))
		}, "upload"},
		{"FAKE_RC_cuGraphLaunch", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error { return s.Replay("step") }, `replay "step"`},
		{"FAKE_RC_cuStreamSynchronize", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error { return s.Synchronize() }, "synchronize"},
		{"FAKE_RC_cuMemcpyDtoHAsync_v2", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error {
			return second(s.Read(y.Region()))
		}, "readback"},
		{"FAKE_RC_cuMemsetD32Async", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error {
			return s.Run([]Command{Fill{Region: x.Region()}})
		}, "run: command 0"},
		{"FAKE_LAUNCH", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error {
			return s.Run([]Command{p.squareD(64, x, y)})
		}, "run: command 0"},
		{"FAKE_RC_cuGraphInstantiateWithFlags", fault, func(s *Session, p *pipeline, x, y Slice[float32]) error {
			return s.Record("again", []Command{Fill{Region: x.Region()}})
		}, `record "again": build graph`},
	}
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			s, p, x, y := openFakeCUDA(t, so)
			t.Setenv(c.env, c.val)
			err := c.do(s, p, x, y)
			if !errors.Is(err, ErrDevice) || !errors.Is(err, hip.ErrDeviceFault) || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("first error %v: want ErrDevice wrapping the driver fault, naming %q", err, c.what)
			}
			t.Setenv(c.env, "0")
			if err := s.Synchronize(); !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), c.what) {
				t.Fatalf("after the fault: %v, want ErrUnusable naming %q", err, c.what)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close after the fault: %v", err)
			}
		})
	}
}

// fakeSym is the function name of the fake driver so, which a test calls
// to read what the driver recorded.
func fakeSym(t testing.TB, so, name string) uintptr {
	t.Helper()
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		t.Fatal(err)
	}
	sym, err := purego.Dlsym(h, name)
	if err != nil {
		t.Fatal(err)
	}
	return sym
}

// TestPackedDispatchLaunch: the launch NewDispatch packs for the CUDA
// backend reaches the driver as the same bytes as the backend's launch of
// the checked command (grid, block, scalars at their widths, a buffer's
// address plus its offset), and Run of it allocates nothing.
func TestPackedDispatchLaunch(t *testing.T) {
	so := fakeCUDA(t)
	s, p, x, y := openFakeCUDA(t, so)
	last := fakeLastLaunch(t, so)
	src := must(x.Region().Slice(8, 220))
	for _, c := range []struct {
		d      Dispatch
		params string // how many the fake driver reads (and records)
	}{
		{p.squareD(64, x, y), "3"},
		{p.offAddD(50, -3, 4, src, must(SliceOf[int32](y.Region()))), "4"},
	} {
		d := c.d
		t.Setenv("FAKE_READ_PARAMS", c.params)
		if d.p.packed == nil {
			t.Fatalf("%s: the CUDA backend packed nothing", d.p.launch.Name)
		}
		if err := s.be.launch(&d.p.launch); err != nil {
			t.Fatal(err)
		}
		want := last()
		if err := s.Run([]Command{d}); err != nil {
			t.Fatal(err)
		}
		if got := last(); got != want {
			t.Errorf("%s: packed launch gave the driver %#x, the backend's launch %#x", d.p.launch.Name, got, want)
		}
	}
	// The last one, spelt out: 4 workgroups of 16, no dynamic storage;
	// n, k as an i32 in the low half of its slot, off, src's address.
	base := uint64(s.allocs[src.alloc].mem.(*gpuMem).ptr)
	if got, want := last(), [7]uint64{4, 16, 0, 50, 0xfffffffd, 4, base + 8}; got != want {
		t.Errorf("offset_add reached the driver as %#x, want %#x", got, want)
	}
	t.Setenv("FAKE_READ_PARAMS", "3")
	one := []Command{p.squareD(64, x, y)}
	if a := testing.AllocsPerRun(200, func() {
		if err := s.Run(one); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("Run of a packed dispatch allocates %v times", a)
	}
}

// TestZeroGridFakeDriver: a dispatch whose launch config gives no
// workgroups is refused by NewDispatch (ErrArgument, before the backend);
// one that skips those checks (rawDispatch) is refused by hip, naming the
// axis, before the driver sees a launch — never run as one workgroup. A
// refusal before the driver leaves the session usable (ErrArgument, not
// ErrDevice), directly and in a recorded graph; a driver failure after
// them still makes it unusable.
func TestZeroGridFakeDriver(t *testing.T) {
	so := fakeCUDA(t)
	s, p, x, y := openFakeCUDA(t, so)
	last := fakeLastLaunch(t, so)
	if _, err := s.NewDispatch(p.square, []Arg{Index(0)}, []Arg{Index(0), Buffer(x.Read()), Buffer(y.Write())}); !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "workgroups [0 1 1]") {
		t.Fatalf("NewDispatch with n = 0: %v, want ErrArgument naming workgroups [0 1 1]", err)
	}
	good := []Command{p.squareD(64, x, y)}
	for _, c := range []struct {
		grid, size [3]int
		want       string
	}{
		{[3]int{0, 1, 1}, [3]int{32, 1, 1}, "grid X is 0"},
		{[3]int{2, 1, 0}, [3]int{32, 1, 1}, "grid Z is 0"},
		{[3]int{2, 1, 1}, [3]int{32, 0, 1}, "block Y is 0"},
	} {
		before := last()
		bad := rawDispatch(s, p.square, c.grid, c.size, Index(64), Buffer(x.Read()), Buffer(y.Write()))
		for _, run := range []struct {
			how string
			do  func() error
		}{
			{"run", func() error { return s.Run([]Command{bad}) }},
			{"run of two", func() error { return s.Run([]Command{good[0], bad}) }},
			{"record", func() error { return s.Record("zero", []Command{bad}) }},
		} {
			err := run.do()
			if !errors.Is(err, hip.ErrInvalidValue) || !errors.Is(err, ErrArgument) || errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%s: grid %v, block %v: %v, want ErrArgument wrapping hip.ErrInvalidValue naming %q", run.how, c.grid, c.size, err, c.want)
			}
			if run.how != "run of two" {
				if got := last(); got != before {
					t.Fatalf("%s: grid %v, block %v reached the driver: %v", run.how, c.grid, c.size, got)
				}
			}
			// Still usable: a good dispatch runs, a graph replays.
			if err := s.Run(good); err != nil {
				t.Fatalf("%s: after the refusal: %v", run.how, err)
			}
			if err := s.Replay("step"); err != nil {
				t.Fatalf("%s: replay after the refusal: %v", run.how, err)
			}
			if err := s.Synchronize(); err != nil {
				t.Fatalf("%s: synchronize after the refusal: %v", run.how, err)
			}
			before = last()
		}
	}
	// A driver failure still poisons the session.
	t.Setenv("FAKE_LAUNCH", "700")
	if err := s.Run(good); !errors.Is(err, ErrDevice) || !errors.Is(err, hip.ErrDeviceFault) {
		t.Fatalf("faulting launch: %v, want ErrDevice wrapping the fault", err)
	}
	t.Setenv("FAKE_LAUNCH", "0")
	if err := s.Run(good); !errors.Is(err, ErrUnusable) {
		t.Fatalf("after the fault: %v, want ErrUnusable", err)
	}
}

// TestProgrammaticFakeDriver: on a device of compute capability 9.0 a
// recorded kernel that depends on another kernel follows it by a
// programmatic dependency (its PTX waits at entry), while a kernel after a
// fill keeps a full one, and a direct Run launches a kernel queued right
// after another programmatically; on an older device neither happens.
func TestProgrammaticFakeDriver(t *testing.T) {
	for _, c := range []struct {
		cc     string
		edge   [4]uint64 // from, to, edge count, edge data
		config [7]uint64 // cuLaunchKernelEx's: grid, block, shared, stream, attributes, id, value
	}{
		// Kernel nodes are 0x5000 + 16·n: square (after the fill) is the
		// first, nop (after square) the second. Edge data: from_port 1
		// (programmatic), type 1 (programmatic). The Run's nop, after
		// square, is one workgroup of one on the stream (0x2000), with
		// programmatic stream serialization (6) allowed.
		{"9", [4]uint64{0x5010, 0x5020, 1, 0x01_00_01}, [7]uint64{1, 1, 0, 0x2000, 1, 6, 1}},
		{"8", [4]uint64{}, [7]uint64{}},
	} {
		t.Run("cc"+c.cc, func(t *testing.T) {
			t.Setenv("FAKE_CC_MAJOR", c.cc)
			so := fakeCUDA(t)
			s, _, _, _ := openFakeCUDA(t, so) // records and runs fill, square, nop
			var edge [4]uint64
			purego.SyscallN(fakeSym(t, so, "fake_last_edge"), uintptr(unsafe.Pointer(&edge[0])))
			if edge != c.edge {
				t.Fatalf("last programmatic edge (from, to, count, data) = %#x, want %#x", edge, c.edge)
			}
			var config [7]uint64
			purego.SyscallN(fakeSym(t, so, "fake_last_config"), uintptr(unsafe.Pointer(&config[0])))
			if config != c.config {
				t.Fatalf("last programmatic launch = %#x, want %#x", config, c.config)
			}
			if err := s.Replay("step"); err != nil {
				t.Fatal(err)
			}
		})
	}
}
