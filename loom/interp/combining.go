package interp

import (
	"math"

	"github.com/loomgen/loomgen/loom"
)

// combiner is a combining kind (reductions, scans, collectives) at one
// element type, with its identity.
type combiner struct {
	isFloat bool
	// addF32 marks addf on f32, which the cluster reduction runs without
	// a call an element.
	addF32 bool
	fi     func(a, b int64) int64
	ff     func(a, b float64) float64
	idI    int64
	idF    float64
	rnd    ffmt
}

func (c *compiler) combinerFor(pos loom.Pos, kind string, t *loom.Type) (combiner, error) {
	if t.Kind == loom.TypeFloat {
		rnd, err := floatFormat(pos, t)
		if err != nil {
			return combiner{}, err
		}
		cb := combiner{isFloat: true, rnd: rnd}
		switch kind {
		case "addf":
			cb.ff, cb.idF = func(a, b float64) float64 { return rnd.round(a + b) }, 0
			cb.addF32 = rnd.kind == fF32
		case "mulf":
			cb.ff, cb.idF = func(a, b float64) float64 { return rnd.round(a * b) }, 1
		case "minimumf":
			cb.ff, cb.idF = minimumF, math.Inf(1)
		case "maximumf":
			cb.ff, cb.idF = maximumF, math.Inf(-1)
		case "minnumf":
			cb.ff, cb.idF = minnumF, math.Inf(1)
		case "maxnumf":
			cb.ff, cb.idF = maxnumF, math.Inf(-1)
		default:
			return combiner{}, compileErr(pos, ErrUnsupported, "combining kind %s on %s", kind, t)
		}
		return cb, nil
	}
	nb := c.intBits(t)
	wrap := func(v int64) int64 { return wrapBits(v, nb) }
	if t.Kind != loom.TypeInt {
		wrap = func(v int64) int64 { return v }
	}
	cb := combiner{}
	maxS := int64(1)<<(nb-1) - 1
	if nb >= 64 {
		maxS = math.MaxInt64
	}
	switch kind {
	case "addi":
		cb.fi, cb.idI = func(a, b int64) int64 { return wrap(a + b) }, 0
	case "muli":
		cb.fi, cb.idI = func(a, b int64) int64 { return wrap(a * b) }, 1
	case "minsi":
		cb.fi, cb.idI = func(a, b int64) int64 { return min(a, b) }, maxS
	case "maxsi":
		cb.fi, cb.idI = func(a, b int64) int64 { return max(a, b) }, -maxS-1
	case "minui":
		cb.fi, cb.idI = func(a, b int64) int64 {
			if zext(a, nb) <= zext(b, nb) {
				return a
			}
			return b
		}, wrap(-1)
	case "maxui":
		cb.fi, cb.idI = func(a, b int64) int64 {
			if zext(a, nb) >= zext(b, nb) {
				return a
			}
			return b
		}, 0
	case "andi":
		cb.fi, cb.idI = func(a, b int64) int64 { return a & b }, wrap(-1)
	case "ori":
		cb.fi, cb.idI = func(a, b int64) int64 { return a | b }, 0
	case "xori":
		cb.fi, cb.idI = func(a, b int64) int64 { return a ^ b }, 0
	default:
		return combiner{}, compileErr(pos, ErrUnsupported, "combining kind %s on %s", kind, t)
	}
	return cb, nil
}
