package hip

import (
	"errors"
	"os"
	"sync"
	"testing"
)

var (
	gpuOnce sync.Once
	gpuLib  *Library
	gpuCtx  *Context
	gpuErr  error
)

// gpu returns a shared context on device 0, or skips the test with the
// reason when no GPU driver or device is present.
func gpu(tb testing.TB) *Context {
	tb.Helper()
	gpuOnce.Do(func() {
		gpuLib, gpuErr = Open()
		if gpuErr == nil {
			gpuCtx, gpuErr = gpuLib.NewContext(0)
		}
	})
	if errors.Is(gpuErr, ErrNoLibrary) || errors.Is(gpuErr, ErrNoDevice) {
		tb.Skipf("no GPU: %v", gpuErr)
	}
	if gpuErr != nil {
		tb.Fatalf("opening the GPU: %v", gpuErr)
	}
	if gpuLib.Vendor() != CUDA {
		tb.Skipf("test kernels are PTX; driver is %v", gpuLib.Vendor())
	}
	return gpuCtx
}

func testPTX(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("testdata/kernels.ptx")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// kernels loads the test module once per context.
type testKernels struct {
	mod                *Module
	saxpy, empty, poke *Function
}

var (
	kernelsOnce sync.Once
	kernelsVal  testKernels
	kernelsErr  error
)

func kernels(tb testing.TB) (*Context, testKernels) {
	tb.Helper()
	c := gpu(tb)
	kernelsOnce.Do(func() {
		var k testKernels
		if k.mod, kernelsErr = c.LoadModule(testPTX(tb)); kernelsErr != nil {
			return
		}
		for _, f := range []struct {
			dst  **Function
			name string
		}{{&k.saxpy, "saxpy"}, {&k.empty, "empty"}, {&k.poke, "poke"}} {
			if *f.dst, kernelsErr = k.mod.Function(f.name); kernelsErr != nil {
				return
			}
		}
		kernelsVal = k
	})
	if kernelsErr != nil {
		tb.Fatalf("loading test kernels: %v", kernelsErr)
	}
	return c, kernelsVal
}

var (
	benchStreamOnce sync.Once
	benchStreamVal  *Stream
	benchStreamErr  error
)

// benchStream is the one stream every benchmark uses, made once per process
// and never destroyed, as bench_native.c uses one stream for all of its
// measurements: b.N's ramp then times work on the same stream instead of
// on a fresh one per step.
func benchStream(b *testing.B) *Stream {
	b.Helper()
	c := gpu(b)
	benchStreamOnce.Do(func() { benchStreamVal, benchStreamErr = c.NewStream() })
	if benchStreamErr != nil {
		b.Fatalf("creating the benchmark stream: %v", benchStreamErr)
	}
	return benchStreamVal
}
