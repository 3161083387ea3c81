package loom

import (
	"math"
	"strconv"
	"strings"
)

// Shared lowering of vector.transform with a #numeric_transform descriptor
// defined in scope, as Loom's reference expansion spells it (per element
// type, no fusion):
//
//   - hadamard: along the last axis, out[i] = Σ_j ±x[j] with the sign of
//     (−1)^popcount(i&j), summed left to right from j = 0;
//   - hadamard_sign: the source lanes negated first where `signs` (i1 per
//     lane) is set, or where the low bit of SplitMix64(seed + lane) is;
//   - sign_permute_hadamard: lanes negated by `signs`, then gathered
//     through `permutation` (source lane of each position), then hadamard;
//   - jl_dense: out[i] = Σ_j matrix[i][j]·x[j] (mulf then addf, in order);
//
// normalization="orthonormal" multiplies the hadamard families' results by
// 1/√n. Leading axes are independent rows.

// transformDesc is a #numeric_transform descriptor: its static params and
// dynamic operands.
type transformDesc struct {
	params  map[string]string
	dynamic map[string]*Value
}

// encodingParams parses `#name<k=v, …>` into its name and params, string
// values unquoted.
func encodingParams(w string) (string, map[string]string, bool) {
	w = strings.TrimSpace(w)
	if !strings.HasPrefix(w, "#") {
		return "", nil, false
	}
	name, rest, ok := strings.Cut(w[1:], "<")
	params := map[string]string{}
	if !ok {
		return name, params, true
	}
	rest = strings.TrimSuffix(strings.TrimSpace(rest), ">")
	for _, kv := range strings.Split(rest, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			params[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return name, params, true
}

// transformOf resolves op's transform operand to its descriptor.
func (l *lowering) transformOf(op *Op) (*transformDesc, error) {
	if len(op.Operands) != 2 || op.Operands[1].Value == nil {
		return nil, l.errorf("needs `%%x, %%transform`")
	}
	d := op.Operands[1].Value.Def
	if d == nil || d.Name != "encoding.define" || len(d.Words) != 1 {
		return nil, l.refuse("transform %%%s is not an encoding.define in scope (the shared lowering needs its family)", op.Operands[1].Name)
	}
	name, p, ok := encodingParams(d.Words[0])
	if !ok || name != "numeric_transform" {
		return nil, l.refuse("transform %%%s is %s, not a #numeric_transform", op.Operands[1].Name, d.Words[0])
	}
	t := &transformDesc{params: p, dynamic: map[string]*Value{}}
	for _, a := range d.Attrs {
		name := strings.TrimPrefix(a.Value.Text, "%")
		for _, o := range d.Operands {
			if o.Name == name && o.Value != nil && o.Value.Type != nil {
				t.dynamic[a.Key] = o.Value
			}
		}
	}
	return t, nil
}

// lowerTransform rewrites vector.transform into lane arithmetic.
func lowerTransform(l *lowering, op *Op) (bool, error) {
	if len(op.Results) != 1 || len(op.ResultTypes) != 1 || len(op.Operands) != 2 {
		return true, l.errorf("needs `%%x, %%transform : V, encoding<transform> -> R`")
	}
	d, err := l.transformOf(op)
	if err != nil {
		return true, err
	}
	x, res := op.Operands[0].Value, op.ResultTypes[0]
	_, xs, okx := staticLanes(x.Type)
	_, rs, okr := staticLanes(res)
	if x.Type.Kind != TypeVector || res.Kind != TypeVector || !okx || !okr || len(xs) != len(rs) || !sameOffAxis(xs, rs, len(xs)-1) {
		return true, l.errorf("needs static vectors of one shape but the last axis (%s -> %s)", x.Type, res)
	}
	if elemType(x.Type).Kind != TypeFloat || !sameType(elemType(x.Type), elemType(res)) {
		return true, l.errorf("needs float lanes of one type (%s -> %s)", x.Type, res)
	}
	in, out := int(xs[len(xs)-1]), int(rs[len(rs)-1])
	if p, ok := d.params["input_elems"]; ok && p != strconv.Itoa(in) {
		return true, l.errorf("input_elems=%s, but the source's last axis has %d lanes", p, in)
	}
	if p, ok := d.params["output_elems"]; ok && p != strconv.Itoa(out) {
		return true, l.errorf("output_elems=%s, but the result's last axis has %d lanes", p, out)
	}
	norm := d.params["normalization"]
	if norm != "" && norm != "none" && norm != "orthonormal" {
		return true, l.errorf("normalization %q (Loom defines none and orthonormal)", norm)
	}
	lanes, err := l.lanes(x)
	if err != nil {
		return true, err
	}
	family := d.params["family"]
	var row func(xr []*Value) ([]*Value, error)
	switch family {
	case "hadamard", "hadamard_sign", "sign_permute_hadamard":
		if in != out {
			return true, l.errorf("#%s maps %d lanes to %d (a hadamard keeps the count)", family, in, out)
		}
		pre, err := l.hadamardPrep(d, family, in)
		if err != nil {
			return true, err
		}
		row = func(xr []*Value) ([]*Value, error) {
			return l.hadamardRow(pre(xr), norm == "orthonormal"), nil
		}
	case "jl_dense":
		if norm == "orthonormal" {
			return true, l.errorf("jl_dense takes normalization none only")
		}
		m := d.dynamic["matrix"]
		if m == nil {
			return true, l.errorf("jl_dense needs a `matrix` operand")
		}
		if _, ms, ok := staticLanes(m.Type); !ok || len(ms) != 2 || ms[0] != int64(out) || ms[1] != int64(in) || !sameType(elemType(m.Type), elemType(x.Type)) {
			return true, l.errorf("jl_dense matrix %s: needs vector<%dx%dx%s>", m.Type, out, in, elemType(x.Type))
		}
		ml, err := l.lanes(m)
		if err != nil {
			return true, err
		}
		row = func(xr []*Value) ([]*Value, error) {
			r := make([]*Value, out)
			for i := range r {
				for j, xj := range xr {
					p := l.bin("mulf", ml[i*in+j], xj)
					if j == 0 {
						r[i] = p
					} else {
						r[i] = l.bin("addf", r[i], p)
					}
				}
			}
			return r, nil
		}
	default:
		return true, l.refuse("#numeric_transform family %q has no shared lowering (hadamard, hadamard_sign, sign_permute_hadamard, jl_dense)", family)
	}
	var outLanes []*Value
	for r := 0; r < len(lanes)/in; r++ {
		o, err := row(lanes[r*in : (r+1)*in])
		if err != nil {
			return true, err
		}
		outLanes = append(outLanes, o...)
	}
	l.finish(l.build(res, outLanes))
	return true, nil
}

// hadamardPrep returns the per-row step before the hadamard: sign flips
// (from `signs` or `seed`) and, for sign_permute_hadamard, the gather
// through `permutation`.
func (l *lowering) hadamardPrep(d *transformDesc, family string, n int) (func([]*Value) []*Value, error) {
	signs, seed, perm := d.dynamic["signs"], d.dynamic["seed"], d.dynamic["permutation"]
	var neg []*Value // i1 per lane: negate
	switch {
	case family == "hadamard":
		if signs != nil || seed != nil || perm != nil {
			return nil, l.errorf("hadamard takes no signs, seed or permutation")
		}
	case signs != nil && seed == nil:
		if sn, _, ok := staticLanes(signs.Type); !ok || sn != n || elemType(signs.Type).Bits != 1 {
			return nil, l.errorf("signs %s: needs vector<%dxi1>", signs.Type, n)
		}
		var err error
		if neg, err = l.lanes(signs); err != nil {
			return nil, err
		}
	case family == "hadamard_sign" && seed != nil && signs == nil:
		neg = l.seedSigns(seed, n)
	default:
		return nil, l.errorf("%s needs exactly one of signs or seed (sign_permute_hadamard: signs)", family)
	}
	if (family == "sign_permute_hadamard") != (perm != nil) {
		return nil, l.errorf("a permutation belongs to sign_permute_hadamard, which needs one")
	}
	var idx []*Value
	if perm != nil {
		pl, err := l.lanes(perm)
		if err != nil {
			return nil, err
		}
		pe := elemType(perm.Type)
		if len(pl) != n || (pe.Kind != TypeInt && pe.Kind != TypeIndex) {
			return nil, l.errorf("permutation %s: needs %d integer or index lanes", perm.Type, n)
		}
		it := &Type{Kind: TypeIndex, Name: "index"}
		for _, p := range pl {
			if pe.Kind == TypeInt {
				p = l.emit("index.cast", "", []*Value{l.resizeInt(p, 32, false)}, []*Type{typeOfBits(32)}, []*Type{it}, it)
			}
			idx = append(idx, p)
		}
	}
	return func(xr []*Value) []*Value {
		y := xr
		if neg != nil {
			y = make([]*Value, n)
			for j, v := range xr {
				y[j] = l.sel(neg[j], l.un("negf", v), v)
			}
		}
		if idx != nil {
			vt := vectorOf(n, y[0].Type)
			sv := l.build(vt, y)
			g := make([]*Value, n)
			for k, p := range idx {
				g[k] = l.emit("vector.extract", "", []*Value{sv, p}, []*Type{vt}, []*Type{vt.Elem}, vt.Elem)
			}
			y = g
		}
		return y
	}, nil
}

// seedSigns is, per lane j, the low bit of SplitMix64(seed + j).
func (l *lowering) seedSigns(seed *Value, n int) []*Value {
	i64 := typeOfBits(64)
	s := seed
	if elemType(seed.Type).Kind == TypeIndex {
		s = l.emit("index.cast", "", []*Value{seed}, []*Type{seed.Type}, []*Type{i64}, i64)
	} else {
		s = l.resizeInt(seed, 64, true)
	}
	c := func(v uint64) *Value { return l.intConst(i64, int64(v)) }
	out := make([]*Value, n)
	for j := range out {
		z := l.bin("addi", s, c(uint64(j)+0x9E3779B97F4A7C15))
		z = l.bin("muli", l.bin("xori", z, l.bin("shrui", z, c(30))), c(0xBF58476D1CE4E5B9))
		z = l.bin("muli", l.bin("xori", z, l.bin("shrui", z, c(27))), c(0x94D049BB133111EB))
		z = l.bin("xori", z, l.bin("shrui", z, c(31)))
		out[j] = l.cmp("cmpi", "ne", l.bin("andi", z, c(1)), c(0))
	}
	return out
}

// hadamardRow is the unnormalized (or orthonormal) Walsh–Hadamard
// transform of one row, summed in lane order.
func (l *lowering) hadamardRow(y []*Value, ortho bool) []*Value {
	n := len(y)
	out := make([]*Value, n)
	negs := make([]*Value, n)
	for i := range out {
		for j, v := range y {
			t := v
			if popcount(i&j)%2 == 1 {
				if negs[j] == nil {
					negs[j] = l.un("negf", v)
				}
				t = negs[j]
			}
			if j == 0 {
				out[i] = t
			} else {
				out[i] = l.bin("addf", out[i], t)
			}
		}
		if ortho {
			out[i] = l.bin("mulf", out[i], l.floatConst(y[0].Type, 1/math.Sqrt(float64(n))))
		}
	}
	return out
}

// popcount is the number of set bits of x ≥ 0.
func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}
