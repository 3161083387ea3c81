package runtime

import (
	"math"
	"testing"
)

// TestDependentGraphBackends replays graphs, and runs directly, commands
// whose kernels read what the kernels before them wrote: a chain of 48
// axpy launches over 1 Mi elements (each over many waves of workgroups, so
// on an sm_90 GPU each launch is scheduled, by its programmatic dependency
// or launch, while the one before still runs) and a diamond whose last
// kernel depends on two. A kernel that ran ahead of the wait at its entry
// would read a stale y. Every value is a small integer, exact in f32,
// checked against Go.
func TestDependentGraphBackends(t *testing.T) {
	const n, chain = 1 << 20, 48
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i%7) - 3
	}
	for _, s := range storageSessions(t) {
		t.Run(s.Backend(), func(t *testing.T) {
			p := newPipeline(t, s)
			x := must(Weights(s, xs))
			y := must(Alloc[float32](s, n))
			a := must(Alloc[float32](s, n))
			b := must(Alloc[float32](s, n))
			cmds := []Command{Fill{Region: y.Region(), Value: math.Float32bits(5)}}
			for i := range chain {
				cmds = append(cmds, p.axpyD(n, float32(i%3+1), x, y)) // y += (i%3+1)·x
			}
			// The diamond: a = 2x, b = 3x + 1 apart, then b += a, then
			// a += b (after both).
			cmds = append(cmds,
				Fill{Region: a.Region()}, Fill{Region: b.Region(), Value: math.Float32bits(1)},
				p.axpyD(n, 2, x, a), p.axpyD(n, 3, x, b),
				p.axpyD(n, 1, a, b), p.axpyD(n, 1, b, a))
			if err := s.Record("dependent", cmds); err != nil {
				t.Fatal(err)
			}
			wantY, wantA, wantB := make([]float32, n), make([]float32, n), make([]float32, n)
			for i, v := range xs {
				wantY[i] = 5
				for c := range chain {
					wantY[i] += float32(c%3+1) * v
				}
				wantA[i], wantB[i] = 2*v, 3*v+1
				wantB[i] += wantA[i]
				wantA[i] += wantB[i]
			}
			// Three replays, then the same commands run directly, where on
			// an sm_90 GPU each launch after a launch is programmatic.
			for replay := range 4 {
				run := func() error { return s.Replay("dependent") }
				if replay == 3 {
					run = func() error { return s.Run(cmds) }
				}
				if err := run(); err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					name string
					got  Slice[float32]
					want []float32
				}{{"y", y, wantY}, {"a", a, wantA}, {"b", b, wantB}} {
					got, err := ReadSlice(s, c.got)
					if err != nil {
						t.Fatal(err)
					}
					for i := range got {
						if got[i] != c.want[i] {
							t.Fatalf("replay %d (3: Run): %s[%d] = %v, want %v", replay, c.name, i, got[i], c.want[i])
						}
					}
				}
			}
			t.Logf("%s: 3 replays and a Run of %d commands agree with Go", s.Backend(), len(cmds))
		})
	}
}

// lateWriterKernels: late_writer sets y[i] = 1, its last workgroup only
// after spin dependent steps (v = v·0 + 1, which no compiler may fold),
// so it writes long after every workgroup of the launch has started;
// read_last copies the last workgroup's 256 values of y into every
// workgroup's slice of out.
var lateWriterKernels = []byte(`kernel.def export("late_writer") @late_writer(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 256 : index
  %groups = index.div %n, %wg : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %spin: index, %y: buffer) where [mul(%n, 256)] {
  %i = kernel.workitem.dispatch.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %count = kernel.workgroup.count<x> : index
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %lastg = index.sub %count, %c1 : index
  %late = index.cmp eq, %g, %lastg : index
  %trips = scf.if %late -> (index) {
    scf.yield %spin : index
  } else {
    scf.yield %c0 : index
  }
  %zero = scalar.constant 0.0 : f32
  %onef = scalar.constant 1.0 : f32
  %v = scf.for %k = [%c0 to %trips step %c1] (%acc = %onef : f32) -> (f32) {
    %m = scalar.mulf %acc, %zero : f32
    %r = scalar.addf %m, %onef : f32
    scf.yield %r : f32
  }
  %base = index.constant 0 : offset
  %yv = buffer.view %y[%base] : buffer -> view<[%n]xf32>
  view.store %v, %yv[%i] : f32, view<[%n]xf32>
  kernel.return
}

kernel.def export("read_last") @read_last(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 256 : index
  %groups = index.div %n, %wg : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %y: buffer, %out: buffer) where [mul(%n, 256)] {
  %i = kernel.workitem.dispatch.id<x> : index
  %l = kernel.workitem.id<x> : index
  %count = kernel.workgroup.count<x> : index
  %c1 = index.constant 1 : index
  %c256 = index.constant 256 : index
  %lastg = index.sub %count, %c1 : index
  %lastbase = index.mul %lastg, %c256 : index
  %j = index.add %lastbase, %l : index
  %base = index.constant 0 : offset
  %yv = buffer.view %y[%base] : buffer -> view<[%n]xf32>
  %ov = buffer.view %out[%base] : buffer -> view<[%n]xf32>
  %v = view.load %yv[%j] : view<[%n]xf32> -> f32
  view.store %v, %ov[%i] : f32, view<[%n]xf32>
  kernel.return
}
`)

// TestDependentLateWriter checks that a kernel waits for everything the
// kernel before it writes, not only for that kernel's start: read_last
// reads what late_writer's last workgroup writes after a long spin. On
// an sm_90 GPU the second launch is programmatic and may be scheduled as
// soon as every workgroup of the first has started (each issues
// griddepcontrol.launch_dependents at its entry), so only the
// griddepcontrol.wait at read_last's entry keeps it from reading y
// before the last workgroup stores; without it out holds the fill's
// zeros. Run directly and replayed as a graph.
func TestDependentLateWriter(t *testing.T) {
	const n = 256 * 132 * 4 // four workgroups per H100/H200 multiprocessor
	for _, s := range storageSessions(t) {
		t.Run(s.Backend(), func(t *testing.T) {
			ks, err := s.Compile([]KernelSpec{
				{Sources: []Source{{Name: "late.loom", Text: lateWriterKernels}}, Export: "late_writer"},
				{Sources: []Source{{Name: "late.loom", Text: lateWriterKernels}}, Export: "read_last"},
			})
			if err != nil {
				t.Fatal(err)
			}
			spin := 1 << 20 // a few milliseconds on the GPU
			if s.Backend() == "cpu" {
				spin = 1 << 10
			}
			y := must(Alloc[float32](s, n))
			out := must(Alloc[float32](s, n))
			cmds := []Command{
				Fill{Region: y.Region()}, Fill{Region: out.Region()},
				must(s.NewDispatch(ks[0], []Arg{Index(n)}, []Arg{Index(n), Index(spin), Buffer(y.Write())})),
				must(s.NewDispatch(ks[1], []Arg{Index(n)}, []Arg{Index(n), Buffer(y.Read()), Buffer(out.Write())})),
			}
			if err := s.Record("late", cmds); err != nil {
				t.Fatal(err)
			}
			for round, run := range []func() error{func() error { return s.Run(cmds) }, func() error { return s.Replay("late") }} {
				if err := run(); err != nil {
					t.Fatal(err)
				}
				got, err := ReadSlice(s, out)
				if err != nil {
					t.Fatal(err)
				}
				stale := 0
				for _, v := range got {
					if v != 1 {
						stale++
					}
				}
				if stale > 0 {
					t.Fatalf("round %d (0: Run, 1: Replay): %d of %d values of out are not 1: read_last read y before late_writer's last workgroup wrote it", round, stale, n)
				}
			}
		})
	}
}
