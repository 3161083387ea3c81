package runtime

import (
	"testing"

	"github.com/ebitengine/purego"
)

// scale4Kernel doubles n floats four at a time with 16-byte vector
// accesses, so loom/ptx gives it a build for aligned buffers
// (ptx.Kernel.AlignedPTX) beside the self-versioning one.
var scale4Kernel = []byte(`kernel.def export("scale4") @scale4(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 64 : index
  %c256 = index.constant 256 : index
  %c255 = index.constant 255 : index
  %padded = index.add %n, %c255 : index
  %groups = index.div %padded, %c256 : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %src: buffer, %dst: buffer) where [mul(%n, 4)] {
  %id = kernel.workitem.dispatch.id<x> : index
  %c4 = index.constant 4 : index
  %i = index.mul %id, %c4 : index
  %ok = index.cmp ult, %i, %n : index
  %z = index.constant 0 : offset
  %in = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %out = buffer.view %dst[%z] : buffer -> view<[%n]xf32>
  scf.if %ok {
    %v = vector.load %in[%i] : view<[%n]xf32> -> vector<4xf32>
    %w = vector.addf %v, %v : vector<4xf32>
    vector.store %w, %out[%i] : vector<4xf32>, view<[%n]xf32>
  }
  kernel.return
}
`)

func scale4(t *testing.T, s *Session) Kernel {
	t.Helper()
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "scale4.loom", Text: scale4Kernel}}, Export: "scale4"}})
	if err != nil {
		t.Fatal(err)
	}
	return ks[0]
}

func scale4D(t *testing.T, s *Session, k Kernel, n int, src, dst Slice[float32]) Dispatch {
	t.Helper()
	d, err := s.NewDispatch(k, []Arg{Index(n)}, []Arg{Index(n), Buffer(src.Read()), Buffer(dst.Write())})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAlignedBuildFakeDriver: on the fake driver (every allocation at
// address 0), compiling scale4 loads one module, its aligned build, which
// dispatches on aligned buffers launch; the first dispatch with a buffer 4
// bytes into its allocation loads the self-versioning build once, and
// launches it, directly, packed, and within several commands; a graph of
// both records and replays.
func TestAlignedBuildFakeDriver(t *testing.T) {
	so := fakeCUDA(t)
	s, _, x, y := openFakeCUDA(t, so)
	loadsSym, lastSym := fakeSym(t, so, "fake_module_loads"), fakeSym(t, so, "fake_last_function")
	loads := func() int64 { r, _, _ := purego.SyscallN(loadsSym); return int64(r) }
	lastFn := func() uint64 { r, _, _ := purego.SyscallN(lastSym); return uint64(r) }
	t.Setenv("FAKE_READ_PARAMS", "3")
	before := loads()
	k := scale4(t, s)
	if got := loads() - before; got != 1 {
		t.Fatalf("compiling scale4 loaded %d modules, want its aligned build alone", got)
	}
	gk := s.kernels[k.id].dev.(*gpuKernel)
	if len(gk.alignedParams) != 2 || gk.general != nil {
		t.Fatalf("aligned parameters %v, general build loaded: %v", gk.alignedParams, gk.general != nil)
	}
	aligned := scale4D(t, s, k, 32, x, y)
	if err := s.Run([]Command{aligned}); err != nil {
		t.Fatal(err)
	}
	fast := lastFn()
	if fast != uint64(gk.fn.Handle()) {
		t.Fatalf("aligned dispatch launched %#x, want the aligned build %#x", fast, gk.fn.Handle())
	}
	off := must(y.Sub(1, 32)) // 4 bytes into y
	odd := scale4D(t, s, k, 32, x, off)
	if got := loads() - before; got != 2 || gk.general == nil {
		t.Fatalf("after a misaligned dispatch %d modules loaded, want 2", got)
	}
	for _, cmds := range [][]Command{{odd}, {aligned, odd}} {
		if err := s.Run(cmds); err != nil {
			t.Fatal(err)
		}
		if got := lastFn(); got != uint64(gk.general.Handle()) || got == fast {
			t.Fatalf("misaligned dispatch launched %#x, want the general build %#x", got, gk.general.Handle())
		}
	}
	if err := s.Record("odd", []Command{aligned, odd}); err != nil {
		t.Fatal(err)
	}
	if err := s.Replay("odd"); err != nil {
		t.Fatal(err)
	}
	if err := s.Run([]Command{aligned}); err != nil || lastFn() != fast {
		t.Fatalf("aligned dispatch after a misaligned one launched %#x (%v), want %#x", lastFn(), err, fast)
	}
	_ = scale4D(t, s, k, 32, must(x.Sub(1, 32)), y)
	if got := loads() - before; got != 2 {
		t.Fatalf("a second misaligned dispatch loaded the general build again (%d loads)", got)
	}
}

// TestAlignedBuildResults runs scale4 on every backend this machine has,
// on aligned buffers and on buffers 4 and 8 bytes into their allocations
// (on a GPU: the aligned build, then the self-versioning one), against a
// Go reference.
func TestAlignedBuildResults(t *testing.T) {
	const n = 1000
	in := make([]float32, n+8)
	for i := range in {
		in[i] = float32(i)*0.25 - 100
	}
	for _, s := range storageSessions(t) {
		k := scale4(t, s)
		src := must(Alloc[float32](s, n+8))
		if err := Upload(s, src, in); err != nil {
			t.Fatal(err)
		}
		for _, shift := range []int{0, 1, 2} {
			dst := must(Alloc[float32](s, n+8))
			d := scale4D(t, s, k, n, must(src.Sub(shift, n)), must(dst.Sub(shift, n)))
			if err := s.Run([]Command{d}); err != nil {
				t.Fatal(err)
			}
			got := must(ReadSlice(s, dst))
			for i := range n {
				if want := 2 * in[shift+i]; got[shift+i] != want {
					t.Fatalf("%s, shift %d: dst[%d] = %g, want %g", s.Backend(), shift, i, got[shift+i], want)
				}
			}
		}
	}
}
