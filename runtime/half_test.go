package runtime

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestF16RoundTripExhaustive: every half converts to float32 exactly and
// back to the same bits, NaN payloads included.
func TestF16RoundTripExhaustive(t *testing.T) {
	for h := range 1 << 16 {
		f := F16(h).Float32()
		if got := F16From(f); got != F16(h) {
			t.Fatalf("F16From(F16(%#04x).Float32() = %g) = %#04x", h, f, uint16(got))
		}
	}
}

// TestF16Values pins the conversion of well-known values.
func TestF16Values(t *testing.T) {
	cases := []struct {
		h F16
		f float32
	}{
		{0x0000, 0}, {0x8000, float32(math.Copysign(0, -1))}, {0x3c00, 1}, {0xc000, -2},
		{0x7bff, 65504}, {0x0001, 5.960464477539063e-08}, {0x03ff, 6.097555160522461e-05},
		{0x0400, 6.103515625e-05}, {0x3555, 0.333251953125}, {0x7c00, float32(math.Inf(1))},
	}
	for _, c := range cases {
		if got := c.h.Float32(); math.Float32bits(got) != math.Float32bits(c.f) {
			t.Errorf("F16(%#04x).Float32() = %g, want %g", uint16(c.h), got, c.f)
		}
		if got := F16From(c.f); got != c.h {
			t.Errorf("F16From(%g) = %#04x, want %#04x", c.f, uint16(got), uint16(c.h))
		}
	}
}

// refF16 rounds f to the nearest half by searching the sorted finite halves,
// ties to the even bit pattern: an independent, slow reference.
func refF16(f float32, finite []float64) F16 {
	if math.IsNaN(float64(f)) {
		return 0x7e00
	}
	x := math.Abs(float64(f))
	sign := F16(0)
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	// finite ends with 65536 standing for infinity: IEEE rounds as if the
	// exponent range continued, so 65520 (a tie) goes to the even 0x7c00.
	if x >= 65536 {
		return sign | 0x7c00
	}
	i := sort.SearchFloat64s(finite, x) // finite[i] >= x
	if i < len(finite) && finite[i] == x {
		return sign | F16(i)
	}
	lo, hi := i-1, i
	dl, dh := x-finite[lo], finite[hi]-x
	switch {
	case dl < dh:
		return sign | F16(lo)
	case dh < dl:
		return sign | F16(hi)
	case lo%2 == 0:
		return sign | F16(lo)
	}
	return sign | F16(hi)
}

// TestF16FromMatchesReference checks rounding at every midpoint between
// adjacent halves, one float32 ulp either side of it, and random floats.
func TestF16FromMatchesReference(t *testing.T) {
	finite := make([]float64, 0x7c01) // positive finite halves, ascending by bits, then 65536
	for h := range 0x7c00 {
		finite[h] = float64(F16(h).Float32())
	}
	finite[0x7c00] = 65536
	check := func(f float32) {
		if math.IsNaN(float64(f)) {
			return
		}
		if got, want := F16From(f), refF16(f, finite); got != want {
			t.Fatalf("F16From(%g [%#08x]) = %#04x, want %#04x", f, math.Float32bits(f), uint16(got), uint16(want))
		}
	}
	for h := 0; h < 0x7c00; h++ {
		mid := float32((finite[h] + finite[h+1]) / 2)
		for _, f := range []float32{mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e9), float32(finite[h])} {
			check(f)
			check(-f)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(math.Float32frombits(rng.Uint32()))
	}
	for _, f := range []float32{1e-8, 2.9802322387695312e-08, 2.980232594e-08, 1e-30, 65519.99, 65520, 1e10} {
		check(f)
	}
}

// TestBF16 checks exact widening, round-trip of every bf16, ties to even
// and NaN preservation.
func TestBF16(t *testing.T) {
	for h := range 1 << 16 {
		f := BF16(h).Float32()
		if got := BF16From(f); got != BF16(h) {
			t.Fatalf("BF16 round trip of %#04x: got %#04x", h, uint16(got))
		}
	}
	cases := []struct {
		bits uint32
		want BF16
	}{
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above tie
		{0x7f7fffff, 0x7f80}, // rounds to infinity
		{0x7f800001, 0x7fc0}, // NaN with low payload stays NaN
		{0xff800000, 0xff80},
	}
	for _, c := range cases {
		if got := BF16From(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("BF16From(%#08x) = %#04x, want %#04x", c.bits, uint16(got), uint16(c.want))
		}
	}
}
