package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// lanesSource is a kernel that stores every lane of its vector parameters
// (f32, f16, i8 and index lanes) as f32, in order, into %dst.
func lanesSource() []byte {
	var b strings.Builder
	b.WriteString(`kernel.def export("lanes") @lanes() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%f: vector<4xf32>, %h: vector<3xf16>, %b: vector<5xi8>, %ix: vector<2xindex>, %dst: buffer) {
  %z = index.constant 0 : offset
  %dv = buffer.view %dst[%z] : buffer -> view<14xf32>
`)
	out := 0
	for _, v := range []struct {
		name, typ, elem string
		n               int
		conv            string // turns lane %l<k> into f32 %v<k>
	}{
		{"f", "vector<4xf32>", "f32", 4, ""},
		{"h", "vector<3xf16>", "f16", 3, "  %%v%d = scalar.extf %%l%d : f16 to f32\n"},
		{"b", "vector<5xi8>", "i8", 5, "  %%v%d = scalar.sitofp %%l%d : i8 to f32\n"},
		{"ix", "vector<2xindex>", "index", 2, "  %%w%[1]d = index.cast %%l%[2]d : index to i32\n  %%v%[1]d = scalar.sitofp %%w%[1]d : i32 to f32\n"},
	} {
		for j := range v.n {
			fmt.Fprintf(&b, "  %%j%d = index.constant %d : index\n  %%k%d = index.constant %d : index\n", out, j, out, out)
			fmt.Fprintf(&b, "  %%l%d = vector.extract %%%s[%%j%d] : %s -> %s\n", out, v.name, out, v.typ, v.elem)
			val := fmt.Sprintf("%%l%d", out)
			if v.conv != "" {
				fmt.Fprintf(&b, v.conv, out, out)
				val = fmt.Sprintf("%%v%d", out)
			}
			fmt.Fprintf(&b, "  view.store %s, %%dv[%%k%d] : f32, view<14xf32>\n", val, out)
			out++
		}
	}
	b.WriteString("  kernel.return\n}\n")
	return []byte(b.String())
}

func compileLanes(t *testing.T, s *Session) Kernel {
	t.Helper()
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "lanes.loom", Text: lanesSource()}}, Export: "lanes"}})
	if err != nil {
		t.Fatal(err)
	}
	return ks[0]
}

// The lanes of lanesSource's vector arguments in the tests, and the f32
// values the kernel stores for them.
var (
	laneF  = []float32{1.5, -2, 0.25, 1e30}
	laneH  = []F16{F16From(-0.5), F16From(65504), F16From(3.0e-5)}
	laneB  = []int8{-128, 127, -1, 0, 5}
	laneIx = []int{-7, 1<<31 - 1}
)

func laneArgs(dst Binding) []Arg {
	return []Arg{Vector(laneF...), Vector(laneH...), Vector(laneB...), Vector(laneIx...), Buffer(dst)}
}

func wantLanes() []float32 {
	var want []float32
	want = append(want, laneF...)
	for _, h := range laneH {
		want = append(want, h.Float32())
	}
	for _, b := range laneB {
		want = append(want, float32(b))
	}
	for _, x := range laneIx {
		want = append(want, float32(x))
	}
	return want
}

// TestVectorArgsBackends: vector arguments reach the kernel lane for lane
// (index lanes narrowed to the 32-bit carrier), run directly and replayed
// from a recording, and KernelInfo describes vector parameters; on the CPU
// executor and, where a GPU and its driver are present, on CUDA.
func TestVectorArgsBackends(t *testing.T) {
	for _, s := range storageSessions(t) {
		t.Run(s.Backend(), func(t *testing.T) { checkVectorArgs(t, s) })
	}
}

func checkVectorArgs(t *testing.T, s *Session) {
	k := compileLanes(t, s)
	info := must(s.KernelInfo(k))
	for i, want := range []ParamInfo{
		{Name: "f", Type: "vector<4xf32>", Bytes: 16, Lanes: 4, Align: 1},
		{Name: "h", Type: "vector<3xf16>", Bytes: 6, Lanes: 3, Align: 1},
		{Name: "b", Type: "vector<5xi8>", Bytes: 5, Lanes: 5, Align: 1},
		{Name: "ix", Type: "vector<2xindex>", Bytes: 8, Lanes: 2, Align: 1},
	} {
		if info.Params[i] != want {
			t.Errorf("param %d: %+v, want %+v", i, info.Params[i], want)
		}
	}
	dst := must(Alloc[float32](s, 14))
	d := must(s.NewDispatch(k, nil, laneArgs(dst.Write())))
	check := func(how string) {
		t.Helper()
		got := must(ReadSlice(s, dst))
		for i, w := range wantLanes() {
			if got[i] != w {
				t.Errorf("%s: lane %d: %v, want %v", how, i, got[i], w)
			}
		}
	}
	if err := s.Run([]Command{d}); err != nil {
		t.Fatal(err)
	}
	check("Run")
	// A recording replays the same lanes.
	if err := s.Record("lanes", []Command{Fill{Region: dst.Region()}, d}); err != nil {
		t.Fatal(err)
	}
	if err := s.Run([]Command{Fill{Region: dst.Region()}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Replay("lanes"); err != nil {
		t.Fatal(err)
	}
	check("Replay")
}

// TestVectorArgsRefused: a vector argument of the wrong lane type or count,
// a scalar for a vector, an index lane past the carrier and a zero vector
// Arg are refused by NewDispatch with what is wrong.
func TestVectorArgsRefused(t *testing.T) {
	s := testSession(t)
	k := compileLanes(t, s)
	dst := must(Alloc[float32](s, 14)).Write()
	for _, c := range []struct {
		name string
		i    int
		arg  Arg
		want string
	}{
		{"three lanes", 0, Vector[float32](1, 2, 3), "parameter %f is vector<4xf32>, got a vector of 3 f32 lanes"},
		{"f64 lanes", 0, Vector[float64](1, 2, 3, 4), "parameter %f is vector<4xf32>, got a vector of 4 f64 lanes"},
		{"bf16 for f16", 1, Vector(BF16From(1), BF16From(2), BF16From(3)), "parameter %h is vector<3xf16>, got a vector of 3 bf16 lanes"},
		{"scalar", 2, I8(3), "parameter %b (#2) is vector<5xi8>, got i8"},
		{"index past 32 bits", 3, Vector(1, 1<<31), "parameter %ix lane 1: index 2147483648 does not fit the 32-bit index carrier"},
		{"zero vector", 3, Arg{kind: argVector}, "a vector Arg without lanes"},
	} {
		args := laneArgs(dst)
		args[c.i] = c.arg
		_, err := s.NewDispatch(k, nil, args)
		if !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrArgument containing %q", c.name, err, c.want)
		}
	}
	if got, want := Vector(laneH...).String(), "vector<3xf16> [-0.5 65504 2.9981136e-05]"; got != want {
		t.Errorf("String: %q, want %q", got, want)
	}
	if got := Vector(true, false).Type(); got != "vector<2xi1>" {
		t.Errorf("Type: %q", got)
	}
}

// TestVectorArgsCUDAFake: on the CUDA backend (the fake driver) a vector
// argument is one parameter of its lanes' bytes, little-endian at their
// carrier widths (the PTX .b8 array), the same from the launch NewDispatch
// packed as from the backend's launch of the checked command.
func TestVectorArgsCUDAFake(t *testing.T) {
	so := fakeCUDA(t)
	s, _, _, _ := openFakeCUDA(t, so)
	sym := fakeSym(t, so, "fake_last_params")
	last := func() []byte {
		out := make([]byte, 8*64)
		n, _, _ := purego.SyscallN(sym, uintptr(unsafe.Pointer(&out[0])))
		return out[:n]
	}
	k := compileLanes(t, s)
	dst := must(Alloc[float32](s, 14))
	d := must(s.NewDispatch(k, nil, laneArgs(dst.Write())))
	if d.p.packed == nil {
		t.Fatal("the CUDA backend packed nothing")
	}
	t.Setenv("FAKE_READ_PARAMS", "5")
	t.Setenv("FAKE_PARAM_SIZES", "16,6,5,8,8")
	le := binary.LittleEndian
	var want []byte
	for _, f := range laneF {
		want = le.AppendUint32(want, math.Float32bits(f))
	}
	for _, h := range laneH {
		want = le.AppendUint16(want, uint16(h))
	}
	for _, b := range laneB {
		want = append(want, byte(b))
	}
	for _, x := range laneIx {
		want = le.AppendUint32(want, uint32(int32(x)))
	}
	want = le.AppendUint64(want, uint64(s.allocs[dst.Region().alloc].mem.(*gpuMem).ptr))
	if err := s.Run([]Command{d}); err != nil {
		t.Fatal(err)
	}
	if got := last(); string(got) != string(want) {
		t.Errorf("packed launch gave the driver\n% x\nwant\n% x", got, want)
	}
	if err := s.be.launch(&d.p.launch); err != nil {
		t.Fatal(err)
	}
	if got := last(); string(got) != string(want) {
		t.Errorf("the backend's launch gave the driver\n% x\nwant\n% x", got, want)
	}
}

// TestVectorLaneEncoding: Vector stores every lane type at its width, each
// lane reading back as the scalar Arg of its value.
func TestVectorLaneEncoding(t *testing.T) {
	for _, c := range []struct {
		arg  Arg
		want string
		size int
	}{
		{Vector(true, false, true), "vector<3xi1> [true false true]", 3},
		{Vector[int8](-128, 127), "vector<2xi8> [-128 127]", 2},
		{Vector[int16](-32768, 7), "vector<2xi16> [-32768 7]", 4},
		{Vector[int32](-1, 1<<31-1), "vector<2xi32> [-1 2147483647]", 8},
		{Vector[int64](-1<<63, 5), "vector<2xi64> [-9223372036854775808 5]", 16},
		{Vector(-3, 4), "vector<2xindex> [-3 4]", 16},
		{Vector[uint64](1<<64-1, 0), "vector<2xoffset> [18446744073709551615 0]", 16},
		{Vector(F16From(1.5)), "vector<1xf16> [1.5]", 2},
		{Vector(BF16From(-2), BF16From(0.5)), "vector<2xbf16> [-2 0.5]", 4},
		{Vector[float32](0.1), "vector<1xf32> [0.1]", 4},
		{Vector(math.Pi), "vector<1xf64> [3.141592653589793]", 8},
	} {
		if got := c.arg.String(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
		if len(c.arg.vec.b) != c.size {
			t.Errorf("%s: %d bytes, want %d", c.want, len(c.arg.vec.b), c.size)
		}
	}
}
