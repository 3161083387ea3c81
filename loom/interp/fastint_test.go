package interp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// fastIntSrc is a kernel applying one int op three ways: both operands
// varying, the second one uniform value (a parameter) and the first one
// uniform value, each element i written to out[3i..3i+2]. The workgroups
// of 64 leave the last one's lanes past n inactive.
const fastIntSrc = `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  %wgm1 = index.constant 63 : index
  %p = index.add %n, %wgm1 : index
  %g = index.div %p, %wg : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %s: T, %a: buffer, %b: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %c3 = index.constant 3 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %n3 = index.mul %n, %c3 : index
  %i = kernel.workitem.dispatch.id<x> : index
  %in = index.cmp ult, %i, %n : index
  scf.if %in {
    %av = buffer.view %a[%z] : buffer -> view<[%n]xT>
    %bv = buffer.view %b[%z] : buffer -> view<[%n]xT>
    %ov = buffer.view %o[%z] : buffer -> view<[%n3]xT>
    %x = view.load %av[%i] : view<[%n]xT> -> T
    %y = view.load %bv[%i] : view<[%n]xT> -> T
    %vv = OP %x, %y : T
    %vs = OP %x, %s : T
    %sv = OP %s, %y : T
    %j = index.mul %i, %c3 : index
    %j1 = index.add %j, %c1 : index
    %j2 = index.add %j, %c2 : index
    view.store %vv, %ov[%j] : T, view<[%n3]xT>
    view.store %vs, %ov[%j1] : T, view<[%n3]xT>
    view.store %sv, %ov[%j2] : T, view<[%n3]xT>
  }
  kernel.return
}
`

// TestFastIntOps checks the element loops of fastBinI and the sign
// extensions of postI against Go arithmetic: add, sub, mul, and, or, xor
// and the three shifts on i8, i16, i32 and i64, each with both operands
// varying and with either one a uniform value, on operands near each
// width's limits (shift counts in range).
func TestFastIntOps(t *testing.T) {
	vec := hasAVX2
	defer func() { hasAVX2 = vec }()
	for _, hasAVX2 = range []bool{vec, false} {
		t.Run(map[bool]string{true: "vector", false: "portable"}[hasAVX2], testFastIntOps)
	}
}

// testFastIntOps is TestFastIntOps with the current loops.
func testFastIntOps(t *testing.T) {
	// Two workgroups, the second partly inactive: 39 lanes, so the
	// vector loops of four lanes leave a tail of three.
	const n = 103
	ops := []struct {
		name string
		f    func(x, y int64, bits uint) int64
	}{
		{"addi", func(x, y int64, _ uint) int64 { return x + y }},
		{"subi", func(x, y int64, _ uint) int64 { return x - y }},
		{"muli", func(x, y int64, _ uint) int64 { return x * y }},
		{"andi", func(x, y int64, _ uint) int64 { return x & y }},
		{"ori", func(x, y int64, _ uint) int64 { return x | y }},
		{"xori", func(x, y int64, _ uint) int64 { return x ^ y }},
		{"shli", func(x, y int64, _ uint) int64 { return x << uint(y) }},
		{"shrsi", func(x, y int64, _ uint) int64 { return x >> uint(y) }},
		{"shrui", func(x, y int64, bits uint) int64 { return int64(uint64(x) & widthMask(bits) >> uint(y)) }},
	}
	for _, bits := range []uint{8, 16, 32, 64} {
		ty := fmt.Sprintf("i%d", bits)
		wrap := func(v int64) int64 { return v << (64 - bits) >> (64 - bits) }
		for _, op := range ops {
			shift := strings.HasPrefix(op.name, "sh")
			t.Run(ty+"/"+op.name, func(t *testing.T) {
				src := strings.NewReplacer("OP", "scalar."+op.name, "xT", "x"+ty, ": T", ": "+ty, "-> T", "-> "+ty).Replace(fastIntSrc)
				r := compileRun(t, parseSrc(t, src), "k", Options{})
				a, b := make([]int64, n), make([]int64, n)
				w := opsWords(2 * n)
				for i := range a {
					a[i] = wrap(int64(w[i])<<32 | int64(uint32(w[n+i])))
					b[i] = wrap(int64(w[n+i]) * 7919)
					if shift {
						b[i] = int64(uint64(b[i]) % uint64(bits))
					}
				}
				uniform := []int64{wrap(-0x5A5A5A5A5A5A5A5B), wrap(0x3C3C3C3C3C3C3C3D)}
				if shift {
					uniform = []int64{int64(bits) - 1, int64(bits)/2 - 3}
				}
				for _, s := range uniform {
					out := make([]byte, 3*n*int(bits/8))
					r.run(wl(n), idx(n), Arg{Bits: uint64(s) & widthMask(bits)}, buf(intBytes(a, bits)), buf(intBytes(b, bits)), buf(out))
					got := bytesInt(out, bits)
					for i := range n {
						want := [3]int64{wrap(op.f(a[i], b[i], bits)), wrap(op.f(a[i], s, bits)), wrap(op.f(s, b[i], bits))}
						for k, form := range []string{"varying, varying", "varying, uniform", "uniform, varying"} {
							if g := got[3*i+k]; g != want[k] {
								t.Fatalf("element %d (%s): %s(%d, %d) = %d, want %d", i, form, op.name, []int64{a[i], a[i], s}[k], []int64{b[i], s, b[i]}[k], g, want[k])
							}
						}
					}
				}
			})
		}
	}
}

// TestFastIntShiftCount: a uniform shift count not below the width traps
// as a varying one does, on the fast path as on the general one.
func TestFastIntShiftCount(t *testing.T) {
	src := strings.NewReplacer("OP", "scalar.shli", "xT", "xi32", ": T", ": i32", "-> T", "-> i32").Replace(fastIntSrc)
	r := compileRun(t, parseSrc(t, src), "k", Options{})
	const n = 8
	zero := make([]byte, 4*n)
	err := r.k.Run(r.launch(n), []Arg{idx(n), {Bits: 32}, buf(zero), buf(make([]byte, 4*n)), buf(make([]byte, 12*n))})
	if !errors.Is(err, ErrShift) || !strings.Contains(err.Error(), "shift count not below the operand width") {
		t.Fatalf("shift by a uniform 32 of i32: %v, want the shift-count trap", err)
	}
}

// TestConstInsertUniform: vector.insert of one uniform value into a
// varying vector at a constant position, then extracts at constant
// positions.
func TestConstInsertUniform(t *testing.T) {
	src := `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %s: i32, %o: buffer) {
  %z = index.constant 0 : offset
  %c2 = index.constant 2 : index
  %i = kernel.workitem.id<x> : index
  %ii = index.cast %i : index to i32
  %v0 = vector.splat %ii : vector<3xi32>
  %v1 = vector.insert %s into %v0[1] : i32, vector<3xi32>
  %e0 = vector.extract %v1[0] : vector<3xi32> -> i32
  %e1 = vector.extract %v1[1] : vector<3xi32> -> i32
  %e2 = vector.extract %v1[2] : vector<3xi32> -> i32
  %t = scalar.addi %e0, %e1 : i32
  %u = scalar.addi %t, %e2 : i32
  %ov = buffer.view %o[%z] : buffer -> view<32xi32>
  view.store %u, %ov[%i] : i32, view<32xi32>
  kernel.return
}
`
	r := compileRun(t, parseSrc(t, src), "k", Options{})
	out := make([]byte, 4*32)
	r.run(wl(32), idx(32), Arg{Bits: 1000}, buf(out))
	for i, g := range bytesI32(out) {
		if want := int32(2*i + 1000); g != want {
			t.Fatalf("lane %d: %d, want %d", i, g, want)
		}
	}
}

// widthMask keeps the low bits bits of a word.
func widthMask(bits uint) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

// intBytes is xs little-endian at bits per element.
func intBytes(xs []int64, bits uint) []byte {
	out := make([]byte, len(xs)*int(bits/8))
	for i, x := range xs {
		switch bits {
		case 8:
			out[i] = byte(x)
		case 16:
			binary.LittleEndian.PutUint16(out[2*i:], uint16(x))
		case 32:
			binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
		default:
			binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
		}
	}
	return out
}

// bytesInt reads little-endian signed elements of bits each.
func bytesInt(b []byte, bits uint) []int64 {
	n := len(b) / int(bits/8)
	out := make([]int64, n)
	for i := range out {
		switch bits {
		case 8:
			out[i] = int64(int8(b[i]))
		case 16:
			out[i] = int64(int16(binary.LittleEndian.Uint16(b[2*i:])))
		case 32:
			out[i] = int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
		default:
			out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	return out
}

// TestHalfLoadExhaustive: the f16 and bf16 loads' direct decodings
// (codec and lane loops) give every bit pattern the value the general
// minifloat decoding does (NaNs as NaNs).
func TestHalfLoadExhaustive(t *testing.T) {
	for _, name := range []string{"f16", "bf16"} {
		ty := &loom.Type{Kind: loom.TypeFloat, Name: name, Bits: 16}
		f, err := floatFormat(loom.Pos{}, ty)
		if err != nil {
			t.Fatal(err)
		}
		c := &compiler{k: &Kernel{}}
		cd, err := c.codecFor(loom.Pos{}, ty)
		if err != nil {
			t.Fatal(err)
		}
		mem := make([]byte, 2<<16)
		offs := make([]int64, 1<<16)
		for h := range 1 << 16 {
			binary.LittleEndian.PutUint16(mem[2*h:], uint16(h))
			offs[h] = int64(2 * h)
		}
		lanes := make([]float64, 1<<16)
		loadLanesF(&cd, lanes, mem, offs, 0)
		for h := range 1 << 16 {
			want := f.m.decode(uint64(h))
			for _, got := range []float64{cd.loadF(mem[2*h:]), lanes[h]} {
				if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("%s %#04x: %v, want %v", name, h, got, want)
				}
			}
		}
	}
}

// TestVectorReduceLanes: vector.reduce of varying vectors, combined
// component by component over the lanes: an i8 sum that wraps, an i8
// signed maximum and an f32 sum, each lane against Go.
func TestVectorReduceLanes(t *testing.T) {
	src := `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 40 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %x: buffer, %f: buffer, %o: buffer, %p: buffer) {
  %z = index.constant 0 : offset
  %c4 = index.constant 4 : index
  %i = kernel.workitem.id<x> : index
  %j = index.mul %i, %c4 : index
  %xv = buffer.view %x[%z] : buffer -> view<160xi8>
  %fv = buffer.view %f[%z] : buffer -> view<160xf32>
  %ov = buffer.view %o[%z] : buffer -> view<80xi8>
  %pv = buffer.view %p[%z] : buffer -> view<40xf32>
  %v = vector.load %xv[%j] : view<160xi8> -> vector<4xi8>
  %w = vector.load %fv[%j] : view<160xf32> -> vector<4xf32>
  %zero = scalar.constant 100 : i8
  %low = scalar.constant -128 : i8
  %fz = scalar.constant 0.5 : f32
  %s = vector.reduce<addi> %v, %zero : vector<4xi8>, i8
  %m = vector.reduce<maxsi> %v, %low : vector<4xi8>, i8
  %fs = vector.reduce<addf> %w, %fz : vector<4xf32>, f32
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %k = index.mul %i, %c2 : index
  %k1 = index.add %k, %c1 : index
  view.store %s, %ov[%k] : i8, view<80xi8>
  view.store %m, %ov[%k1] : i8, view<80xi8>
  view.store %fs, %pv[%i] : f32, view<40xf32>
  kernel.return
}
`
	r := compileRun(t, parseSrc(t, src), "k", Options{})
	w := opsWords(160)
	x, f := make([]byte, 160), make([]float32, 160)
	for i := range x {
		x[i] = byte(w[i])
		f[i] = float32(w[i]) / (1 << 20)
	}
	o, p := make([]byte, 80), make([]byte, 160)
	r.run(wl(40), idx(40), buf(x), buf(f32bytes(f)), buf(o), buf(p))
	got := bytesF32(p)
	for l := range 40 {
		sum, mx, fs := int8(100), int8(-128), float32(0.5)
		for c := range 4 {
			e := int8(x[4*l+c])
			sum += e
			mx = max(mx, e)
			fs += f[4*l+c]
		}
		if int8(o[2*l]) != sum || int8(o[2*l+1]) != mx || got[l] != fs {
			t.Fatalf("lane %d: sum %d max %d f32 %v, want %d %d %v", l, int8(o[2*l]), int8(o[2*l+1]), got[l], sum, mx, fs)
		}
	}
}

// vecGatherSrc loads vector<4xi32> at element l·SCALE of a rank-1 view of
// n elements laid out LAYOUT apart, one invocation per lane l < m.
const vecGatherSrc = `kernel.def export("k") @k(%m: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 16 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%m: index, %n: index, %x: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %c4 = index.constant 4 : index
  %l = kernel.workitem.id<x> : index
  %in = index.cmp ult, %l, %m : index
  scf.if %in {
    %lay = encoding.layout.strided [LAYOUT] : encoding<layout>
    %xv = buffer.view %x[%z] : buffer -> view<[%n]xi32, %lay>
    %ov = buffer.view %o[%z] : buffer -> view<64xi32>
    %sc = index.constant SCALE : index
    %e = index.mul %l, %sc : index
    %v = vector.load %xv[%e] : view<[%n]xi32, %lay> -> vector<4xi32>
    %j = index.mul %l, %c4 : index
    vector.store %v, %ov[%j] : vector<4xi32>, view<64xi32>
  }
  kernel.return
}
`

// TestVectorGatherStrided: vector loads through a rank-1 view whose
// elements are 3 apart read elements l … l+3 of the view, and a view
// longer than its buffer reports the lane whose vector crosses the
// buffer's end instead of reading past it.
func TestVectorGatherStrided(t *testing.T) {
	src := func(layout, scale string) *loom.Module {
		return parseSrc(t, strings.NewReplacer("LAYOUT", layout, "SCALE", scale).Replace(vecGatherSrc))
	}
	r := compileRun(t, src("3", "1"), "k", Options{})
	x := make([]int32, 48)
	for i := range x {
		x[i] = int32(1000 + i)
	}
	out := make([]byte, 256)
	r.run(wl(13), idx(13), idx(16), buf(i32bytes(x)), buf(out))
	got := bytesI32(out)
	for l := range 13 {
		for k := range 4 {
			if want := x[3*(l+k)]; got[4*l+k] != want {
				t.Fatalf("lane %d element %d: %d, want %d", l, k, got[4*l+k], want)
			}
		}
	}

	// Lane 13 reads elements 39 … 42 of a 40-element buffer.
	r = compileRun(t, src("1", "3"), "k", Options{})
	short := i32bytes(x[:40]) // the view says 64 elements
	err := r.k.Run(r.launch(16), []Arg{idx(16), idx(64), buf(short), buf(make([]byte, 256))})
	if !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("vector past the buffer's end: %v, want an out-of-bounds trap", err)
	}
}

// gatherEncSrc loads a vector<2xT> at element 2l and a T at element l of
// rank-1 views on every lane l with l mod 3 ≠ 1 (a mask that is not a
// range; the other lanes' indices lie 1000 elements further, outside the
// views), and stores both unchanged and the scalar widened to W. It loads
// the same vector again through a view of its own on each lane, and
// elements 2 and 3 through the shared view at a uniform index (both read
// as one run), and adds element 1 of each, widened to W.
const gatherEncSrc = `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 24 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%x: buffer, %o: buffer, %s: buffer, %d: buffer, %rb: buffer, %hb: buffer, %d2: buffer) {
  %z = index.constant 0 : offset
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %size = index.constant SIZE : index
  %l = kernel.workitem.id<x> : index
  %m = index.rem %l, %c3 : index
  %in = index.cmp ne, %m, %c1 : index
  %out = index.cmp eq, %m, %c1 : index
  %out1 = index.cast %out : i1 to index
  %big = index.constant 1000 : index
  %far = index.mul %out1, %big : index
  %e0 = index.mul %l, %c2 : index
  %e = index.add %e0, %far : index
  %ls = index.add %l, %far : index
  scf.if %in {
    %xv = buffer.view %x[%z] : buffer -> view<48xT>
    %ov = buffer.view %o[%z] : buffer -> view<48xT>
    %sv = buffer.view %s[%z] : buffer -> view<24xT>
    %v = vector.load %xv[%e] : view<48xT> -> vector<2xT>
    vector.store %v, %ov[%e] : vector<2xT>, view<48xT>
    %w = view.load %xv[%ls] : view<48xT> -> T
    view.store %w, %sv[%l] : T, view<24xT>
    %dv = buffer.view %d[%z] : buffer -> view<24xW>
    %dv2 = buffer.view %d2[%z] : buffer -> view<24xW>
    %wide = WIDEN
    view.store %wide, %dv[%l] : W, view<24xW>
    %eb = index.mul %e0, %size : index
    %eo = index.cast %eb : index to offset
    %xl = buffer.view %x[%eo] : buffer -> view<2xT>
    %c0 = index.constant 0 : index
    %run = vector.load %xl[%c0] : view<2xT> -> vector<2xT>
    %rv = buffer.view %rb[%z] : buffer -> view<48xT>
    vector.store %run, %rv[%e0] : vector<2xT>, view<48xT>
    %head = vector.load %xv[%c2] : view<48xT> -> vector<2xT>
    %hv = buffer.view %hb[%z] : buffer -> view<2xT>
    vector.store %head, %hv[%c0] : vector<2xT>, view<2xT>
    %r1 = vector.extract %run[1] : vector<2xT> -> T
    %h1 = vector.extract %head[1] : vector<2xT> -> T
    %rw = WIDEN_R1
    %hw = WIDEN_H1
    %sum = ADDW %rw, %hw : W
    view.store %sum, %dv2[%l] : W, view<24xW>
  }
  kernel.return
}
`

// TestGatherEncodings: loads through a rank-1 view at a varying index
// (vecGather, decoding inline or through the codec, whatever index the
// inactive lanes hold) return every element type's values unchanged on the
// active lanes of a mask with gaps, and leave the other lanes alone. The f16 and bf16 inputs hold normal,
// subnormal, zero, negative and infinite values.
func TestGatherEncodings(t *testing.T) {
	halves := map[string][]uint16{
		"f16":  {0x3c00, 0x8001, 0x03ff, 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7bff, 0x0400, 0xc500},
		"bf16": {0x3f80, 0x8001, 0x007f, 0x0000, 0x8000, 0x7f80, 0xff80, 0x7f7f, 0x0080, 0xc0a0},
	}
	// widen makes the scalar's 64-bit copy, which shows the value the
	// load decoded, sign included.
	for _, c := range []struct {
		typ   string
		size  int
		widen string
	}{
		{"i8", 1, "scalar.extsi %w : i8 to i64"},
		{"i16", 2, "scalar.extsi %w : i16 to i64"},
		{"i32", 4, "scalar.extsi %w : i32 to i64"},
		{"i64", 8, "scalar.ori %w, %w : i64"},
		{"f16", 2, "scalar.extf %w : f16 to f64"},
		{"bf16", 2, "scalar.extf %w : bf16 to f64"},
		{"f32", 4, "scalar.extf %w : f32 to f64"},
		{"f64", 8, "scalar.bitcast %w : f64 to i64"},
	} {
		t.Run(c.typ, func(t *testing.T) {
			wide := "i64"
			if strings.Contains(c.widen, "extf") {
				wide = "f64"
			}
			add := "scalar.addi"
			if wide == "f64" {
				add = "scalar.addf"
			}
			src := strings.NewReplacer("WIDEN_R1", strings.ReplaceAll(c.widen, "%w", "%r1"), "WIDEN_H1", strings.ReplaceAll(c.widen, "%w", "%h1"),
				"WIDEN", c.widen, "ADDW", add, "T", c.typ, "W", wide, "SIZE", fmt.Sprint(c.size)).Replace(gatherEncSrc)
			r := compileRun(t, parseSrc(t, src), "k", Options{})
			x := make([]byte, 48*c.size)
			for i := range x {
				x[i] = byte(i*37 + 101)
			}
			if h := halves[c.typ]; h != nil {
				for i := range 48 {
					binary.LittleEndian.PutUint16(x[2*i:], h[i%len(h)])
				}
			}
			if c.typ == "f32" || c.typ == "f64" {
				for i := range 48 { // finite: the exponent's top bit clear
					x[(i+1)*c.size-1] &= 0xbf
				}
			}
			o, s, d := bytes.Repeat([]byte{0xee}, len(x)), bytes.Repeat([]byte{0xee}, len(x)/2), make([]byte, 24*8)
			rb, hb, d2 := bytes.Repeat([]byte{0xee}, len(x)), make([]byte, 2*c.size), make([]byte, 24*8)
			countFused = true
			defer func() { countFused = false }()
			before := gatherRuns.Load()
			r.run(nil, buf(x), buf(o), buf(s), buf(d), buf(rb), buf(hb), buf(d2))
			want := int64(2)
			if c.typ == "f32" {
				want = 1 // the scalar load takes fastLoad
			}
			if ran := gatherRuns.Load() - before; ran != want {
				t.Fatalf("%d loads took vecGather, want %d", ran, want)
			}
			n := c.size
			if !bytes.Equal(hb, x[2*n:4*n]) {
				t.Fatalf("elements 2 and 3 at a uniform index: % x, want % x", hb, x[2*n:4*n])
			}
			if !bytes.Equal(rb, o) {
				t.Fatalf("vectors through the lanes' own views:\n% x\nwant\n% x", rb, o)
			}
			for l := range 24 {
				wantV, wantS := x[2*l*n:(2*l+2)*n], x[l*n:(l+1)*n]
				if l%3 == 1 {
					wantV, wantS = bytes.Repeat([]byte{0xee}, 2*n), bytes.Repeat([]byte{0xee}, n)
				}
				if got := o[2*l*n : (2*l+2)*n]; !bytes.Equal(got, wantV) {
					t.Fatalf("lane %d vector: % x, want % x", l, got, wantV)
				}
				if got := s[l*n : (l+1)*n]; !bytes.Equal(got, wantS) {
					t.Fatalf("lane %d scalar: % x, want % x", l, got, wantS)
				}
				if l%3 == 1 {
					continue
				}
				if got, want := binary.LittleEndian.Uint64(d[8*l:]), widen(c.typ, wantS); got != want {
					t.Fatalf("lane %d widened: %#x, want %#x", l, got, want)
				}
				sum := addWide(c.typ, widen(c.typ, x[(2*l+1)*n:(2*l+2)*n]), widen(c.typ, x[3*n:4*n]))
				if got := binary.LittleEndian.Uint64(d2[8*l:]); got != sum {
					t.Fatalf("lane %d: sum of the runs' elements 1 widened %#x, want %#x", l, got, sum)
				}
			}
		})
	}
}

// widen is the 64-bit pattern of the i64 or f64 holding the value of the
// little-endian element b of type typ (f64 as its bits).
func widen(typ string, b []byte) uint64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch typ {
	case "i8", "i16", "i32":
		s := 64 - 8*len(b)
		return uint64(int64(u<<s) >> s)
	case "f16":
		return math.Float64bits(fmtF16.decode(u))
	case "bf16":
		return math.Float64bits(float64(math.Float32frombits(uint32(u) << 16)))
	case "f32":
		return math.Float64bits(float64(math.Float32frombits(uint32(u))))
	}
	return u
}

// carrierEdgeSrc adds l² to p + p2 (up) and subtracts it from q (down) on
// the first m lanes l (l² is no affine function of the lane, so the
// varying op checks its carrier itself), then casts up to i32, to i64 and
// to i1.
const carrierEdgeSrc = `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 8 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%m: index, %p: index, %p2: index, %q: index, %o: buffer, %b: buffer) {
  %z = index.constant 0 : offset
  %l = kernel.workitem.id<x> : index
  %in = index.cmp ult, %l, %m : index
  scf.if %in {
    %h = index.add %p, %p2 : index
    %sq = index.mul %l, %l : index
    %up = index.add %h, %sq : index
    %down = index.sub %q, %sq : index
    %w = index.cast %up : index to i32
    %w64 = scalar.extsi %w : i32 to i64
    %ov = buffer.view %o[%z] : buffer -> view<8xi64>
    view.store %w64, %ov[%l] : i64, view<8xi64>
    %w1 = scalar.trunci %w : i32 to i1
    %bv = buffer.view %b[%z] : buffer -> view<8xi1>
    view.store %w1, %bv[%l] : i1, view<8xi1>
  }
  kernel.return
}
`

// TestIndexCarrierEdges: a 32-bit index carrier holds [-2^31, 2^32 − 1]
// and no more in varying lanes: 2^32 − 1 passes and 2^32 traps going up,
// −2^31 passes and −2^31 − 1 traps going down; an index above 2^31 − 1
// cast to i32 wraps to a negative value, and i32 to i1 keeps the low bit.
func TestIndexCarrierEdges(t *testing.T) {
	r := compileRun(t, parseSrc(t, carrierEdgeSrc), "k", Options{})
	o, b := make([]byte, 64), make([]byte, 8)
	// p + p2 = 2^32 − 10, so lane 3 reaches 2^32 − 1; q − 9 = −2^31.
	p, q := int64(1<<31-5), int64(-1<<31+9)
	run := func(p2, q int64) error {
		return r.k.Run(r.launch(), []Arg{idx(4), idx(p), idx(p2), idx(q), buf(o), buf(b)})
	}
	if err := run(p, q); err != nil {
		t.Fatal(err)
	}
	for l := range 4 {
		v := int64(binary.LittleEndian.Uint64(o[8*l:]))
		if want := int64(-10 + l*l); v != want || b[l] != byte(want&1) {
			t.Fatalf("lane %d: i64 %d, i1 %d; want %d, %d", l, v, b[l], want, want&1)
		}
	}
	for _, c := range []struct {
		p2, q int64
		op    string
		val   string
	}{
		{p + 1, q, "index.add", "index value 4294967296 does not fit"},
		{p, q - 1, "index.sub", "index value -2147483649 does not fit"},
	} {
		err := run(c.p2, c.q)
		if !errors.Is(err, ErrOverflow) || !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.val) || !strings.Contains(err.Error(), "workitem (3,0,0)") {
			t.Fatalf("p2 %d, q %d: %v; want an overflow trap in %s on lane 3: %s", c.p2, c.q, err, c.op, c.val)
		}
	}
}

// addWide adds two values as widen returns them: i64 sums, f64 sums, and
// for f64 elements (carried as their bits) the i64 sum of the bits.
func addWide(typ string, a, b uint64) uint64 {
	switch typ {
	case "f16", "bf16", "f32":
		return math.Float64bits(math.Float64frombits(a) + math.Float64frombits(b))
	}
	return a + b
}

// TestInt32VectorLoops: the AVX2 loops of the 32-bit int ops give what the
// portable loops give, for every kind, both operand forms, lengths around
// the four-lane step and operands of every sign, R aliasing A as well.
func TestInt32VectorLoops(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this CPU: the portable loops are all there is")
	}
	w := opsWords(64)
	for _, k := range []byte("+-*&|^lrs") {
		shift := k == 'l' || k == 'r' || k == 's'
		for n := range 11 {
			a, b := make([]int64, n), make([]int64, n)
			for i := range n {
				a[i] = int64(int32(w[i]))
				b[i] = int64(int32(w[32+i] * 7919))
				if shift {
					b[i] = int64(uint32(b[i]) % 32)
				}
			}
			for _, s := range []int64{int64(int32(w[63])), 0, -1, 31} {
				if shift && (s < 0 || s > 31) {
					continue
				}
				want, got := make([]int64, n), make([]int64, n)
				binVSI[int32](k, 32, want, a, s)
				binVSI32(k, 32, got, a, s)
				if !slices.Equal(got, want) {
					t.Fatalf("%c, %d lanes, uniform %d: %v, want %v", k, n, s, got, want)
				}
			}
			want, got := make([]int64, n), slices.Clone(a)
			binVVI[int32](k, 32, want, a, b)
			binVVI32(k, 32, got, got, b) // in place
			if !slices.Equal(got, want) {
				t.Fatalf("%c, %d lanes, in place: %v, want %v", k, n, got, want)
			}
		}
	}
}

// TestIndexRangedLoops: the index ops that check their carrier as they go
// compute what binVVI and binVSI compute, and report every element inside
// the carrier exactly when it is (with AVX2, for the kinds it has; without,
// they never claim it), for lengths around the four-lane step and an
// element just outside either bound in the vector part and in the tail.
func TestIndexRangedLoops(t *testing.T) {
	const lo, hi = -1 << 31, 1<<32 - 1 // a 32-bit index carrier
	vec := hasAVX2
	defer func() { hasAVX2 = vec }()
	for _, hasAVX2 = range []bool{vec, false} {
		for _, k := range []byte("+-&|^*") {
			for n := range 11 {
				for bad := -1; bad < n; bad++ { // bad: the element pushed out, -1 none
					a, b := make([]int64, n), make([]int64, n)
					for i := range n {
						a[i], b[i] = int64(i)*1000003-5000, int64(i%3)*77
					}
					s := int64(12)
					if bad >= 0 {
						switch k {
						case '-':
							a[bad] = lo
						case '&':
							a[bad], b[bad] = hi+1, hi+1
						default:
							a[bad] = hi
						}
					}
					check := func(form string, got []int64, claim bool, want []int64) {
						t.Helper()
						if !slices.Equal(got, want) {
							t.Fatalf("avx2=%v %c %s, %d lanes: %v, want %v", hasAVX2, k, form, n, got, want)
						}
						inside := inBounds(want, lo, hi)
						if claim && !inside || hasAVX2 && vecI64VVR[k] != nil && n >= 4 && claim != inside {
							t.Fatalf("avx2=%v %c %s, %d lanes (element %d out): claims %v, inside %v", hasAVX2, k, form, n, bad, claim, inside)
						}
					}
					want, got := make([]int64, n), make([]int64, n)
					binVVI[int64](k, 32, want, a, b)
					check("varying", got, binVVIRanged(k, 32, got, a, b, lo, hi), want)
					binVSI[int64](k, 32, want, a, s)
					check("uniform", got, binVSIRanged(k, 32, got, a, s, lo, hi), want)
				}
			}
		}
	}
}

// itofpSrc converts each lane's 64-bit integer with OP to T and stores it.
const itofpSrc = `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %wg = index.constant 16 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%x: buffer, %o: buffer) {
  %z = index.constant 0 : offset
  %l = kernel.workitem.id<x> : index
  %xv = buffer.view %x[%z] : buffer -> view<16xi64>
  %ov = buffer.view %o[%z] : buffer -> view<16xT>
  %v = view.load %xv[%l] : view<16xi64> -> i64
  %f = OP %v : i64 to T
  view.store %f, %ov[%l] : T, view<16xT>
  kernel.return
}
`

// TestIntToFloatRounding: sitofp and uitofp of 64-bit integers round once
// to f32, bf16 and f16, as exact arithmetic would (math/big), including
// values where rounding first to f64 and then to the format is wrong.
func TestIntToFloatRounding(t *testing.T) {
	vals := []uint64{
		1<<60 + 1<<36 + 1, // f64 drops the 1, then f32 sees a tie
		1<<60 + 1<<36, 1<<60 + 1<<36 - 1,
		1<<60 + 1<<52 + 1, // the same for bf16 (8 bits)
		1<<63 + 1<<39 + 1, // unsigned only: above the i64 range
		1<<64 - 1, 1<<53 + 1, 65519, 65520, 3, 0,
		0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, 0x9234_5678_9abc_def1, 0x0010_0000_0000_0801, 12345678901,
	}
	for _, c := range narrowFormats {
		for _, op := range []string{"scalar.sitofp", "scalar.uitofp"} {
			r := compileRun(t, parseSrc(t, strings.NewReplacer("OP", op, "T", c.typ).Replace(itofpSrc)), "k", Options{})
			out := make([]byte, 16*c.size)
			in := make([]byte, 8*16)
			for i, v := range vals {
				binary.LittleEndian.PutUint64(in[8*i:], v)
			}
			r.run(nil, buf(in), buf(out))
			for i, v := range vals {
				exact := new(big.Float).SetPrec(0).SetUint64(v)
				if op == "scalar.sitofp" {
					exact = new(big.Float).SetInt64(int64(v))
				}
				if got, want := c.stored(out, i), c.round(exact); got != want {
					t.Errorf("%s %#x to %s: %v, want %v", op, v, c.typ, got, want)
				}
			}
		}
	}
}

// TestF64NarrowingRounding: fptrunc from f64 rounds once to f32, bf16 and
// f16 (math/big as the reference; f16's subnormals by hand), on values
// just above a tie of the narrow format that rounding through f32 first
// would reach exactly, from 2^-40 to 2^40.
func TestF64NarrowingRounding(t *testing.T) {
	var vals []float64
	for k := -40; k <= 40; k += 7 {
		for _, m := range []float64{1 + 0x1p-8 + 0x1p-30, 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-24 + 0x1p-50, 1.5 - 0x1p-9 - 0x1p-31} {
			vals = append(vals, math.Ldexp(m, k), -math.Ldexp(m, k))
		}
	}
	src := strings.NewReplacer("OP %v : i64", "scalar.fptrunc %v : f64", "xi64", "xf64", "-> i64", "-> f64").Replace(itofpSrc)
	for _, c := range narrowFormats {
		r := compileRun(t, parseSrc(t, strings.ReplaceAll(src, "T", c.typ)), "k", Options{})
		for at := 0; at < len(vals); at += 16 {
			chunk := vals[at:min(at+16, len(vals))]
			in, out := make([]byte, 8*16), make([]byte, 16*c.size)
			for i, v := range chunk {
				binary.LittleEndian.PutUint64(in[8*i:], math.Float64bits(v))
			}
			r.run(nil, buf(in), buf(out))
			for i, v := range chunk {
				want := c.round(new(big.Float).SetFloat64(v))
				if c.typ == "f16" && math.Abs(v) < 0x1p-14 {
					// f16's subnormals are multiples of 2^-24.
					want = math.RoundToEven(v*0x1p24) * 0x1p-24
				}
				if got := c.stored(out, i); got != want {
					t.Errorf("fptrunc %v to %s: %v, want %v", v, c.typ, got, want)
				}
			}
		}
	}
}

// narrowFormat is a float format the rounding tests convert to.
type narrowFormat struct {
	typ  string
	prec uint    // significant bits
	max  float64 // the largest finite value
	size int     // bytes
}

var narrowFormats = []narrowFormat{{"f32", 24, math.MaxFloat32, 4}, {"bf16", 8, 0x1.fep127, 2}, {"f16", 11, 65504, 2}}

// round is x rounded to nearest even at the format's precision, infinite
// past its largest value (normal range only).
func (c narrowFormat) round(x *big.Float) float64 {
	v, _ := new(big.Float).SetPrec(c.prec).SetMode(big.ToNearestEven).Set(x).Float64()
	if math.Abs(v) > c.max {
		v = math.Copysign(math.Inf(1), v)
	}
	return v
}

// stored is element i of out, a buffer of the format's values.
func (c narrowFormat) stored(out []byte, i int) float64 {
	switch c.typ {
	case "f32":
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])))
	case "bf16":
		return decodeBF16(binary.LittleEndian.Uint16(out[2*i:]))
	}
	return decodeF16(binary.LittleEndian.Uint16(out[2*i:]))
}

// TestWrapLanes: the lane loops of the int wraps (AVX2 four lanes at a
// time, the portable moves and shift pairs) and zero extensions agree with
// wrapBits and zext for every width from 2 to 63 bits, lengths around the four-lane step,
// values of every sign and size, in place and into another register.
func TestWrapLanes(t *testing.T) {
	vec := hasAVX2
	defer func() { hasAVX2 = vec }()
	w := opsWords(64)
	for _, hasAVX2 = range []bool{vec, false} {
		for bits := 2; bits < 64; bits++ {
			for n := range 11 {
				a := make([]int64, n)
				for i := range a {
					a[i] = int64(uint64(w[(i+bits)%len(w)]) * 0x9e3779b97f4a7c15)
				}
				r := make([]int64, n)
				wrapLanes(r, a, bits)
				in := append([]int64(nil), a...)
				wrapLanes(in, in, bits)
				z := make([]int64, n)
				zextLanes(z, a, zextMask(bits))
				for i, v := range a {
					if want := wrapBits(v, bits); r[i] != want || in[i] != want {
						t.Fatalf("avx2=%v %d bits, %d lanes, lane %d: %#x -> %#x (in place %#x), want %#x", hasAVX2, bits, n, i, v, r[i], in[i], want)
					}
					if want := int64(zext(v, bits)); z[i] != want {
						t.Fatalf("avx2=%v zext %d bits, %d lanes, lane %d: %#x -> %#x, want %#x", hasAVX2, bits, n, i, v, z[i], want)
					}
				}
			}
		}
	}
}

// i1OpsKernel applies the i1 int ops to two varying flags (bits 0 and 1
// of the lane id) and to a varying flag and a uniform one (%u), writing
// each result widened to i32.
var i1OpsKernel = `
kernel.def export("i1_ops") @i1_ops() {
  %c1 = index.constant 1 : index
  %c32 = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c32, %c1, %c1) : index
} launch(%u: i1, %dst: buffer) {
  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %out = buffer.view %dst[%z] : buffer -> view<32x12xi32>
  %t = index.cast %tid : index to i32
  %one = scalar.constant 1 : i32
  %two = scalar.constant 2 : i32
  %zero = scalar.constant 0 : i32
  %b0 = scalar.andi %t, %one : i32
  %b1 = scalar.andi %t, %two : i32
  %p = scalar.cmpi ne, %b0, %zero : i32
  %q = scalar.cmpi ne, %b1, %zero : i32
  %r0 = scalar.andi %p, %q : i1
  %r1 = scalar.ori %p, %q : i1
  %r2 = scalar.xori %p, %q : i1
  %r3 = scalar.addi %p, %q : i1
  %r4 = scalar.subi %p, %q : i1
  %r5 = scalar.muli %p, %q : i1
  %r6 = scalar.andi %p, %u : i1
  %r7 = scalar.ori %u, %p : i1
  %r8 = scalar.xori %p, %u : i1
  %r9 = scalar.addi %p, %u : i1
  %r10 = scalar.subi %u, %p : i1
  %r11 = scalar.muli %p, %u : i1
  %false = scalar.constant 0 : i1
` + i1Stores + `
  kernel.return
}
`

// i1Stores writes whether each of %r0 … %r11 is false, as an i32, into
// the lane's row of %out.
var i1Stores = func() string {
	var b strings.Builder
	for j := range 12 {
		// Through a comparison with false, which sees a value that is
		// not 0 or 1 (a cast would mask it).
		fmt.Fprintf(&b, "  %%e%d = scalar.cmpi eq, %%r%d, %%false : i1\n  %%w%d = scalar.extui %%e%d : i1 to i32\n  %%j%d = index.constant %d : index\n  view.store %%w%d, %%out[%%tid, %%j%d] : i32, view<32x12xi32>\n", j, j, j, j, j, j, j, j)
	}
	return b.String()
}()

// TestI1Ops: and, or and xor of i1 values (which skip the wrap: 0 and 1
// stay 0 and 1) and add, sub and mul (which wrap mod 2) give Loom's i1
// results, varying with varying and with uniform operands.
func TestI1Ops(t *testing.T) {
	m := parseSrc(t, i1OpsKernel)
	r := compileRun(t, m, "i1_ops", Options{Workers: 1})
	for _, u := range []int64{0, 1} {
		out := make([]byte, 4*32*12)
		r.run(nil, Arg{Bits: uint64(u)}, buf(out))
		for l := range 32 {
			p, q := int64(l&1), int64(l>>1&1)
			want := []int64{p & q, p | q, p ^ q, (p + q) & 1, (p - q) & 1, p * q, p & u, u | p, p ^ u, (p + u) & 1, (u - p) & 1, p * u}
			for j, w := range want {
				if g := int64(int32(binary.LittleEndian.Uint32(out[4*(12*l+j):]))); g != 1-w {
					t.Fatalf("u=%d lane %d op %d: %d, want %d", u, l, j, g, w)
				}
			}
		}
	}
}

// maddEdgeSrc is index.madd of two uniform factors and a varying addend
// (lane + %d, through an xor so that it carries no lane-affine fact) on 8
// lanes, each lane's result stored as an i64.
const maddEdgeSrc = `
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %c8 = index.constant 8 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c8, %c1, %c1) : index
} launch(%a: index, %b: index, %d: index, %o: buffer) {
  %l = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %lx = index.xori %l, %c0 : index
  %c = index.add %lx, %d : index
  %r = index.madd %a, %b, %c : index
  %w = index.cast %r : index to i64
  %z = index.constant 0 : offset
  %ov = buffer.view %o[%z] : buffer -> view<8xi64>
  view.store %w, %ov[%l] : i64, view<8xi64>
  kernel.return
}
`

// TestMaddCarrierEdges: index.madd with uniform factors (one product, then
// the add loop with its carrier check) reaches the top of the index
// carrier, 2^32 − 1, and the bottom, −2^31, and traps one past either on
// the lane that passes it, with the AVX2 add loop and without.
func TestMaddCarrierEdges(t *testing.T) {
	r := compileRun(t, parseSrc(t, maddEdgeSrc), "k", Options{})
	o := make([]byte, 64)
	vec := hasAVX2
	defer func() { hasAVX2 = vec }()
	for _, hasAVX2 = range []bool{vec, false} {
		for _, c := range []struct {
			a, b, d int64
			trap    int // lane, or -1
		}{
			{65536, 65535, 65528, -1}, // lane 7: 2^32 − 1
			{65536, 65535, 65529, 7},  // lane 7: 2^32
			{-32768, 65536, 0, -1},    // lane 0: −2^31
			{-32768, 65536, -1, 0},    // lane 0: −2^31 − 1
		} {
			err := r.k.Run(r.launch(), []Arg{idx(c.a), idx(c.b), idx(c.d), buf(o)})
			if c.trap >= 0 {
				if !errors.Is(err, ErrOverflow) || !strings.Contains(err.Error(), "index.madd") || !strings.Contains(err.Error(), fmt.Sprintf("workitem (%d,0,0)", c.trap)) {
					t.Fatalf("%d·%d + lane + %d: %v; want an overflow trap in index.madd on lane %d", c.a, c.b, c.d, err, c.trap)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%d·%d + lane + %d: %v", c.a, c.b, c.d, err)
			}
			for l := range 8 {
				if v, want := int64(binary.LittleEndian.Uint64(o[8*l:])), c.a*c.b+int64(l)+c.d; v != want {
					t.Fatalf("%d·%d + lane + %d, lane %d: %d, want %d", c.a, c.b, c.d, l, v, want)
				}
			}
		}
	}
}
