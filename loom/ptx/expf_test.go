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
// saturating fma that clamps x·log2e, the fma.rm that rounds it into t's
// low bits, the split-log2e remainder and the scale built from t's bits
// must give e^x within one f32 step of the correctly rounded value (ex2
// taken as exact, its .ftz flushing modelled) from overflow down through
// the subnormals, inf, 0 and NaN at the ends. The sequence must stay
// eight instructions besides moves, with no conversion or min/max: they
// are what nvcc's expf issues, and a softmax or an attention step spends
// most of its issue slots here.
func TestExpfSequence(t *testing.T) {
	e := newEmitter(nil, nil, nil, 90)
	out := e.expf("%x")
	text := e.body.String()
	if strings.Contains(text, "cvt") || strings.Count(text, "ex2") != 1 {
		t.Fatalf("expf should issue one ex2 and no conversion:\n%s", text)
	}
	var ops int
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		mnem, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch {
		case strings.HasPrefix(mnem, "mov."):
		case strings.HasPrefix(mnem, "max.") || strings.HasPrefix(mnem, "min."):
			t.Fatalf("expf clamps with %s; the saturating fma is the clamp:\n%s", mnem, text)
		default:
			ops++
		}
	}
	if ops != 8 {
		t.Fatalf("expf issues %d instructions besides moves, want 8:\n%s", ops, text)
	}
	// ex2's operand: within the clamp it must stay within a half (and the
	// rounding slack) of zero, where ex2.approx is at its most accurate.
	_, ex2Line, _ := strings.Cut(text, "ex2.approx.ftz.f32 ")
	ex2Line, _, _ = strings.Cut(ex2Line, ";")
	_, gReg, _ := strings.Cut(ex2Line, ", ")
	if gReg == "" {
		t.Fatalf("expf should end in ex2.approx.ftz.f32 (its operand is small):\n%s", text)
	}
	eval := func(x float32) float32 {
		regs := runPTX32(t, text, map[string]uint32{"%x": math.Float32bits(x)})
		if y := float64(x) * math.Log2E; math.Abs(y) <= 126 {
			if g := math.Abs(float64(f32(regs[gReg]))); g > 0.5+0x1p-14 {
				t.Fatalf("expf(%g): ex2 of %g, want |g| ≤ 1/2", x, f32(regs[gReg]))
			}
		}
		return f32(regs[out])
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
	// Both ends of the clamp (x·log2e = ±126.5) and the halves around
	// them, where the rounding into t may go either way.
	for _, y := range []float64{126.5, -126.5, 126, -126, 127, -127, 127.5, -127.5, 0.5, -0.5, 1.5, -1.5} {
		x := float32(y / math.Log2E)
		for range 64 {
			xs = append(xs, x)
			x = math.Nextafter32(x, float32(math.Inf(1)))
		}
	}
	// Every 2^32/65521st bit pattern, both signs, all magnitudes.
	for u := uint64(0); u < 1<<32; u += 65521 {
		xs = append(xs, math.Float32frombits(uint32(u)))
	}
	for range 200000 {
		xs = append(xs, float32(rng.Float64()*193-104))
	}
	for range 20000 {
		xs = append(xs, float32(rng.NormFloat64()*1e-3))
	}
	for _, x := range xs {
		want := float32(math.Exp(float64(x)))
		got := eval(x)
		if x != x {
			if got == got {
				t.Fatalf("expf(%#08x) = %g, want NaN", math.Float32bits(x), got)
			}
			continue
		}
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

// TestTanhErfSequences evaluates the instructions tanhf and erff emit
// against float64 tanh and erf: within the 1e-6 relative bound the
// accuracy table states, with ex2.approx up to 2 f32 steps off either way
// and rcp.approx 64 (approxSkew: the Newton step makes the reciprocal's
// own error, documented as an ulp, immaterial), over both
// branches, their switch points, the caps past which the result rounds
// to ±1, and ±0, ±inf and NaN. Neither may issue an IEEE division or
// reciprocal: they cost ptxas's checked sequence and a slow-path branch.
func TestTanhErfSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	xs := []float32{0, 0.25, 0.5, 9.1, 4, 1e-30, 1e-4, 3.9, 9.0, 20, 1e30}
	for _, edge := range []float32{0.25, 0.5, 4, 9.1} {
		x := edge
		for range 16 {
			xs = append(xs, x, math.Nextafter32(edge, 0))
			x = math.Nextafter32(x, float32(math.Inf(1)))
			edge = math.Nextafter32(edge, 0)
		}
	}
	for range 1000 {
		xs = append(xs, float32(rng.Float64()*12), float32(rng.Float64()), float32(math.Exp(-rng.Float64()*20)))
	}
	for _, c := range []struct {
		name string
		emit func(e *emitter, x string) string
		ref  func(float64) float64
	}{
		{"tanhf", (*emitter).tanhf, math.Tanh},
		{"erff", (*emitter).erff, math.Erf},
	} {
		e := newEmitter(nil, nil, nil, 90)
		out := c.emit(e, "%x")
		text := e.body.String()
		if strings.Contains(text, "div.rn") || strings.Contains(text, "rcp.rn") {
			t.Fatalf("%s issues an IEEE division or reciprocal:\n%s", c.name, text)
		}
		eval := func(x float32) float32 {
			return f32(runPTX32(t, text, map[string]uint32{"%x": f32bits(x)})[out])
		}
		inf := float32(math.Inf(1))
		for _, sp := range []struct{ x, want float32 }{{inf, 1}, {-inf, -1}, {0, 0}} {
			if got := eval(sp.x); got != sp.want {
				t.Errorf("%s(%g) = %g, want %g", c.name, sp.x, got, sp.want)
			}
		}
		if got := eval(float32(math.Copysign(0, -1))); got != 0 || !math.Signbit(float64(got)) {
			t.Errorf("%s(-0) = %g, want -0", c.name, got)
		}
		if got := eval(float32(math.NaN())); got == got {
			t.Errorf("%s(NaN) = %g, want NaN", c.name, got)
		}
		worst, at := 0.0, float32(0)
		for _, ex2 := range []int{-2, 0, 2} {
			for _, rcp := range []int{-64, 0, 64} {
				approxSkew.ex2, approxSkew.rcp = ex2, rcp
				for _, x := range xs {
					for _, v := range []float32{x, -x} {
						want := c.ref(float64(v))
						if err := math.Abs(float64(eval(v))-want) / math.Abs(want); err > worst {
							worst, at = err, v
						}
					}
				}
			}
		}
		approxSkew.ex2, approxSkew.rcp = 0, 0
		if worst > 1e-6 {
			t.Errorf("%s: relative error %.3g at x = %g, above 1e-6", c.name, worst, at)
		}
		t.Logf("%s: worst relative error %.3g (x = %g)", c.name, worst, at)
	}
}
