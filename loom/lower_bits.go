package loom

import "strings"

// Shared lowerings of bit reinterpretation, bit packing and integer dot
// products. Lanes are little-endian: lane 0 holds the least significant
// bits of a packed value, as vector.bitpack's bitstream and a vector load
// of bytes define.

// lowerBitcast rewrites a bitcast whose lane count changes (vector<4xi8>
// to vector<1xi32>, i32 to vector<4xi8>, vector<2xf16> to f32) into lane
// extracts, shifts and ors; a same-shape bitcast is left to the backends.
func lowerBitcast(l *lowering, op *Op) (bool, error) {
	if len(op.Types) == 0 || len(op.ResultTypes) == 0 || len(op.Operands) != 1 {
		return false, nil // the backends report the malformed op
	}
	from, to := op.Types[0], op.ResultTypes[0]
	if from.Kind != TypeVector && to.Kind != TypeVector {
		return false, nil
	}
	nf, _, okf := staticLanes(from)
	nt, _, okt := staticLanes(to)
	if !okf || !okt {
		return true, l.errorf("bitcast of a vector with a dynamic lane count (%s to %s)", from, to)
	}
	ef, et := elemType(from), elemType(to)
	if ef == nil || et == nil || ef.Bits == 0 || et.Bits == 0 {
		return true, l.errorf("bitcast from %s to %s: elements without a fixed width", from, to)
	}
	if nf*ef.Bits != nt*et.Bits {
		return true, l.errorf("bitcast from %s (%d bits) to %s (%d bits) changes the total bit count", from, nf*ef.Bits, to, nt*et.Bits)
	}
	if nf == nt && from.Kind == to.Kind && from.Kind == TypeVector && len(from.Dims) == len(to.Dims) {
		same := true
		for i := range from.Dims {
			same = same && from.Dims[i].Size == to.Dims[i].Size
		}
		if same {
			return false, nil
		}
	}
	x, err := l.operandValues(op, 1)
	if err != nil {
		return true, err
	}
	src := l.toIntLanes(x[0])
	lanes, err := l.lanes(src)
	if err != nil {
		return true, err
	}
	var out []*Value
	switch S, D := ef.Bits, et.Bits; {
	case S > D:
		out = l.unpack(lanes, S, D, nt, D, false)
	case S < D:
		out = l.pack(lanes, S, D, nt)
	default:
		out = lanes
	}
	l.finish(l.fromIntLanes(to, out))
	return true, nil
}

// toIntLanes reinterprets float lanes as integers of their width.
func (l *lowering) toIntLanes(x *Value) *Value {
	e := elemType(x.Type)
	if e.Kind != TypeFloat {
		return x
	}
	return l.cast("bitcast", x, withElem(x.Type, typeOfBits(e.Bits)))
}

// fromIntLanes builds a value of type t from integer lanes of t's element
// width, reinterpreting them as floats when t's elements are floats.
func (l *lowering) fromIntLanes(t *Type, lanes []*Value) *Value {
	e := elemType(t)
	it := withElem(t, typeOfBits(e.Bits))
	v := l.build(it, lanes)
	if e.Kind == TypeFloat {
		return l.cast("bitcast", v, t)
	}
	return v
}

// unpack reads n fields of w bits from the little-endian bitstream of
// S-bit lanes and returns them as r-bit lanes, zero- or sign-extended.
func (l *lowering) unpack(lanes []*Value, S, w, n, r int, signed bool) []*Value {
	out := make([]*Value, n)
	for j := range out {
		bit := j * w
		a, off := bit/S, bit%S
		var v *Value
		if off+w <= S {
			// The field lies in one lane: shift it down in the wider of
			// the lane and the result.
			W := max(S, r)
			v = l.resizeInt(lanes[a], W, false)
			if off > 0 {
				v = l.bin("shrui", v, l.intConst(v.Type, int64(off)))
			}
			// Bits above the field remain only when the lane has some
			// (off+w < S) and the result keeps them (w < r); a signed
			// field's shifts below drop them anyway.
			if off+w < S && w < r && !signed {
				v = l.bin("andi", v, l.intConst(v.Type, int64(1)<<w-1))
			}
			v = l.resizeInt(v, r, false)
		} else {
			// The field straddles lanes: gather them into 64 bits.
			for k := a; k*S < bit+w; k++ {
				p := l.resizeInt(lanes[k], 64, false)
				switch sh := k*S - bit; {
				case sh > 0:
					p = l.bin("shli", p, l.intConst(p.Type, int64(sh)))
				case sh < 0:
					p = l.bin("shrui", p, l.intConst(p.Type, int64(-sh)))
				}
				if v == nil {
					v = p
				} else {
					v = l.bin("ori", v, p)
				}
			}
			if w < 64 {
				v = l.bin("andi", v, l.intConst(v.Type, int64(1)<<w-1))
			}
			v = l.resizeInt(v, r, false)
		}
		if signed && w < r {
			sh := l.intConst(v.Type, int64(r-w))
			v = l.bin("shrsi", l.bin("shli", v, sh), sh)
		}
		out[j] = v
	}
	return out
}

// pack writes the low w bits of each lane into a little-endian bitstream
// and returns it as m lanes of D bits.
func (l *lowering) pack(lanes []*Value, w, D, m int) []*Value {
	out := make([]*Value, m)
	for i := range out {
		lo, hi := i*D, (i+1)*D
		var acc *Value
		for j := lo / w; j < len(lanes) && j*w < hi; j++ {
			src := lanes[j]
			sb := elemType(src.Type).Bits
			W := max(sb, D)
			p := l.resizeInt(src, W, false)
			if w < sb {
				p = l.bin("andi", p, l.intConst(p.Type, int64(1)<<w-1))
			}
			switch sh := j*w - lo; {
			case sh > 0:
				p = l.bin("shli", p, l.intConst(p.Type, int64(sh)))
			case sh < 0:
				p = l.bin("shrui", p, l.intConst(p.Type, int64(-sh)))
			}
			p = l.resizeInt(p, D, false)
			if acc == nil {
				acc = p
			} else {
				acc = l.bin("ori", acc, p)
			}
		}
		if acc == nil {
			acc = l.intConst(typeOfBits(D), 0)
		}
		out[i] = acc
	}
	return out
}

// packed is a bitpack/bitunpack checked: w-bit fields, the source lanes,
// the storage side (the source of an unpack, the result of a pack) and the
// field side.
type packed struct {
	w              int
	to             *Type
	lanes          []*Value
	storeN, storeB int // storage lanes and their bits
	fieldN, fieldB int // field lanes and their bits
}

// packedOp checks a bitpack (unpack false) or bitunpack's integer lanes,
// its width, and that the fields fill the storage bits exactly.
func (l *lowering) packedOp(op *Op, unpack bool) (*packed, error) {
	if len(op.Types) == 0 || len(op.ResultTypes) == 0 {
		return nil, l.errorf("needs `: A -> B` types")
	}
	from, to := op.Types[0], op.ResultTypes[0]
	if elemType(from).Kind != TypeInt || elemType(to).Kind != TypeInt {
		return nil, l.errorf("needs integer lanes (%s -> %s)", from, to)
	}
	w, err := parseWidth(op.Param)
	if err != nil {
		return nil, l.errorf("width <%s>: %v", op.Param, err)
	}
	nf, _, okf := staticLanes(from)
	nt, _, okt := staticLanes(to)
	if !okf || !okt {
		return nil, l.errorf("dynamic lane count (%s -> %s)", from, to)
	}
	p := &packed{w: w, to: to, storeN: nf, storeB: elemType(from).Bits, fieldN: nt, fieldB: elemType(to).Bits}
	storage := from
	if !unpack {
		p.storeN, p.storeB, p.fieldN, p.fieldB, storage = nt, elemType(to).Bits, nf, elemType(from).Bits, to
	}
	if w > p.fieldB {
		return nil, l.errorf("width %d exceeds the %d-bit field lanes", w, p.fieldB)
	}
	if p.fieldN*w != p.storeN*p.storeB {
		return nil, l.errorf("%d lanes of %d bits do not fill %d storage bits (%s)", p.fieldN, w, p.storeN*p.storeB, storage)
	}
	x, err := l.operandValues(op, 1)
	if err != nil {
		return nil, err
	}
	p.lanes, err = l.lanes(x[0])
	return p, err
}

func parseWidth(p string) (int, error) {
	c, err := ParseConst(&Type{Kind: TypeInt, Name: "i64", Bits: 64}, p)
	if err != nil {
		return 0, err
	}
	if c.Int < 1 || c.Int > 64 {
		return 0, &Error{Msg: "width must be 1 to 64"}
	}
	return int(c.Int), nil
}

// lowerBitunpack rewrites vector.bitunpacku/s<w>.
func lowerBitunpack(l *lowering, op *Op) (bool, error) {
	p, err := l.packedOp(op, true)
	if err != nil {
		return true, err
	}
	out := l.unpack(p.lanes, p.storeB, p.w, p.fieldN, p.fieldB, op.Name == "vector.bitunpacks")
	l.finish(l.build(p.to, out))
	return true, nil
}

// lowerBitpack rewrites vector.bitpack<w>.
func lowerBitpack(l *lowering, op *Op) (bool, error) {
	p, err := l.packedOp(op, false)
	if err != nil {
		return true, err
	}
	l.finish(l.build(p.to, l.pack(p.lanes, p.w, p.storeB, p.storeN)))
	return true, nil
}

// lowerBitfieldExtract rewrites vector.bitfield.extractu/extracts lane-wise:
// shift the field down, mask it, resize, and sign-extend from its width.
func lowerBitfieldExtract(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 1)
	if err != nil {
		return true, err
	}
	if len(op.ResultTypes) == 0 {
		return true, l.errorf("needs a result type")
	}
	to := op.ResultTypes[0]
	off, err := l.intAttr(op, "offset")
	if err != nil {
		return true, err
	}
	w, err := l.intAttr(op, "width")
	if err != nil {
		return true, err
	}
	S, R := elemType(x[0].Type).Bits, elemType(to).Bits
	if elemType(x[0].Type).Kind != TypeInt || elemType(to).Kind != TypeInt {
		return true, l.errorf("needs integer lanes")
	}
	if off < 0 || w < 1 || off+w > S {
		return true, l.errorf("field [%d, %d) outside the %d-bit lanes", off, off+w, S)
	}
	if w > R {
		return true, l.errorf("width %d exceeds the %d-bit result lanes", w, R)
	}
	W := max(S, R)
	v := l.resizeInt(x[0], W, false)
	if off > 0 {
		v = l.bin("shrui", v, l.intConst(v.Type, int64(off)))
	}
	signed := op.Name == "vector.bitfield.extracts"
	if off+w < S && w < R && !signed {
		v = l.bin("andi", v, l.intConst(v.Type, int64(1)<<w-1))
	}
	v = l.resizeInt(v, R, false)
	if signed && w < R {
		sh := l.intConst(v.Type, int64(R-w))
		v = l.bin("shrsi", l.bin("shli", v, sh), sh)
	}
	l.finish(v)
	return true, nil
}

// lowerBitfieldInsert rewrites vector.bitfield.insert lane-wise:
// (base & ~(mask << off)) | ((field & mask) << off).
func lowerBitfieldInsert(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 2)
	if err != nil {
		return true, err
	}
	field, base := x[0], x[1]
	off, err := l.intAttr(op, "offset")
	if err != nil {
		return true, err
	}
	w, err := l.intAttr(op, "width")
	if err != nil {
		return true, err
	}
	B := elemType(base.Type).Bits
	if elemType(base.Type).Kind != TypeInt || elemType(field.Type).Kind != TypeInt {
		return true, l.errorf("needs integer lanes")
	}
	if off < 0 || w < 1 || off+w > B {
		return true, l.errorf("field [%d, %d) outside the %d-bit lanes", off, off+w, B)
	}
	f := l.resizeInt(field, B, false)
	mask := int64(-1)
	if w < 64 {
		mask = int64(1)<<w - 1
	}
	if w < B {
		f = l.bin("andi", f, l.intConst(f.Type, mask))
	}
	if off > 0 {
		f = l.bin("shli", f, l.intConst(f.Type, int64(off)))
	}
	keep := l.bin("andi", base, l.intConst(base.Type, ^(mask<<off)))
	l.finish(l.bin("ori", keep, f))
	return true, nil
}

// dotSigns reads a dot product's signedness template (s8u8, u4s4, …).
func (l *lowering) dotSigns(op *Op, kinds ...string) (lhs, rhs bool, err error) {
	k := op.Param
	for _, want := range kinds {
		if k == want {
			return k[0] == 's', k[len(k)/2] == 's', nil
		}
	}
	return false, false, l.errorf("signedness <%s> (one of %v)", k, kinds)
}

// lowerDot4i rewrites vector.dot4i<kind>: the i8 lanes are widened to i32
// and multiplied lane-wise, then each accumulator lane adds its group of
// four products (i32 arithmetic wraps, so the order does not matter).
func lowerDot4i(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 3)
	if err != nil {
		return true, err
	}
	sl, sr, err := l.dotSigns(op, "s8s8", "u8s8", "s8u8", "u8u8")
	if err != nil {
		return true, err
	}
	lhs, rhs, acc := x[0], x[1], x[2]
	if elemType(lhs.Type).Bits != 8 || elemType(rhs.Type).Bits != 8 || elemType(acc.Type).Bits != 32 {
		return true, l.errorf("needs i8 sources and an i32 accumulator (%s, %s, %s)", lhs.Type, rhs.Type, acc.Type)
	}
	nl, _, ok1 := staticLanes(lhs.Type)
	na, _, ok2 := staticLanes(acc.Type)
	if !ok1 || !ok2 {
		return true, l.errorf("dynamic lane count")
	}
	if nl != 4*na {
		return true, l.errorf("%d source lanes for %d accumulator lanes (groups of four)", nl, na)
	}
	a := l.resizeInt(lhs, 32, sl)
	b := l.resizeInt(rhs, 32, sr)
	p := l.bin("muli", a, b)
	out := make([]*Value, na)
	for j := range out {
		s := l.extract(acc, j)
		for k := 0; k < 4; k++ {
			s = l.bin("addi", s, l.extract(p, 4*j+k))
		}
		out[j] = s
	}
	l.finish(l.build(acc.Type, out))
	return true, nil
}

// lowerDot8i4 rewrites vector.dot8i4<kind>: each i32 lane holds eight
// 4-bit fields; field k is isolated lane-wise by shifts, the products are
// summed into the accumulator.
func lowerDot8i4(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 3)
	if err != nil {
		return true, err
	}
	sl, sr, err := l.dotSigns(op, "s4s4", "u4s4", "s4u4", "u4u4")
	if err != nil {
		return true, err
	}
	for _, v := range x {
		if e := elemType(v.Type); e.Kind != TypeInt || e.Bits != 32 {
			return true, l.errorf("needs i32 lanes, has %s", v.Type)
		}
	}
	field := func(v *Value, k int, signed bool) *Value {
		if signed {
			if k < 7 {
				v = l.bin("shli", v, l.intConst(v.Type, int64(28-4*k)))
			}
			return l.bin("shrsi", v, l.intConst(v.Type, 28))
		}
		if k > 0 {
			v = l.bin("shrui", v, l.intConst(v.Type, int64(4*k)))
		}
		if k < 7 {
			v = l.bin("andi", v, l.intConst(v.Type, 15))
		}
		return v
	}
	acc := x[2]
	for k := 0; k < 8; k++ {
		acc = l.bin("addi", acc, l.bin("muli", field(x[0], k, sl), field(x[1], k, sr)))
	}
	l.finish(acc)
	return true, nil
}

// lowerDot2f rewrites vector.dot2f: f16/bf16 pairs extended to f32 and
// accumulated by two fused multiply-adds per accumulator lane, in order.
func lowerDot2f(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 3)
	if err != nil {
		return true, err
	}
	lhs, rhs, acc := x[0], x[1], x[2]
	nl, _, ok1 := staticLanes(lhs.Type)
	na, _, ok2 := staticLanes(acc.Type)
	if !ok1 || !ok2 {
		return true, l.errorf("dynamic lane count")
	}
	if nl != 2*na || elemType(acc.Type).Name != "f32" || elemType(lhs.Type).Kind != TypeFloat {
		return true, l.errorf("needs f16/bf16 pairs and f32 accumulator lanes (%s, %s)", lhs.Type, acc.Type)
	}
	a := l.cast("extf", lhs, withElem(lhs.Type, lowerF32))
	b := l.cast("extf", rhs, withElem(rhs.Type, lowerF32))
	out := make([]*Value, na)
	for j := range out {
		s := l.extract(acc, j)
		for k := 0; k < 2; k++ {
			s = l.fma(l.extract(a, 2*j+k), l.extract(b, 2*j+k), s)
		}
		out[j] = s
	}
	l.finish(l.build(acc.Type, out))
	return true, nil
}

// dot4f8Ebits maps vector.dot4f8's template to the exponent widths of its
// lhs and rhs fields: fp8 is E4M3 (OCP, finite), bf8 is E5M2.
var dot4f8Ebits = map[string][2]int{
	"fp8fp8": {4, 4}, "fp8bf8": {4, 5}, "bf8fp8": {5, 4}, "bf8bf8": {5, 5},
}

// lowerDot4f8 rewrites vector.dot4f8<kind>: each i32 lane holds four
// little-endian 8-bit float fields; lane-wise, field k of both sides is
// decoded to f32 (decodeF8) and the products are added into the
// accumulator in field order in f64, rounded to f32 once at the end. Every
// product of two f8 values is exact in f64, so each add is Loom's fold (a
// double fma chain) exactly.
func lowerDot4f8(l *lowering, op *Op) (bool, error) {
	x, err := l.operandValues(op, 3)
	if err != nil {
		return true, err
	}
	ebits, ok := dot4f8Ebits[op.Param]
	if !ok {
		return true, l.errorf("kind <%s> (fp8fp8, fp8bf8, bf8fp8 or bf8bf8)", op.Param)
	}
	lhs, rhs, acc := x[0], x[1], x[2]
	for _, v := range x[:2] {
		if e := elemType(v.Type); e.Kind != TypeInt || e.Bits != 32 {
			return true, l.errorf("needs i32 source lanes, has %s", v.Type)
		}
	}
	if e := elemType(acc.Type); e.Name != "f32" {
		return true, l.errorf("needs f32 accumulator lanes, has %s", acc.Type)
	}
	f64 := withElem(acc.Type, &Type{Kind: TypeFloat, Name: "f64", Bits: 64})
	field := func(v *Value, k, ebits int) *Value {
		if k > 0 {
			v = l.bin("shrui", v, l.intConst(v.Type, int64(8*k)))
		}
		return l.cast("extf", l.decodeF8(l.bin("andi", v, l.intConst(v.Type, 0xff)), ebits), f64)
	}
	s := l.cast("extf", acc, f64)
	for k := 0; k < 4; k++ {
		s = l.bin("addf", s, l.bin("mulf", field(lhs, k, ebits[0]), field(rhs, k, ebits[1])))
	}
	l.finish(l.cast("fptrunc", s, acc.Type))
	return true, nil
}

// decodeF8 decodes the 8-bit float in the low byte of each i32 lane of b
// (the rest zero) to f32 with integer and f32 ops only, so it needs no f8
// support from an executor: the significand (with its implicit bit unless
// subnormal) times 2^exponent, both exact in f32; E4M3 (ebits 4) has only
// NaN at S.1111.111, E5M2 has ∞ and NaN at exponent 31.
func (l *lowering) decodeF8(b *Value, ebits int) *Value {
	it := b.Type
	ft := withElem(it, lowerF32)
	c := func(v int64) *Value { return l.intConst(it, v) }
	fbits := func(v int64) *Value { return l.cast("bitcast", c(v), ft) }
	mbits := 7 - ebits
	bias := int64(1)<<(ebits-1) - 1
	e := l.bin("andi", l.bin("shrui", b, c(int64(mbits))), c(1<<ebits-1))
	m := l.bin("andi", b, c(1<<mbits-1))
	sub := l.cmp("cmpi", "eq", e, c(0))
	mant := l.sel(sub, m, l.bin("ori", m, c(1<<mbits)))
	exp := l.sel(sub, c(1), e)
	scale := l.bin("shli", l.bin("addi", exp, c(127-bias-int64(mbits))), c(23))
	v := l.bin("mulf", l.cast("uitofp", mant, ft), l.cast("bitcast", scale, ft))
	mag := l.bin("andi", b, c(0x7f))
	if ebits == 4 {
		v = l.sel(l.cmp("cmpi", "eq", mag, c(0x7f)), fbits(0x7fc00000), v)
	} else {
		inf := l.sel(l.cmp("cmpi", "eq", mag, c(0x7c)), fbits(0x7f800000), fbits(0x7fc00000))
		v = l.sel(l.cmp("cmpi", "eq", e, c(31)), inf, v)
	}
	return l.sel(l.cmp("cmpi", "ne", l.bin("andi", b, c(0x80)), c(0)), l.un("negf", v), v)
}

// lowerRotate rewrites scalar/vector rotli and rotri on iN lanes (N a
// power of two) by shifts: k = s mod N (as a two's-complement mask, so a
// negative count rotates the other way, as the CPU executor's native
// form does), rotli = x << k | x >>u ((N − k) mod N), rotri = rotli by −s;
// every shift count is below N. i1 lanes (a rotate is the identity) are
// left to the backends.
func lowerRotate(l *lowering, op *Op) (bool, error) {
	xs, err := l.operandValues(op, 2)
	if err != nil {
		return true, err
	}
	x, s := xs[0], xs[1]
	e := elemType(x.Type)
	if e == nil || e.Kind != TypeInt || !sameType(x.Type, s.Type) {
		return false, nil
	}
	n := int64(e.Bits)
	if n < 2 || n&(n-1) != 0 {
		return false, nil
	}
	mask := l.intConst(s.Type, n-1)
	if strings.HasSuffix(op.Name, "rotri") {
		s = l.bin("subi", l.intConst(s.Type, 0), s)
	}
	k := l.bin("andi", s, mask)
	back := l.bin("andi", l.bin("subi", l.intConst(s.Type, n), k), mask)
	l.finish(l.bin("ori", l.bin("shli", x, k), l.bin("shrui", x, back)))
	return true, nil
}
