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
