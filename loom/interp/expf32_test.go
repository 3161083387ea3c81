package interp

import (
	"flag"
	"math"
	"runtime"
	"sync"
	"testing"
)

var exhaustive = flag.Bool("exhaustive", false, "check expF32Slice on every f32 input (a minute on two cores)")

// expF32 is expF32Slice of one value.
func expF32(x float64) float64 {
	var r [1]float64
	expF32Slice(r[:], []float64{x})
	return r[0]
}

// expNear1 is expNear of one value.
func expNear1(x float64) float64 {
	var y [1]float64
	expNear(y[:], []float64{x})
	return y[0]
}

// TestExpF32 checks that expF32Slice is float32(math.Exp(x)) bit for bit: on
// every f32 input with -exhaustive, else on every 256th bit pattern (2^24
// of them, NaNs, infinities and subnormals among them) and on runs
// around the ends of its fast range.
func TestExpF32(t *testing.T) {
	stride := uint64(256)
	if *exhaustive {
		stride = 1
	}
	check := func(u uint32) bool {
		x := float64(math.Float32frombits(u))
		got, want := expF32(x), float64(float32(math.Exp(x)))
		return math.Float64bits(got) == math.Float64bits(want) || got != got && want != want
	}
	workers := runtime.GOMAXPROCS(0)
	bad := make([][]uint32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := uint64(w) * stride; u < 1<<32; u += uint64(workers) * stride {
				if !check(uint32(u)) && len(bad[w]) < 5 {
					bad[w] = append(bad[w], uint32(u))
				}
			}
		}()
	}
	wg.Wait()
	for _, edge := range []float32{-87.3, 88.7, 0, -1e-30, 1e-30} {
		u := math.Float32bits(edge)
		for d := uint32(0); d < 4096; d++ {
			for _, v := range []uint32{u + d, u - d} {
				if !check(v) {
					bad[0] = append(bad[0], v)
				}
			}
		}
	}
	for _, b := range bad {
		for _, u := range b {
			x := float64(math.Float32frombits(u))
			t.Errorf("expF32(%g) = %g, want %g", x, expF32(x), float64(float32(math.Exp(x))))
		}
	}
}

// TestExpNear checks the float64 approximation under expF32 to the 2^-50
// its midpoint margin assumes, against math.Exp (itself within 2^-52):
// an error far too small to show in most f32 roundings still shows here.
func TestExpNear(t *testing.T) {
	worst := 0.0
	// Every 97th bit pattern from -0 down to -87.3, then from +0 up to
	// 88.7 (bit patterns order floats of one sign by magnitude).
	for _, span := range [][2]uint32{{1 << 31, math.Float32bits(-87.3)}, {0, math.Float32bits(88.7)}} {
		for u := span[0]; u < span[1]; u += 97 {
			x := float64(math.Float32frombits(u))
			worst = max(worst, math.Abs(expNear1(x)/math.Exp(x)-1))
		}
	}
	if worst > 0x1p-50 { // 2^-51 measured, math.Exp's error and the ratio's rounding included
		t.Fatalf("expNear's relative error reaches %g (2^%.1f), above 2^-50", worst, math.Log2(worst))
	}
	t.Logf("worst relative error 2^%.2f", math.Log2(worst))
}

// BenchmarkExpF32 compares expF32Slice with the float32(math.Exp(x)) it
// replaces, over 1024 lanes.
func BenchmarkExpF32(b *testing.B) {
	xs, out := make([]float64, 1024), make([]float64, 1024)
	for i := range xs {
		xs[i] = float64(float32(-20 + 40*float64(i)/1024))
	}
	b.Run("expF32Slice", func(b *testing.B) {
		for range b.N {
			expF32Slice(out, xs)
		}
	})
	b.Run("math.Exp", func(b *testing.B) {
		for range b.N {
			for i, x := range xs {
				out[i] = float64(float32(math.Exp(x)))
			}
		}
	})
}
