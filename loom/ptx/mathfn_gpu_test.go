package ptx

import (
	"math"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
)

const expKernel = `
kernel.def export("exp_f32") @exp_f32(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 256 : index
  %g = index.div %n, %wg : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %x: buffer, %y: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  %v = view.load %xv[%i] : view<[%n]xf32> -> f32
  %e = scalar.expf %v : f32
  view.store %e, %yv[%i] : f32, view<[%n]xf32>
  kernel.return
}`

// ulpsOff is how many f32 ulps got is from the correctly rounded want.
func ulpsOff(got float32, want float64) float64 {
	w := float32(want)
	if got == w {
		return 0
	}
	ulp := math.Nextafter32(w, float32(math.Inf(1))) - w
	if math.IsInf(float64(ulp), 0) || ulp == 0 {
		ulp = w - math.Nextafter32(w, 0)
	}
	return math.Abs(float64(got)-want) / float64(ulp)
}

// TestGPUExpf checks scalar.expf on the device over [-110, 95] in steps
// of 2^-12 and at the edges: within 3 ulp where e^x is a normal f32,
// +inf above the overflow threshold, ±0 or a tiny subnormal below the
// normal range, NaN for NaN.
func TestGPUExpf(t *testing.T) {
	ctx, s := gpuContext(t)
	m, err := loom.ParseFile("exp.loom", []byte(expKernel))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "exp_f32", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var xs []float32
	for x := -110.0; x < 95; x += 1.0 / 4096 {
		xs = append(xs, float32(x))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 88.72283, 88.72284, -87.33654, -103.97208)
	for len(xs)%256 != 0 {
		xs = append(xs, 1)
	}
	n := len(xs)
	mod, err := ctx.LoadModule([]byte(k.PTX))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	fn, err := mod.Function(k.Entry)
	if err != nil {
		t.Fatal(err)
	}
	xm, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer xm.Close()
	ym, err := ctx.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer ym.Close()
	if err := s.CopyHtoD(xm.Ptr(), f32bytes(xs)); err != nil {
		t.Fatal(err)
	}
	a := hip.NewArgs(4, 8, 8)
	a.SetUint32(0, uint32(n))
	a.SetPtr(1, xm.Ptr())
	a.SetPtr(2, ym.Ptr())
	if err := s.Launch(fn, hip.Dim3{X: uint32(n / 256), Y: 1, Z: 1}, hip.Dim3{X: 256, Y: 1, Z: 1}, 0, a); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 4*n)
	if err := s.CopyDtoH(raw, ym.Ptr()); err != nil {
		t.Fatal(err)
	}
	ys := f32s(raw)
	worst := 0.0
	for i, x := range xs {
		want := math.Exp(float64(x))
		got := ys[i]
		switch {
		case math.IsNaN(float64(x)):
			if !math.IsNaN(float64(got)) {
				t.Errorf("expf(NaN) = %g", got)
			}
		case want > math.MaxFloat32:
			if !math.IsInf(float64(got), 1) {
				t.Errorf("expf(%g) = %g, want +Inf", x, got)
			}
		case want < 0x1p-126:
			if got < 0 || float64(got) > 0x1p-126 || math.Abs(float64(got)-want) > 0x1p-140 {
				t.Errorf("expf(%g) = %g, want %g (subnormal range)", x, got, want)
			}
		default:
			if u := ulpsOff(got, want); !(u <= 3) {
				t.Errorf("expf(%g) = %g, want %g (%.1f ulp)", x, got, want, u)
			} else {
				worst = max(worst, u)
			}
		}
	}
	t.Logf("%d inputs, largest error %.2f ulp", n, worst)
}
