package interp

import (
	"runtime"
	"sync"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// Benchmarks compare the executor with plain Go loops doing the same work,
// in one run, so their ratios can be read side by side:
//
//	go test ./loom/interp -run XXX -bench . -benchtime 5x
const benchN = 16 << 20

func benchSaxpyData() (x, y []float32, xb, yb []byte) {
	x, y = ramp(benchN, 1, 1), ramp(benchN, 2, 1)
	return x, y, f32bytes(x), f32bytes(y)
}

func goSaxpy(a float32, x, y []float32, workers int) {
	if workers <= 1 {
		for i := range y {
			y[i] = a*x[i] + y[i]
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (len(y) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(y))
		wg.Go(func() {
			xs, ys := x[lo:hi], y[lo:hi]
			for i := range ys {
				ys[i] = a*xs[i] + ys[i]
			}
		})
	}
	wg.Wait()
}

func BenchmarkSaxpy(b *testing.B) {
	x, y, xb, yb := benchSaxpyData()
	all := runtime.GOMAXPROCS(0)
	b.Run("go/1core", func(b *testing.B) {
		b.SetBytes(benchN * 12)
		for b.Loop() {
			goSaxpy(1.5, x, y, 1)
		}
	})
	b.Run("go/allcores", func(b *testing.B) {
		b.SetBytes(benchN * 12)
		for b.Loop() {
			goSaxpy(1.5, x, y, all)
		}
	})
	m := corpus(b, "saxpy.loom")
	for _, w := range []int{1, all} {
		name := "interp/1worker"
		if w != 1 {
			name = "interp/allworkers"
		}
		b.Run(name, func(b *testing.B) {
			r := compileRun(b, m, "saxpy", Options{Workers: w})
			l := r.launch(benchN)
			args := []Arg{idx(benchN), f32a(1.5), buf(xb), buf(yb)}
			b.SetBytes(benchN * 12)
			b.ReportAllocs()
			for b.Loop() {
				if err := r.k.Run(l, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func goSum(x []float32, workers int) float64 {
	if workers <= 1 {
		var s float32
		for _, v := range x {
			s += v
		}
		return float64(s)
	}
	parts := make([]float32, workers)
	var wg sync.WaitGroup
	chunk := (len(x) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(x))
		wg.Go(func() {
			var s float32
			for _, v := range x[lo:hi] {
				s += v
			}
			parts[w] = s
		})
	}
	wg.Wait()
	var s float64
	for _, p := range parts {
		s += float64(p)
	}
	return s
}

var sink float64

// BenchmarkReduceSum is the tree reduction of loom/testdata: one element per
// invocation, eight barrier-separated halving steps in workgroup memory.
func BenchmarkReduceSum(b *testing.B) {
	benchReduce(b, corpus(b, "reduce_sum_workgroup.loom"), "reduce_sum_f32", 256)
}

// BenchmarkReduceSumStrided is a reduction written the way GPU reductions
// usually are: each invocation accumulates 64 elements in a block-strided
// loop, then one workgroup reduction and one store per workgroup.
func BenchmarkReduceSumStrided(b *testing.B) {
	benchReduce(b, ownKernel(b, "reduce_sum_strided.loom"), "reduce_sum_strided", 16384)
}

// benchReduce runs a kernel that writes one f32 partial sum per perGroup
// input elements side by side with goSum over the same input.
func benchReduce(b *testing.B, m *loom.Module, export string, perGroup int) {
	x := ramp(benchN, 3, 1)
	xb := f32bytes(x)
	all := runtime.GOMAXPROCS(0)
	b.Run("go/1core", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			sink = goSum(x, 1)
		}
	})
	b.Run("go/allcores", func(b *testing.B) {
		b.SetBytes(benchN * 4)
		for b.Loop() {
			sink = goSum(x, all)
		}
	})
	for _, w := range []int{1, all} {
		name := "interp/1worker"
		if w != 1 {
			name = "interp/allworkers"
		}
		b.Run(name, func(b *testing.B) {
			r := compileRun(b, m, export, Options{Workers: w})
			l := r.launch(benchN)
			if l.Workgroups[0]*perGroup < benchN {
				b.Fatalf("%s covers %d groups of %d, not %d elements", export, l.Workgroups[0], perGroup, benchN)
			}
			part := make([]byte, 4*l.Workgroups[0])
			args := []Arg{idx(benchN), buf(xb), buf(part)}
			b.SetBytes(benchN * 4)
			b.ReportAllocs()
			for b.Loop() {
				if err := r.k.Run(l, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
