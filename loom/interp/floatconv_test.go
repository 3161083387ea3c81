package interp

import (
	"math"
	"math/big"
	"testing"

	"github.com/x448/float16"
)

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
