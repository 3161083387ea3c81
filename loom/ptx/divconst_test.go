package ptx

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// runPTX32 evaluates straight-line 32-bit PTX from the register values in
// regs (32-bit patterns) and returns them: the integer forms divConst emits
// (mov, and, shl, shr, add, sub, mul.hi, mad.lo) and the f32 forms expf
// emits (mov.f32, fma in .rn, .rn.sat and .rm, add, sub, mul, abs, neg, max, min
// and min.NaN, copysign, setp.lt and selp, ex2.approx and rcp.approx in
// their .ftz forms), with decimal and 0f immediates. ex2.approx and
// rcp.approx are taken as exact, rounded once to f32, then moved by
// approxSkew: callers check the sequence around them, at the ends of the
// hardware's error bounds, not the hardware's approximation itself.
func runPTX32(t *testing.T, text string, regs map[string]uint32) map[string]uint32 {
	t.Helper()
	arg := func(s string) uint32 {
		if v, ok := regs[s]; ok {
			return v
		}
		if h, ok := strings.CutPrefix(s, "0f"); ok {
			b, err := strconv.ParseUint(h, 16, 32)
			if err != nil {
				t.Fatalf("bad float immediate %q", s)
			}
			return uint32(b)
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("operand %q is neither a set register nor an immediate", s)
		}
		return uint32(n)
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), ";")
		mnem, rest, _ := strings.Cut(line, " ")
		ops := strings.Split(rest, ", ")
		a := make([]uint32, len(ops))
		for i := 1; i < len(ops); i++ {
			a[i] = arg(ops[i])
		}
		var r uint32
		switch mnem {
		case "mov.b32", "mov.f32":
			r = a[1]
		case "and.b32":
			r = a[1] & a[2]
		case "shr.u32":
			r = a[1] >> min(a[2], 32)
		case "shr.s32":
			r = uint32(int32(a[1]) >> min(a[2], 31))
		case "add.s32":
			r = a[1] + a[2]
		case "sub.s32":
			r = a[1] - a[2]
		case "mul.hi.u32":
			r = uint32(uint64(a[1]) * uint64(a[2]) >> 32)
		case "mad.lo.s32":
			r = a[1]*a[2] + a[3]
		case "shl.b32":
			r = a[1] << min(a[2], 32)
		case "fma.rn.f32":
			r = f32bits(fmaRound(f32(a[1]), f32(a[2]), f32(a[3]), big.ToNearestEven))
		case "fma.rn.sat.f32":
			v := fmaRound(f32(a[1]), f32(a[2]), f32(a[3]), big.ToNearestEven)
			r = f32bits(min(max(v, 0), 1)) // Go's max/min pass NaN on
			if v != v {
				r = 0 // .sat turns NaN into +0
			}
		case "fma.rm.f32":
			r = f32bits(fmaRound(f32(a[1]), f32(a[2]), f32(a[3]), big.ToNegativeInf))
		case "mul.rn.f32":
			r = f32bits(f32(a[1]) * f32(a[2]))
		case "sub.rn.f32":
			r = f32bits(f32(a[1]) - f32(a[2]))
		case "max.f32":
			r = f32bits(nanLoses(f32(a[1]), f32(a[2]), false))
		case "min.f32":
			r = f32bits(nanLoses(f32(a[1]), f32(a[2]), true))
		case "ex2.approx.f32":
			r = f32bits(float32(math.Exp2(float64(f32(a[1])))))
		case "ex2.approx.ftz.f32":
			x := f32(a[1])
			if x != 0 && math.Abs(float64(x)) < 0x1p-126 {
				x = 0
			}
			v := skewULP(float32(math.Exp2(float64(x))), approxSkew.ex2)
			if v < 0x1p-126 {
				v = 0
			}
			r = f32bits(v)
		case "rcp.approx.ftz.f32":
			r = f32bits(skewULP(1/f32(a[1]), approxSkew.rcp))
		case "abs.f32":
			r = a[1] &^ (1 << 31)
		case "neg.f32":
			r = a[1] ^ 1<<31
		case "add.rn.f32":
			r = f32bits(f32(a[1]) + f32(a[2]))
		case "min.NaN.f32":
			x, y := f32(a[1]), f32(a[2])
			r = f32bits(min(x, y)) // Go's min passes a NaN on, as .NaN does
		case "copysign.f32":
			r = a[2]&^(1<<31) | a[1]&(1<<31)
		case "setp.lt.f32":
			if f32(a[1]) < f32(a[2]) {
				r = 1
			}
		case "selp.f32":
			r = a[2]
			if a[3] != 0 {
				r = a[1]
			}
		default:
			t.Fatalf("unexpected instruction %q", line)
		}
		regs[ops[0]] = r
	}
	return regs
}

var (
	f32     = math.Float32frombits
	f32bits = math.Float32bits
)

// approxSkew moves runPTX32's ex2.approx.ftz and rcp.approx.ftz results
// that many f32 steps off the correctly rounded value, so a test can check
// a sequence at the ends of the instructions' error bounds.
var approxSkew struct{ ex2, rcp int }

// skewULP is x moved n f32 steps (toward +inf for n > 0); NaN, infinities
// and zero stay.
func skewULP(x float32, n int) float32 {
	if x != x || x == 0 || math.IsInf(float64(x), 0) {
		return x
	}
	for ; n > 0; n-- {
		x = math.Nextafter32(x, float32(math.Inf(1)))
	}
	for ; n < 0; n++ {
		x = math.Nextafter32(x, float32(math.Inf(-1)))
	}
	return x
}

// fmaRound is a·b + c rounded once to f32 in mode (PTX's fma.rn and
// fma.rm): exact in big.Float, then one rounding. Directed modes are
// only modelled for normal results; a subnormal one fails the caller.
func fmaRound(a, b, c float32, mode big.RoundingMode) float32 {
	if a != a || b != b || c != c || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) {
		return float32(math.FMA(float64(a), float64(b), float64(c)))
	}
	// 600 bits hold any f32 a·b + c exactly (2^256 down to 2^-298).
	p := new(big.Float).SetPrec(600).SetFloat64(float64(a))
	p.Mul(p, new(big.Float).SetFloat64(float64(b)))
	p.Add(p, new(big.Float).SetFloat64(float64(c)))
	if mode == big.ToNearestEven {
		v, _ := p.Float32() // nearest, ties to even, subnormals too
		return v
	}
	v, _ := new(big.Float).SetPrec(24).SetMode(mode).Set(p).Float32()
	if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
		panic("fmaRound: directed rounding to a subnormal is not modelled")
	}
	return v
}

// nanLoses is PTX's max (less false) or min (less true) of f32 values: the
// other operand when one is NaN.
func nanLoses(a, b float32, less bool) float32 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	case (a < b) == less:
		return a
	}
	return b
}

// TestDivConst checks the instructions emitted for division and remainder
// by constants against Go's, over divisors of every kind and dividends at
// the edges and at random: no div or rem instruction may remain where a
// magic number serves.
func TestDivConst(t *testing.T) {
	divisors := []int64{1, 2, 3, 5, 6, 7, 8, 9, 10, 12, 25, 36, 60, 100, 127, 144, 255, 256, 641, 1000, 4096,
		6700417, 1<<30 - 1, 1 << 30, 1<<31 - 1}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, op := range []string{"div", "rem", "divui", "remui", "divsi", "remsi"} {
		for _, c := range divisors {
			for _, nonneg := range []bool{false, true} {
				e := newEmitter(nil, nil, nil, 90)
				x := &val{t: i32Type, reg: "%x", nonneg: nonneg}
				if op == "div" || op == "rem" {
					x.t = indexType
				}
				out := e.newVal(x.t)
				if !e.divConst(op, out, x, c) {
					if op == "divsi" || op == "remsi" {
						if nonneg || c&(c-1) == 0 {
							t.Errorf("%s by %d (nonneg %v) not reduced", op, c, nonneg)
						}
						continue
					}
					if op == "divui" || op == "remui" {
						continue // a 33-bit magic number: left to ptxas
					}
					t.Fatalf("%s by %d refused", op, c)
				}
				text := e.body.String()
				if strings.Contains(text, "div") || strings.Contains(text, "rem") {
					t.Fatalf("%s by %d emitted a division:\n%s", op, c, text)
				}
				xs := []int64{0, 1, c - 1, c, c + 1, 2*c - 1, 2 * c, math.MaxInt32, math.MaxInt32 - 1}
				for range 2000 {
					xs = append(xs, int64(rng.Uint32()>>rng.IntN(32)))
				}
				lo, hi := int64(0), int64(math.MaxInt32)
				switch {
				case op == "divui" || op == "remui":
					hi = math.MaxUint32
					xs = append(xs, math.MaxUint32, math.MaxUint32-c)
				case (op == "divsi" || op == "remsi") && !nonneg:
					lo = math.MinInt32
					xs = append(xs, -1, -c, -c-1, -c+1, math.MinInt32, math.MinInt32+1)
					for range 2000 {
						xs = append(xs, int64(int32(rng.Uint32())))
					}
				}
				for _, xv := range xs {
					if xv < lo || xv > hi {
						continue
					}
					got := runPTX32(t, text, map[string]uint32{"%x": uint32(xv)})[out.reg]
					var want int64
					switch op {
					case "div", "divui", "divsi":
						want = xv / c
					default:
						want = xv % c
					}
					if got != uint32(want) {
						t.Fatalf("%s(%d, %d) = %d, want %d, from\n%s", op, xv, c, int32(got), want, text)
					}
				}
			}
		}
	}
}

// TestDivConstInKernel: ids divided by constants and index divisions lower
// to no PTX division; a divisor in a register still divides.
func TestDivConstInKernel(t *testing.T) {
	src := kernelWith(`  %c8 = index.constant 8 : index
  %c36 = index.constant 36 : index
  %q = index.div %i, %c8 : index
  %r = index.rem %i, %c36 : index
  %s = index.add %q, %r : index
  %u = index.div %n, %c36 : index
  %w = index.add %s, %u : index
  %t = index.div %w, %n : index
  %f = index.cast %t : index to i32
  %g = scalar.sitofp %f : i32 to f32
  view.store %g, %v[%i] : f32, view<[%n]xf32>`)
	k, err := Compile([]*loom.Module{parseSrc(t, src)}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(k.PTX, "\tdiv.") + strings.Count(k.PTX, "\trem.")
	if n != 1 {
		t.Errorf("%d division instructions, want 1 (by %%n):\n%s", n, k.PTX)
	}
	for _, want := range []string{"shr.u32", "mul.hi.u32", "mad.lo.s32 %r"} {
		if !strings.Contains(k.PTX, want) {
			t.Errorf("no %s:\n%s", want, k.PTX)
		}
	}
}
