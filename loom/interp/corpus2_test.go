package interp

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/x448/float16"
)

func TestReductionsCorpus(t *testing.T) {
	t.Run("reduce_sum_workgroup", func(t *testing.T) {
		r := compileRun(t, corpus(t, "reduce_sum_workgroup.loom"), "reduce_sum_f32", Options{})
		const n = 1000
		src := ramp(n, 3, 2)
		groups := (n + 255) / 256
		part := make([]byte, 4*groups)
		r.run(wl(n), idx(n), buf(f32bytes(src)), buf(part))
		want := make([]float64, groups)
		for i, x := range src {
			want[i/256] += float64(x)
		}
		closeF32(t, "partial", bytesF32(part), want, 1e-5)
		if r.k.WorkgroupStorageBytes() <= 0 {
			t.Errorf("WorkgroupStorageBytes = %d, want the scratch size", r.k.WorkgroupStorageBytes())
		}
	})
	t.Run("workgroup_reduce", func(t *testing.T) {
		r := compileRun(t, corpus(t, "workgroup_reduce.loom"), "block_max", Options{})
		const n = 300
		src := ramp(n, 4, 3)
		groups := (n + 127) / 128
		out, counts := make([]byte, 4*groups), make([]byte, 4*groups)
		r.run(wl(n), idx(n), buf(f32bytes(src)), buf(out), buf(counts))
		wantMax := make([]float32, groups)
		wantCnt := make([]int32, groups)
		for g := range wantMax {
			wantMax[g] = float32(math.Inf(-1))
		}
		for i, x := range src {
			wantMax[i/128] = max(wantMax[i/128], x)
			if x > 0 {
				wantCnt[i/128]++
			}
		}
		exactF32(t, "max", bytesF32(out), wantMax)
		exactI32(t, "counts", bytesI32(counts), wantCnt)
	})
	t.Run("subgroup_reduce", func(t *testing.T) {
		r := compileRun(t, corpus(t, "subgroup_reduce.loom"), "subgroup_sum_max", Options{})
		const n = 100
		src := ramp(n, 5, 3)
		groups := (n + 31) / 32
		sums, maxes := make([]byte, 4*groups), make([]byte, 4*groups)
		r.run(wl(n), idx(n), buf(f32bytes(src)), buf(sums), buf(maxes))
		ws := make([]float64, groups)
		wm := make([]float32, groups)
		for g := range wm {
			wm[g] = float32(math.Inf(-1)) // elements past n do not count
		}
		for i, x := range src {
			ws[i/32] += float64(x)
			wm[i/32] = max(wm[i/32], x)
		}
		closeF32(t, "sums", bytesF32(sums), ws, 1e-5)
		exactF32(t, "maxes", bytesF32(maxes), wm)
	})
	t.Run("scan_subgroup", func(t *testing.T) {
		r := compileRun(t, corpus(t, "scan_subgroup.loom"), "scan_blocks_i32", Options{})
		const n = 77
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(i*7%13) - 5
		}
		dst := make([]byte, 4*n)
		r.run(wl(n), idx(n), buf(i32bytes(src)), buf(dst))
		want := make([]int32, n)
		for i := range want {
			if i%32 == 0 {
				want[i] = src[i]
			} else {
				want[i] = want[i-1] + src[i]
			}
		}
		exactI32(t, "dst", bytesI32(dst), want)
	})
	for _, tc := range []struct{ file, export string }{{"layernorm.loom", "layernorm_f32"}, {"softmax_row.loom", "softmax_rows_f32"}} {
		t.Run(tc.export, func(t *testing.T) {
			r := compileRun(t, corpus(t, tc.file), tc.export, Options{})
			const rows, cols = 5, 300
			x := ramp(rows*cols, 6, 3)
			y := make([]byte, 4*rows*cols)
			want := make([]float64, rows*cols)
			if tc.export == "layernorm_f32" {
				gamma, beta := ramp(cols, 8, 1), ramp(cols, 9, 1)
				const eps = 1e-5
				r.run(wl(rows, cols), idx(rows), idx(cols), f32a(eps), buf(f32bytes(x)), buf(f32bytes(gamma)), buf(f32bytes(beta)), buf(y))
				for rr := 0; rr < rows; rr++ {
					var s, s2 float64
					for c := 0; c < cols; c++ {
						v := float64(x[rr*cols+c])
						s += v
						s2 += v * v
					}
					mean := s / cols
					vr := s2/cols - mean*mean
					for c := 0; c < cols; c++ {
						want[rr*cols+c] = (float64(x[rr*cols+c])-mean)/math.Sqrt(vr+float64(float32(eps)))*float64(gamma[c]) + float64(beta[c])
					}
				}
			} else {
				r.run(wl(rows, cols), idx(rows), idx(cols), buf(f32bytes(x)), buf(y))
				for rr := 0; rr < rows; rr++ {
					m := math.Inf(-1)
					for c := 0; c < cols; c++ {
						m = math.Max(m, float64(x[rr*cols+c]))
					}
					var s float64
					for c := 0; c < cols; c++ {
						s += math.Exp(float64(x[rr*cols+c]) - m)
					}
					for c := 0; c < cols; c++ {
						want[rr*cols+c] = math.Exp(float64(x[rr*cols+c])-m) / s
					}
				}
			}
			closeF32(t, "y", bytesF32(y), want, 1e-4)
		})
	}
}

func TestMatmulTiled(t *testing.T) {
	r := compileRun(t, corpus(t, "matmul_tiled.loom"), "matmul_f32", Options{Workers: 2})
	const m, n, k = 37, 21, 45
	a, b := ramp(m*k, 10, 1), ramp(k*n, 11, 1)
	c := make([]byte, 4*m*n)
	r.run(wl(m, n, k), idx(m), idx(n), idx(k), buf(f32bytes(a)), buf(f32bytes(b)), buf(c))
	want := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			want[i*n+j] = s
		}
	}
	closeF32(t, "C", bytesF32(c), want, 1e-5)
	if got := r.k.WorkgroupStorageBytes(); got != 2048 {
		t.Errorf("WorkgroupStorageBytes = %d, want 2048", got)
	}
}

func TestAtomicsCorpus(t *testing.T) {
	t.Run("histogram", func(t *testing.T) {
		r := compileRun(t, corpus(t, "histogram.loom"), "histogram_i32", Options{Workers: 4})
		const n, bins = 5000, 7
		data := make([]int32, n)
		for i := range data {
			data[i] = int32(i*31%11) - 2 // some outside [0, bins)
		}
		hist := make([]byte, 4*bins)
		r.run(wl(n), idx(n), idx(bins), buf(i32bytes(data)), buf(hist))
		want := make([]int32, bins)
		for _, d := range data {
			if d >= 0 && d < bins {
				want[d]++
			}
		}
		exactI32(t, "hist", bytesI32(hist), want)
	})
	t.Run("atomic_max_cmpxchg", func(t *testing.T) {
		r := compileRun(t, corpus(t, "atomic_max_cmpxchg.loom"), "atomic_max_i32", Options{Workers: 4})
		const n = 4000
		src := make([]int32, n)
		for i := range src {
			src[i] = int32((i*7919)%100003) - 50000
		}
		res := i32bytes([]int32{math.MinInt32, 0})
		r.run(wl(n), idx(n), buf(i32bytes(src)), buf(res))
		wantMax := int32(math.MinInt32)
		for _, v := range src {
			wantMax = max(wantMax, v)
		}
		exactI32(t, "result", bytesI32(res), []int32{wantMax, n})
	})
}

func TestVectorsCorpus(t *testing.T) {
	t.Run("vector_add", func(t *testing.T) {
		r := compileRun(t, corpus(t, "vector_add.loom"), "vector_add4_f32", Options{})
		const n = 400
		a, b := ramp(n, 1, 2), ramp(n, 2, 2)
		c := make([]byte, 4*n)
		r.run(wl(n), idx(n), buf(f32bytes(a)), buf(f32bytes(b)), buf(c))
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		exactF32(t, "c", bytesF32(c), want)
	})
	t.Run("vector_masked", func(t *testing.T) {
		r := compileRun(t, corpus(t, "vector_masked.loom"), "vector_scale8_masked", Options{})
		const n = 403
		src := ramp(n, 3, 2)
		dst := make([]byte, 4*n+8) // guard bytes must stay zero
		r.run(wl(n), idx(n), f32a(1.25), buf(f32bytes(src)), buf(dst[:4*n]))
		want := make([]float32, n)
		for i := range want {
			want[i] = 1.25 * src[i]
		}
		exactF32(t, "dst", bytesF32(dst[:4*n]), want)
	})
	t.Run("vector_dot", func(t *testing.T) {
		r := compileRun(t, corpus(t, "vector_dot.loom"), "rowdot_f32", Options{})
		const rows, cols = 9, 16
		a, x := ramp(rows*cols, 4, 1), ramp(cols, 5, 1)
		dots, sums := make([]byte, 4*rows), make([]byte, 4*rows)
		r.run(wl(rows), idx(rows), idx(cols), buf(f32bytes(a)), buf(f32bytes(x)), buf(dots), buf(sums))
		wd, ws := make([]float64, rows), make([]float64, rows)
		for i := 0; i < rows; i++ {
			for c := 0; c < cols; c++ {
				wd[i] += float64(a[i*cols+c]) * float64(x[c])
				ws[i] += float64(a[i*cols+c])
			}
		}
		closeF32(t, "dots", bytesF32(dots), wd, 1e-5)
		closeF32(t, "sums", bytesF32(sums), ws, 1e-5)
	})
}

func TestLoopsAndControlCorpus(t *testing.T) {
	const rows, cols = 70, 13
	a := ramp(rows*cols, 12, 2)
	t.Run("rowsum_dynamic", func(t *testing.T) {
		r := compileRun(t, corpus(t, "rowsum_dynamic.loom"), "rowsum_f32", Options{})
		out := make([]byte, 4*rows)
		r.run(wl(rows), idx(rows), idx(cols), buf(f32bytes(a)), buf(out))
		want := make([]float64, rows)
		for i := range want {
			for c := 0; c < cols; c++ {
				want[i] += float64(a[i*cols+c])
			}
		}
		closeF32(t, "out", bytesF32(out), want, 1e-5)
	})
	t.Run("colmax", func(t *testing.T) {
		r := compileRun(t, corpus(t, "rowsum_dynamic.loom"), "colmax_f32", Options{})
		out := make([]byte, 4*cols)
		r.run(wl(cols), idx(rows), idx(cols), buf(f32bytes(a)), buf(out))
		want := make([]float32, cols)
		for c := range want {
			want[c] = float32(math.Inf(-1))
			for i := 0; i < rows; i++ {
				want[c] = max(want[c], a[i*cols+c])
			}
		}
		exactF32(t, "colmax", bytesF32(out), want)
	})
	for _, exp := range []string{"weighted_rowsum", "rowsum_unrolled"} {
		t.Run(exp, func(t *testing.T) {
			r := compileRun(t, corpus(t, "loop_clauses.loom"), exp, Options{})
			out := make([]byte, 4*rows)
			r.run(wl(rows), idx(rows), idx(cols), buf(f32bytes(a)), buf(out))
			want := make([]float64, rows)
			for i := range want {
				for c := 0; c < cols; c++ {
					w := 1.0
					if exp == "weighted_rowsum" {
						w = float64(c)
					}
					want[i] += float64(a[i*cols+c]) * w
				}
			}
			closeF32(t, "out", bytesF32(out), want, 1e-5)
		})
	}
	t.Run("while_collatz", func(t *testing.T) {
		r := compileRun(t, corpus(t, "while_collatz.loom"), "collatz_steps", Options{})
		const n = 200
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(i + 1)
		}
		src[5] = 27
		steps := make([]byte, 4*n)
		r.run(wl(n), idx(n), buf(i32bytes(src)), buf(steps))
		want := make([]int32, n)
		for i, v := range src {
			s := int32(0)
			for v != 1 && s < 1000 {
				if v%2 == 0 {
					v /= 2
				} else {
					v = 3*v + 1
				}
				s++
			}
			want[i] = s
		}
		exactI32(t, "steps", bytesI32(steps), want)
	})
	t.Run("switch_lookup", func(t *testing.T) {
		r := compileRun(t, corpus(t, "switch_lookup.loom"), "mode_transform", Options{})
		const n = 50
		src := ramp(n, 13, 4)
		for mode := int64(0); mode < 5; mode++ {
			ab, bb := make([]byte, 4*n), make([]byte, 4*n)
			r.run(wl(n), idx(n), idx(mode), buf(f32bytes(src)), buf(ab), buf(bb))
			wa, wb := make([]float32, n), make([]float32, n)
			tab := map[int64][2]float32{0: {1, 0}, 1: {2, 1}, 2: {0.5, -1}}
			for i, x := range src {
				switch mode {
				case 0:
					wa[i] = x
				case 1:
					wa[i] = -x
				case 2:
					wa[i] = float32(math.Abs(float64(x)))
				}
				st := tab[mode]
				wb[i] = st[0]*x + st[1]
			}
			exactF32(t, "a", bytesF32(ab), wa)
			exactF32(t, "b", bytesF32(bb), wb)
		}
	})
	t.Run("select_buffers", func(t *testing.T) {
		r := compileRun(t, corpus(t, "select_buffers.loom"), "select_source", Options{})
		const n = 40
		a, b := ramp(n, 1, 1), ramp(n, 2, 1)
		for _, which := range []int64{0, 1} {
			out := make([]byte, 4*n)
			r.run(wl(n), idx(n), Arg{Bits: uint64(which)}, buf(f32bytes(a)), buf(f32bytes(b)), buf(out))
			want := make([]float32, n)
			for i := range want {
				v := b[i]
				if which != 0 {
					v = a[i]
				}
				want[i] = 3 * v
			}
			exactF32(t, "out", bytesF32(out), want)
		}
	})
	t.Run("rotate_views", func(t *testing.T) {
		r := compileRun(t, corpus(t, "rotate_views.loom"), "pingpong_f32", Options{})
		const n = 33
		for _, steps := range []int64{0, 1, 4, 5} {
			a0 := ramp(n, 14, 1)
			ab, bb := f32bytes(a0), make([]byte, 4*n)
			r.run(wl(n), idx(n), idx(steps), buf(ab), buf(bb))
			cur, nxt := append([]float32(nil), a0...), make([]float32, n)
			for s := int64(0); s < steps; s++ {
				for i := range cur {
					nxt[i] = cur[i] + 1
				}
				cur, nxt = nxt, cur
			}
			wa, wb := cur, nxt
			if steps%2 == 1 {
				wa, wb = nxt, cur
			}
			exactF32(t, "a", bytesF32(ab), wa)
			if steps > 0 {
				exactF32(t, "b", bytesF32(bb), wb)
			}
		}
	})
	t.Run("transpose", func(t *testing.T) {
		r := compileRun(t, corpus(t, "transpose_2d.loom"), "transpose_f32", Options{})
		out := make([]byte, 4*rows*cols)
		r.run(wl(rows, cols), idx(rows), idx(cols), buf(f32bytes(a)), buf(out))
		want := make([]float32, rows*cols)
		for i := 0; i < rows; i++ {
			for c := 0; c < cols; c++ {
				want[c*rows+i] = a[i*cols+c]
			}
		}
		exactF32(t, "out", bytesF32(out), want)
	})
	t.Run("volume_3d", func(t *testing.T) {
		r := compileRun(t, corpus(t, "volume_3d.loom"), "volume_affine", Options{})
		const d, h, w = 5, 9, 17
		src := ramp(d*h*w, 15, 1)
		out := make([]byte, 4*d*h*w)
		r.run(wl(d, h, w), idx(d), idx(h), idx(w), buf(f32bytes(src)), buf(out))
		want := make([]float32, d*h*w)
		for i := range want {
			want[i] = src[i]*2 + float32(i/(h*w))
		}
		exactF32(t, "out", bytesF32(out), want)
	})
}

func TestMemoryAndTypesCorpus(t *testing.T) {
	t.Run("offset_params", func(t *testing.T) {
		r := compileRun(t, corpus(t, "offset_params.loom"), "scale_at_offsets", Options{})
		const n = 10
		src := ramp(n+3, 16, 1)
		dst := make([]byte, 4*(n+5))
		r.run(wl(n), idx(n), buf(f32bytes(src)), Arg{Bits: 12}, buf(dst), Arg{Bits: 8})
		want := make([]float32, n+5)
		for i := 0; i < n; i++ {
			want[2+i] = src[3+i] * 2
		}
		exactF32(t, "dst", bytesF32(dst), want)
	})
	t.Run("subview_offsets", func(t *testing.T) {
		r := compileRun(t, corpus(t, "subview_offsets.loom"), "diff2_packed", Options{})
		const n = 20
		data := ramp(n, 17, 3)
		packed := f32bytes(append([]float32{1.5, 9, 9, 9}, data...))
		out := make([]byte, 4*(n-2))
		r.run(wl(n), idx(n), buf(packed), buf(out))
		want := make([]float32, n-2)
		for i := range want {
			want[i] = (data[i+2] - data[i]) * 1.5
		}
		exactF32(t, "out", bytesF32(out), want)
	})
	t.Run("cast_f16", func(t *testing.T) {
		r := compileRun(t, corpus(t, "cast_f16.loom"), "cast_f32_f16", Options{})
		src := []float32{0, 1, -2.5, 65504, 65520, 1e-8, 6e-5, 3.14159, float32(math.Inf(-1)), 1.0009765625, 1.00048828125, 70000}
		n := len(src)
		dst, back := make([]byte, 2*n), make([]byte, 4*n)
		r.run(wl(int64(n)), idx(int64(n)), buf(f32bytes(src)), buf(dst), buf(back))
		for i, x := range src {
			h := float16.Fromfloat32(x)
			if got := binary.LittleEndian.Uint16(dst[2*i:]); got != h.Bits() {
				t.Errorf("f16(%v) = %#04x, want %#04x", x, got, h.Bits())
			}
			if got := bytesF32(back)[i]; got != h.Float32() {
				t.Errorf("back(%v) = %v, want %v", x, got, h.Float32())
			}
		}
	})
	t.Run("cast_bf16", func(t *testing.T) {
		r := compileRun(t, corpus(t, "cast_bf16.loom"), "cast_bf16_f32", Options{})
		in := []uint16{0x3f80, 0xc020, 0x7f80, 0x0001, 0x7f7f, 0x4049}
		n := len(in)
		src := make([]byte, 2*n)
		for i, v := range in {
			binary.LittleEndian.PutUint16(src[2*i:], v)
		}
		dst, low := make([]byte, 4*n), make([]byte, 2*n)
		r.run(wl(int64(n)), idx(int64(n)), buf(src), buf(dst), buf(low))
		for i, v := range in {
			x := math.Float32frombits(uint32(v) << 16)
			y := 2 * x
			if got := bytesF32(dst)[i]; got != y {
				t.Errorf("dst[%d] = %v, want %v", i, got, y)
			}
			// y is exactly representable in bf16 unless it overflowed.
			wantLow := uint16(math.Float32bits(y) >> 16)
			if got := binary.LittleEndian.Uint16(low[2*i:]); got != wantLow {
				t.Errorf("low[%d] = %#04x, want %#04x", i, got, wantLow)
			}
		}
	})
	t.Run("scalar_params", func(t *testing.T) {
		r := compileRun(t, corpus(t, "scalar_params.loom"), "mixed_scalars", Options{})
		src := []int32{0, 1, -7, math.MaxInt32, 1000}
		n := len(src)
		bias, mul := int32(5), int64(-3)
		scale := float16.Fromfloat32(0.5)
		wide, halfs := make([]byte, 8*n), make([]byte, 2*n)
		r.run(wl(int64(n)), idx(int64(n)), Arg{Bits: uint64(uint32(bias))}, Arg{Bits: uint64(mul)}, Arg{Bits: uint64(scale.Bits())},
			buf(i32bytes(src)), buf(wide), buf(halfs))
		for i, v := range src {
			w := int64(v+bias) * mul
			if got := int64(binary.LittleEndian.Uint64(wide[8*i:])); got != w {
				t.Errorf("wide[%d] = %d, want %d", i, got, w)
			}
			h := float16.Fromfloat32(float32(v) * 0.5)
			if got := binary.LittleEndian.Uint16(halfs[2*i:]); got != h.Bits() {
				t.Errorf("halfs[%d] = %#04x, want %#04x", i, got, h.Bits())
			}
		}
	})
	t.Run("empty_workload", func(t *testing.T) {
		r := compileRun(t, corpus(t, "empty_workload.loom"), "fixed_grid", Options{})
		out := make([]byte, 4*256)
		r.run(nil, buf(out))
		want := make([]int32, 256)
		for g := range want {
			want[g] = int32(g*10 + 1)
		}
		exactI32(t, "out", bytesI32(out), want)
	})
	t.Run("exit_assert", func(t *testing.T) {
		r := compileRun(t, corpus(t, "exit_assert.loom"), "sqrt_exit", Options{})
		const n = 70
		src := ramp(n, 18, 4)
		for i := range src {
			src[i] = float32(math.Abs(float64(src[i])))
		}
		dst := make([]byte, 4*n)
		r.run(wl(n), idx(n), buf(f32bytes(src)), buf(dst))
		want := make([]float32, n)
		for i, x := range src {
			want[i] = float32(math.Sqrt(float64(x)))
		}
		exactF32(t, "dst", bytesF32(dst), want)
	})
	t.Run("config_tiles", func(t *testing.T) {
		for _, cfg := range []map[string]loom.Const{nil, {
			"tiles.block":       {Type: &loom.Type{Kind: loom.TypeIndex, Name: "index"}, Int: 64},
			"tiles.per_item":    {Type: &loom.Type{Kind: loom.TypeIndex, Name: "index"}, Int: 3},
			"tiles.enable_bias": {Type: typeI1, Int: 0},
		}} {
			r := compileRun(t, corpus(t, "config_tiles.loom"), "bias_tiles", Options{Config: cfg})
			const n = 1001
			src := ramp(n, 19, 2)
			dst := make([]byte, 4*n)
			r.run(wl(n), idx(n), f32a(0.75), buf(f32bytes(src)), buf(dst))
			want := make([]float32, n)
			for i, x := range src {
				want[i] = x
				if cfg == nil {
					want[i] = x + 0.75
				}
			}
			exactF32(t, "dst", bytesF32(dst), want)
		}
	})
	t.Run("assume_ranges", func(t *testing.T) {
		r := compileRun(t, corpus(t, "assume_ranges.loom"), "mirror_add", Options{})
		const n = 31
		src := ramp(n, 20, 2)
		dst := make([]byte, 4*n)
		r.run(wl(n), idx(n), buf(f32bytes(src)), buf(dst))
		want := make([]float32, n)
		for i := range want {
			want[i] = src[i] + src[n-1-i]
		}
		exactF32(t, "dst", bytesF32(dst), want)
	})
}
