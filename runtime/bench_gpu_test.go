package runtime

import (
	"errors"
	"flag"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/nativeloop"
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

// nativeChunk is the launches each side submits per round in the
// VersusNative benchmarks: few enough that the driver's queue never fills
// (hip's BenchmarkSubmitVersusNative shows where it does), so the rounds
// time the host's cost of a launch, not the GPU's drain.
var nativeChunk = flag.Int("native.chunk", 256, "launches a side submits per round in Benchmark(Session|Layers)VersusNative")

// BenchmarkSessionVersusNative compares direct dispatch through the session
// (Run of one sealed dispatch: the session's checks, then its packed
// launch) with a native C loop of cuLaunchKernel over the same compiled
// kernel on the same stream, in one process. Each of b.N rounds runs a
// chunk of -native.chunk launches on each side, the order swapped every
// round, each chunk starting on an idle stream (synchronized off the
// clock) and timed until its last launch returned: the host's cost of a
// launch, which is what the target means. It reports per-launch medians,
// the median per-round ratio with its spread, and extra-ns, the median
// per-round difference per launch. drain is the measurement this replaced:
// 8000 launches a chunk with the synchronize on the clock, which times the
// GPU's drain wherever the queue fills. It needs a CUDA device and
// LOOM_NATIVE_LOOP (internal/nativeloop).
func BenchmarkSessionVersusNative(b *testing.B) {
	g := openNativeBench(b)
	defer g.close()
	b.Run("submit", func(b *testing.B) { g.versus(b, "session", g.run) })
	b.Run("drain", func(b *testing.B) { g.drain(b, "session", 8000, g.run) })
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
	lib    *nativeloop.Lib
	fn     uintptr
	stream uintptr
}

func openNativeBench(b *testing.B) *nativeBench {
	lib, err := nativeloop.Open()
	if errors.Is(err, nativeloop.ErrNotSet) {
		b.Skip(err)
	}
	if err != nil {
		b.Fatal(err)
	}
	s, err := Open(Options{Backend: "cuda"})
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		b.Skipf("no GPU: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	g := &nativeBench{s: s, lib: lib}
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
	d, err := s.NewDispatch(ks[0], nil, nil)
	if err != nil {
		fail(err)
	}
	g.cmd = []Command{d}
	return g
}

func (g *nativeBench) close() { g.s.Close() }

func (g *nativeBench) run() error { return g.s.Run(g.cmd) }

// versus runs b.N rounds, each a chunk of -native.chunk native launches
// and one of calls of launch, both submitted onto an idle stream and timed
// until the last launch returned, and reports the medians as native and
// name, the ratio and its spread, and extra-ns.
func (g *nativeBench) versus(b *testing.B, name string, launch func() error) {
	n := *nativeChunk
	g.compare(b, name, func() (float64, error) {
		if err := g.s.Synchronize(); err != nil {
			return 0, err
		}
		ns, err := g.lib.Submit(g.fn, g.stream, n)
		return ns / float64(n), err
	}, func() (float64, error) {
		if err := g.s.Synchronize(); err != nil {
			return 0, err
		}
		return sidebyside.PerCall(n, launch)
	})
}

// drain is versus as the VersusNative benchmarks measured before: chunks
// of n launches each, with the stream's synchronize on the clock.
func (g *nativeBench) drain(b *testing.B, name string, n int, launch func() error) {
	g.compare(b, name, func() (float64, error) {
		start := time.Now()
		err := g.lib.Launch(g.fn, g.stream, n)
		return float64(time.Since(start).Nanoseconds()) / float64(n), err
	}, func() (float64, error) {
		ns, err := sidebyside.PerCall(n, launch)
		if err != nil {
			return 0, err
		}
		start := time.Now()
		err = g.s.Synchronize()
		return ns + float64(time.Since(start).Nanoseconds())/float64(n), err
	})
}

// compare runs the two sides as sidebyside.Bench does, b.N rounds, on the
// benchmark's goroutine locked to its thread with the context current
// (each benchmark runs on a goroutine of its own; the native loops run as
// in a C program).
func (g *nativeBench) compare(b *testing.B, name string, native, ours func() (float64, error)) {
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := g.be.ctx.Synchronize(); err != nil {
		b.Fatal(err)
	}
	r := sidebyside.Bench(b, b.N, native, ours)
	r.Report(b, "ns/launch", "native", name)
	r.ReportDifference(b, "extra-ns")
}
