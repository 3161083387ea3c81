package interp

import (
	"encoding/binary"
	"errors"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/x448/float16"
)

// Go references for loom/testdata/block_quant.loom, written from the
// definitions: concat/interleave/deinterleave move lanes; ggml q8_0 is an
// f16 scale times signed bytes, q4_0 an f16 scale times (nibble − 8) with
// the low nibbles of a block's bytes first, then the high ones. Every op
// there is exact (decode's products are exact in f32 and rounded once to
// f16), so the CPU executor must match bit for bit.

// laneMovesRef is the 76 bytes lane_moves writes for the 16 bytes b.
func laneMovesRef(b []byte) []byte {
	var out []byte
	out = append(out, b[0:12]...) // concat b0, b1, b2
	for k := 0; k < 4; k++ {      // interleave b0, b1
		out = append(out, b[k], b[4+k])
	}
	var ev, od []byte
	for k := 0; k < 16; k += 2 {
		ev, od = append(ev, b[k]), append(od, b[k+1])
	}
	out = append(out, ev...)
	out = append(out, od...)
	// ma, mb: ev, od as 2x4 rows.
	for r := 0; r < 2; r++ { // concat<1>
		out = append(out, ev[4*r:4*r+4]...)
		out = append(out, od[4*r:4*r+4]...)
	}
	for r := 0; r < 2; r++ { // interleave<1>
		for c := 0; c < 4; c++ {
			out = append(out, ev[4*r+c], od[4*r+c])
		}
	}
	// deinterleave<1> ma into 2x2 even and odd columns, concat<0>.
	for half := 0; half < 2; half++ {
		for r := 0; r < 2; r++ {
			out = append(out, ev[4*r+half], ev[4*r+2+half])
		}
	}
	return out
}

func TestLaneMoves(t *testing.T) {
	const n = 70
	src := i32bytes(opsWords(4 * n))
	r := compileRun(t, corpus(t, "block_quant.loom"), "lane_moves", Options{})
	dst := make([]byte, 76*n)
	r.run(wl(n), idx(n), buf(src), buf(dst))
	for i := 0; i < n; i++ {
		want := laneMovesRef(src[16*i : 16*i+16])
		got := dst[76*i : 76*i+76]
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("item %d byte %d: got %#x, want %#x\n got %x\nwant %x", i, k, got[k], want[k], got, want)
			}
		}
	}
}

// quantScales returns n f16 scales: varied magnitudes and signs, with a
// zero and a subnormal.
func quantScales(n int) []uint16 {
	xs := ramp(n, 5, 2)
	out := make([]uint16, n)
	for i, x := range xs {
		out[i] = float16.Fromfloat32(x * float32(math.Pow(2, float64(i%7-3)))).Bits()
	}
	if n > 3 {
		out[1], out[2] = 0, 0x0003
	}
	return out
}

func f16bytes(hs []uint16) []byte {
	b := make([]byte, 2*len(hs))
	for i, h := range hs {
		binary.LittleEndian.PutUint16(b[2*i:], h)
	}
	return b
}

func f16f(h uint16) float32 { return float16.Frombits(h).Float32() }

// q8Ref decodes a q8_0 block of bytes qs with scale s.
func q8Ref(qs []byte, s float32) []float32 {
	out := make([]float32, len(qs))
	for j, q := range qs {
		out[j] = s * float32(int8(q))
	}
	return out
}

// q4Ref decodes a q4_0 block of bytes qs (two values a byte) with scale s.
func q4Ref(qs []byte, s float32) []float32 {
	h := len(qs)
	out := make([]float32, 2*h)
	for j, q := range qs {
		out[j] = s * float32(int(q&15)-8)
		out[j+h] = s * float32(int(q>>4)-8)
	}
	return out
}

func TestBlockDecode(t *testing.T) {
	const n = 70
	qs := i32bytes(opsWords(8 * n))
	scales := quantScales(2 * n)
	r := compileRun(t, corpus(t, "block_quant.loom"), "decode", Options{})
	d8, h8, d4 := make([]byte, 128*n), make([]byte, 64*n), make([]byte, 256*n)
	r.run(wl(n), idx(n), buf(qs), buf(f16bytes(scales)), buf(d8), buf(h8), buf(d4))
	g8, g4 := bytesF32(d8), bytesF32(d4)
	for i := 0; i < n; i++ {
		b := qs[32*i : 32*i+32]
		s0, s1 := f16f(scales[2*i]), f16f(scales[2*i+1])
		w8 := q8Ref(b, s0)
		w4 := append(q4Ref(b[:16], s0), q4Ref(b[16:], s1)...)
		for j, w := range w8 {
			if math.Float32bits(g8[32*i+j]) != math.Float32bits(w) {
				t.Fatalf("q8_0 item %d lane %d: got %g, want %g", i, j, g8[32*i+j], w)
			}
			wh := float16.Fromfloat32(w).Bits()
			if gh := binary.LittleEndian.Uint16(h8[2*(32*i+j):]); gh != wh {
				t.Fatalf("q8_0 f16 item %d lane %d: got %#04x, want %#04x", i, j, gh, wh)
			}
		}
		for j, w := range w4 {
			if math.Float32bits(g4[64*i+j]) != math.Float32bits(w) {
				t.Fatalf("q4_0 item %d lane %d: got %g, want %g", i, j, g4[64*i+j], w)
			}
		}
	}
}

// encodeRef is ggml's reference quantizer given the f16 scale s: q8_0
// codes round(x/s) half away from zero, q4_0 nibbles floor(x/s + 8.5),
// both saturated, NaN as zero, q4_0 low nibbles first.
func encodeRef(xs []float32, s float32) (q8, q4 []byte) {
	var id float32
	if s != 0 {
		id = 1 / s
	}
	q4 = make([]byte, len(xs)/2)
	for j, x := range xs {
		y := float32(x * id) // rounded before the +8.5, as the kernel does
		c8 := math.Max(-128, math.Min(127, math.Round(float64(y))))
		c4 := math.Max(0, math.Min(15, math.Floor(float64(y+8.5))))
		if y != y {
			c8, c4 = 0, 8
		}
		q8 = append(q8, byte(int8(c8)))
		if h := len(xs) / 2; j < h {
			q4[j] |= byte(c4)
		} else {
			q4[j-h] |= byte(c4) << 4
		}
	}
	return q8, q4
}

func TestBlockEncode(t *testing.T) {
	const n = 70
	xs := ramp(32*n, 11, 3)
	xs[5], xs[6], xs[7] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	scales := quantScales(n)
	for i := range scales {
		// Exact halves: x = (k + 0.5)·s.
		s := f16f(scales[i])
		xs[32*i+9] = 2.5 * s
		xs[32*i+10] = -3.5 * s
		xs[32*i+11] = 0.5 * s
	}
	r := compileRun(t, corpus(t, "block_quant.loom"), "encode", Options{})
	p8, p4 := make([]byte, 32*n), make([]byte, 16*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(f16bytes(scales)), buf(p8), buf(p4))
	for i := 0; i < n; i++ {
		w8, w4 := encodeRef(xs[32*i:32*i+32], f16f(scales[i]))
		for j := range w8 {
			if p8[32*i+j] != w8[j] {
				t.Fatalf("q8_0 item %d code %d (x=%g, s=%g): got %d, want %d", i, j, xs[32*i+j], f16f(scales[i]), int8(p8[32*i+j]), int8(w8[j]))
			}
		}
		for j := range w4 {
			if p4[16*i+j] != w4[j] {
				t.Fatalf("q4_0 item %d byte %d: got %#x, want %#x", i, j, p4[16*i+j], w4[j])
			}
		}
	}
}

func TestTableQuantize(t *testing.T) {
	const n = 40
	xs := ramp(8*n, 3, 2)
	copy(xs, []float32{-1, 0, 0.5, 1, float32(math.NaN()), -2, 2, float32(math.Inf(-1))})
	th := []float32{-1, 0, 0.5, 1}
	r := compileRun(t, corpus(t, "block_quant.loom"), "table_quantize", Options{})
	dst := make([]byte, 16*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(dst))
	for i := 0; i < n; i++ {
		for j := 0; j < 8; j++ {
			x := xs[8*i+j]
			var lo, up byte
			for _, v := range th {
				if v < x {
					lo++
				}
				if v <= x {
					up++
				}
			}
			if x != x {
				lo, up = 0, byte(len(th))
			}
			if g := dst[16*i+j]; g != lo {
				t.Fatalf("item %d lane %d (%g) tie=lower: got %d, want %d", i, j, x, g, lo)
			}
			if g := dst[16*i+8+j]; g != up {
				t.Fatalf("item %d lane %d (%g) tie=upper: got %d, want %d", i, j, x, g, up)
			}
		}
	}
}

// hadamardRef is Loom's reference Walsh–Hadamard transform of y: out[i] is
// the f32 sum, left to right, of y[j] negated where popcount(i&j) is odd.
func hadamardRef(y []float32) []float32 {
	out := make([]float32, len(y))
	for i := range out {
		for j, v := range y {
			if bits.OnesCount(uint(i&j))%2 == 1 {
				v = -v
			}
			if j == 0 {
				out[i] = v
			} else {
				out[i] += v
			}
		}
	}
	return out
}

// splitMixSign is the low bit of SplitMix64(seed + lane).
func splitMixSign(seed, lane uint64) bool {
	z := seed + lane + 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	z ^= z >> 31
	return z&1 != 0
}

func TestTransform(t *testing.T) {
	const n = 40
	xs := ramp(8*n, 17, 4)
	ws := opsWords(8 * n)
	mat := ramp(24, 23, 1)
	r := compileRun(t, corpus(t, "block_quant.loom"), "transform", Options{})
	dst := make([]byte, 4*43*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(i32bytes(ws)), buf(f32bytes(mat)), buf(dst))
	got := bytesF32(dst)
	perm := []int{3, 0, 7, 1, 6, 2, 5, 4}
	for i := 0; i < n; i++ {
		x := xs[8*i : 8*i+8]
		signed, seeded, gathered := make([]float32, 8), make([]float32, 8), make([]float32, 8)
		for j, v := range x {
			signed[j], seeded[j] = v, v
			if ws[8*i+j]&1 != 0 {
				signed[j] = -v
			}
			if splitMixSign(uint64(i), uint64(j)) {
				seeded[j] = -v
			}
		}
		for k, p := range perm {
			gathered[k] = signed[p]
		}
		var want []float32
		want = append(want, hadamardRef(x)...)
		for _, row := range [][]float32{x[:4], x[4:]} {
			for _, v := range hadamardRef(row) {
				want = append(want, v*float32(0.5))
			}
		}
		want = append(want, hadamardRef(signed)...)
		want = append(want, hadamardRef(seeded)...)
		want = append(want, hadamardRef(gathered)...)
		for r := 0; r < 3; r++ {
			var acc float32
			for j, v := range x {
				if p := float32(mat[8*r+j] * v); j == 0 {
					acc = p
				} else {
					acc += p
				}
			}
			want = append(want, acc)
		}
		for k, w := range want {
			if g := got[43*i+k]; math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("item %d output %d: got %g, want %g", i, k, g, w)
			}
		}
	}
}

// TestGGMLBlocks decodes whole ggml blocks (scale bytes first) read
// through #physical_storage byte views.
func TestGGMLBlocks(t *testing.T) {
	const n = 50
	raw := i32bytes(opsWords(13 * n))
	scales := quantScales(2 * n)
	b8, b4 := make([]byte, 34*n), make([]byte, 18*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint16(b8[34*i:], scales[2*i])
		copy(b8[34*i+2:34*i+34], raw[52*i:])
		binary.LittleEndian.PutUint16(b4[18*i:], scales[2*i+1])
		copy(b4[18*i+2:18*i+18], raw[52*i+32:])
	}
	r := compileRun(t, corpus(t, "block_quant.loom"), "ggml_blocks", Options{})
	dst := make([]byte, 4*64*n)
	r.run(wl(n), idx(n), buf(b8), buf(b4), buf(dst))
	got := bytesF32(dst)
	for i := 0; i < n; i++ {
		want := append(q8Ref(b8[34*i+2:34*i+34], f16f(scales[2*i])), q4Ref(b4[18*i+2:18*i+18], f16f(scales[2*i+1]))...)
		for j, w := range want {
			if g := got[64*i+j]; math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("item %d value %d: got %g, want %g", i, j, g, w)
			}
		}
	}
}

// TestBlockRoundTrip encodes and decodes blocks with the scales ggml's
// quantizers choose (q8_0: amax/127; q4_0: the value of largest magnitude
// over −8, both rounded to f16): every value comes back within half a
// scale step, plus how far the f16-rounded scale leaves it outside the
// representable range.
func TestBlockRoundTrip(t *testing.T) {
	const n = 60
	xs := ramp(32*n, 29, 5)
	scales := make([]uint16, 2*n)
	for i := 0; i < n; i++ {
		var amax, vmax float32
		for _, x := range xs[32*i : 32*i+32] {
			if a := float32(math.Abs(float64(x))); a > amax {
				amax, vmax = a, x
			}
		}
		scales[2*i] = float16.Fromfloat32(amax / 127).Bits()
		scales[2*i+1] = float16.Fromfloat32(vmax / -8).Bits()
	}
	r := compileRun(t, corpus(t, "block_quant.loom"), "roundtrip", Options{})
	dst := make([]byte, 4*64*n)
	r.run(wl(n), idx(n), buf(f32bytes(xs)), buf(f16bytes(scales)), buf(dst))
	got := bytesF32(dst)
	worst := [2]float64{}
	for i := 0; i < n; i++ {
		for q, lim := range [][2]float64{{-128, 127}, {-8, 7}} {
			d := math.Abs(float64(f16f(scales[2*i+q])))
			for j, x := range xs[32*i : 32*i+32] {
				s := float64(f16f(scales[2*i+q]))
				lo, hi := math.Min(lim[0]*s, lim[1]*s), math.Max(lim[0]*s, lim[1]*s)
				out := math.Max(0, math.Max(lo-float64(x), float64(x)-hi))
				e := math.Abs(float64(got[64*i+32*q+j]) - float64(x))
				if e > d/2*(1+1e-6)+out {
					t.Fatalf("item %d %s value %d: %g came back as %g (scale %g)", i, []string{"q8_0", "q4_0"}[q], j, x, got[64*i+32*q+j], s)
				}
				worst[q] = math.Max(worst[q], (e-out)/d)
			}
		}
	}
	t.Logf("largest error in scale steps: q8_0 %.4f, q4_0 %.4f", worst[0], worst[1])
}

// BenchmarkBlockDecode runs block_quant.loom's decode kernel (per item one
// q8_0 block to f32 and to f16, two q4_0 blocks to f32) over 4096 items on
// the CPU executor; ns/op is per launch.
func BenchmarkBlockDecode(b *testing.B) {
	const n = 4096
	qs := i32bytes(opsWords(8 * n))
	scales := f16bytes(quantScales(2 * n))
	r := compileRun(b, corpus(b, "block_quant.loom"), "decode", Options{})
	d8, h8, d4 := make([]byte, 128*n), make([]byte, 64*n), make([]byte, 256*n)
	b.SetBytes(32 * n)
	for b.Loop() {
		r.run(wl(n), idx(n), buf(qs), buf(scales), buf(d8), buf(h8), buf(d4))
	}
}

// TestRefusedEncodingsWhereReached: an encoding the shared lowering does
// not know is refused, with its reason and position, by a kernel that
// reaches it, and does not stop other kernels of the module compiling.
func TestRefusedEncodingsWhereReached(t *testing.T) {
	m := corpus(t, "refused/encoding.loom")
	if _, err := Compile([]*loom.Module{m}, "plain", Options{}); err != nil {
		t.Fatalf("plain: %v", err)
	}
	_, err := Compile([]*loom.Module{m}, "q6k", Options{})
	if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "encoding.loom:23:3: vector.decode: schema #ggml_q6_k has no shared lowering") {
		t.Fatalf("q6k: got %v, want a positioned refusal of #ggml_q6_k", err)
	}
}
