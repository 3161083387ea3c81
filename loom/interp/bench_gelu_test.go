package interp

import (
	"math"
	"runtime"
	"sync"
	"testing"
)

// goGelu is gelu_tanh.loom in plain Go, over workers goroutines.
func goGelu(x, y []float32, workers int) {
	body := func(xs, ys []float32) {
		for i, v := range xs {
			inner := float32(math.FMA(float64(float32(0.044715)), float64(v*v*v), float64(v)))
			t := float32(math.Tanh(float64(float32(0.7978845608028654) * inner)))
			ys[i] = 0.5 * v * (1 + t)
		}
	}
	if workers <= 1 {
		body(x, y)
		return
	}
	var wg sync.WaitGroup
	chunk := (len(y) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(y))
		wg.Go(func() { body(x[lo:hi], y[lo:hi]) })
	}
	wg.Wait()
}

// BenchmarkGelu is an elementwise kernel whose cost is arithmetic (a tanh
// per element), not memory traffic: the scaling of the executor itself shows
// here, where saxpy's stops at the memory bandwidth the Go loop also hits.
// Parallel efficiency is interp/1worker ÷ (P × interp/allworkers) at -cpu P.
func BenchmarkGelu(b *testing.B) {
	const n = 4 << 20
	x, y := ramp(n, 5, 4), make([]float32, n) // x in [-4, 4)
	xb, yb := f32bytes(x), make([]byte, 4*n)
	all := runtime.GOMAXPROCS(0)
	b.Run("go/1core", func(b *testing.B) {
		b.SetBytes(n * 8)
		for b.Loop() {
			goGelu(x, y, 1)
		}
	})
	b.Run("go/allcores", func(b *testing.B) {
		b.SetBytes(n * 8)
		for b.Loop() {
			goGelu(x, y, all)
		}
	})
	m := corpus(b, "gelu_tanh.loom")
	for _, w := range []int{1, all} {
		name := "interp/1worker"
		if w != 1 {
			name = "interp/allworkers"
		}
		b.Run(name, func(b *testing.B) {
			r := compileRun(b, m, "gelu_tanh_f32", Options{Workers: w})
			l := r.launch(n)
			args := []Arg{idx(n), buf(xb), buf(yb)}
			b.SetBytes(n * 8)
			b.ReportAllocs()
			for b.Loop() {
				if err := r.k.Run(l, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
