package ptx

import (
	"testing"
	"time"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
)

// copyKernels are the kernels of testdata/copy_bw.loom with the number of
// f32 elements one invocation moves.
var copyKernels = []struct {
	export  string
	perItem uint32
}{
	{"copy_f32", 1},
	{"copy_v4_f32", 4},
	{"copy_v4_grid_f32", 16},
}

// BenchmarkCopyBandwidth compares the Loom copy kernels of
// testdata/copy_bw.loom with the driver's device-to-device copy of the
// same 256 MiB, reporting bandwidths (read + write bytes per second) and
// each kernel's ratio to the copy.
func BenchmarkCopyBandwidth(b *testing.B) {
	ctx, s := gpuContext(b)
	m := parse(b, "testdata/copy_bw.loom")
	const n = 64 << 20
	src, err := ctx.Alloc(4 * n)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := ctx.Alloc(4 * n)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Close()
	start, _ := ctx.NewEvent()
	end, _ := ctx.NewEvent()
	defer start.Close()
	defer end.Close()
	timeIt := func(f func() error) time.Duration {
		if err := start.Record(s); err != nil {
			b.Fatal(err)
		}
		if err := f(); err != nil {
			b.Fatal(err)
		}
		if err := end.Record(s); err != nil {
			b.Fatal(err)
		}
		if err := end.Synchronize(); err != nil {
			b.Fatal(err)
		}
		d, err := hip.Elapsed(start, end)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	var launches []func() error
	for _, ck := range copyKernels {
		k, err := Compile([]*loom.Module{m}, ck.export, Options{})
		if err != nil {
			b.Fatal(err)
		}
		mod, err := ctx.LoadModule([]byte(launchedPTX(k)))
		if err != nil {
			b.Fatal(err)
		}
		defer mod.Close()
		fn, err := mod.Function(k.Entry)
		if err != nil {
			b.Fatal(err)
		}
		a := hip.NewArgs(4, 8, 8)
		a.SetUint32(0, n)
		a.SetPtr(1, src.Ptr())
		a.SetPtr(2, dst.Ptr())
		groups := (n/ck.perItem + 255) / 256
		launches = append(launches, func() error {
			return s.Launch(fn, hip.Dim3{X: groups, Y: 1, Z: 1}, hip.Dim3{X: 256, Y: 1, Z: 1}, 0, a)
		})
	}
	memcpy := func() error { return s.CopyDtoD(dst.Ptr(), src.Ptr(), 4*n) }
	for range 3 { // warm up all
		for _, l := range launches {
			timeIt(l)
		}
		timeIt(memcpy)
	}
	tl := make([]time.Duration, len(launches))
	var tm time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, l := range launches {
			tl[j] += timeIt(l)
		}
		tm += timeIt(memcpy)
	}
	gbs := func(d time.Duration) float64 { return float64(8*n) * float64(b.N) / d.Seconds() / 1e9 }
	b.ReportMetric(gbs(tm), "memcpy_GB/s")
	for j, ck := range copyKernels {
		b.ReportMetric(gbs(tl[j]), ck.export+"_GB/s")
		b.ReportMetric(gbs(tl[j])/gbs(tm), ck.export+"/memcpy")
	}
}

// launchedPTX is the build of k the runtime launches on device
// allocations, which are aligned: AlignedPTX where k has one, else PTX.
// The benchmarks time it, on buffers of their own allocation.
func launchedPTX(k *Kernel) string {
	if k.AlignedPTX != "" {
		return k.AlignedPTX
	}
	return k.PTX
}
