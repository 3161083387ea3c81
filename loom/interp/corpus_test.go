package interp

import (
	"math"
	"testing"
)

func TestSaxpy(t *testing.T) {
	r := compileRun(t, corpus(t, "saxpy.loom"), "saxpy", Options{})
	for _, n := range []int{1, 127, 128, 1000} {
		x, y := ramp(n, 1, 4), ramp(n, 2, 3)
		a := float32(1.5)
		want := make([]float32, n)
		for i := range want {
			want[i] = float32(math.FMA(float64(a), float64(x[i]), float64(y[i])))
		}
		yb := f32bytes(y)
		r.run(wl(int64(n)), idx(int64(n)), f32a(a), buf(f32bytes(x)), buf(yb))
		exactF32(t, "y", bytesF32(yb), want)
	}
}

func TestElementwiseCorpus(t *testing.T) {
	const n = 300
	src := ramp(n, 7, 5)
	src[3] = float32(math.NaN())
	src[4] = 0
	cases := []struct {
		file, export string
		args         func(in, out []byte) []Arg
		ref          func(x float32, i int) float32
		tol          float64 // 0: exact
	}{
		{"scale.loom", "scale_f32", func(in, out []byte) []Arg { return []Arg{idx(n), f32a(2.5), buf(in), buf(out)} },
			func(x float32, _ int) float32 { return 2.5 * x }, 0},
		{"relu.loom", "relu_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 {
				if x != x {
					return x
				}
				return float32(math.Max(float64(x), 0))
			}, 0},
		{"low_asm.loom", "dec_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 { return x - 1 }, 0},
		{"targets_imports.loom", "negate_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 { return -x }, 0},
		{"multi_kernels.loom", "copy_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 { return x }, 0},
		{"multi_kernels.loom", "iota_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(out)} },
			func(_ float32, i int) float32 { return float32(i) }, 0},
		{"multi_kernels.loom", "fill_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(out), f32a(-7.25)} },
			func(_ float32, i int) float32 { return -7.25 }, 0},
		{"helper_buffers.loom", "scale_via_helper", func(in, out []byte) []Arg { return []Arg{idx(n), f32a(-3), buf(in), buf(out)} },
			func(x float32, _ int) float32 { return -3 * x }, 0},
		{"template_providers.loom", "double_template", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 { return 2 * x }, 0},
		{"gelu_erf.loom", "gelu_erf_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 {
				v := float64(x)
				return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
			}, 1e-5},
		{"gelu_tanh.loom", "gelu_tanh_f32", func(in, out []byte) []Arg { return []Arg{idx(n), buf(in), buf(out)} },
			func(x float32, _ int) float32 {
				v := float64(x)
				return float32(0.5 * v * (1 + math.Tanh(0.7978845608*(v+0.044715*v*v*v))))
			}, 1e-5},
	}
	for _, tc := range cases {
		t.Run(tc.export, func(t *testing.T) {
			r := compileRun(t, corpus(t, tc.file), tc.export, Options{Workers: 2})
			in := f32bytes(src)
			out := make([]byte, 4*n)
			r.run(wl(n), tc.args(in, out)...)
			got := bytesF32(out)
			want := make([]float32, n)
			for i := range want {
				want[i] = tc.ref(src[i], i)
			}
			if tc.tol == 0 {
				exactF32(t, "dst", got, want)
				return
			}
			w64 := make([]float64, n)
			for i := range w64 {
				w64[i] = float64(want[i])
			}
			got[3], w64[3] = 0, 0 // NaN in, NaN out: compared below
			if !math.IsNaN(float64(bytesF32(out)[3])) {
				t.Errorf("NaN input gave %v", bytesF32(out)[3])
			}
			closeF32(t, "dst", got, w64, tc.tol)
		})
	}
}
