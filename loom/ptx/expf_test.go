package ptx

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// f32Steps is how many representable f32 values lie between a and b (both
// finite or equal infinities), across zero and subnormals alike.
func f32Steps(a, b float32) int64 {
	key := func(x float32) int64 {
		u := int64(math.Float32bits(x) &^ (1 << 31))
		if math.Signbit(float64(x)) {
			return -u
		}
		return u
	}
	d := key(a) - key(b)
	if d < 0 {
		return -d
	}
	return d
}

// TestExpfSequence evaluates the instructions expf emits against e^x: the
// rounding of x·log2e by one fma with 1.5·2^23 + 127, the clamp to normal
// exponents and the scale built from t's bits must give e^x within one
// f32 step of the correctly rounded value (ex2 taken as exact) from
// overflow down through the subnormals, inf, 0 and NaN at the ends, and
// issue no conversion (they share the quarter-rate unit with ex2).
func TestExpfSequence(t *testing.T) {
	e := newEmitter(nil, nil, nil, 90)
	out := e.expf("%x")
	text := e.body.String()
	if strings.Contains(text, "cvt") || strings.Count(text, "ex2") != 1 {
		t.Fatalf("expf should issue one ex2 and no conversion:\n%s", text)
	}
	eval := func(x float32) float32 {
		return math.Float32frombits(runPTX32(t, text, map[string]uint32{"%x": math.Float32bits(x)})[out])
	}
	inf := float32(math.Inf(1))
	for _, c := range []struct{ x, want float32 }{
		{inf, inf}, {-inf, 0}, {89, inf}, {1e30, inf}, {-104, 0}, {-1e30, 0}, {0, 1},
		{float32(math.Copysign(0, -1)), 1},
	} {
		if got := eval(c.x); got != c.want {
			t.Errorf("expf(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if got := eval(float32(math.NaN())); got == got {
		t.Errorf("expf(NaN) = %g, want NaN", got)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	xs := []float32{88.72, 88.7228, -87.33, -87.34, -103.2, -103.9, 1e-8, -1e-8, 0.5, -0.5, 0.3465736}
	for range 200000 {
		xs = append(xs, float32(rng.Float64()*193-104))
	}
	for range 20000 {
		xs = append(xs, float32(rng.NormFloat64()*1e-3))
	}
	for _, x := range xs {
		want := float32(math.Exp(float64(x)))
		got := eval(x)
		if math.IsInf(float64(want), 1) {
			if !math.IsInf(float64(got), 1) {
				t.Fatalf("expf(%g) = %g, want +Inf", x, got)
			}
			continue
		}
		if math.IsInf(float64(got), 0) || got != got || f32Steps(got, want) > 1 {
			t.Fatalf("expf(%g) = %g (%#08x), want %g (%#08x)", x, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}
