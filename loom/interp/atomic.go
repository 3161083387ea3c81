package interp

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// atomic compiles view.atomic.rmw/reduce/cmpxchg. Lanes apply their updates
// in lane order; across workgroups the per-address stripe lock makes every
// read-modify-write indivisible.
func (c *compiler) atomic(b *block, op *loom.Op, name string) (instr, error) {
	cmpx := name == "view.atomic.cmpxchg"
	viewAt := 1
	if cmpx {
		viewAt = 2
	}
	a, err := c.access(b, op, viewAt, nil)
	if err != nil {
		return nil, err
	}
	a.write = true
	if a.wg {
		c.wgSlow++ // lane by lane in a batch (batchwg.go)
	}
	vals := make([]*slot, viewAt)
	for i := range vals {
		if vals[i], err = c.operand(b, op.Operands[i], nil); err != nil {
			return nil, err
		}
		if (vals[i].kind == kFloat) != a.cd.isFloat || vals[i].comps != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "%s: operand type %s does not match the view element %s", name, vals[i].typ, a.v.typ.Elem)
		}
	}
	var r *slot
	if name != "view.atomic.reduce" {
		if r, err = c.result(b, op, 0, false); err != nil {
			return nil, err
		}
	}
	elem := a.v.typ.Elem
	bits := elem.Bits
	if elem.Kind == loom.TypeIndex {
		bits = c.k.tgt.indexBits
	} else if elem.Kind == loom.TypeOffset {
		bits = c.k.tgt.offsetBits
	}
	var combI func(old, x int64) int64
	var combF func(old, x float64) float64
	if !cmpx {
		kind := op.Param
		if a.cd.isFloat {
			if combF = atomicFloat(kind); combF == nil {
				return nil, compileErr(op.Pos, ErrUnsupported, "%s<%s> on %s", name, kind, elem)
			}
		} else {
			if combI = atomicInt(kind, bits); combI == nil {
				return nil, compileErr(op.Pos, ErrUnsupported, "%s<%s> on %s", name, kind, elem)
			}
		}
	}
	return func(fr *frame) error {
		for l := range fr.L {
			if !fr.mask[l] {
				continue
			}
			v, off, err := a.at(fr, l, nil)
			if err != nil {
				return err
			}
			if rel := off - int64(l/fr.grp)*v.gstride; rel%int64(a.cd.size) != 0 {
				// The group-relative offset: a batch's blocks lie apart.
				return newTrap(op, l, ErrMisaligned, "%d-byte atomic at byte offset %d", a.cd.size, rel)
			}
			pick := func(s *slot) int {
				if s.uni {
					return 0
				}
				return l
			}
			mem := v.mem[off:]
			mu := stripeFor(v.mem, off)
			mu.Lock()
			if a.cd.isFloat {
				old := a.cd.loadF(mem)
				x := fr.F[vals[0].idx][pick(vals[0])]
				if cmpx {
					n := fr.F[vals[1].idx][pick(vals[1])]
					if math.Float64bits(old) == math.Float64bits(x) {
						a.cd.storeF(mem, n)
					}
				} else {
					a.cd.storeF(mem, combF(old, x))
				}
				mu.Unlock()
				if r != nil {
					fr.F[r.idx][l] = old
				}
				continue
			}
			old := a.cd.loadI(mem)
			x := fr.I[vals[0].idx][pick(vals[0])]
			if cmpx {
				n := fr.I[vals[1].idx][pick(vals[1])]
				if zext(old, bits) == zext(x, bits) {
					a.cd.storeI(mem, n)
				}
			} else {
				a.cd.storeI(mem, combI(old, x))
			}
			mu.Unlock()
			if r != nil {
				fr.I[r.idx][l] = old
			}
		}
		return nil
	}, nil
}

func atomicInt(kind string, bits int) func(old, x int64) int64 {
	switch kind {
	case "xchgi", "xchg":
		return func(_, x int64) int64 { return x }
	case "addi", "add":
		return func(o, x int64) int64 { return o + x }
	case "subi", "sub":
		return func(o, x int64) int64 { return o - x }
	case "andi", "and":
		return func(o, x int64) int64 { return o & x }
	case "ori", "or":
		return func(o, x int64) int64 { return o | x }
	case "xori", "xor":
		return func(o, x int64) int64 { return o ^ x }
	case "minsi":
		return func(o, x int64) int64 { return min(o, x) }
	case "maxsi":
		return func(o, x int64) int64 { return max(o, x) }
	case "minui":
		return func(o, x int64) int64 {
			if zext(x, bits) < zext(o, bits) {
				return x
			}
			return o
		}
	case "maxui":
		return func(o, x int64) int64 {
			if zext(x, bits) > zext(o, bits) {
				return x
			}
			return o
		}
	}
	return nil
}

func atomicFloat(kind string) func(old, x float64) float64 {
	switch kind {
	case "xchgf", "xchg":
		return func(_, x float64) float64 { return x }
	case "addf", "add":
		return func(o, x float64) float64 { return o + x }
	case "minimumf":
		return minimumF
	case "maximumf":
		return maximumF
	case "minnumf":
		return minnumF
	case "maxnumf":
		return maxnumF
	}
	return nil
}

// minimumF, maximumF, minnumF and maxnumF are Loom's four float min/max
// forms: NaN wins in the first two, loses in the last two, and −0 is below
// +0 in all. Written without math.Min/Max, which are assembly on amd64 and
// cost a call an element in the lane loops.
func minimumF(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	return minOrdered(a, b)
}

func maximumF(a, b float64) float64 {
	if a != a || b != b {
		return math.NaN()
	}
	return maxOrdered(a, b)
}

func minnumF(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	}
	return minOrdered(a, b)
}

func maxnumF(a, b float64) float64 {
	switch {
	case a != a:
		return b
	case b != b:
		return a
	}
	return maxOrdered(a, b)
}

// minOrdered and maxOrdered are math.Min and math.Max of values that are
// not NaN: of equal values only two zeros can differ, and their sign bits
// or'd (min) or and'ed (max) give −0 or +0.
func minOrdered(a, b float64) float64 {
	switch {
	case a < b:
		return a
	case b < a:
		return b
	}
	return math.Float64frombits(math.Float64bits(a) | math.Float64bits(b))
}

func maxOrdered(a, b float64) float64 {
	switch {
	case a > b:
		return a
	case b > a:
		return b
	}
	return math.Float64frombits(math.Float64bits(a) & math.Float64bits(b))
}
