package runtime

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/loomgen/loomgen/internal/sidebyside"
)

// dispatchRounds is the number of alternating rounds of
// BenchmarkDispatchOverhead/sidebyside.
var dispatchRounds = flag.Int("dispatch.rounds", 21, "alternating rounds of BenchmarkDispatchOverhead/sidebyside")

// BenchmarkDispatchOverhead is what the session adds to a direct launch on
// the CUDA backend, measured on the fake driver (whose calls cost almost
// nothing): Run of one dispatch (checks, argument packing, the launch
// through hip) against the backend's own launch of the same prepared
// command. The sidebyside sub-benchmark times the two in alternating chunks
// of b.N calls, so drift on a shared machine falls on both, and reports the
// median per-call times, their difference (the session's own work) and the
// median ratio.
func BenchmarkDispatchOverhead(b *testing.B) {
	so := fakeCUDA(b)
	s, p, x, y := openFakeCUDA(b, so)
	d := p.squareD(64, x, y)
	one := []Command{d}
	s.mu.Lock()
	n, err := newPreparer(s, one).prepare(d)
	s.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("session.Run", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Run(one); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backend.launch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.be.launch(n.Launch); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sidebyside", func(b *testing.B) {
		calls := b.N
		timed := func(f func() error) func() (float64, error) {
			return func() (float64, error) {
				start := time.Now()
				for range calls {
					if err := f(); err != nil {
						return 0, err
					}
				}
				return float64(time.Since(start).Nanoseconds()) / float64(calls), nil
			}
		}
		launch := timed(func() error { return s.be.launch(n.Launch) })
		run := timed(func() error { return s.Run(one) })
		r, err := sidebyside.Run(*dispatchRounds, launch, run)
		if err != nil {
			b.Fatal(err)
		}
		r.Report(b, "ns/call", "launch", "run")
		diff := make([]float64, len(r.A))
		for i := range diff {
			diff[i] = r.B[i] - r.A[i]
		}
		b.ReportMetric(sidebyside.Median(diff), "run-launch-ns")
	})
}

// nopLaunchBackend is the CPU backend with launches that do nothing, so a
// benchmark sees only what the session does around a launch.
type nopLaunchBackend struct{ *cpuBackend }

func (nopLaunchBackend) launch(*launchCmd) error { return nil }

// BenchmarkDispatchChecks is the session's own work for Run of one
// dispatch (lock, checks, packing), without any driver: Run against a
// launch that returns at once, alternating as in BenchmarkDispatchOverhead.
// run-launch-ns is the cost a GPU launch pays on top of the driver call.
func BenchmarkDispatchChecks(b *testing.B) {
	s := newSession(nopLaunchBackend{newCPUBackend(Options{Workers: 1})}, "test", Options{Workers: 1})
	defer s.Close()
	p := newPipeline(b, s)
	x := must(Alloc[float32](s, 64))
	y := must(Alloc[float32](s, 64))
	empty, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "empty.loom", Text: emptyKernel}}, Export: "empty"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		d    Dispatch
	}{
		{"empty", must(s.NewDispatch(empty[0], nil, nil))},
		{"square", p.squareD(64, x, y)},
		{"offAdd", p.offAddD(62, 3, 8, x.Region(), must(SliceOf[int32](y.Region())))},
	} {
		b.Run(c.name, func(b *testing.B) {
			one := []Command{c.d}
			var l launchCmd
			s.mu.Lock()
			_, err := s.prepareDispatch(&c.d, &l, nil)
			s.mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
			calls := b.N
			timed := func(f func() error) func() (float64, error) {
				return func() (float64, error) {
					start := time.Now()
					for range calls {
						if err := f(); err != nil {
							return 0, err
						}
					}
					return float64(time.Since(start).Nanoseconds()) / float64(calls), nil
				}
			}
			r, err := sidebyside.Run(*dispatchRounds, timed(func() error { return s.be.launch(&l) }), timed(func() error { return s.Run(one) }))
			if err != nil {
				b.Fatal(err)
			}
			diff := make([]float64, len(r.A))
			for i := range diff {
				diff[i] = r.B[i] - r.A[i]
			}
			b.ReportMetric(sidebyside.Median(diff), "run-launch-ns")
			b.ReportMetric(slices.Min(r.B)-slices.Min(r.A), "min-run-min-launch-ns")
		})
	}
}

// TestRunReusesScratch: direct runs of mixed sizes reuse the session's
// scratch, allocate nothing once it is big enough, and leave no kernel or
// memory referenced from it afterwards. (TestEndToEnd checks direct results
// against the replayed graph's.)
func TestRunReusesScratch(t *testing.T) {
	so := fakeCUDA(t)
	s, p, x, y := openFakeCUDA(t, so)
	d := p.squareD(64, x, y)
	many := []Command{Fill{Region: x.Region()}, d, d, Fill{Region: y.Region()}, d}
	for _, cmds := range [][]Command{many, {d}, many, {Fill{Region: x.Region()}}} {
		if err := s.Run(cmds); err != nil {
			t.Fatal(err)
		}
		for i, l := range s.run.launches {
			if l.Kernel != nil || l.Args != nil {
				t.Fatalf("launch %d still referenced after Run", i)
			}
		}
		for i, n := range s.runNodes[:cap(s.runNodes)] {
			if n.Launch != nil || n.Fill != nil {
				t.Fatalf("node %d still referenced after Run", i)
			}
		}
	}
	one := []Command{d}
	if a := testing.AllocsPerRun(200, func() {
		if err := s.Run(one); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Fatalf("Run of one dispatch allocates %v times", a)
	}
}

// BenchmarkNewDispatch is what sealing a dispatch costs (generated
// Dispatch constructors pay it too): the launch config, predicates and
// extents evaluated from the compiled kernel, the arguments checked and
// packed.
func BenchmarkNewDispatch(b *testing.B) {
	s := testSession(b)
	p := newPipeline(b, s)
	x := must(Alloc[float32](s, 64))
	y := must(Alloc[float32](s, 64))
	b.ReportAllocs()
	for b.Loop() {
		p.axpyD(64, 2, x, y)
	}
}

// BenchmarkHostVersusNative is target 4's comparison without a GPU: on
// the fake driver (made to take the context from the stream, as CUDA's
// does), a C loop of cuLaunchKernel (fake_submit) against the packed
// launch (hip-packed) and Run of the sealed dispatch (session), b.N
// alternating rounds of -native.chunk launches each, as
// BenchmarkSessionVersusNative times them on the device. Each launch
// also does a driver's share of work, spin rounds of arithmetic and a
// read of touch bytes, so the caller's state is evicted between launches
// as a real driver's work evicts it: the ratio then depends on that work,
// and extra-ns, the Go side's own cost per launch, is the figure to read.
func BenchmarkHostVersusNative(b *testing.B) {
	so := fakeCUDA(b)
	purego.SyscallN(fakeSym(b, so, "fake_stream_context"), 1)
	s, _, _, _ := openFakeCUDA(b, so)
	b.Setenv("FAKE_READ_PARAMS", "0") // the empty kernel has no parameters to read
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "empty.loom", Text: emptyKernel}}, Export: "empty"}})
	if err != nil {
		b.Fatal(err)
	}
	ck, err := s.kernel(ks[0])
	if err != nil {
		b.Fatal(err)
	}
	d, err := s.NewDispatch(ks[0], nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	be := s.be.(*gpuBackend)
	fn, stream := ck.dev.(*gpuKernel).fn.Handle(), be.stream.Handle()
	submit, work := fakeSym(b, so, "fake_submit"), fakeSym(b, so, "fake_launch_work")
	one := []Command{d}
	ns := new(int64)
	native := func() (float64, error) {
		n := *nativeChunk
		if r, _, _ := purego.SyscallN(submit, fn, stream, uintptr(n), uintptr(unsafe.Pointer(ns))); r != 0 {
			return 0, fmt.Errorf("fake_submit: status %d", int32(r))
		}
		return float64(*ns) / float64(n), nil
	}
	for _, w := range []struct {
		name        string
		spin, touch uintptr
	}{{"bare", 0, 0}, {"spin", 2000, 0}, {"spin+touch", 1000, 128 << 10}} {
		for _, l := range []struct {
			name   string
			launch func() error
		}{{"hip-packed", d.p.packed.Launch}, {"session", func() error { return s.Run(one) }}} {
			b.Run(w.name+"/"+l.name, func(b *testing.B) {
				purego.SyscallN(work, w.spin, w.touch)
				defer purego.SyscallN(work, 0, 0)
				r := sidebyside.Bench(b, b.N, native, func() (float64, error) { return sidebyside.PerCall(*nativeChunk, l.launch) })
				r.Report(b, "ns/launch", "native", "go")
				r.ReportDifference(b, "extra-ns")
			})
		}
	}
}
