package loom

import (
	"strconv"
	"strings"
)

// Shared lowerings of the encoded-numeric boundaries vector.decode and
// vector.encode for ggml's block-quantized schemas, and of
// vector.table.quantize. The schema is an encoding.define in scope; its
// scale values are the op's `scale` auxiliary operand, one lane per block.
//
//   - #ggml_q8_0<block_elems=B, storage_bytes=B+2>: each payload byte is a
//     signed code q; the value is scale × q.
//   - #ggml_q4_0<block_elems=B, storage_bytes=B/2+2>: each payload byte
//     holds two unsigned nibbles; within a block (or the whole payload when
//     it holds less than a block) the low nibbles of the bytes give the
//     first half of the values and the high nibbles the second half, and
//     the value is scale × (nibble − 8).
//
// Payload bits are read little-endian (lane 0 least significant), so an
// i32 payload lane holds four consecutive bytes. Encode inverts decode as
// ggml's reference quantizers do, given the scale: with id = 1/scale (0
// for a zero scale) a q8_0 code is round(x·id) (half away from zero)
// saturated to [-128, 127], and a q4_0 nibble is floor(x·id + 8.5)
// saturated to [0, 15]; a NaN lane encodes as zero (code 0, nibble 8).
// The arithmetic is f32.

// lowerWitness drops an encoding.define of a schema or transform: a
// compile-time witness whose readers (vector.decode, vector.encode,
// test.use) this pass rewrites; the rewrites read the define through the
// value's Def. Storage and layout encodings stay for the view types.
func lowerWitness(l *lowering, op *Op) (bool, error) {
	if len(op.Results) != 1 || len(op.Types) != 1 {
		return false, nil
	}
	switch op.Types[0].String() {
	case "encoding<schema>", "encoding<transform>":
		return true, nil
	}
	return false, nil
}

// blockSchema is a checked block-quantized schema.
type blockSchema struct {
	family string // "ggml_q8_0" or "ggml_q4_0"
	block  int    // elements per block
	bits   int    // payload bits per element
}

// fits reports whether n elements split into the schema's groups: whole
// blocks, or an even part of one block.
func (s *blockSchema) fits(n int) bool {
	if n > s.block {
		return n%s.block == 0
	}
	return s.bits == 8 || n%2 == 0
}

// checkPayload checks a payload of type p and bits bits holds n elements.
func (l *lowering) checkPayload(s *blockSchema, p *Type, bits, n int) error {
	if bits != n*s.bits {
		return l.errorf("#%s payload %s holds %d bits, %d elements need %d", s.family, p, bits, n, n*s.bits)
	}
	if !s.fits(n) {
		return l.errorf("#%s: %d elements are neither whole blocks of %d nor an even part of one", s.family, n, s.block)
	}
	return nil
}

// schemaParams parses `#name<k=v, …>` into its name and integer params.
func schemaParams(w string) (string, map[string]int64, bool) {
	name, p, ok := encodingParams(w)
	ints := map[string]int64{}
	for k, v := range p {
		if n, err := strconv.ParseInt(v, 0, 64); err == nil {
			ints[k] = n
		}
	}
	return name, ints, ok
}

// blockSchemaOf resolves op's schema operand (operand 1) to an
// encoding.define of a block-quantized family this pass lowers.
func (l *lowering) blockSchemaOf(op *Op) (*blockSchema, error) {
	if len(op.Operands) < 2 || op.Operands[1].Value == nil {
		return nil, l.errorf("needs `%%x using %%schema`")
	}
	d := op.Operands[1].Value.Def
	if d == nil || d.Name != "encoding.define" || len(d.Words) != 1 {
		return nil, l.refuse("schema %%%s is not an encoding.define in scope (the shared lowering needs the schema's family)", op.Operands[1].Name)
	}
	name, p, ok := schemaParams(d.Words[0])
	if !ok {
		return nil, l.errorf("schema %%%s: unreadable encoding %s", op.Operands[1].Name, d.Words[0])
	}
	s := &blockSchema{family: name, block: 32}
	if b, ok := p["block_elems"]; ok {
		s.block = int(b)
	}
	var want int
	switch name {
	case "ggml_q8_0":
		s.bits, want = 8, s.block+2
	case "ggml_q4_0":
		s.bits, want = 4, s.block/2+2
	default:
		return nil, l.refuse("schema #%s has no shared lowering (supported: #ggml_q8_0, #ggml_q4_0)", name)
	}
	sb, ok := p["storage_bytes"]
	if !ok {
		sb = int64(want)
	}
	if s.block <= 0 || s.block%2 != 0 || int(sb) != want {
		return nil, l.errorf("schema #%s<block_elems=%d, storage_bytes=%d>: needs an even block and storage_bytes %d", name, s.block, sb, want)
	}
	return s, nil
}

// auxiliary returns op's auxiliary operand named key (`{key = %v : T}`),
// and checks no other key is given.
func (l *lowering) auxiliary(op *Op, key string) (*Value, error) {
	var v *Value
	for _, a := range op.Attrs {
		if a.Key != key {
			return nil, l.errorf("auxiliary %q is not one the schema takes (it takes %s)", a.Key, key)
		}
		name := strings.TrimPrefix(a.Value.Text, "%")
		for _, o := range op.Operands[2:] {
			if o.Name == name && o.Value != nil {
				v = o.Value
			}
		}
	}
	if v == nil || v.Type == nil {
		return nil, l.errorf("needs a `{%s = %%v : vector<Kxf16>}` auxiliary operand", key)
	}
	if e := elemType(v.Type); e.Kind != TypeFloat {
		return nil, l.errorf("auxiliary %s is %s, needs float lanes", key, v.Type)
	}
	return v, nil
}

// blockScales returns, for each of n elements, its block's scale lane
// converted to f32; the scale vector needs one lane per block.
func (l *lowering) blockScales(scale *Value, n, block int) ([]*Value, error) {
	sl, err := l.lanes(scale)
	if err != nil {
		return nil, err
	}
	groups := (n + block - 1) / block
	if len(sl) != groups {
		return nil, l.errorf("scale %s: %d elements in blocks of %d need %d scale lanes", scale.Type, n, block, groups)
	}
	for i, s := range sl {
		sl[i] = l.resizeFloat(s, lowerF32)
	}
	out := make([]*Value, n)
	for i := range out {
		out[i] = sl[i/block]
	}
	return out, nil
}

// resizeFloat converts float x to type to (extf or fptrunc).
func (l *lowering) resizeFloat(x *Value, to *Type) *Value {
	from, tb := elemType(x.Type).Bits, elemType(to).Bits
	switch {
	case sameType(x.Type, to):
		return x
	case from < tb:
		return l.cast("extf", x, to)
	}
	return l.cast("fptrunc", x, to)
}

// nibbleOrder maps element i of a q4_0 payload of n elements to its field
// in the little-endian nibble stream: per group of g elements the low
// nibbles of the g/2 bytes come first, then the high ones.
func nibbleOrder(i, n, block int) int {
	g := min(block, n)
	base, j := i/g*g, i%g
	if j < g/2 {
		return base + 2*j
	}
	return base + 2*(j-g/2) + 1
}

// encoded is a checked vector.decode or vector.encode: its schema, the
// payload (the decode's operand, the encode's result type), the element
// count, and the f32 scale of each element.
type encoded struct {
	s       *blockSchema
	payload *Type
	n       int
	scales  []*Value
}

// checkEncoded checks a decode (decode true: integer payload to floats)
// or encode (floats to an integer payload) and reads its scales.
func (l *lowering) checkEncoded(op *Op, decode bool) (*encoded, error) {
	if len(op.Results) != 1 || len(op.ResultTypes) != 1 || len(op.Operands) < 2 || op.Operands[0].Value == nil || op.Operands[0].Value.Type == nil {
		return nil, l.errorf("needs `%%x using %%schema {scale = …} : X, encoding<schema> -> R`")
	}
	s, err := l.blockSchemaOf(op)
	if err != nil {
		return nil, err
	}
	payload, values := op.Operands[0].Value.Type, op.ResultTypes[0]
	if !decode {
		payload, values = values, payload
	}
	if elemType(payload).Kind != TypeInt || elemType(values).Kind != TypeFloat {
		return nil, l.errorf("needs an integer payload and float values (%s, %s)", payload, values)
	}
	n, _, okn := staticLanes(values)
	pn, _, okp := staticLanes(payload)
	if !okn || !okp {
		return nil, l.refuse("dynamic lane count (%s, %s) (the shared lowering needs static lanes)", payload, values)
	}
	if err := l.checkPayload(s, payload, pn*elemType(payload).Bits, n); err != nil {
		return nil, err
	}
	scale, err := l.auxiliary(op, "scale")
	if err != nil {
		return nil, err
	}
	scales, err := l.blockScales(scale, n, s.block)
	if err != nil {
		return nil, err
	}
	return &encoded{s: s, payload: payload, n: n, scales: scales}, nil
}

// decodeCodes returns the n signed codes of a payload as vector<nxi32>:
// q8_0 bytes sign-extended, q4_0 nibbles in ggml order minus 8. A 1-D byte
// payload is widened and split by whole-vector ops (one op for all lanes
// on the CPU executor); other payloads field by field.
func (l *lowering) decodeCodes(s *blockSchema, payload *Value, n int) (*Value, error) {
	vt := vectorOf(n, typeOfBits(32))
	pt := payload.Type
	bytes := pt.Kind == TypeVector && len(pt.Dims) == 1 && elemType(pt).Bits == 8
	var codes []*Value
	switch {
	case bytes && s.bits == 8:
		return l.resizeInt(payload, 32, true), nil
	case bytes:
		p := l.resizeInt(payload, 32, false)
		lo, err := l.lanes(l.bin("andi", p, l.intConst(p.Type, 15)))
		if err != nil {
			return nil, err
		}
		hi, _ := l.lanes(l.bin("shrui", p, l.intConst(p.Type, 4)))
		codes = make([]*Value, n)
		for i := range codes {
			f := nibbleOrder(i, n, s.block)
			codes[i] = [2][]*Value{lo, hi}[f%2][f/2]
		}
	default:
		pl, err := l.lanes(payload)
		if err != nil {
			return nil, err
		}
		pb := elemType(pt).Bits
		if s.bits == 8 {
			return l.build(vt, l.unpack(pl, pb, 8, n, 32, true)), nil
		}
		fields := l.unpack(pl, pb, 4, n, 32, false)
		codes = make([]*Value, n)
		for i := range codes {
			codes[i] = fields[nibbleOrder(i, n, s.block)]
		}
	}
	cv := l.build(vt, codes)
	return l.bin("subi", cv, l.intConst(vt, 8)), nil
}

// scaleVector is the per-element scales as vector<nxf32>: a splat when
// one block covers them.
func (l *lowering) scaleVector(scales []*Value) *Value {
	vt := vectorOf(len(scales), lowerF32)
	for _, s := range scales {
		if s != scales[0] {
			return l.build(vt, scales)
		}
	}
	return l.emit("vector.splat", "", []*Value{scales[0]}, []*Type{vt}, nil, vt)
}

// lowerDecode rewrites vector.decode of a block-quantized payload into
// bit extracts, an integer-to-float conversion and a multiply by the
// block's scale.
func lowerDecode(l *lowering, op *Op) (bool, error) {
	e, err := l.checkEncoded(op, true)
	if err != nil {
		return true, err
	}
	s, n, scales, res := e.s, e.n, e.scales, op.ResultTypes[0]
	payload := op.Operands[0].Value
	cv, err := l.decodeCodes(s, payload, n)
	if err != nil {
		return true, err
	}
	f := l.cast("sitofp", cv, vectorOf(n, lowerF32))
	v := l.bin("mulf", f, l.scaleVector(scales))
	// A narrower result rounds the exact f32 product once.
	v = l.resizeFloat(v, withElem(vectorOf(n, lowerF32), elemType(res)))
	if _, shape, _ := staticLanes(res); len(shape) != 1 {
		lanes, _ := l.lanes(v)
		v = l.build(res, lanes)
	}
	l.finish(v)
	return true, nil
}

// lowerEncode rewrites vector.encode into a block-quantized payload: the
// reference quantizer's scale, round and saturate, then bit packing.
func lowerEncode(l *lowering, op *Op) (bool, error) {
	e, err := l.checkEncoded(op, false)
	if err != nil {
		return true, err
	}
	s, n, scales, res, src := e.s, e.n, e.scales, e.payload, op.Operands[0].Value
	pn, _, _ := staticLanes(res)
	pb := elemType(res).Bits
	vt := vectorOf(n, lowerF32)
	xl, err := l.lanes(src)
	if err != nil {
		return true, err
	}
	for i, x := range xl {
		xl[i] = l.resizeFloat(x, lowerF32)
	}
	x := l.build(vt, xl)
	sc := l.scaleVector(scales)
	zero := l.floatConst(vt, 0)
	id := l.sel(l.cmp("cmpf", "oeq", sc, zero), zero, l.bin("divf", l.floatConst(vt, 1), sc))
	y := l.bin("mulf", x, id)
	var lo, hi, nanCode float64
	if s.bits == 8 {
		y = l.un("roundf", y)
		lo, hi, nanCode = -128, 127, 0
	} else {
		y = l.un("floorf", l.bin("addf", y, l.floatConst(vt, 8.5)))
		lo, hi, nanCode = 0, 15, 8
	}
	nan := l.cmp("cmpf", "uno", y, y)
	y = l.bin("minnumf", l.bin("maxnumf", y, l.floatConst(vt, lo)), l.floatConst(vt, hi))
	y = l.sel(nan, l.floatConst(vt, nanCode), y)
	q := l.cast("fptosi", y, vectorOf(n, typeOfBits(32)))
	ql, _ := l.lanes(q)
	if s.bits == 4 {
		fields := make([]*Value, n)
		for i, c := range ql {
			fields[nibbleOrder(i, n, s.block)] = c
		}
		ql = fields
	}
	l.finish(l.fromIntLanes(res, l.pack(ql, s.bits, pb, pn)))
	return true, nil
}

// lowerTableQuantize rewrites vector.table.quantize into compare and
// count: a lane's code is the number of thresholds below it (tie=lower) or
// at or below it (tie=upper); a NaN lane gets code 0 (nan=zero) or the
// threshold count (nan=max).
func lowerTableQuantize(l *lowering, op *Op) (bool, error) {
	if len(op.Results) != 1 || len(op.ResultTypes) != 1 {
		return true, l.errorf("needs `%%x, %%thresholds {nan = …, tie = …} : V, T -> R`")
	}
	args, err := l.operandValues(op, 2)
	if err != nil {
		return true, err
	}
	x, th, res := args[0], args[1], op.ResultTypes[0]
	if elemType(x.Type).Kind != TypeFloat || !sameType(elemType(x.Type), elemType(th.Type)) || elemType(res).Kind != TypeInt {
		return true, l.errorf("needs float values and thresholds of one type and integer codes (%s, %s -> %s)", x.Type, th.Type, res)
	}
	word := func(key string, vals ...string) (string, error) {
		a := op.Attr(key)
		if a != nil {
			for _, v := range vals {
				if a.Value.Text == v {
					return v, nil
				}
			}
		}
		return "", l.errorf("needs %s = %s", key, strings.Join(vals, " or "))
	}
	nan, err := word("nan", "zero", "max")
	if err != nil {
		return true, err
	}
	tie, err := word("tie", "lower", "upper")
	if err != nil {
		return true, err
	}
	_, xs, okx := staticLanes(x.Type)
	_, rs, okr := staticLanes(res)
	if !okx || !okr || len(xs) != len(rs) || !sameOffAxis(xs, rs, -1) {
		return true, l.errorf("values %s and codes %s need one static shape", x.Type, res)
	}
	tl, err := l.lanes(th)
	if err != nil {
		return true, err
	}
	pred := "olt"
	if tie == "upper" {
		pred = "ole"
	}
	ct := withElem(x.Type, elemType(res))
	code := l.intConst(ct, 0)
	one := l.intConst(ct, 1)
	for _, t := range tl {
		tv := t
		if x.Type.Kind == TypeVector {
			tv = l.emit("vector.splat", "", []*Value{t}, []*Type{x.Type}, nil, x.Type)
		}
		code = l.sel(l.cmp("cmpf", pred, tv, x), l.bin("addi", code, one), code)
	}
	nanCode := int64(0)
	if nan == "max" {
		nanCode = int64(len(tl))
	}
	l.finish(l.sel(l.cmp("cmpf", "uno", x, x), l.intConst(ct, nanCode), code))
	return true, nil
}
