package interp

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// TestHalfDecodersMatchCodec checks the load loops' inline decoders
// against the formats' own decoding on every bit pattern, NaN payloads
// included.
func TestHalfDecodersMatchCodec(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		for _, c := range []struct {
			name      string
			got, want float64
		}{
			{"decodeF16", decodeF16(uint16(b)), fmtF16.decode(uint64(b))},
			{"decodeBF16", decodeBF16(uint16(b)), fmtBF16.decode(uint64(b))},
		} {
			if math.Float64bits(c.got) != math.Float64bits(c.want) {
				t.Fatalf("%s(%#04x) = %v (%#x), want %v (%#x)", c.name, b, c.got, math.Float64bits(c.got), c.want, math.Float64bits(c.want))
			}
		}
	}
}

func TestF16MatchesReference(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		got := fmtF16.decode(uint64(b))
		want := float64(float16.Frombits(uint16(b)).Float32())
		if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
			t.Fatalf("decode(%#04x) = %v, want %v", b, got, want)
		}
	}
	// Every f32 near the f16 range boundaries and a stride through the rest.
	for u := uint32(0); u < 1<<32-1<<20; u += 1<<12 + 1 {
		x := math.Float32frombits(u)
		if x != x {
			continue
		}
		got, want := fmtF16.encode(float64(x)), uint64(float16.Fromfloat32(x).Bits())
		if got != want {
			t.Fatalf("encode(%v) = %#04x, want %#04x", x, got, want)
		}
	}
}

func TestBF16RoundsToNearestEven(t *testing.T) {
	for u := uint32(0); u < 1<<32-1<<20; u += 1<<11 + 7 {
		x := math.Float32frombits(u)
		if x != x {
			continue
		}
		want := uint64((u + 0x7fff + (u>>16)&1) >> 16)
		if got := fmtBF16.encode(float64(x)); got != want {
			t.Fatalf("bf16(%v) = %#04x, want %#04x", x, got, want)
		}
	}
}

func TestFP8Formats(t *testing.T) {
	cases := []struct {
		m    minifloat
		x    float64
		bits uint64
	}{
		{fmtF8E4M3, 1, 0x38},
		{fmtF8E4M3, 448, 0x7e},
		{fmtF8E4M3, 464, 0x7e},   // tie rounds to even (448)
		{fmtF8E4M3, 465, 0x7f},   // beyond: NaN, there is no infinity
		{fmtF8E4M3, 0x1p-9, 0x1}, // smallest subnormal
		{fmtF8E4M3, -2, 0xc0},
		{fmtF8E5M2, 1, 0x3c},
		{fmtF8E5M2, 57344, 0x7b},
		{fmtF8E5M2, 65536, 0x7c}, // overflow to infinity
		{fmtF8E5M2, math.Inf(-1), 0xfc},
		{fmtF8E5M2, 0x1p-16, 0x1},
	}
	for _, c := range cases {
		if got := c.m.encode(c.x); got != c.bits {
			t.Errorf("encode(%v) = %#02x, want %#02x", c.x, got, c.bits)
		}
	}
	// Every encoding survives a round trip (NaNs stay NaN).
	for _, m := range []minifloat{fmtF8E4M3, fmtF8E5M2} {
		for b := uint64(0); b < 256; b++ {
			v := m.decode(b)
			if v != v {
				if r := m.decode(m.encode(v)); r == r {
					t.Errorf("NaN %#02x did not stay NaN", b)
				}
				continue
			}
			if got := m.encode(v); got != b && !(v == 0 && got&0x7f == 0) {
				t.Errorf("round trip of %#02x (%v) gave %#02x", b, v, got)
			}
		}
	}
}

// exactFMA32 rounds a*b+c, computed exactly, once to f32 (normal range).
func exactFMA32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(float64(c)))
	x.SetMode(big.ToNearestEven).SetPrec(24)
	f, _ := x.Float32()
	return f
}

func TestFMA32IsCorrectlyRounded(t *testing.T) {
	type abc struct{ a, b, c float32 }
	var cases []abc
	xs := ramp(3000, 99, 1000)
	for i := 0; i+2 < len(xs); i++ {
		cases = append(cases, abc{xs[i], xs[i+1], xs[i+2]})
	}
	// Double-rounding traps: the float64 sum lands on an f32 midpoint.
	u := float32(1 + 0x1p-12)
	cases = append(cases,
		abc{u, u, 0x1p-60}, abc{u, u, -0x1p-60}, abc{u, u, 0},
		abc{1 + 0x1p-23, 1 + 0x1p-23, 0x1p-70}, abc{-(1 + 0x1p-12), 1 + 0x1p-12, -0x1p-61})
	for _, c := range cases {
		want := exactFMA32(c.a, c.b, c.c)
		if math.Abs(float64(want)) < 0x1p-126 {
			continue
		}
		if got := fma32(float64(c.a), float64(c.b), float64(c.c)); got != float64(want) {
			t.Fatalf("fma32(%v, %v, %v) = %v, want %v", c.a, c.b, c.c, got, want)
		}
	}
}

// dotfKernel is r[l] = dotf(x[l], y[l], a[l]) over vector<2xf32> rows;
// with UNI the x row is row 0 for every lane (a uniform operand).
const dotfKernel = `
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 16 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%x: buffer, %y: buffer, %a: buffer, %r: buffer) {
  %l = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %z = index.constant 0 : offset
  %xv = buffer.view %x[%z] : buffer -> view<16x2xf32>
  %yv = buffer.view %y[%z] : buffer -> view<16x2xf32>
  %av = buffer.view %a[%z] : buffer -> view<16xf32>
  %rv = buffer.view %r[%z] : buffer -> view<16xf32>
  %xr = ROW
  %xs = vector.load %xv[%xr, %c0] : view<16x2xf32> -> vector<2xf32>
  %ys = vector.load %yv[%l, %c0] : view<16x2xf32> -> vector<2xf32>
  %acc = view.load %av[%l] : view<16xf32> -> f32
  %d = vector.dotf %xs, %ys, %acc : vector<2xf32>, vector<2xf32>, f32
  view.store %d, %rv[%l] : f32, view<16xf32>
  kernel.return
}
`

// TestDotfRoundsOnce: each step of vector.dotf on f32 is one fused
// multiply-add rounded once, with the operands varying (the lane-wise
// FMA loop) and with a uniform one (the lane-by-lane loop): the
// double-rounding traps of TestFMA32IsCorrectlyRounded come out as the
// exactly rounded chain says.
func TestDotfRoundsOnce(t *testing.T) {
	u, v := float32(1+0x1p-12), float32(1+0x1p-23)
	x := make([]float32, 32)
	y := make([]float32, 32)
	a := make([]float32, 16)
	for l := range 16 {
		// Lanes alternate between two traps; the second product is
		// zero or small, so that the second step rounds too.
		if l%2 == 0 {
			x[2*l], y[2*l], a[l] = u, u, 0x1p-60
		} else {
			x[2*l], y[2*l], a[l] = v, v, 0x1p-70
		}
		x[2*l+1], y[2*l+1] = float32(l)*0x1p-30, 0x1p-31
	}
	for _, uniform := range []bool{false, true} {
		row := "%l"
		if uniform {
			row = "%c0"
		}
		for _, fma := range []bool{hasFMA, false} {
			saved := hasFMA
			hasFMA = fma
			r := compileRun(t, parseSrc(t, strings.ReplaceAll(dotfKernel, "%xr = ROW", "%xr = index.add "+row+", %c0 : index")), "k", Options{})
			out := make([]byte, 64)
			r.run(nil, buf(f32bytes(x)), buf(f32bytes(y)), buf(f32bytes(a)), buf(out))
			hasFMA = saved
			got := bytesF32(out)
			for l := range 16 {
				xr := l
				if uniform {
					xr = 0
				}
				want := exactFMA32(x[2*xr+1], y[2*l+1], exactFMA32(x[2*xr], y[2*l], a[l]))
				if got[l] != want {
					t.Fatalf("uniform x %v, FMA loop %v: lane %d = %v, want %v", uniform, fma, l, got[l], want)
				}
			}
		}
	}
}

// exactFMABF16 rounds a*b+c, computed exactly, once to bf16 (normal range).
func exactFMABF16(a, b, c float64) float64 {
	x := new(big.Float).SetPrec(200).SetFloat64(a)
	x.Mul(x, new(big.Float).SetPrec(200).SetFloat64(b))
	x.Add(x, new(big.Float).SetPrec(200).SetFloat64(c))
	x.SetMode(big.ToNearestEven).SetPrec(8)
	f, _ := x.Float64()
	return f
}

// TestFMAHalfFormatsRoundOnce: fmaf on bf16 (ffmt.fma) is the exactly
// rounded fused result, where a float64 FMA rounded again to bf16 is not:
// a product lying on a bf16 midpoint plus an addend too small for float64
// to keep. Random triples with exponents far apart check the rest.
func TestFMAHalfFormatsRoundOnce(t *testing.T) {
	f := ffmt{kind: fMini, m: fmtBF16}
	bf := func(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }
	type abc struct{ a, b, c float64 }
	cases := []abc{
		{1.0625, 1.0625, 0x1p-60}, {1.0625, 1.0625, -0x1p-60}, {-1.0625, 1.0625, 0x1p-60},
		{1.0625, 1.0625, 0}, {1.0625 * 0x1p40, 1.0625, 0x1p-30},
	}
	if got := f.m.round(math.FMA(1.0625, 1.0625, 0x1p-60)); got == exactFMABF16(1.0625, 1.0625, 0x1p-60) {
		t.Fatal("the trap does not trap: a float64 FMA rounded again gets it right")
	}
	s := uint32(5)
	next := func() uint32 { // xorshift
		s ^= s << 13
		s ^= s >> 17
		s ^= s << 5
		return s
	}
	for range 200000 {
		// a and b in [0.5, 2), c any magnitude below 1 of either sign.
		a, b := bf(uint16(0x3f00+next()%0x100)), bf(uint16(0x3f00+next()%0x100))
		c := bf(uint16(next()%0x3f80 | next()%2<<15))
		cases = append(cases, abc{a, b, c})
	}
	for _, c := range cases {
		want := exactFMABF16(c.a, c.b, c.c)
		if math.Abs(want) < 0x1p-126 {
			continue
		}
		if got := f.fma(c.a, c.b, c.c); got != want {
			t.Fatalf("bf16 fma(%v, %v, %v) = %v, want %v", c.a, c.b, c.c, got, want)
		}
	}
}

// TestFMAfBF16Kernel: scalar.fmaf and vector.dotf on bf16 in a kernel
// take the once-rounded fused result on the double-rounding trap of
// TestFMAHalfFormatsRoundOnce.
func TestFMAfBF16Kernel(t *testing.T) {
	const src = `
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%x: buffer, %r: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %xv = buffer.view %x[%z] : buffer -> view<3xbf16>
  %rv = buffer.view %r[%z] : buffer -> view<2xbf16>
  %a = view.load %xv[%c0] : view<3xbf16> -> bf16
  %c = view.load %xv[%c2] : view<3xbf16> -> bf16
  %f = scalar.fmaf %a, %a, %c : bf16
  view.store %f, %rv[%c0] : bf16, view<2xbf16>
  %v = vector.load %xv[%c0] : view<3xbf16> -> vector<1xbf16>
  %d = vector.dotf %v, %v, %c : vector<1xbf16>, vector<1xbf16>, bf16
  view.store %d, %rv[%c1] : bf16, view<2xbf16>
  kernel.return
}
`
	bits := func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }
	x := make([]byte, 6)
	for i, v := range []float32{1.0625, 0, 0x1p-60} {
		x[2*i], x[2*i+1] = byte(bits(v)), byte(bits(v)>>8)
	}
	out := make([]byte, 4)
	r := compileRun(t, parseSrc(t, src), "k", Options{})
	r.run(nil, buf(x), buf(out))
	want := bits(1.1328125)
	for i, what := range []string{"scalar.fmaf", "vector.dotf"} {
		if got := uint16(out[2*i]) | uint16(out[2*i+1])<<8; got != want {
			t.Errorf("%s: %#04x, want %#04x (1.1328125)", what, got, want)
		}
	}
}

// TestMinMaxForms checks the four min/max forms against their definitions
// on math.Min and math.Max, bit for bit, over every pair of special and
// ordinary values (zeros of both signs, infinities, subnormals, NaNs) and
// random pairs.
func TestMinMaxForms(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, math.Inf(1), math.Inf(-1),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		math.NaN(), math.Float64frombits(0x7ff8000000000123), math.Float64frombits(0xfff0000000000001)}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		vals = append(vals, rng.NormFloat64(), float64(float32(rng.NormFloat64())))
	}
	// NaN wins (any NaN) or loses (the other operand, bits and all).
	wins := func(f func(a, b float64) float64) func(a, b float64) float64 {
		return func(a, b float64) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			return f(a, b)
		}
	}
	loses := func(f func(a, b float64) float64) func(a, b float64) float64 {
		return func(a, b float64) float64 {
			switch {
			case a != a:
				return b
			case b != b:
				return a
			}
			return f(a, b)
		}
	}
	for _, c := range []struct {
		name     string
		got, ref func(a, b float64) float64
	}{
		{"minimumF", minimumF, wins(math.Min)},
		{"maximumF", maximumF, wins(math.Max)},
		{"minnumF", minnumF, loses(math.Min)},
		{"maxnumF", maxnumF, loses(math.Max)},
	} {
		for _, a := range vals {
			for _, b := range vals {
				got, want := c.got(a, b), c.ref(a, b)
				if math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("%s(%v, %v) = %v (%#x), want %v (%#x)", c.name, a, b, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		}
	}
}
