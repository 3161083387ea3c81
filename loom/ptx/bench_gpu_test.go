package ptx

import (
	"testing"
	"time"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
)

// copySrc is a plain one-element-per-invocation f32 copy written in Loom.
const copySrc = `
kernel.def export("copy_bw") @copy_bw(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 256 : index
  %wgm1 = index.constant 255 : index
  %p = index.add %n, %wgm1 : index
  %g = index.div %p, %wg : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  %z = index.constant 0 : offset
  %s = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %d = buffer.view %dst[%z] : buffer -> view<[%n]xf32>
  scf.if %ok {
    %x = view.load %s[%i] : view<[%n]xf32> -> f32
    view.store %x, %d[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
`

// BenchmarkCopyBandwidth compares a Loom copy kernel with the driver's
// device-to-device copy of the same 256 MiB, reporting both bandwidths
// (read + write bytes per second) and their ratio.
func BenchmarkCopyBandwidth(b *testing.B) {
	ctx, s := gpuContext(b)
	m, err := loom.ParseFile("copy.loom", []byte(copySrc))
	if err != nil {
		b.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "copy_bw", Options{})
	if err != nil {
		b.Fatal(err)
	}
	mod, err := ctx.LoadModule([]byte(k.PTX))
	if err != nil {
		b.Fatal(err)
	}
	defer mod.Close()
	fn, err := mod.Function(k.Entry)
	if err != nil {
		b.Fatal(err)
	}
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
	a := hip.NewArgs(4, 8, 8)
	a.SetUint32(0, n)
	a.SetPtr(1, src.Ptr())
	a.SetPtr(2, dst.Ptr())
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
	launch := func() error {
		return s.Launch(fn, hip.Dim3{X: n / 256, Y: 1, Z: 1}, hip.Dim3{X: 256, Y: 1, Z: 1}, 0, a)
	}
	memcpy := func() error { return s.CopyDtoD(dst.Ptr(), src.Ptr(), 4*n) }
	for range 3 { // warm up both
		timeIt(launch)
		timeIt(memcpy)
	}
	var tl, tm time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tl += timeIt(launch)
		tm += timeIt(memcpy)
	}
	gbs := func(d time.Duration) float64 { return float64(8*n) * float64(b.N) / d.Seconds() / 1e9 }
	b.ReportMetric(gbs(tl), "loom_GB/s")
	b.ReportMetric(gbs(tm), "memcpy_GB/s")
	b.ReportMetric(gbs(tl)/gbs(tm), "loom/memcpy")
}
