package interp

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// Matrix fragments follow the layouts of loom.FragmentLayout: a dense
// fragment is the whole tile in every lane, a subgroup fragment is spread
// over the 32 lanes of a subgroup (64 consecutive lanes, two subgroups, for
// a wave-64 target: loom.FragmentWave), so a subgroup vector.mma gathers
// its operands from all of them, like a collective.

// fragShape reads the constant `shape [%rows, %cols]` operands at ops[at:].
func (c *compiler) fragShape(b *block, op *loom.Op, at int) (rows, cols int64, err error) {
	if len(op.Operands) != at+2 {
		return 0, 0, compileErr(op.Pos, ErrInvalid, "%s needs the origin indices and shape [rows, columns]", op.Name)
	}
	var dims [2]int64
	for i := range dims {
		s, err := c.operand(b, op.Operands[at+i], typeIndex)
		if err != nil {
			return 0, 0, err
		}
		if !s.cst {
			return 0, 0, compileErr(op.Operands[at+i].Pos, ErrUnsupported, "%s: the fragment shape must be known at compile time", op.Name)
		}
		dims[i] = s.ci
	}
	return dims[0], dims[1], nil
}

// fragLayout selects the layout of op's fragment (role from op.Param) for
// fragments spread over wave lanes.
func fragLayout(op *loom.Op, rows, cols int64, payload, wave int) (loom.FragmentLayout, error) {
	role, ok := loom.ParseFragmentRole(op.Param)
	if !ok {
		return loom.FragmentLayout{}, compileErr(op.Pos, ErrInvalid, "%s: unknown fragment role %q", op.Name, op.Param)
	}
	f, err := loom.NewFragmentLayout(role, rows, cols, int64(payload), wave)
	if err != nil {
		return f, compileErr(op.Pos, ErrUnsupported, "%s: %v", op.Name, err)
	}
	return f, nil
}

// subgroupLane is lane l's position in its subgroup of sg lanes (subgroups
// are counted from the start of l's workgroup).
func subgroupLane(fr *frame, l, sg int) int { return (l % fr.grp) % sg }

// fragmentOp compiles vector.fragment.load/store and vector.fragment.
func (c *compiler) fragmentOp(b *block, op *loom.Op, rest string) (instr, error) {
	if rest == "fragment" {
		if len(op.Operands) < 3 || len(op.Results) != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "vector.fragment takes a value and shape [rows, columns]")
		}
		if len(op.Operands) > 3 {
			return nil, compileErr(op.Pos, ErrUnsupported, "vector.fragment with encoded parameters (using {…})")
		}
		x, err := c.operand(b, op.Operands[0], nil)
		if err != nil {
			return nil, err
		}
		rows, cols, err := c.fragShape(b, op, 1)
		if err != nil {
			return nil, err
		}
		if _, err := fragLayout(op, rows, cols, x.comps, c.k.fragWave); err != nil {
			return nil, err
		}
		b.sc.vals[op.Results[0].Name] = x // the same payload, now a fragment
		return nil, nil
	}
	store := rest == "fragment.store"
	viewAt := 0
	if store {
		viewAt = 1
	}
	a, err := c.access(b, op, viewAt, nil)
	if err != nil {
		return nil, err
	}
	a.write = store
	checked := c.k.san.on()
	if len(a.idx) < 2 {
		return nil, compileErr(op.Pos, ErrInvalid, "%s needs a view of rank 2 or more", op.Name)
	}
	if a.wg {
		c.wgSlow++
	}
	rows, cols, err := c.fragShape(b, op, viewAt+1+len(a.idx))
	if err != nil {
		return nil, err
	}
	var val, r *slot
	if store {
		if val, err = c.operand(b, op.Operands[0], nil); err != nil {
			return nil, err
		}
	} else {
		vt := vecType(op)
		if vt == nil || vt.Kind != loom.TypeVector {
			return nil, compileErr(op.Pos, ErrInvalid, "%s needs a vector result type", op.Name)
		}
		if r, err = c.newSlot(op.Pos, vt, false); err != nil {
			return nil, err
		}
		b.sc.vals[op.Results[0].Name] = r
		val = r
		if loom.FragmentUnsigned(a.v.typ) {
			c.unsignedFrag(r)
		}
	}
	if val.kind == kView || (val.kind == kFloat) != a.cd.isFloat {
		return nil, compileErr(op.Pos, ErrInvalid, "%s: the fragment's element type does not match the view", op.Name)
	}
	f, err := fragLayout(op, rows, cols, val.comps, c.k.fragWave)
	if err != nil {
		return nil, err
	}
	sg := f.Wave
	if err := c.fragSubgroup(op, f.Subgroup); err != nil {
		return nil, err
	}
	return func(fr *frame) error {
		L := fr.L
		var ex [2]int64
		for l := range L {
			if !fr.mask[l] {
				continue
			}
			sl := subgroupLane(fr, l, sg)
			for e := range val.comps {
				row, col := f.Coord(sl, e)
				ex[0], ex[1] = int64(row), int64(col)
				v, off, err := a.at(fr, l, ex[:])
				if err != nil {
					return err
				}
				if checked {
					if err := fr.touchAs(a, v, off, l, l-sl, store); err != nil {
						return err
					}
				}
				at := e*L + l
				if val.uni {
					at = e
				}
				mem := v.mem[off:]
				switch {
				case store && a.cd.isFloat:
					a.cd.storeF(mem, fr.F[val.idx][at])
				case store:
					a.cd.storeI(mem, fr.I[val.idx][at])
				case a.cd.isFloat:
					fr.F[r.idx][at] = a.cd.loadF(mem)
				default:
					fr.I[r.idx][at] = a.cd.loadI(mem)
				}
			}
		}
		return nil
	}, nil
}

// fragSubgroup refuses subgroup fragments where the executor's subgroups
// do not tile the fragment's lanes: 32-lane subgroups for wave 32, 32 or
// 64 for wave 64.
func (c *compiler) fragSubgroup(op *loom.Op, sub bool) error {
	sg, wave := c.k.tgt.subgroup, c.k.fragWave
	if sub && sg != loom.FragmentSubgroupSize && sg != wave {
		return compileErr(op.Pos, ErrUnsupported, "%s: subgroup fragments of %d lanes need a subgroup of 32 or %d lanes (the target has %d)", op.Name, wave, wave, sg)
	}
	return nil
}

// unsignedFrag marks s as holding unsigned integer fragment elements.
func (c *compiler) unsignedFrag(s *slot) {
	if c.unsigned == nil {
		c.unsigned = map[*slot]bool{}
	}
	c.unsigned[s] = true
}

// mma compiles vector.mma: result = init + lhs·rhs, each element a chain of
// fused multiply-adds in reduction order, rounded to the accumulator type
// at each step (integers: exact products, sums wrapped to the accumulator
// width).
func (c *compiler) mma(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 3)
	if err != nil {
		return nil, err
	}
	x, y, acc := ops[0], ops[1], ops[2]
	m, n, k, sub, err := loom.MMAShape(x.comps, y.comps, acc.comps, c.k.fragWave)
	if err != nil {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.mma: %v", err)
	}
	if x.kind == kView || y.kind == kView || acc.kind == kView || x.kind != y.kind {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.mma operand types %s, %s, %s", x.typ, y.typ, acc.typ)
	}
	if (x.kind == kFloat) != (acc.kind == kFloat) {
		return nil, compileErr(op.Pos, ErrUnsupported, "vector.mma of %s into %s", x.typ, acc.typ)
	}
	r, err := c.result(b, op, 0, !sub && allUni(ops...))
	if err != nil {
		return nil, err
	}
	if r.comps != acc.comps || r.kind != acc.kind {
		return nil, compileErr(op.Pos, ErrInvalid, "vector.mma result type %s differs from the accumulator's", r.typ)
	}
	sg := c.k.fragWave // the lanes one subgroup mma spans
	if err := c.fragSubgroup(op, sub); err != nil {
		return nil, err
	}
	if sub {
		c.k.groupOps = true
	}
	var rnd ffmt
	accBits := 0
	if acc.kind == kFloat {
		if rnd, err = floatFormat(op.Pos, acc.typ); err != nil {
			return nil, err
		}
	} else {
		accBits = acc.typ.Bits
	}
	ux, uy := c.unsigned[x], c.unsigned[y]
	lay := func(role loom.FragmentRole, rows, cols, payload int) loom.FragmentLayout {
		f, _ := loom.NewFragmentLayout(role, int64(rows), int64(cols), int64(payload), sg)
		return f
	}
	fa, fb, fc := lay(loom.FragmentLHS, m, k, x.comps), lay(loom.FragmentRHS, k, n, y.comps), lay(loom.FragmentInit, m, n, acc.comps)
	// gather reads the tile of fragment s (layout f) from the lanes of the
	// subgroup starting at g0 (lane g0 alone for dense fragments).
	gather := func(fr *frame, s *slot, f loom.FragmentLayout, g0 int, dF []float64, dI []int64, unsigned bool) {
		for row := range f.Rows {
			for col := range f.Cols {
				lane, e := f.Owner(row, col)
				at := e*fr.L + g0 + lane
				if s.uni {
					at = e
				}
				if s.kind == kFloat {
					dF[row*f.Cols+col] = fr.F[s.idx][at]
				} else {
					v := fr.I[s.idx][at]
					if unsigned {
						v &= 1<<s.typ.Bits - 1
					}
					dI[row*f.Cols+col] = v
				}
			}
		}
	}
	// tiles is the scratch of one execution (workers run concurrently).
	type tiles struct {
		A, B, C    []float64
		Ai, Bi, Ci []int64
	}
	compute := func(fr *frame, g0 int, s *tiles) {
		A, B, C, Ai, Bi, Ci := s.A, s.B, s.C, s.Ai, s.Bi, s.Ci
		gather(fr, x, fa, g0, A, Ai, ux)
		gather(fr, y, fb, g0, B, Bi, uy)
		gather(fr, acc, fc, g0, C, Ci, false)
		for i := range m {
			for j := range n {
				if acc.kind == kFloat {
					s := C[i*n+j]
					for kk := range k {
						s = rnd.round(math.FMA(A[i*k+kk], B[kk*n+j], s))
					}
					C[i*n+j] = s
				} else {
					s := Ci[i*n+j]
					for kk := range k {
						s += Ai[i*k+kk] * Bi[kk*n+j]
					}
					Ci[i*n+j] = wrapBits(s, accBits)
				}
			}
		}
		// Scatter into the result's layout (the accumulator's).
		lanes := 1
		if sub {
			lanes = sg
		}
		for sl := range lanes {
			for e := range r.comps {
				row, col := fc.Coord(sl, e)
				at := e*fr.L + g0 + sl
				if r.uni {
					at = e
				}
				if r.kind == kFloat {
					fr.F[r.idx][at] = C[row*n+col]
				} else {
					fr.I[r.idx][at] = Ci[row*n+col]
				}
			}
		}
	}
	return func(fr *frame) error {
		s := &tiles{make([]float64, m*k), make([]float64, k*n), make([]float64, m*n),
			make([]int64, m*k), make([]int64, k*n), make([]int64, m*n)}
		if !sub {
			for l := range fr.L {
				if fr.mask[l] {
					compute(fr, l, s)
					if r.uni {
						return nil
					}
				}
			}
			return nil
		}
		for gs := 0; gs < fr.L; gs += fr.grp {
			if fr.groupIdle(gs) {
				continue
			}
			for g0 := gs; g0 < gs+fr.grp; g0 += sg {
				active := 0
				for l := g0; l < min(g0+sg, gs+fr.grp); l++ {
					if fr.mask[l] {
						active++
					}
				}
				if active == 0 {
					continue
				}
				if active != sg {
					return newTrap(op, g0, ErrDivergentBarrier, "vector.mma reached by %d of the %d lanes of a subgroup", active, sg)
				}
				compute(fr, g0, s)
			}
		}
		return nil
	}, nil
}
