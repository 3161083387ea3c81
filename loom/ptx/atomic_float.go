package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// casFloatKinds are the float atomic kinds PTX has no atom instruction
// for, with the min/max instruction each loops on.
var casFloatKinds = map[string]string{"minnumf": "min", "maxnumf": "max", "minimumf": "min.NaN", "maximumf": "max.NaN"}

// atomicFloatCAS lowers view.atomic.rmw/reduce<minnumf|maxnumf|minimumf|
// maximumf> on f32 (and the num kinds on f64) as a compare-exchange loop:
// read the word, combine, swap it in if nobody changed it meanwhile, else
// retry with what was there. The result (for rmw) is the value replaced.
func (e *emitter) atomicFloatCAS(op *loom.Op, kind, ord, scope, space, addr string, t *loom.Type, x *val) (*val, error) {
	m := casFloatKinds[kind]
	bits := carrierBytes(t) * 8
	if t.Name != "f32" && (t.Name != "f64" || len(m) > 3) {
		return nil, unsupported(op, "atomic %s on %s", kind, t)
	}
	ic := cR
	if bits == 64 {
		ic = cRd
	}
	old, bitsNew, got := e.newReg(ic), e.newReg(ic), e.newReg(ic)
	cur, next := e.newVal(t), e.newVal(t)
	again := e.newReg(cPred)
	loop := e.newLabel("cas")
	e.ins("ld.relaxed%s.%s.b%d %s, [%s]", scope, space, bits, old, addr)
	e.label(loop)
	e.ins("mov.b%d %s, %s", bits, cur.reg, old)
	e.ins("%s.%s %s, %s, %s", m, t.Name, next.reg, cur.reg, x.reg)
	e.ins("mov.b%d %s, %s", bits, bitsNew, next.reg)
	e.ins("atom.%s%s.%s.cas.b%d %s, [%s], %s, %s", ord, scope, space, bits, got, addr, old, bitsNew)
	e.ins("setp.ne.b%d %s, %s, %s", bits, again, got, old)
	e.ins("mov.b%d %s, %s", bits, old, got)
	e.ins("@%s bra %s", again, loop)
	return cur, nil
}
