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

func minimumF(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

func maximumF(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Max(a, b)
}

func minnumF(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Min(a, b)
}

func maxnumF(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Max(a, b)
}
