package runtime

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// pipeline is the compiled test kernels with dispatch helpers that compute
// the grid the way generated bindings do (from the launch-config region).
type pipeline struct {
	s                         *Session
	axpy, square, offAdd, nop Kernel
}

func newPipeline(t testing.TB, s *Session) *pipeline {
	ks, err := s.Compile(pipelineSpecs(t))
	if err != nil {
		t.Fatal(err)
	}
	return &pipeline{s: s, axpy: ks[0], square: ks[1], offAdd: ks[2], nop: ks[3]}
}

func grid(n, wg int) [3]int { return [3]int{(n + wg - 1) / wg, 1, 1} }

func (p *pipeline) axpyD(n int, a float32, x, y Slice[float32]) Dispatch {
	return must(p.s.NewDispatch(p.axpy, []Arg{Index(n)}, []Arg{Index(n), F32(a), Buffer(x.Read()), Buffer(y.ReadWrite())}))
}

func (p *pipeline) squareD(n int, src, dst Slice[float32]) Dispatch {
	return must(p.s.NewDispatch(p.square, []Arg{Index(n)}, []Arg{Index(n), Buffer(src.Read()), Buffer(dst.Write())}))
}

func (p *pipeline) offAddD(n int, k int32, off uint64, src Region, out Slice[int32]) Dispatch {
	return must(p.s.NewDispatch(p.offAdd, []Arg{Index(n)}, []Arg{Index(n), I32(k), Offset(off), Buffer(src.Read()), Buffer(out.Write())}))
}

func (p *pipeline) nopD(b Binding) Dispatch {
	return must(p.s.NewDispatch(p.nop, nil, []Arg{Buffer(b)}))
}

// squareRaw is squareD without NewDispatch's checks, to reach the
// executor's own bounds checks.
func (p *pipeline) squareRaw(n int, src, dst Slice[float32]) Dispatch {
	return rawDispatch(p.s, p.square, grid(n, 32), [3]int{32, 1, 1}, Index(n), Buffer(src.Read()), Buffer(dst.Write()))
}

// TestEndToEnd records a small pipeline of fills and dispatches, replays it
// on the CPU backend and compares with a Go reference; direct execution of
// the same commands gives the same bytes.
func TestEndToEnd(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			s := newSession(newCPUBackend(Options{Workers: workers}), "test", Options{Workers: workers})
			defer s.Close()
			p := newPipeline(t, s)
			const n = 1000
			xs := make([]float32, n)
			for i := range xs {
				xs[i] = float32(i%17) - 8.5
			}
			x := must(Weights(s, xs))
			sq := must(Alloc[float32](s, n))
			y := must(Alloc[float32](s, n))
			z := must(Alloc[float32](s, n))
			ints := make([]int32, 2*n)
			for i := range ints {
				ints[i] = int32(i * 3)
			}
			in := must(Weights(s, ints))
			out := must(Alloc[int32](s, n))
			cmds := []Command{
				Fill{Region: y.Region(), Value: math.Float32bits(1)}, // 0
				p.squareD(n, x, sq),                     // 1
				p.axpyD(n, 0.5, sq, y),                  // 2: after 0 and 1
				p.axpyD(n, 2, sq, y),                    // 3: after 1 (reads sq) and 2
				p.squareD(n, x, z),                      // 4: independent
				p.offAddD(n, -7, 4*n, in.Region(), out), // 5: independent
			}
			if err := s.Record("step", cmds); err != nil {
				t.Fatal(err)
			}
			g := must(s.Graph("step"))
			wantDeps := [][]int{nil, nil, {0, 1}, {1, 2}, nil, nil}
			for i, d := range wantDeps {
				if !slices.Equal(g.Nodes[i].Deps, d) && len(d)+len(g.Nodes[i].Deps) > 0 {
					t.Errorf("node %d deps %v, want %v", i, g.Nodes[i].Deps, d)
				}
			}
			if err := s.Replay("step"); err != nil {
				t.Fatal(err)
			}
			gotY := must(ReadSlice(s, y))
			gotZ := must(ReadSlice(s, z))
			gotOut := must(ReadSlice(s, out))
			for i := range n {
				q := xs[i] * xs[i]
				wantY := 2*q + (0.5*q + 1)
				if gotY[i] != wantY || gotZ[i] != q {
					t.Fatalf("i=%d: y=%g z=%g, want %g %g", i, gotY[i], gotZ[i], wantY, q)
				}
				if gotOut[i] != ints[n+i]-7 {
					t.Fatalf("i=%d: out=%d, want %d", i, gotOut[i], ints[n+i]-7)
				}
			}
			// Direct execution of the same commands from a different state
			// lands on the same bytes.
			if err := s.Run([]Command{Fill{Region: y.Region(), Value: 0}, Fill{Region: z.Region(), Value: 0}}); err != nil {
				t.Fatal(err)
			}
			if err := s.Run(cmds); err != nil {
				t.Fatal(err)
			}
			direct := must(s.ReadMany([]Region{y.Region(), z.Region(), out.Region()}))
			graph := [][]byte{bytesOf(gotY), bytesOf(gotZ), bytesOf(gotOut)}
			for i := range direct {
				if !slices.Equal(direct[i], graph[i]) {
					t.Errorf("region %d: direct differs from graph", i)
				}
			}
			// Replaying twice is deterministic (y is reset by the fill).
			if err := s.Replay("step"); err != nil {
				t.Fatal(err)
			}
			if again := must(ReadSlice(s, y)); !slices.Equal(again, gotY) {
				t.Errorf("second replay differs")
			}
			res := must(s.Benchmark("step", 10))
			if res.Graph.Samples != 10 || res.Graph.Median <= 0 {
				t.Errorf("benchmark %+v", res)
			}
		})
	}
}

// TestExecutionFailureMakesUnusable: a dispatch whose buffer is shorter
// than its views (NewDispatch refuses one; rawDispatch gets past it to the
// CPU executor, which checks every access) fails at replay and the session
// then refuses work.
func TestExecutionFailureMakesUnusable(t *testing.T) {
	s := testSession(t)
	p := newPipeline(t, s)
	small := must(Alloc[float32](s, 10))
	big := must(Alloc[float32](s, 100))
	if _, err := s.NewDispatch(p.square, []Arg{Index(100)}, []Arg{Index(100), Buffer(small.Read()), Buffer(big.Write())}); !errors.Is(err, ErrArgument) {
		t.Errorf("NewDispatch of a 40-byte source for 100 elements: %v, want ErrArgument", err)
	}
	if err := s.Record("oob", []Command{p.squareRaw(100, small, big)}); err != nil {
		t.Fatal(err)
	}
	err := s.Replay("oob")
	if err == nil {
		t.Fatal("out-of-bounds replay succeeded")
	}
	if !errors.Is(err, ErrDevice) {
		t.Errorf("replay error %v does not wrap ErrDevice", err)
	}
	if _, err := s.Read(big.Region()); !errors.Is(err, ErrUnusable) {
		t.Errorf("read after failure: %v", err)
	}
	// The same fault issued directly, without a graph.
	d := testSession(t)
	q := newPipeline(t, d)
	small, big = must(Alloc[float32](d, 10)), must(Alloc[float32](d, 100))
	err = d.Run([]Command{q.squareRaw(100, small, big)})
	if !errors.Is(err, ErrDevice) || !strings.Contains(err.Error(), "run: command 0") {
		t.Errorf("direct run error %v does not wrap ErrDevice naming the command", err)
	}
	if err := d.Synchronize(); !errors.Is(err, ErrUnusable) {
		t.Errorf("synchronize after direct failure: %v", err)
	}
}

// BenchmarkReplayOverhead measures per-command cost of graph replay and of
// direct issue on the CPU backend with a kernel that does nothing.
func BenchmarkReplayOverhead(b *testing.B) {
	s := testSession(b)
	p := newPipeline(b, s)
	r := must(s.Allocate(4096))
	const n = 1000
	cmds := make([]Command, n)
	for i := range cmds {
		// Every command writes nothing (nop's access is none) but binds
		// a different slice, so the graph has no edges.
		cmds[i] = p.nopD(must(r.Slice(i*4, 4)).Bind(AccessNone))
	}
	if err := s.Record("nops", cmds); err != nil {
		b.Fatal(err)
	}
	b.Run("graph", func(b *testing.B) {
		for range b.N {
			if err := s.Replay("nops"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/cmd")
	})
	b.Run("direct", func(b *testing.B) {
		for range b.N {
			if err := s.Run(cmds); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/cmd")
	})
}
