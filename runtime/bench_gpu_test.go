package runtime

import (
	"errors"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/sidebyside"
)

// emptyKernel is a kernel without parameters that does nothing: a launch of
// it costs only the launch.
var emptyKernel = []byte(`kernel.def export("empty") @empty() {
  %one = index.constant 1 : index
  %wg = index.constant 32 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch() {
  kernel.return
}
`)

// nativeRounds is how many chunks each side of the VersusNative
// benchmarks runs; the order swaps every round.
var nativeRounds = flag.Int("native.rounds", 41, "alternating rounds of each side in Benchmark(Session|Layers)VersusNative")

// BenchmarkSessionVersusNative compares direct dispatch through the session
// (Run of one sealed dispatch: the session's checks, then its packed
// launch) with a native C loop of cuLaunchKernel over the same compiled
// kernel on the same stream, in one process, alternating chunks of b.N
// launches (-native.rounds each, order swapped every round); it reports
// per-launch medians and the median ratio. It needs a CUDA device and
// LOOM_NATIVE_LOOP, hip/testdata/native_loop.c built as a shared library
// (hip/testdata/benchcmp.sh builds it).
func BenchmarkSessionVersusNative(b *testing.B) {
	g := openNativeBench(b)
	defer g.close()
	g.versus(b, "session", g.run)
}

// BenchmarkLayersVersusNative splits BenchmarkSessionVersusNative by layer,
// each against the same native loop: hip is a bare Stream.Launch of the
// Loom-compiled kernel with ready arguments (what hip's own
// BenchmarkVersusNative measures, on this kernel); hip-packed is the
// hip.PackedLaunch the sealed dispatch holds; backend is the CUDA
// backend's launch of the checked command, packing the arguments per call
// (Run of several commands does this); session-unpacked is Run of the same
// dispatch without its packed launch, the direct path before dispatches
// were packed at seal time; session is Run. The differences between the
// ratios say which layer costs what.
func BenchmarkLayersVersusNative(b *testing.B) {
	g := openNativeBench(b)
	defer g.close()
	gk := g.ck.dev.(*gpuKernel)
	args := hip.NewArgs()
	b.Run("hip", func(b *testing.B) {
		g.versus(b, "go", func() error {
			return g.be.stream.Launch(gk.fn, hip.Dim3{X: 1, Y: 1, Z: 1}, hip.Dim3{X: 32, Y: 1, Z: 1}, 0, args)
		})
	})
	sd := g.cmd[0].(Dispatch).p
	b.Run("hip-packed", func(b *testing.B) { g.versus(b, "go", sd.packed.Launch) })
	b.Run("backend", func(b *testing.B) {
		g.versus(b, "go", func() error { return g.be.launch(&sd.launch) })
	})
	unpacked := *sd
	unpacked.packed = nil
	cmd := []Command{Dispatch{p: &unpacked}}
	b.Run("session-unpacked", func(b *testing.B) {
		g.versus(b, "go", func() error { return g.s.Run(cmd) })
	})
	b.Run("session", func(b *testing.B) { g.versus(b, "go", g.run) })
}

// nativeBench is a CUDA session with the empty kernel compiled and the
// native launch loop loaded.
type nativeBench struct {
	s      *Session
	be     *gpuBackend
	ck     *compiledKernel
	cmd    []Command
	loop   uintptr
	fn     uintptr
	stream uintptr
}

func openNativeBench(b *testing.B) *nativeBench {
	so := os.Getenv("LOOM_NATIVE_LOOP")
	if so == "" {
		b.Skip("LOOM_NATIVE_LOOP is not set")
	}
	s, err := Open(Options{Backend: "cuda"})
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		b.Skipf("no GPU: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	g := &nativeBench{s: s}
	fail := func(err error) {
		s.Close()
		b.Fatal(err)
	}
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "empty.loom", Text: emptyKernel}}, Export: "empty"}})
	if err != nil {
		fail(err)
	}
	if g.ck, err = s.kernel(ks[0]); err != nil {
		fail(err)
	}
	g.be = s.be.(*gpuBackend)
	g.fn, g.stream = g.ck.dev.(*gpuKernel).fn.Handle(), g.be.stream.Handle()
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		fail(err)
	}
	if g.loop, err = purego.Dlsym(h, "native_launch_loop"); err != nil {
		fail(err)
	}
	d, err := s.NewDispatch(ks[0], nil, nil)
	if err != nil {
		fail(err)
	}
	g.cmd = []Command{d}
	return g
}

func (g *nativeBench) close() { g.s.Close() }

func (g *nativeBench) run() error { return g.s.Run(g.cmd) }

// versus alternates b.N native launches with b.N calls of launch (then a
// synchronize), -native.rounds rounds, and reports the medians as native
// and name.
func (g *nativeBench) versus(b *testing.B, name string, launch func() error) {
	// The native loop runs with the context current on its thread, as in
	// a C program: lock the thread (each benchmark runs on a goroutine of
	// its own) and let a context call make it current.
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := g.be.ctx.Synchronize(); err != nil {
		b.Fatal(err)
	}
	n := b.N
	native := func() error {
		if r, _, _ := purego.SyscallN(g.loop, g.fn, g.stream, uintptr(n)); r != 0 {
			return fmt.Errorf("native loop: CUDA error %d", r)
		}
		return nil
	}
	ours := func() error {
		for range n {
			if err := launch(); err != nil {
				return err
			}
		}
		return g.s.Synchronize()
	}
	timed := func(f func() error) func() (float64, error) {
		return func() (float64, error) {
			start := time.Now()
			err := f()
			return float64(time.Since(start).Nanoseconds()) / float64(n), err
		}
	}
	if err := errors.Join(ours(), native()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	r, err := sidebyside.Run(*nativeRounds, timed(native), timed(ours))
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	r.Report(b, "ns/launch", "native", name)
}
