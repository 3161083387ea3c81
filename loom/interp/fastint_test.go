package interp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	const n = 100 // two workgroups, the second partly inactive
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
				s := wrap(-0x5A5A5A5A5A5A5A5B)
				if shift {
					s = int64(bits) - 1
				}
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

// TestBF16LoadExhaustive: the bf16 load's shift path decodes every bit
// pattern as the general minifloat decoding does (NaNs as NaNs).
func TestBF16LoadExhaustive(t *testing.T) {
	ty := &loom.Type{Kind: loom.TypeFloat, Name: "bf16", Bits: 16}
	f, err := floatFormat(loom.Pos{}, ty)
	if err != nil {
		t.Fatal(err)
	}
	c := &compiler{k: &Kernel{}}
	cd, err := c.codecFor(loom.Pos{}, ty)
	if err != nil {
		t.Fatal(err)
	}
	var b [2]byte
	for h := range 1 << 16 {
		binary.LittleEndian.PutUint16(b[:], uint16(h))
		got, want := cd.loadF(b[:]), f.m.decode(uint64(h))
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("bf16 %#04x: %v, want %v", h, got, want)
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
