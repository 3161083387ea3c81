package interp

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/mathacc"
	"github.com/loomgen/loomgen/loom"
)

// Go references for loom/testdata/ops_bits.loom: every op there is exact,
// so the CPU executor must match bit for bit.

// opsWords returns n input words spanning small, large and negative values.
func opsWords(n int) []int32 {
	out := make([]int32, n)
	s := uint32(0x12345678)
	for i := range out {
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		out[i] = int32(s)
	}
	if n >= 3 {
		out[0], out[1], out[2] = 0, -1, math.MinInt32
	}
	return out
}

// scramble is the kernels' w = w0 · 0x9E3779B1 and its derived words.
func scramble(w0 int32) (w, w2, w3, w4 int32) {
	w = w0 * -1640531535
	w2 = w * 747796405
	return w, w2, w ^ w2, w2 + -1640531535
}

// field returns bits [off, off+w) of x, zero- or sign-extended.
func field(x uint64, off, w int, signed bool) int64 {
	v := x >> off & (1<<w - 1)
	if signed && v>>(w-1) != 0 {
		return int64(v) - 1<<w
	}
	return int64(v)
}

// wordBytes is the little-endian bytes of words.
func wordBytes(ws ...int32) []byte {
	b := make([]byte, 4*len(ws))
	for i, w := range ws {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(w))
	}
	return b
}

func runOps(t *testing.T, export string, n, outPer int, extra ...int) ([]int32, [][]byte) {
	t.Helper()
	r := compileRun(t, corpus(t, "ops_bits.loom"), export, Options{})
	in := opsWords(n)
	dst := make([]byte, 4*n*outPer)
	args := []Arg{idx(int64(n)), buf(i32bytes(in)), buf(dst)}
	var extras [][]byte
	for _, e := range extra {
		b := make([]byte, e)
		extras = append(extras, b)
		args = append(args, buf(b))
	}
	r.run(wl(int64(n)), args...)
	return bytesI32(dst), extras
}

func checkWords(t *testing.T, what string, i int, got, want []int32) {
	t.Helper()
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("%s item %d lane %d: got %#x, want %#x", what, i, j, uint32(got[j]), uint32(want[j]))
		}
	}
}

func TestOpsBitcast(t *testing.T) {
	const n = 300
	got, _ := runOps(t, "bits_bitcast", n, 8)
	for i, w0 := range opsWords(n) {
		w, _, _, _ := scramble(w0)
		u := uint32(w)
		var b2 uint32
		for k := 0; k < 4; k++ {
			b2 |= uint32(byte(u>>(8*k))*3) << (8 * k)
		}
		lo, hi := uint32(uint16(int16(u)>>3)), uint32(uint16(int16(u>>16)>>3))
		h2 := lo | hi<<16
		q := uint64(u) | uint64(uint32(w0))<<32
		want := []int32{int32(b2), int32(h2), int32(int8(u >> 16)), int32(b2 & 0x3f3f3f3f), w, w0, int32(uint32(q >> 16)), int32(h2)}
		checkWords(t, "bitcast", i, got[8*i:], want)
	}
}

func TestOpsBitfield(t *testing.T) {
	const n = 300
	got, _ := runOps(t, "bits_bitfield", n, 48)
	for i, w0 := range opsWords(n) {
		w, w2, w3, w4 := scramble(w0)
		v := []int32{w, w2, w3, w4}
		bytes := wordBytes(v...)
		var want []int32
		for _, b := range bytes {
			want = append(want, int32(field(uint64(b), 0, 4, false)))
		}
		for _, b := range bytes {
			want = append(want, int32(field(uint64(b), 4, 4, true)))
		}
		mid := make([]int32, 4)
		for j, x := range v {
			mid[j] = int32(field(uint64(uint32(x)), 7, 13, false))
		}
		want = append(want, mid...)
		for _, x := range v {
			want = append(want, int32(field(uint64(uint32(x)), 19, 13, true)))
		}
		for j, x := range v {
			m := uint32(0x1ff) << 3
			want = append(want, int32(uint32(x)&^m|uint32(mid[j])<<3&m))
		}
		ins8 := make([]byte, 16)
		for j, b := range bytes {
			ins8[j] = b&0x0f | (b&0x0f)<<4
		}
		for j := 0; j < 4; j++ {
			want = append(want, int32(binary.LittleEndian.Uint32(ins8[4*j:])))
		}
		checkWords(t, "bitfield", i, got[48*i:], want)
	}
}

func TestOpsPack(t *testing.T) {
	const n = 300
	got, _ := runOps(t, "bits_pack", n, 64)
	for i, w0 := range opsWords(n) {
		w, w2, _, _ := scramble(w0)
		stream := uint64(uint32(w)) | uint64(uint32(w2))<<32
		var want []int32
		for j := 0; j < 16; j++ {
			want = append(want, int32(field(stream, 4*j, 4, false)))
		}
		for j := 0; j < 16; j++ {
			want = append(want, int32(field(stream, 4*j, 4, true)))
		}
		for j := 0; j < 4; j++ {
			want = append(want, int32(field(uint64(uint32(w2)), 8*j, 8, false)))
		}
		for j := 0; j < 4; j++ {
			want = append(want, int32(field(uint64(uint32(w2)), 8*j, 8, true)))
		}
		b3 := stream & 0xffffff
		for j := 0; j < 8; j++ {
			want = append(want, int32(field(b3, 3*j, 3, true)))
		}
		want = append(want, int32(field(b3, 0, 12, false)), int32(field(b3, 12, 12, false)))
		want = append(want, w, w2)
		for j := 0; j < 3; j++ {
			want = append(want, int32(int8(b3>>(8*j))))
		}
		var p1 int32
		for j := 0; j < 16; j++ {
			if field(stream, 4*j, 4, false) < 8 {
				p1 |= 1 << j
			}
		}
		want = append(want, p1, w2)
		checkWords(t, "pack", i, got[64*i:], want)
	}
}

func TestOpsDot(t *testing.T) {
	const n = 300
	got, extra := runOps(t, "bits_dot", n, 36, 4*4*n)
	fgot := bytesF32(extra[0])
	for i, w0 := range opsWords(n) {
		w, w2, w3, w4 := scramble(w0)
		v := []int32{w, w2, w3, w4}
		vk := make([]int32, 4)
		for j, x := range v {
			vk[j] = x * 1103515245
		}
		acc := []int32{w4, w3, w2, w0}
		a, b := wordBytes(v...), wordBytes(vk...)
		var want []int32
		for _, kind := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
			for j := 0; j < 4; j++ {
				s := acc[j]
				for k := 0; k < 4; k++ {
					x, y := int32(a[4*j+k]), int32(b[4*j+k])
					if kind[0] {
						x = int32(int8(a[4*j+k]))
					}
					if kind[1] {
						y = int32(int8(b[4*j+k]))
					}
					s += x * y
				}
				want = append(want, s)
			}
		}
		for _, kind := range [][2]bool{{true, true}, {false, true}, {true, false}, {false, false}} {
			for j := 0; j < 4; j++ {
				s := acc[j]
				for k := 0; k < 8; k++ {
					x := int32(field(uint64(uint32(v[j])), 4*k, 4, kind[0]))
					y := int32(field(uint64(uint32(vk[j])), 4*k, 4, kind[1]))
					s += x * y
				}
				want = append(want, s)
			}
		}
		want = append(want, want[:4]...) // the 2-D dot4i<s8s8> is the same sums
		checkWords(t, "dot", i, got[36*i:], want)
		for j := 0; j < 4; j++ {
			s := float32(int8(a[j]))
			for k := 0; k < 2; k++ {
				s = float32(math.FMA(float64(int8(a[2*j+k])), float64(int8(b[2*j+k])), float64(s)))
			}
			if g := fgot[4*i+j]; g != s {
				t.Fatalf("dot2f item %d lane %d: got %g, want %g", i, j, g, s)
			}
		}
	}
}

// TestOpsFastMathAndFacts checks loom/testdata/ops_misc.loom: reductions
// with fast-math flags keep lane order (bit-exact against the sequential
// Go sums) and the test probes give their proven answers.
func TestOpsFastMathAndFacts(t *testing.T) {
	const n = 200
	xs := ramp(4*n, 3, 3)
	r := compileRun(t, corpus(t, "ops_misc.loom"), "fastmath_reduce", Options{})
	dst := make([]byte, 4*3*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(dst))
	got := bytesF32(dst)
	for i := 0; i < n; i++ {
		v := xs[4*i : 4*i+4]
		var s, d float32
		mx := float32(-100)
		for _, x := range v {
			s += x
			d = float32(math.FMA(float64(x), float64(x), float64(d)))
			mx = max(mx, x)
		}
		for j, w := range []float32{s, d, mx} {
			if got[3*i+j] != w {
				t.Fatalf("row %d result %d: got %g, want %g", i, j, got[3*i+j], w)
			}
		}
	}
	r = compileRun(t, corpus(t, "ops_misc.loom"), "test_facts", Options{})
	out := make([]byte, 4*4*n)
	r.run(wl(n), idx(n), buf(out))
	facts := bytesI32(out)
	for i := 0; i < n; i++ {
		checkWords(t, "facts", i, facts[4*i:], []int32{1, 0, 1, 0})
	}
	r = compileRun(t, corpus(t, "ops_misc.loom"), "more_facts", Options{})
	out = make([]byte, 4*12*n)
	r.run(wl(n), idx(n), buf(out))
	facts = bytesI32(out)
	for i := 0; i < n; i++ {
		// power of two: 64, 48, %n; lane mask: ballot, active, id;
		// memory space: param, its view, workgroup, private view, assumed global.
		checkWords(t, "more facts", i, facts[12*i:], []int32{1, 0, 0, 1, 1, 0, 1, 1, 2, 3, 1, 12})
	}
}

// TestUnalignedAccess runs loom/testdata/unaligned_access.loom at byte
// shifts that misalign every element size; the CPU executor reads and
// writes the little-endian bytes at any offset.
func TestUnalignedAccess(t *testing.T) {
	const n = 100
	for _, shift := range []int{0, 1, 2, 3, 5} {
		r := compileRun(t, corpus(t, "unaligned_access.loom"), "unaligned_words", Options{})
		src := make([]byte, shift+1+8*n+8)
		s := uint32(99)
		for i := range src {
			s = s*1664525 + 1013904223
			src[i] = byte(s >> 24)
		}
		dst := make([]byte, shift+1+16*n)
		s32, s16, s64 := make([]byte, shift+1+4*n), make([]byte, shift+1+2*n), make([]byte, shift+1+8*n)
		r.run(wl(n), idx(n), buf(src), buf(dst), buf(s32), buf(s16), buf(s64), Arg{Bits: uint64(shift)})
		odd := shift + 1
		for i := 0; i < n; i++ {
			a := int32(binary.LittleEndian.Uint32(src[shift+4*i:]))
			b := int32(int16(binary.LittleEndian.Uint16(src[odd+2*i:])))
			c := int32(uint32(binary.LittleEndian.Uint64(src[odd+8*i:]) >> 29))
			d := a & 2047
			want := []int32{a ^ b, c + d, d ^ d, c}
			got := bytesI32(dst[odd+16*i : odd+16*i+16])
			checkWords(t, "unaligned", i, got, want)
		}
	}
}

// TestTargetProviders runs loom/testdata/target_providers.loom: applies
// choose by the target in force (none, a helper's, a kernel's) and the
// kernel reports which provider each apply ran.
func TestTargetProviders(t *testing.T) {
	const n = 70
	in := opsWords(n)
	for _, c := range []struct {
		export string
		per    int
		want   func(x int32) []int32
		ran    []string
	}{
		{"providers_neutral", 3, func(x int32) []int32 { return []int32{x, 2 * x, x + 100} },
			[]string{"ops.scale → @scale_generic", "ops.scale → @scale_gfx1100", "ops.foreign → @foreign_gfx1100"}},
		{"providers_vk", 2, func(x int32) []int32 { return []int32{3 * x, x + 200} },
			[]string{"ops.scale → @scale_vk", "ops.foreign → @foreign_vk"}},
	} {
		r := compileRun(t, corpus(t, "target_providers.loom"), c.export, Options{})
		dst := make([]byte, 4*c.per*n)
		r.run(wl(n), idx(n), buf(i32bytes(in)), buf(dst))
		got := bytesI32(dst)
		for i, x := range in {
			checkWords(t, c.export, i, got[c.per*i:], c.want(x))
		}
		ran := r.k.Providers()
		if len(ran) != len(c.ran) {
			t.Fatalf("%s: providers %v, want %v", c.export, ran, c.ran)
		}
		for i, w := range c.ran {
			if !strings.HasSuffix(ran[i], w) {
				t.Errorf("%s: provider %d: %s, want …%s", c.export, i, ran[i], w)
			}
		}
	}
}

// TestOpsMemory runs loom/testdata/ops_memory.loom: allocas in every
// spelling and views laid out by dense encoding values.
func TestOpsMemory(t *testing.T) {
	const n = 150
	xs := ramp(n, 5, 4)
	r := compileRun(t, corpus(t, "ops_memory.loom"), "alloca_spaces", Options{})
	dst := make([]byte, 4*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(dst))
	got := bytesF32(dst)
	for i := range xs {
		j := i/64*64 + (i%64+1)%64
		want := float32(0)
		if j < n {
			want = xs[j] + xs[j]
		}
		if got[i] != want {
			t.Fatalf("alloca_spaces element %d: got %g, want %g", i, got[i], want)
		}
	}
	r = compileRun(t, corpus(t, "ops_memory.loom"), "dense_encodings", Options{})
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(dst))
	for i, g := range bytesF32(dst) {
		if g != 2*xs[i] {
			t.Fatalf("dense_encodings element %d: got %g, want %g", i, g, 2*xs[i])
		}
	}
}

// TestOpsF8 runs loom/testdata/ops_f8.loom against an independent Go
// encoder: round to nearest even at the format's precision, subnormals,
// f8E4M3 overflow to NaN (no infinity), f8E5M2 overflow to ∞.
func TestOpsF8(t *testing.T) {
	const n = 256
	xs := ramp(n, 11, 2)
	r := compileRun(t, corpus(t, "ops_f8.loom"), "f8_round_trip", Options{})
	dst := make([]byte, 8*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(make([]byte, n)), buf(make([]byte, n)), buf(dst))
	got := bytesF32(dst)
	// round8 rounds y to mbits mantissa bits with minimum normal exponent
	// emin, and reports overflow past max.
	round8 := func(y float64, mbits, emin int, maxv float64) float64 {
		a := math.Abs(y)
		_, e := math.Frexp(a)
		e = max(e-1, emin)
		q := math.Ldexp(1, e-mbits)
		v := math.RoundToEven(a/q) * q
		if v > maxv {
			return math.Inf(1)
		}
		return math.Copysign(v, y)
	}
	for i, x := range xs {
		y := float64(x) * math.Ldexp(1, i%32-8)
		w4 := round8(y, 3, -6, 448)
		if math.IsInf(w4, 0) {
			w4 = math.NaN()
		}
		w5 := round8(y, 2, -14, 57344)
		if math.IsInf(w5, 0) {
			w5 = math.Copysign(w5, y)
		}
		for j, w := range []float64{w4, w5} {
			g := float64(got[2*i+j])
			if !(g == w || math.IsNaN(g) && math.IsNaN(w)) {
				t.Fatalf("element %d (y = %g) format %d: got %g, want %g", i, y, j, g, w)
			}
		}
	}
}

// TestOpsDynamicLanes runs loom/testdata/ops_dynamic.loom for several lane
// counts (0 included): the loops the shared pass makes reduce in lane
// order, bit-exact against sequential Go.
func TestOpsDynamicLanes(t *testing.T) {
	const rows = 70
	for _, k := range []int{0, 1, 5, 16} {
		a, b := ramp(rows*k, 1, 2), ramp(rows*k, 2, 2)
		r := compileRun(t, corpus(t, "ops_dynamic.loom"), "dyn_rows_f32", Options{})
		out, w := make([]byte, 8*rows), make([]byte, 4*rows*k)
		r.run(wl(rows), idx(rows), idx(int64(k)), buf(f32bytes(a)), buf(f32bytes(b)), buf(out), buf(w))
		got, gw := bytesF32(out), bytesF32(w)
		for i := 0; i < rows; i++ {
			var s, d float32
			for j := 0; j < k; j++ {
				x, y := a[i*k+j], b[i*k+j]
				s += x * y
				d = float32(math.FMA(float64(x), float64(y), float64(d)))
				if gw[i*k+j] != 2*x {
					t.Fatalf("k=%d row %d lane %d: scaled %g, want %g", k, i, j, gw[i*k+j], 2*x)
				}
			}
			if got[2*i] != s || got[2*i+1] != d {
				t.Fatalf("k=%d row %d: got %g, %g, want %g, %g", k, i, got[2*i], got[2*i+1], s, d)
			}
		}
		words := opsWords(rows * k)
		r = compileRun(t, corpus(t, "ops_dynamic.loom"), "dyn_dot8i4", Options{})
		o := make([]byte, 4*rows*k)
		r.run(wl(rows), idx(rows), idx(int64(k)), buf(i32bytes(words)), buf(o))
		gi := bytesI32(o)
		for j, x := range words {
			y := x * -1640531535
			s := x
			for q := 0; q < 8; q++ {
				s += int32(field(uint64(uint32(x)), 4*q, 4, true)) * int32(field(uint64(uint32(y)), 4*q, 4, false))
			}
			if gi[j] != s {
				t.Fatalf("k=%d word %d: got %#x, want %#x", k, j, uint32(gi[j]), uint32(s))
			}
		}
	}
}

// TestOpsStrided runs loom/testdata/ops_strided.loom: a pitched view read
// and a column-major view written give a compact doubled copy.
func TestOpsStrided(t *testing.T) {
	for _, c := range []struct{ rows, cols, pitch int }{{7, 5, 5}, {7, 5, 9}, {1, 64, 64}, {33, 3, 4}} {
		a := ramp(c.rows*c.pitch, 3, 2)
		r := compileRun(t, corpus(t, "ops_strided.loom"), "strided_copy", Options{})
		out := make([]byte, 4*c.rows*c.cols)
		r.run(wl(int64(c.rows), int64(c.cols)), idx(int64(c.rows)), idx(int64(c.cols)), idx(int64(c.pitch)), buf(f32bytes(a)), buf(out))
		got := bytesF32(out)
		for i := 0; i < c.rows; i++ {
			for j := 0; j < c.cols; j++ {
				if w := 2 * a[i*c.pitch+j]; got[i*c.cols+j] != w {
					t.Fatalf("%v: out[%d,%d] = %g, want %g", c, i, j, got[i*c.cols+j], w)
				}
			}
		}
	}
}

// TestOpsCollectives runs loom/testdata/ops_collectives.loom (subgroups of
// 32 in workgroups of 64) against a Go model of each collective.
func TestOpsCollectives(t *testing.T) {
	const n = 150 // the last workgroup is partial: its idle invocations hold 0
	in := opsWords(n)
	r := compileRun(t, corpus(t, "ops_collectives.loom"), "collectives_narrow", Options{})
	dst := make([]byte, 4*6*n)
	r.run(wl(n), idx(n), buf(i32bytes(in)), buf(dst))
	got := bytesI32(dst)
	groups := (n + 63) / 64
	x := make([]int32, 64*groups)
	copy(x, in)
	w := make([]int32, len(x))
	for i := range x {
		w[i] = x[i] * -1640531535
	}
	b := func(v int32, k int) int8 { return int8(uint32(v) >> (8 * k)) }
	for i := 0; i < n; i++ {
		sg := i / 32 * 32
		var bsum float32
		for k := 0; k < 4; k++ {
			bsum += float32(b(w[sg+3], k)) + float32(b(w[i], k))
		}
		var r8 int8
		var m16 uint16
		for l := sg; l < sg+32; l++ {
			r8 += b(w[l], 1)
			m16 = max(m16, uint16(w[l]))
		}
		wg := i / 64 * 64
		wm := w[wg]
		for l := wg; l < wg+64; l++ {
			wm = max(wm, w[l])
		}
		want := []int32{int32(bsum), w[i^1], int32(r8), int32(m16), w[sg], wm}
		checkWords(t, "collectives", i, got[6*i:], want)
	}
}

// TestOpsRangeProbes runs ops_misc.loom's range_probes: constant and id
// ranges, and the active mask of the invocations inside the guard.
func TestOpsRangeProbes(t *testing.T) {
	const n = 70
	r := compileRun(t, corpus(t, "ops_misc.loom"), "range_probes", Options{})
	dst := make([]byte, 8*5*n)
	r.run(wl(n), idx(n), buf(dst))
	for i := 0; i < n; i++ {
		sg := i / 32 * 32
		var mask uint64
		for l := sg; l < sg+32 && l < n; l++ {
			mask |= 1 << (l - sg)
		}
		want := []int64{7, 7, 0, 1<<31 - 1, int64(mask)}
		for j, w := range want {
			if g := int64(binary.LittleEndian.Uint64(dst[8*(5*i+j):])); g != w {
				t.Fatalf("item %d result %d: got %#x, want %#x", i, j, g, w)
			}
		}
	}
}

// TestAtomicFloatMinMax runs loom/testdata/atomic_float_minmax.loom.
func TestAtomicFloatMinMax(t *testing.T) {
	const n = 300
	xs := ramp(n, 9, 2)
	r := compileRun(t, corpus(t, "atomic_float_minmax.loom"), "atomic_minmax_f32", Options{})
	init := []float32{9, 9, 9, 9, -9, -9, -9, -9, 9, 9, 9, 9, -9, -9, -9, -9}
	cells := f32bytes(init)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(cells))
	got := bytesF32(cells)
	want := append([]float32(nil), init...)
	for i, x := range xs {
		j := i % 4
		want[j], want[4+j], want[8+j], want[12+j] = min(want[j], x), max(want[4+j], x), min(want[8+j], x), max(want[12+j], x)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("cell %d: got %g, want %g", k, got[k], want[k])
		}
	}
}

// TestOpsTableLookup runs ops_misc.loom's table_lookup.
func TestOpsTableLookup(t *testing.T) {
	const n = 100
	in := opsWords(n)
	r := compileRun(t, corpus(t, "ops_misc.loom"), "table_lookup", Options{})
	dst := make([]byte, 16*n)
	r.run(wl(n), idx(n), buf(i32bytes(in)), buf(dst))
	got := bytesF32(dst)
	for i, x := range in {
		w := uint32(x * -1640531535)
		for k := 0; k < 4; k++ {
			if want := -4 + 0.5*float32(w>>(8*k)&15); got[4*i+k] != want {
				t.Fatalf("item %d lane %d: got %g, want %g", i, k, got[4*i+k], want)
			}
		}
	}
}

const scanSrc = `
kernel.def export("scans") @scans(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  %wgm1 = index.constant 63 : index
  %padded = index.add %n, %wgm1 : index
  %groups = index.div %padded, %wg : index
  kernel.launch.config workgroups(%groups, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  %z = index.constant 0 : offset
  %c5 = index.constant 7 : index
  %m = index.mul %n, %c5 : index
  %sv = buffer.view %src[%z] : buffer -> view<[%n]xi32>
  %dv = buffer.view %dst[%z] : buffer -> view<[%m]xi32>
  %zero = scalar.constant 0 : i32
  %x = scf.if %ok -> (i32) {
    %v = view.load %sv[%i] : view<[%n]xi32> -> i32
    scf.yield %v : i32
  } else {
    scf.yield %zero : i32
  }
  %a = kernel.subgroup.scan<addi> %x {mode = inclusive, direction = forward} : i32
  %b = kernel.subgroup.scan<maxsi> %x {mode = exclusive, direction = reverse} : i32
  %c = kernel.subgroup.scan<minui> %x {mode = exclusive, direction = forward} : i32
  %d = kernel.subgroup.scan<xori> %x {mode = inclusive, direction = reverse} : i32
  %x8 = scalar.trunci %x : i32 to i8
  %e8 = kernel.subgroup.scan<addi> %x8 {mode = exclusive, direction = forward} : i8
  %e = scalar.extsi %e8 : i8 to i32
  %f = kernel.workgroup.scan<addi> %x {mode = exclusive, direction = forward} : i32
  %g = kernel.workgroup.scan<maxsi> %x {mode = inclusive, direction = reverse} : i32
  scf.if %ok {
    %out = vector.from_elements %a, %b, %c, %d, %e, %f, %g : i32, i32, i32, i32, i32, i32, i32 -> vector<7xi32>
    %o = index.mul %i, %c5 : index
    vector.store %out, %dv[%o] : vector<7xi32>, view<[%m]xi32>
  }
  kernel.return
}
`

// TestShuffleScans runs subgroup and workgroup scans lowered to log-step
// shuffles and workgroup totals (the PTX form, ShuffleScans) on the CPU
// executor and checks them against its own scans, for subgroups of 32, 8
// and 4 (with a partial last workgroup).
func TestShuffleScans(t *testing.T) {
	const n = 150
	in := opsWords(n)
	for _, sg := range []int{32, 8, 4} {
		opts := Options{Target: loom.Target{IndexBits: 32, OffsetBits: 64, SubgroupSize: sg}}
		m := parseSrc(t, scanSrc)
		lowered, err := loom.Lower([]*loom.Module{m}, loom.LowerOptions{ShuffleScans: true})
		if err != nil {
			t.Fatal(err)
		}
		var outs [2][]int32
		for j, mods := range [][]*loom.Module{{m}, lowered} {
			k, err := Compile(mods, "scans", opts)
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]byte, 4*7*n)
			l := Launch{Workgroups: [3]int{(n + 63) / 64, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}}
			if err := k.Run(l, []Arg{idx(n), buf(i32bytes(in)), buf(dst)}); err != nil {
				t.Fatal(err)
			}
			outs[j] = bytesI32(dst)
		}
		for i := range outs[0] {
			if outs[0][i] != outs[1][i] {
				t.Fatalf("subgroup %d: invocation %d scan %d: shuffles %#x, native %#x", sg, i/7, i%7, uint32(outs[1][i]), uint32(outs[0][i]))
			}
		}
	}
}

// TestOpsMatch runs loom/testdata/ops_match.loom with 32-lane subgroups.
func TestOpsMatch(t *testing.T) {
	const n = 128
	r := compileRun(t, corpus(t, "ops_match.loom"), "subgroup_match", Options{})
	dst := make([]byte, 8*5*n)
	r.run(wl(n), idx(n), buf(dst))
	for i := 0; i < n; i++ {
		lane := i % 32
		want := []uint64{0xf << (lane / 4 * 4), 0xffffffff, 1, 0, 0}
		for j, w := range want {
			if g := binary.LittleEndian.Uint64(dst[8*(5*i+j):]); g != w {
				t.Fatalf("invocation %d result %d: got %#x, want %#x", i, j, g, w)
			}
		}
	}
}

// partialWarpWant is the Go reference for ops_partial_warp.loom's collect
// over workgroups of size w: subgroups are 32-lane chunks of each
// workgroup, the last one partial; a source lane that does not exist is
// invalid.
func partialWarpWant(x []int32, w int) [][]int32 {
	out := make([][]int32, len(x))
	b2i := func(b bool) int32 {
		if b {
			return 1
		}
		return 0
	}
	for i := range x {
		wg := i / w * w
		r := i - wg
		sb := wg + r/32*32 // the subgroup's first invocation
		count := min(32, wg+w-sb)
		lane := i - sb
		at := func(l int) int32 { return x[sb+l] }
		shuffle := func(src, width int) (int32, int32) {
			seg := lane / width * width
			if src >= seg && src < seg+width && src < count {
				return at(src), 1
			}
			return x[i], 0
		}
		var sum, ballot, scan, wscan int32
		var fsum float32
		any, all := false, true
		var match int32
		for l := 0; l < count; l++ {
			sum += at(l)
			fsum += float32(at(l) & 1023)
			if at(l)&1 != 0 {
				ballot |= 1 << l
			}
			any = any || at(l) > 100
			all = all && at(l) >= 0
			if l <= lane {
				scan += at(l)
			}
			if at(l)&3 == x[i]&3 {
				match |= 1 << l
			}
		}
		for l := r + 1; l < w; l++ {
			wscan += x[wg+l]
		}
		c0 := lane / 4 * 4
		cmax := at(c0)
		for l := c0; l < min(c0+4, count); l++ {
			cmax = max(cmax, at(l))
		}
		sx, vx := shuffle(lane^5, 32)
		sd, vd := shuffle(lane+3, 16)
		si, vi := shuffle(9, 32)
		su, vu := shuffle(lane-2, 8)
		b6, _ := shuffle(6, 32)
		b20, _ := shuffle(20, 32)
		out[i] = []int32{sum, cmax, sx, vx, sd, vd, si, vi, su, vu, ballot, b2i(any), b2i(all), b6, b20, scan, wscan, int32(fsum), match, 8}
	}
	return out
}

// TestOpsPartialWarp runs ops_partial_warp.loom against partialWarpWant.
func TestOpsPartialWarp(t *testing.T) {
	for _, c := range []struct {
		export string
		n, w   int
	}{{"partial_warp_40", 120, 40}, {"partial_warp_6x2", 36, 12}} {
		x := make([]int32, c.n)
		for i := range x {
			x[i] = int32(i*7919%1000) - 300
		}
		r := compileRun(t, corpus(t, "ops_partial_warp.loom"), c.export, Options{})
		dst := make([]byte, 4*20*c.n)
		r.run(wl(int64(c.n)), idx(int64(c.n)), buf(i32bytes(x)), buf(dst))
		got := bytesI32(dst)
		for i, want := range partialWarpWant(x, c.w) {
			checkWords(t, c.export, i, got[20*i:], want)
		}
	}
}

// TestOpsShuffleEdges runs ops_partial_warp.loom's shuffle_edges: sources
// outside the lane's segment are invalid and keep the lane's own value.
func TestOpsShuffleEdges(t *testing.T) {
	const n = 128
	x := make([]int32, n)
	for i := range x {
		x[i] = int32(i*2654435761>>7) & 0x7fff
	}
	r := compileRun(t, corpus(t, "ops_partial_warp.loom"), "shuffle_edges", Options{})
	dst := make([]byte, 4*10*n)
	r.run(wl(n), idx(n), buf(i32bytes(x)), buf(dst))
	got := bytesI32(dst)
	for i := range x {
		lane, sb := i%32, i/32*32
		shuffle := func(src, width int) []int32 {
			seg := lane / width * width
			if src >= seg && src < seg+width {
				return []int32{x[sb+src], 1}
			}
			return []int32{x[i], 0}
		}
		o, w := int(x[i]&63), 4<<(x[i]>>2&3)
		var want []int32
		want = append(want, shuffle(lane^o, w)...)
		want = append(want, shuffle(lane-o, w)...)
		want = append(want, shuffle(lane+o, w)...)
		want = append(want, shuffle(lane/w*w+o, w)...)
		want = append(want, shuffle(lane^8, 8)...)
		checkWords(t, "shuffle_edges", i, got[10*i:], want)
	}
}

// TestOpsRemf runs ops_misc.loom's remf against Go's math.Mod (C fmod,
// exact, so results must match bit for bit) on ordinary, signed-zero,
// subnormal, huge, infinite and NaN operands.
func TestOpsRemf(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	sub := math.Float32frombits(3)
	pairs := [][2]float32{
		{5.5, 2}, {-5.5, 2}, {5.5, -2}, {-0.0, 3}, {0, -3}, {1, 3}, {3, 3}, {-7, 7},
		{3e38, sub}, {-3e38, 7e-45}, {sub, 3e38}, {1.5, inf}, {inf, 2}, {nan, 2}, {2, nan},
		{1e-40, 3e-41}, {16777217, 0.1}, {0.3, 0.1}, {1e30, 3}, {-1e-30, 1e-38},
	}
	for i := range 64 { // a spread of ordinary values too
		x := float32(math.Ldexp(float64(i*37%101)-50, i%40-20))
		y := float32(math.Ldexp(float64(i*53%97)-48, -(i%30)+5))
		pairs = append(pairs, [2]float32{x, y})
	}
	n := len(pairs)
	src := make([]float32, 0, 2*n)
	for _, p := range pairs {
		src = append(src, p[0], p[1])
	}
	fmod := func(a, b float32) float32 { return float32(math.Mod(float64(a), float64(b))) }
	r := compileRun(t, corpus(t, "ops_misc.loom"), "remf", Options{})
	dst := make([]byte, 4*6*n)
	r.run(wl(int64(n)), idx(int64(n)), buf(f32bytes(src)), buf(dst))
	got := bytesF32(dst)
	for i, p := range pairs {
		x, y := p[0], p[1]
		want := []float32{fmod(x, y), fmod(y, x), fmod(x*0x1p100, y*0x1p-100), fmod(x, 0), fmod(x, y), fmod(-y, x)}
		for j, w := range want {
			g := got[6*i+j]
			if !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) && math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("pair %d (%g, %g) result %d: got %g (%#x), want %g (%#x)", i, x, y, j, g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
}

// TestOpsRemf64 runs ops_misc.loom's remf64 (f64 C fmod, scalar and
// vector) against Go's math.Mod bit for bit.
func TestOpsRemf64(t *testing.T) {
	pairs := mathacc.FmodPairs64()
	n := len(pairs)
	src := make([]byte, 16*n)
	for i, p := range pairs {
		le.PutUint64(src[16*i:], math.Float64bits(p[0]))
		le.PutUint64(src[16*i+8:], math.Float64bits(p[1]))
	}
	r := compileRun(t, corpus(t, "ops_misc.loom"), "remf64", Options{})
	dst := make([]byte, 8*6*n)
	r.run(wl(int64(n)), idx(int64(n)), buf(src), buf(dst))
	for i, p := range pairs {
		x, y := p[0], p[1]
		want := []float64{math.Mod(x, y), math.Mod(y, x), math.Mod(x*0x1p900, y*0x1p-900), math.Mod(x, 0), math.Mod(x, y), math.Mod(-y, x)}
		for j, w := range want {
			g := math.Float64frombits(le.Uint64(dst[8*(6*i+j):]))
			if !(math.IsNaN(g) && math.IsNaN(w)) && math.Float64bits(g) != math.Float64bits(w) {
				t.Fatalf("pair %d (%g, %g) result %d: got %g, want %g", i, x, y, j, g, w)
			}
		}
	}
}

// TestVectorParam runs vector_param.loom: vector launch parameters take
// their lanes from Arg.Buffer; a wrong byte count is refused.
func TestVectorParam(t *testing.T) {
	const n = 100
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i) - 20.5
	}
	scale := []float32{1.5, -2, 0.25, 3}
	bias := []int32{-7, 11}
	r := compileRun(t, corpus(t, "vector_param.loom"), "vector_param", Options{})
	dst := make([]byte, 4*n)
	r.run(wl(n), idx(n), buf(f32bytes(scale)), buf(i32bytes(bias)), buf(f32bytes(src)), buf(dst))
	for i, g := range bytesF32(dst) {
		want := float32(math.FMA(float64(src[i]), float64(scale[i%4]), float64(bias[i%2])))
		if g != want {
			t.Fatalf("dst[%d] = %g, want %g", i, g, want)
		}
	}
	err := r.k.Run(r.launch(n), []Arg{idx(n), buf(f32bytes(scale[:3])), buf(i32bytes(bias)), buf(f32bytes(src)), buf(dst)})
	if err == nil || !strings.Contains(err.Error(), "takes its 4 lanes as 16 little-endian bytes") {
		t.Errorf("a 12-byte vector<4xf32>: got %v", err)
	}
}

// TestOpsClusters runs ops_partial_warp.loom's clusters_48 against Go:
// cluster members are the lanes base + j·stride (j < size) of the
// invocation's block of size·stride lanes that exist in its subgroup.
func TestOpsClusters(t *testing.T) {
	const n = 96
	x := make([]int32, n)
	for i := range x {
		x[i] = int32(i*7919%1000) - 300
	}
	r := compileRun(t, corpus(t, "ops_partial_warp.loom"), "clusters_48", Options{})
	dst := make([]byte, 4*4*n)
	r.run(wl(n), idx(n), buf(i32bytes(x)), buf(dst))
	got := bytesI32(dst)
	for i := range x {
		wg := i / 48 * 48
		sb := wg + (i-wg)/32*32
		count := min(32, wg+48-sb)
		lane := i - sb
		// members lists the cluster of lane in order.
		members := func(size, stride int) []int {
			span := size * stride
			base := lane/span*span + lane%stride
			var m []int
			for j := range size {
				if l := base + j*stride; l < count {
					m = append(m, l)
				}
			}
			return m
		}
		var sum, s0, s1 int32
		mx := int32(math.MinInt32)
		for _, l := range members(4, 2) {
			sum += x[sb+l]
		}
		for _, l := range members(2, 8) {
			mx = max(mx, x[sb+l])
		}
		for _, l := range members(8, 1) {
			if l <= lane {
				s0 += x[sb+l]
			}
		}
		for _, l := range members(4, 4) {
			if l > lane {
				s1 += x[sb+l]
			}
		}
		checkWords(t, "clusters", i, got[4*i:], []int32{sum, mx, s0, s1})
	}
	// The shuffle form of the scans (PTX's, loom.LowerOptions.ShuffleScans)
	// gives the same words on the CPU executor.
	lowered, err := loom.Lower([]*loom.Module{corpus(t, "ops_partial_warp.loom")}, loom.LowerOptions{ShuffleScans: true})
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile(lowered, "clusters_48", Options{})
	if err != nil {
		t.Fatal(err)
	}
	dst2 := make([]byte, len(dst))
	if err := k.Run(r.launch(n), []Arg{idx(n), buf(i32bytes(x)), buf(dst2)}); err != nil {
		t.Fatal(err)
	}
	for i, w := range bytesI32(dst2) {
		if w != got[i] {
			t.Fatalf("shuffle scans: invocation %d word %d: %#x, native %#x", i/4, i%4, uint32(w), uint32(got[i]))
		}
	}
}
