package crosscheck

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Accuracy is how far a kernel's float results may lie from the CPU
// executor's. ULPs 0 means exact: every float element must have the same
// bits (any NaN matches any NaN — Loom leaves payloads unspecified — and
// +0 differs from −0). Otherwise an element passes when
//
//	|other − cpu| ≤ ULPs · ulp(max(|cpu|, 1)) [+ HalfULPs (at least one)
//	ulps of the element format at that magnitude for f16/bf16 elements]
//
// with ulp taken in f32 for 16- and 32-bit floats and in f64 for f64:
// ULPs counts units of the format the math runs in, at the result's
// magnitude, or at 1 below it (so cancellation in x − y does not turn a
// small absolute error into an unbounded relative one), and a half result
// may round once more either way.
type Accuracy struct {
	ULPs float64
	// HalfULPs replaces the one f16/bf16 rounding of the bound where a
	// kernel computes in half precision in an order of its own (tensor-core
	// f16 accumulators); 0 means 1.
	HalfULPs float64
	// Why names the ops that make the kernel inexact, with each one's
	// bound, sorted.
	Why []string
}

// Exact reports whether the kernel's results must match bit for bit.
func (a Accuracy) Exact() bool { return a.ULPs == 0 }

// opBounds are the per-op accuracy bounds of the PTX backend's
// approximate math (loom/ptx mathfn.go, LOOM.md §11.1), in f32 ulps: the
// CPU executor's forms are correctly rounded, so the PTX bound is the
// bound of the difference. tanhf and erff state a relative 1e-6 (8.4
// ulp); powf states 4 + |y| ulp, taken at |y| = 20, the largest exponent
// its accuracy was measured at; sinturnsf/costurnsf 2 and softplusf 6
// (the shared lowering's bounds, LOOM.md §11.1); geluf 9, erff's and
// tanhf's, on which its shared form is built; atanf/atan2f 3 and
// sinhf/coshf 8 (shared forms; sinh/cosh on PTX's expf); tanf, asinf,
// acosf, asinhf, acoshf, atanhf, cbrtf their CPU-measured bounds (exact
// steps only, cbrt's Newton steps undo ex2.approx), erfcf 14 (8 + two
// PTX expf).
var opBounds = map[string]float64{
	"exp2f": 2, "expf": 3, "logf": 2, "log2f": 2, "log10f": 2, "rsqrtf": 1,
	"tanhf": 9, "erff": 9, "logisticf": 4, "siluf": 4,
	"sinf": 4, "cosf": 4, "powf": 24, "sinturnsf": 2, "costurnsf": 2, "softplusf": 6, "geluf": 9,
	"log1pf": 4, "expm1f": 6, "atanf": 3, "atan2f": 3, "sinhf": 8, "coshf": 8,
	"tanf": 4, "asinf": 3, "acosf": 3, "erfcf": 14, "asinhf": 4, "acoshf": 4, "atanhf": 5, "cbrtf": 2,
}

// Composition allowance: a kernel composes a few approximate ops, each
// error carried through the exact ones after it.
const composeFactor = 4

// reorderULPs bounds float sums the backends combine in different orders
// (subgroup and workgroup reductions and scans, float atomics): 128 f32
// ulps at max(|cpu|, 1), 1.5e-5 relative — inputs in [-2, 2) summed over
// a few hundred terms stay well inside it.
//
// A workgroup reduction or scan over more than reorderTerms invocations
// gets reorderULPs·n/reorderTerms: the difference between two orders grows
// about linearly with the number of terms (√n roundings, each at a partial
// sum √n times a term), and the result it is measured at may have
// cancelled far below those partial sums. Seen: a 592-invocation sum of
// 32-product dot products (an hrx down projection, 18944 terms in all)
// at -0.474 differed by 256 ulp between the CPU executor's sequential
// order and the GPU's warp tree.
const (
	reorderULPs  = 128
	reorderTerms = 64
)

// tensorULPs bounds vector.mma: the tensor cores sum a k-step in their own
// order and internal precision: 8192 f32 ulps, 1e-3 relative. An f16
// accumulator is rounded after every k step on the CPU executor and
// fewer times, wider, by the tensor cores: tensorHalfULPs f16 ulps (64,
// 6% at magnitude 1: the differences of k = 32 roundings either way).
const (
	tensorULPs     = 8192
	tensorHalfULPs = 64
)

// Classify walks the body (and the functions it calls) and returns the
// accuracy its float results are held to when it runs in workgroups of
// invocations invocations (0 when unknown: counted as reorderTerms).
func Classify(prog *loom.Program, body *loom.Region, invocations int) Accuracy {
	why := map[string]float64{}
	seen := map[string]bool{}
	var walk func(r *loom.Region)
	walk = func(r *loom.Region) {
		if r == nil {
			return
		}
		for _, op := range r.Ops {
			classifyOp(op, invocations, why)
			for _, sub := range op.Regions {
				walk(sub)
			}
			if op.Name == "func.call" && !seen[op.Symbol] {
				seen[op.Symbol] = true
				if f := prog.Func(op.Symbol); f != nil {
					walk(f.Body)
				}
			}
		}
	}
	walk(body)
	var a Accuracy
	if _, ok := why["vector.mma"]; ok {
		a.HalfULPs = tensorHalfULPs
	}
	for name, u := range why {
		a.ULPs = max(a.ULPs, u)
		a.Why = append(a.Why, fmt.Sprintf("%s (%g ulp)", name, u))
	}
	sort.Strings(a.Why)
	return a
}

func classifyOp(op *loom.Op, invocations int, why map[string]float64) {
	name := op.Name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		if u, ok := opBounds[name[i+1:]]; ok {
			why[name] = composeFactor * u
			return
		}
	}
	switch {
	case name == "vector.mma":
		why[name] = tensorULPs
	case strings.HasPrefix(name, "kernel.subgroup.reduce"), strings.HasPrefix(name, "kernel.subgroup.scan"),
		strings.HasPrefix(name, "kernel.workgroup.reduce"), strings.HasPrefix(name, "kernel.workgroup.scan"):
		// Integer kinds (addi, …) and float min/max are exact in any
		// order; float sums and products are not.
		if p := op.Param; strings.HasPrefix(p, "addf") || strings.HasPrefix(p, "mulf") {
			u := float64(reorderULPs)
			if strings.HasPrefix(name, "kernel.workgroup.") && invocations > reorderTerms {
				u *= float64(invocations) / reorderTerms
			}
			why[name+"<"+p+">"] = max(why[name+"<"+p+">"], u)
		}
	case strings.Contains(name, "atomic"):
		if p := op.Param; strings.HasPrefix(p, "addf") || strings.HasPrefix(p, "mulf") {
			why[name+"<"+p+">"] = reorderULPs
		}
	}
}

// Difference is the first element of a buffer where two backends disagree.
type Difference struct {
	// Param is the launch parameter's index, Name its name.
	Param int
	Name  string
	// Element is the element index (the byte index for buffers compared
	// byte-wise), Type the element type compared ("bytes" for those).
	Element int
	Type    string
	// CPU and Other are the two values as text; ULPs the distance in
	// units of the bound (0 for bytes and integers).
	CPU, Other string
	ULPs       float64
	// Count is the number of elements that differ.
	Count int
}

func (d *Difference) String() string { return d.Describe("other") }

// Describe is String with the other backend named other.
func (d *Difference) Describe(other string) string {
	s := fmt.Sprintf("%%%s[%d] (%s): cpu %s, %s %s", d.Name, d.Element, d.Type, d.CPU, other, d.Other)
	if d.ULPs > 0 {
		s += fmt.Sprintf(" (%.4g ulp)", d.ULPs)
	}
	return s + fmt.Sprintf("; %d elements differ", d.Count)
}

// Compare compares buffer i of c as the other backend left it (got) with
// the CPU executor's (want); nil means they agree under c.Accuracy.
func Compare(c *Case, i int, got, want []byte) *Difference {
	name := c.Kernel.Launch[i].Name
	if len(got) != len(want) {
		return &Difference{Param: i, Name: name, Type: "bytes", CPU: fmt.Sprint(len(want), " bytes"), Other: fmt.Sprint(len(got), " bytes"), Count: 1}
	}
	el := c.Elems[i]
	if el == nil || el.Kind != loom.TypeFloat || el.ByteSize() == 1 {
		return compareInts(i, name, el, got, want)
	}
	size := el.ByteSize()
	var first *Difference
	for off := 0; off+size <= len(got); off += size {
		g, w := bitsAt(got[off:], size), bitsAt(want[off:], size)
		if g == w {
			continue
		}
		gf, wf := Decode(el, g), Decode(el, w)
		if math.IsNaN(gf) && math.IsNaN(wf) {
			continue
		}
		u := math.Inf(1)
		if !c.Accuracy.Exact() {
			u = ulpsApart(el, gf, wf, max(c.Accuracy.HalfULPs, 1))
			if u <= c.Accuracy.ULPs {
				continue
			}
		}
		if first == nil {
			first = &Difference{Param: i, Name: name, Element: off / size, Type: el.String(),
				CPU: formatFloat(wf, w, size), Other: formatFloat(gf, g, size)}
			if !math.IsInf(u, 1) {
				first.ULPs = u
			}
		}
		first.Count++
	}
	return first
}

// compareInts compares integer (or unknown) elements bit for bit.
func compareInts(i int, name string, el *loom.Type, got, want []byte) *Difference {
	size, typ := 1, "bytes"
	if el != nil && elemBytes(el) > 0 {
		size, typ = elemBytes(el), el.String()
	}
	var first *Difference
	for off := 0; off+size <= len(got); off += size {
		g, w := bitsAt(got[off:], size), bitsAt(want[off:], size)
		if g == w {
			continue
		}
		if first == nil {
			first = &Difference{Param: i, Name: name, Element: off / size, Type: typ,
				CPU: hex(w, size), Other: hex(g, size)}
		}
		first.Count++
	}
	// A tail shorter than an element is compared byte-wise.
	for off := len(got) / size * size; off < len(got); off++ {
		if got[off] != want[off] && first == nil {
			first = &Difference{Param: i, Name: name, Element: off, Type: "bytes",
				CPU: hex(uint64(want[off]), 1), Other: hex(uint64(got[off]), 1), Count: 1}
		}
	}
	return first
}

func bitsAt(b []byte, size int) uint64 {
	switch size {
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for j := size - 1; j >= 0; j-- {
		v = v<<8 | uint64(b[j])
	}
	return v
}

func hex(v uint64, size int) string { return fmt.Sprintf("0x%0*x", 2*size, v) }

// formatFloat prints f at its element's precision, with its bits.
func formatFloat(f float64, bits uint64, size int) string {
	prec := 64
	if size <= 4 {
		prec = 32
	}
	return strconv.FormatFloat(f, 'g', -1, prec) + " (" + hex(bits, size) + ")"
}

// Decode widens the bits of a float element of type el to float64
// (exactly); NaN for types it does not know.
func Decode(el *loom.Type, bits uint64) float64 {
	switch el.Name {
	case "f32":
		return float64(math.Float32frombits(uint32(bits)))
	case "f64":
		return math.Float64frombits(bits)
	case "bf16":
		return float64(math.Float32frombits(uint32(bits) << 16))
	case "f16":
		sign := 1.0
		if bits&0x8000 != 0 {
			sign = -1
		}
		e, m := int(bits>>10&0x1f), float64(bits&0x3ff)
		switch e {
		case 0:
			return sign * math.Ldexp(m, -24)
		case 31:
			if m != 0 {
				return math.NaN()
			}
			return sign * math.Inf(1)
		}
		return sign * math.Ldexp(1+m/1024, e-15)
	}
	return math.NaN()
}

// ulpsApart is |g − w| in the units of Accuracy's bound: ulps of the
// compute format at max(|w|, 1), less halfULPs element-format ulps for
// halves.
// Infinities and NaNs against finite values are infinitely far apart
// unless equal.
func ulpsApart(el *loom.Type, g, w, halfULPs float64) float64 {
	if math.IsNaN(g) || math.IsNaN(w) || math.IsInf(g, 0) || math.IsInf(w, 0) {
		if g == w {
			return 0
		}
		return math.Inf(1)
	}
	m := math.Max(math.Abs(w), 1)
	d := math.Abs(g - w)
	if el.Name == "f16" || el.Name == "bf16" {
		d = math.Max(0, d-halfULPs*ulpAt(m, halfMantissa(el)))
	}
	mant := 23
	if el.Name == "f64" {
		mant = 52
	}
	return d / ulpAt(m, mant)
}

func halfMantissa(el *loom.Type) int {
	if el.Name == "bf16" {
		return 7
	}
	return 10
}

// ulpAt is the spacing of floats with mant stored mantissa bits at m ≥ 1.
func ulpAt(m float64, mant int) float64 {
	_, e := math.Frexp(m) // m = f·2^e, f in [0.5, 1)
	return math.Ldexp(1, e-1-mant)
}
