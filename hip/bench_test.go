package hip

import (
	"fmt"
	"testing"
)

// BenchmarkLaunchEmpty is the per-launch cost of Stream.Launch of an empty
// kernel (1 block of 32 threads), as testdata/bench_native.c measures it.
func BenchmarkLaunchEmpty(b *testing.B) {
	c, k := kernels(b)
	s, _ := c.NewStream()
	defer s.Close()
	args := NewArgs()
	for i := 0; i < 1000; i++ {
		s.Launch(k.empty, Dim3{X: 1}, Dim3{X: 32}, 0, args)
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Launch(k.empty, Dim3{X: 1}, Dim3{X: 32}, 0, args); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLaunchSubmit times only the host side of launches: batches of
// 256 (well inside the driver's queue) are submitted on the clock and
// drained off it, so the GPU's own launch throughput does not hide the
// per-call cost. bench_native.c's "submit" line is the same measurement.
func BenchmarkLaunchSubmit(b *testing.B) {
	c, k := kernels(b)
	s, _ := c.NewStream()
	defer s.Close()
	args := NewArgs()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%256 == 0 && i > 0 {
			b.StopTimer()
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if err := s.Launch(k.empty, Dim3{X: 1}, Dim3{X: 32}, 0, args); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkLaunchSaxpy launches a kernel with four arguments.
func BenchmarkLaunchSaxpy(b *testing.B) {
	c, k := kernels(b)
	s, _ := c.NewStream()
	defer s.Close()
	sc := newSaxpy(b, c, 256)
	defer sc.close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Launch(k.saxpy, Dim3{X: 1}, Dim3{X: 256}, 0, sc.args); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGraphReplay replays a chain of empty-kernel nodes; ns/node is the
// figure compared with the native graph launch.
func BenchmarkGraphReplay(b *testing.B) {
	for _, nodes := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			c, k := kernels(b)
			s, _ := c.NewStream()
			defer s.Close()
			g, err := c.NewGraph()
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			var prev []GraphNode
			for i := 0; i < nodes; i++ {
				n, err := g.AddKernel(k.empty, Dim3{X: 1}, Dim3{X: 32}, 0, NewArgs(), prev...)
				if err != nil {
					b.Fatal(err)
				}
				prev = []GraphNode{n}
			}
			e, err := g.Instantiate()
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			for i := 0; i < 10; i++ {
				e.Launch(s)
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := e.Launch(s); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Synchronize(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nodes), "ns/node")
		})
	}
}
