package hip

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func TestVendorTablesComplete(t *testing.T) {
	for _, s := range vendorSpecs {
		for id := fnID(0); id < numFns; id++ {
			if len(s.symbols[id]) == 0 && !s.optional[id] {
				t.Errorf("%v: entry %d has no symbol and is not optional", s.vendor, id)
			}
		}
		if s.kernelNodeSize == 0 || s.memsetNodeSize == 0 || s.envVar == "" || len(s.libraries) == 0 {
			t.Errorf("%v: spec incomplete", s.vendor)
		}
		for code, class := range s.classes {
			if s.faults[code] {
				t.Errorf("%v: code %d is both a fault and class %v", s.vendor, code, class)
			}
		}
	}
	if got := hipSpec.libraries[len(hipSpec.libraries)-1]; got != "libamdhip64.so.5" {
		t.Errorf("HIP libraries end with %s", got)
	}
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		vendor Vendor
		code   int32
		name   string
		class  error
		fault  bool
	}{
		{CUDA, 1, "CUDA_ERROR_INVALID_VALUE", ErrInvalidValue, false},
		{CUDA, 2, "CUDA_ERROR_OUT_OF_MEMORY", ErrOutOfMemory, false},
		{CUDA, 100, "CUDA_ERROR_NO_DEVICE", ErrNoDevice, false},
		{CUDA, 218, "CUDA_ERROR_INVALID_PTX", ErrInvalidImage, false},
		{CUDA, 500, "CUDA_ERROR_NOT_FOUND", ErrNotFound, false},
		{CUDA, 600, "CUDA_ERROR_NOT_READY", ErrNotReady, false},
		{CUDA, 700, "CUDA_ERROR_ILLEGAL_ADDRESS", nil, true},
		{CUDA, 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", ErrLaunchOutOfResources, false},
		{CUDA, 719, "CUDA_ERROR_LAUNCH_FAILED", nil, true},
		{CUDA, 4242, "CUDA error 4242", nil, false},
		{HIP, 2, "hipErrorOutOfMemory", ErrOutOfMemory, false},
		{HIP, 100, "hipErrorNoDevice", ErrNoDevice, false},
		{HIP, 218, "hipErrorInvalidKernelFile", ErrInvalidImage, false},
		{HIP, 700, "hipErrorIllegalAddress", nil, true},
	}
	for _, tc := range tests {
		l := &Library{spec: specFor(tc.vendor)}
		l.sym[fnLaunchKernel] = l.spec.symbols[fnLaunchKernel][0]
		e := l.newError(fnLaunchKernel, tc.code)
		if e.Name != tc.name {
			t.Errorf("%v %d: name %q, want %q", tc.vendor, tc.code, e.Name, tc.name)
		}
		if tc.class != nil && !errors.Is(e, tc.class) {
			t.Errorf("%v %d: not %v", tc.vendor, tc.code, tc.class)
		}
		if errors.Is(e, ErrDeviceFault) != tc.fault {
			t.Errorf("%v %d: fault = %v", tc.vendor, tc.code, !tc.fault)
		}
		if !strings.Contains(e.Error(), l.sym[fnLaunchKernel]) || !strings.Contains(e.Error(), tc.name) {
			t.Errorf("message %q lacks the call or the name", e.Error())
		}
	}
}

func TestArgsPacking(t *testing.T) {
	a := NewArgs(8, 4, 4, 8, 12)
	a.SetPtr(0, 0x1122334455667788)
	a.SetFloat32(1, 1.5)
	a.SetInt32(2, -2)
	a.SetFloat64(3, math.Pi)
	a.SetBytes(4, []byte("twelve bytes"))
	if a.Err() != nil {
		t.Fatal(a.Err())
	}
	// Each pointer of the array the driver reads points at its value.
	read := func(i, n int) []byte {
		return cBytes(a.ptrs[i], n) // points into a.words, kept alive by a
	}
	if v := binary.LittleEndian.Uint64(read(0, 8)); v != 0x1122334455667788 {
		t.Errorf("ptr = %#x", v)
	}
	if v := math.Float32frombits(binary.LittleEndian.Uint32(read(1, 4))); v != 1.5 {
		t.Errorf("f32 = %v", v)
	}
	if v := int32(binary.LittleEndian.Uint32(read(2, 4))); v != -2 {
		t.Errorf("i32 = %v", v)
	}
	if v := math.Float64frombits(binary.LittleEndian.Uint64(read(3, 8))); v != math.Pi {
		t.Errorf("f64 = %v", v)
	}
	if v := string(read(4, 12)); v != "twelve bytes" {
		t.Errorf("bytes = %q", v)
	}
	for i, p := range a.ptrs {
		if p%8 != 0 {
			t.Errorf("parameter %d at unaligned %#x", i, p)
		}
	}
	if a.kernelParams() != uintptr(unsafe.Pointer(&a.ptrs[0])) {
		t.Error("kernelParams is not the pointer array")
	}
	if NewArgs().kernelParams() == 0 {
		t.Error("a kernel without parameters gets a NULL array")
	}

	misuse := []struct {
		name string
		set  func(a *Args)
	}{
		{"index past end", func(a *Args) { a.SetUint32(2, 1) }},
		{"negative index", func(a *Args) { a.SetUint32(-1, 1) }},
		{"8 bytes into 4", func(a *Args) { a.SetUint64(0, 1) }},
		{"4 bytes into 8", func(a *Args) { a.SetFloat32(1, 1) }},
	}
	for _, m := range misuse {
		b := NewArgs(4, 8)
		m.set(b)
		if !errors.Is(b.Err(), ErrBadArguments) {
			t.Errorf("%s: Err() = %v", m.name, b.Err())
		}
		f := &Function{name: "k", params: []int{4, 8}}
		if !errors.Is(b.matches(f), ErrBadArguments) {
			t.Errorf("%s: launch would not report it", m.name)
		}
	}
	if err := NewArgs(4, 8).matches(&Function{name: "k", params: []int{4, 4}}); !errors.Is(err, ErrBadArguments) {
		t.Errorf("size mismatch with the kernel: %v", err)
	}
	if err := NewArgs(4, 8).matches(&Function{name: "k"}); err != nil {
		t.Errorf("unknown layout must not be checked: %v", err)
	}
}

func TestNodeEncoding(t *testing.T) {
	p := &kernelNodeParams{fn: 0xf00d, grid: Dim3{2, 3, 4}, block: Dim3{32, 1, 1}, sharedBytes: 48, kernelParams: 0xbeef}
	le := binary.LittleEndian
	b := make([]byte, cudaSpec.kernelNodeSize)
	cudaSpec.kernelNode(b, p)
	if le.Uint64(b[0:]) != 0xf00d || le.Uint32(b[8:]) != 2 || le.Uint32(b[16:]) != 4 || le.Uint32(b[20:]) != 32 ||
		le.Uint32(b[32:]) != 48 || le.Uint64(b[40:]) != 0xbeef || le.Uint64(b[48:]) != 0 {
		t.Errorf("CUDA kernel node % x", b)
	}
	b = make([]byte, hipSpec.kernelNodeSize)
	hipSpec.kernelNode(b, p)
	if le.Uint32(b[0:]) != 32 || le.Uint64(b[24:]) != 0xf00d || le.Uint32(b[32:]) != 2 || le.Uint64(b[48:]) != 0xbeef || le.Uint32(b[56:]) != 48 {
		t.Errorf("HIP kernel node % x", b)
	}
	m := &memsetNodeParams{dst: 0x1000, value: 7, elementSize: 4, width: 10}
	b = make([]byte, cudaSpec.memsetNodeSize)
	cudaSpec.memsetNode(b, m)
	if le.Uint64(b[0:]) != 0x1000 || le.Uint32(b[16:]) != 7 || le.Uint32(b[20:]) != 4 || le.Uint64(b[24:]) != 10 || le.Uint64(b[32:]) != 1 {
		t.Errorf("CUDA memset node % x", b)
	}
}

func TestOpenWithoutLibrary(t *testing.T) {
	if _, err := OpenPath(CUDA, "/nonexistent/libcuda.so.1"); !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("bogus path: %v", err)
	}
	t.Setenv("LOOM_CUDA_LIB", "/nonexistent/libcuda.so.1")
	t.Setenv("LOOM_HIP_LIB", "/nonexistent/libamdhip64.so")
	_, err := Open()
	if !errors.Is(err, ErrNoLibrary) {
		t.Fatalf("got %v, want ErrNoLibrary", err)
	}
	for _, want := range []string{"LOOM_CUDA_LIB=/nonexistent/libcuda.so.1", "LOOM_HIP_LIB", "install"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestDim3(t *testing.T) {
	if got := Dim1(4); got != (Dim3{4, 1, 1}) {
		t.Errorf("Dim1(4) = %v", got)
	}
	if n := (Dim3{2, 1, 3}).Count(); n != 6 {
		t.Errorf("count = %d", n)
	}
	if n := (Dim3{X: 2, Z: 3}).Count(); n != 0 {
		t.Errorf("count of a grid with Y = 0: %d, want 0", n)
	}
	if d, err := Dim3Of("grid", [3]int{7, 1, 2}); err != nil || d != (Dim3{7, 1, 2}) {
		t.Errorf("Dim3Of = %v, %v", d, err)
	}
	for _, c := range []struct {
		v    [3]int
		want string
	}{
		{[3]int{0, 1, 1}, "grid X is 0"},
		{[3]int{1, -1, 1}, "grid Y is -1"},
		{[3]int{1, 1, 1 << 32}, "grid Z is 4294967296"},
	} {
		if _, err := Dim3Of("grid", c.v); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dim3Of(%v): %v, want ErrInvalidValue with %q", c.v, err, c.want)
		}
	}
}

// TestZeroDims checks a launch with a zero grid or block component is
// refused, naming it, before anything else: the stream, context and graph
// here have no driver behind them, so reaching one would crash.
func TestZeroDims(t *testing.T) {
	f := &Function{name: "k"}
	s, g := &Stream{}, &Graph{}
	for _, c := range []struct {
		grid, block Dim3
		want        string
	}{
		{Dim3{0, 1, 1}, Dim1(32), "grid X is 0"},
		{Dim3{4, 0, 1}, Dim1(32), "grid Y is 0"},
		{Dim3{4, 1, 0}, Dim1(32), "grid Z is 0"},
		{Dim3{}, Dim3{}, "grid X is 0"},
		{Dim1(4), Dim3{0, 1, 1}, "block X is 0"},
		{Dim1(4), Dim3{32, 0, 1}, "block Y is 0"},
		{Dim1(4), Dim3{32, 1, 0}, "block Z is 0"},
	} {
		_, perr := s.Pack(f, c.grid, c.block, 0, NewArgs())
		_, gerr := g.AddKernel(f, c.grid, c.block, 0, NewArgs())
		for name, err := range map[string]error{
			"Stream.Launch": s.Launch(f, c.grid, c.block, 0, NewArgs()), "Stream.Pack": perr, "Graph.AddKernel": gerr,
		} {
			if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "launching k") {
				t.Errorf("%s(grid %v, block %v): %v, want ErrInvalidValue naming k and %q", name, c.grid, c.block, err, c.want)
			}
		}
	}
}
