package interp

import (
	"slices"

	"github.com/loomgen/loomgen/loom"
)

// yieldSink collects the slots a region's terminator yields and emits the
// copies into destinations that are decided after the regions compile.
type yieldSink struct {
	srcs [][]*slot // per region
	dst  *[]*slot
	// nF is the compiler's float slot count when the yields were seen,
	// per region (see handoff.go).
	nF []int
	c  *compiler
	// swap0: the first region's yields hand their storage over (scf.if
	// decides it once its results exist).
	swap0 []bool
}

func (y *yieldSink) term(op *loom.Op, vals []*slot) (instr, error) {
	region := len(y.srcs)
	y.srcs = append(y.srcs, vals)
	if y.c != nil {
		y.nF = append(y.nF, y.c.k.nF)
	}
	dst := y.dst
	return func(fr *frame) error {
		if region == 0 && y.swap0 != nil {
			handOff(fr, *dst, vals, y.swap0)
			return nil
		}
		for i, d := range *dst {
			if i < len(vals) {
				fr.copySlot(d, vals[i])
			}
		}
		return nil
	}, nil
}

func (c *compiler) scfOp(b *block, op *loom.Op, rest string) (instr, error) {
	switch rest {
	case "if":
		return c.scfIf(b, op)
	case "for":
		return c.scfFor(b, op)
	case "while":
		return c.scfWhile(b, op)
	case "select":
		return c.scfSelect(b, op)
	case "switch":
		return c.scfSwitch(b, op)
	case "lookup":
		return c.scfLookup(b, op)
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
}

// branchResults allocates the results of an if/switch once the yields of
// every region are known: uniform only when the selector and every yielded
// value are.
func (c *compiler) branchResults(b *block, op *loom.Op, selUni bool, y *yieldSink) ([]*slot, error) {
	res := make([]*slot, len(op.Results))
	for i := range op.Results {
		uni := selUni
		for _, vs := range y.srcs {
			if i >= len(vs) {
				return nil, compileErr(op.Pos, ErrInvalid, "%s: a region yields %d values for %d results", op.Name, len(vs), len(op.Results))
			}
			uni = uni && vs[i].uni
		}
		s, err := c.result(b, op, i, uni)
		if err != nil {
			return nil, err
		}
		res[i] = s
	}
	return res, nil
}

func (c *compiler) scfIf(b *block, op *loom.Op) (instr, error) {
	if len(op.Operands) != 1 || len(op.Regions) == 0 {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.if needs a condition and a region")
	}
	cond, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	var dst []*slot
	y := &yieldSink{dst: &dst, c: c}
	var codes [2][]instr
	thenNF := c.k.nF
	exits := c.exits
	for i, r := range op.Regions {
		if i > 1 {
			return nil, compileErr(r.Pos, ErrInvalid, "scf.if has more than two regions")
		}
		inner := &block{sc: newScope(b.sc), depth: b.depth + 1, term: y.term, inFunc: b.inFunc}
		if codes[i], err = c.region(inner, r); err != nil {
			return nil, err
		}
	}
	if len(op.Results) > 0 && len(op.Regions) < 2 {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.if with results needs an else region")
	}
	if dst, err = c.branchResults(b, op, cond.uni, y); err != nil {
		return nil, err
	}
	if len(y.srcs) == 2 && len(y.nF) == 2 {
		// The then region runs first, and its yields are the then
		// region's own registers: hand them over (handoff.go).
		y.swap0 = c.handoffs(dst, y.srcs[0], thenNF, y.nF[0])
	}
	then, els := codes[0], codes[1]
	depth := b.depth + 1
	if cond.uni {
		return func(fr *frame) error {
			code := els
			if fr.I[cond.idx][0]&1 != 0 {
				code = then
			}
			return runCode(fr, code)
		}, nil
	}
	p := &ifCode{then: then, els: els, depth: depth, noExit: c.exits == exits}
	if c.ifs == nil {
		c.ifs = map[*loom.Op]*ifCode{}
	}
	c.ifs[op] = p
	return func(fr *frame) error {
		if a, b, ok := fr.rangeMask(cond); ok {
			if ok, err := p.runRange(fr, a, b); ok {
				return err
			}
		}
		cur := fr.mask
		m := fr.masks[depth]
		clo, chi, cn := fr.lo, fr.hi, fr.nact
		fr.miv[depth].ok = false // written lane by lane below
		cv := fr.I[cond.idx]
		if cond.aff {
			if md := &fr.meta[cond.idx]; md.lazy {
				materialize(cv, md, md.dlo, md.dhi)
				md.lazy = false
			}
		}
		took := -1 // lanes that ran the then region
		for pass := 0; pass < 2; pass++ {
			code := then
			want := int64(1)
			if pass == 1 {
				code, want = els, 0
			}
			if len(code) == 0 || pass == 1 && took == cn {
				// Every active lane took the then region: none is
				// left for the else region, so its mask is not built.
				continue
			}
			// Only lanes inside the current bound can be active; the
			// new mask is clear outside it.
			n, nlo, nhi := 0, clo, clo
			cs, ms, as, vs := cur[clo:chi], m[clo:chi], fr.alive[clo:chi], cv[clo:chi]
			if cn == chi-clo && fr.nalive == fr.L {
				// Every lane of the bound active and alive: the mask is
				// the condition, counted without a branch, then bounded.
				vs = vs[:len(ms)]
				for j, v := range vs {
					on := v&1 == want
					ms[j] = on
					n += int(b2i(on))
				}
				if n > 0 {
					nlo = clo + slices.Index(ms, true)
					for nhi = chi; !m[nhi-1]; nhi-- {
					}
				}
			} else {
				for j := range ms {
					on := cs[j] && vs[j]&1 == want && as[j]
					ms[j] = on
					if on {
						if n == 0 {
							nlo = clo + j
						}
						n++
						nhi = clo + j + 1
					}
				}
			}
			if pass == 0 {
				took = n
			}
			if n == 0 {
				continue
			}
			clear(m[:clo])
			clear(m[chi:])
			fr.mask, fr.nact, fr.lo, fr.hi = m, n, nlo, nhi
			if err := runCode(fr, code); err != nil && err != errAllExited {
				fr.mask = cur
				fr.unbound()
				return err
			}
		}
		if fr.nalive == fr.L {
			fr.mask, fr.nact, fr.lo, fr.hi = cur, cn, clo, chi
			return nil
		}
		fr.restoreMask(cur)
		if fr.nact == 0 {
			return errAllExited
		}
		return nil
	}, nil
}

func (c *compiler) scfSwitch(b *block, op *loom.Op) (instr, error) {
	if len(op.Operands) != 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.switch needs a selector")
	}
	sel, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	var dst []*slot
	y := &yieldSink{dst: &dst}
	type arm struct {
		key  int64
		def  bool
		code []instr
	}
	var arms []arm
	hasDefault := false
	for _, r := range op.Regions {
		inner := &block{sc: newScope(b.sc), depth: b.depth + 1, term: y.term, inFunc: b.inFunc}
		code, err := c.region(inner, r)
		if err != nil {
			return nil, err
		}
		d := r.Label == "default"
		hasDefault = hasDefault || d
		arms = append(arms, arm{key: r.Case, def: d, code: code})
	}
	if dst, err = c.branchResults(b, op, sel.uni, y); err != nil {
		return nil, err
	}
	matches := func(a arm, v int64) bool {
		if a.def {
			for _, o := range arms {
				if !o.def && o.key == v {
					return false
				}
			}
			return true
		}
		return a.key == v
	}
	depth := b.depth + 1
	return func(fr *frame) error {
		sv := fr.I[sel.idx]
		if sel.uni {
			for _, a := range arms {
				if matches(a, sv[0]) {
					return runCode(fr, a.code)
				}
			}
			if len(dst) > 0 {
				return newTrap(op, -1, ErrInvalid, "scf.switch: no case for %d and no default", sv[0])
			}
			return nil
		}
		cur := fr.mask
		m := fr.masks[depth]
		fr.miv[depth].ok = false
		for l, a := range cur {
			if !a || !fr.alive[l] {
				continue
			}
			found := false
			for _, am := range arms {
				if matches(am, sv[l]) {
					found = true
					break
				}
			}
			if !found && len(dst) > 0 {
				return newTrap(op, l, ErrInvalid, "scf.switch: no case for %d and no default", sv[l])
			}
		}
		for _, am := range arms {
			n := 0
			for l, a := range cur {
				on := a && fr.alive[l] && matches(am, sv[l])
				m[l] = on
				if on {
					n++
				}
			}
			if n == 0 {
				continue
			}
			fr.use(m, n)
			if err := runCode(fr, am.code); err != nil && err != errAllExited {
				fr.mask = cur
				fr.unbound()
				return err
			}
		}
		fr.restoreMask(cur)
		if fr.nact == 0 {
			return errAllExited
		}
		return nil
	}, nil
}

// loopCopies emits the copies from yielded values into loop-carried
// registers; when a yielded value is itself a carried register (a rotation)
// the copies go through fresh temporaries so no value is overwritten before
// it is read.
func (c *compiler) loopCopies(pos loom.Pos, dst, src []*slot) ([]*slot, error) {
	if len(src) != len(dst) {
		return nil, compileErr(pos, ErrInvalid, "region yields %d values for %d loop-carried values", len(src), len(dst))
	}
	clash := false
	for i, s := range src {
		for j, d := range dst {
			if i != j && s == d {
				clash = true
			}
		}
	}
	if !clash {
		return nil, nil
	}
	tmps := make([]*slot, len(dst))
	for i, d := range dst {
		t, err := c.newSlot(pos, d.typ, d.uni)
		if err != nil {
			return nil, err
		}
		tmps[i] = t
		if d.kind != kView && d.comps > 1 {
			t.comps = d.comps
		}
	}
	return tmps, nil
}

func copyAll(fr *frame, dst, src []*slot, tmps []*slot) {
	if tmps != nil {
		for i, s := range src {
			fr.copySlot(tmps[i], s)
		}
		src = tmps
	}
	for i, d := range dst {
		fr.copySlot(d, src[i])
	}
}

func (c *compiler) scfFor(b *block, op *loom.Op) (instr, error) {
	if len(op.Operands) < 3 || len(op.Regions) != 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.for needs bounds, a step and a body")
	}
	ops, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	lb, ub, step, inits := ops[0], ops[1], ops[2], ops[3:]
	body := op.Regions[0]
	// pipeline(%d) and unroll(%f) operands follow the initial values; they
	// are scheduling hints with no effect here.
	if len(body.Args) >= 1 && len(inits) > len(body.Args)-1 {
		inits = inits[:len(body.Args)-1]
	}
	if len(body.Args) != 1+len(inits) {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.for body takes %d arguments for %d initial values", len(body.Args), len(inits))
	}
	loopUni := allUni(lb, ub, step)
	argUni := make([]bool, len(inits))
	for i, s := range inits {
		argUni[i] = loopUni && s.uni
	}
	c.loopHint(op, argUni)
	var (
		iv     *slot
		args   []*slot
		code   []instr
		yields []*slot
		tmps   []*slot
	)
	for attempt := 0; ; attempt++ {
		snap := c.save()
		inner := &block{sc: newScope(b.sc), depth: b.depth + 1, inFunc: b.inFunc}
		if iv, err = c.newSlot(body.Args[0].Pos, bodyArgType(body.Args[0], lb), loopUni); err != nil {
			return nil, err
		}
		inner.sc.vals[body.Args[0].Name] = iv
		args = make([]*slot, len(inits))
		for i, a := range body.Args[1:] {
			t := a.Type
			if t == nil {
				t = inits[i].typ
			}
			if args[i], err = c.newSlot(a.Pos, t, argUni[i]); err != nil {
				return nil, err
			}
			inner.sc.vals[a.Name] = args[i]
		}
		yields = nil
		var tm []*slot
		bodyNF := c.k.nF
		inner.term = func(y *loom.Op, vals []*slot) (instr, error) {
			yields = vals
			var err error
			if tm, err = c.loopCopies(y.Pos, args, vals); err != nil {
				return nil, err
			}
			t := tm
			if loopUni && t == nil {
				// Every lane active at entry runs every iteration: the
				// body's own registers hand over (handoff.go).
				if sw := c.handoffs(args, vals, bodyNF, c.k.nF); sw != nil {
					return func(fr *frame) error { handOff(fr, args, vals, sw); return nil }, nil
				}
			}
			return func(fr *frame) error { copyAll(fr, args, vals, t); return nil }, nil
		}
		if code, err = c.region(inner, body); err != nil {
			return nil, err
		}
		tmps = tm
		if len(args) > 0 && yields == nil {
			return nil, compileErr(body.End, ErrInvalid, "scf.for body with loop-carried values must end in scf.yield")
		}
		changed := false
		for i := range args {
			if argUni[i] && !yields[i].uni {
				argUni[i], changed = false, true
			}
		}
		if !changed {
			break
		}
		c.restore(snap)
	}
	c.recordLoop(op, argUni)
	_ = tmps
	for i := range op.Results {
		if i >= len(args) {
			return nil, compileErr(op.Pos, ErrInvalid, "scf.for has more results than loop-carried values")
		}
		b.sc.vals[op.Results[i].Name] = args[i]
	}
	depth := b.depth + 1
	if loopUni {
		return func(fr *frame) error {
			lo, hi, st := fr.I[lb.idx][0], fr.I[ub.idx][0], fr.I[step.idx][0]
			if st <= 0 && lo < hi {
				return newTrap(op, -1, ErrInvalid, "scf.for step %d is not positive", st)
			}
			for i, a := range args {
				fr.copySlot(a, inits[i])
			}
			ivr := fr.I[iv.idx]
			cur := fr.mask
			for v := lo; v < hi; v += st {
				ivr[0] = v
				if err := runCode(fr, code); err != nil {
					if err == errAllExited {
						break
					}
					return err
				}
			}
			if fr.nalive != fr.L {
				fr.restoreMask(cur)
				if fr.nact == 0 {
					return errAllExited
				}
			}
			return nil
		}, nil
	}
	return func(fr *frame) error {
		cur := fr.mask
		for i, a := range args {
			fr.copySlot(a, inits[i])
		}
		lo := fr.ints(lb, true, 0)
		hi := fr.ints(ub, true, 1)
		st := fr.ints(step, true, 2)
		ivr := fr.I[iv.idx]
		stp := fr.steps[depth]
		copy(stp, st)
		hiv := fr.masks[depth] // reuse as the loop mask
		fr.miv[depth].ok = false
		for l, a := range cur {
			hiv[l] = a
			if a {
				ivr[l] = lo[l]
				if stp[l] <= 0 && lo[l] < hi[l] {
					return newTrap(op, l, ErrInvalid, "scf.for step %d is not positive", stp[l])
				}
			}
		}
		// hi may live in scratch that the body reuses: keep a private copy
		// in the loop's own registers is not possible for broadcasts, so
		// re-read ub each iteration.
		for {
			hi = fr.ints(ub, true, 1)
			n := 0
			for l, a := range hiv {
				if a && (ivr[l] >= hi[l] || !fr.alive[l]) {
					hiv[l] = false
				} else if a {
					n++
				}
			}
			if n == 0 {
				break
			}
			fr.use(hiv, n)
			if err := runCode(fr, code); err != nil && err != errAllExited {
				fr.mask = cur
				fr.unbound()
				return err
			}
			for l, a := range hiv {
				if a {
					ivr[l] += stp[l]
				}
			}
		}
		fr.restoreMask(cur)
		if fr.nact == 0 {
			return errAllExited
		}
		return nil
	}, nil
}

func bodyArgType(a *loom.Value, lb *slot) *loom.Type {
	if a.Type != nil {
		return a.Type
	}
	return lb.typ
}

func (c *compiler) scfWhile(b *block, op *loom.Op) (instr, error) {
	if len(op.Regions) != 2 {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.while needs a before and a do region")
	}
	inits, err := c.operands(b, op)
	if err != nil {
		return nil, err
	}
	before, after := op.Regions[0], op.Regions[1]
	if len(before.Args) != len(inits) {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.while takes %d initial values for %d arguments", len(inits), len(before.Args))
	}
	argUni := make([]bool, len(inits))
	for i, s := range inits {
		argUni[i] = s.uni
	}
	c.loopHint(op, argUni)
	// With a condition that differs between invocations, the results
	// hold each invocation's values from the trip it left on; a value
	// forwarded uniformly still reaches the do region as one value, and
	// only the leaving lanes write it to a separate result (outs).
	var (
		bargs, aargs, outs []*slot
		bcode, acode       []instr
		keep               *slot
	)
	for attempt := 0; ; attempt++ {
		snap := c.save()
		bb := &block{sc: newScope(b.sc), depth: b.depth + 1, inFunc: b.inFunc}
		bargs = make([]*slot, len(inits))
		for i, a := range before.Args {
			t := a.Type
			if t == nil {
				t = inits[i].typ
			}
			if bargs[i], err = c.newSlot(a.Pos, t, argUni[i]); err != nil {
				return nil, err
			}
			bb.sc.vals[a.Name] = bargs[i]
		}
		var fwd []*slot
		keep = nil
		// The after-region arguments double as the op's results: the
		// condition forwards into them on every trip.
		aargs = make([]*slot, len(after.Args))
		outs = make([]*slot, len(after.Args))
		bb.term = func(t *loom.Op, vals []*slot) (instr, error) {
			if t.Name != "scf.condition" || len(vals) == 0 {
				return nil, compileErr(t.Pos, ErrInvalid, "scf.while's first region must end in scf.condition")
			}
			keep, fwd = vals[0], vals[1:]
			if len(fwd) != len(aargs) {
				return nil, compileErr(t.Pos, ErrInvalid, "scf.condition forwards %d values for %d arguments", len(fwd), len(aargs))
			}
			for i, a := range after.Args {
				ty := a.Type
				if ty == nil {
					ty = fwd[i].typ
				}
				var err error
				if aargs[i], err = c.newSlot(a.Pos, ty, fwd[i].uni); err != nil {
					return nil, err
				}
				outs[i] = aargs[i]
				if fwd[i].uni && !keep.uni {
					if outs[i], err = c.newSlot(a.Pos, ty, false); err != nil {
						return nil, err
					}
					if aargs[i].kind != kView && aargs[i].comps > 1 {
						outs[i].comps = aargs[i].comps
					}
				}
			}
			k, fw, aa := keep, fwd, aargs
			var sep [][2]*slot // (result, forwarded) written by leaving lanes
			for i, o := range outs {
				if o != aargs[i] {
					sep = append(sep, [2]*slot{o, fwd[i]})
				}
			}
			return func(fr *frame) error {
				for i, d := range aa {
					fr.copySlot(d, fw[i])
				}
				kv := fr.I[k.idx]
				n := 0
				if k.uni {
					if kv[0]&1 == 0 {
						for l := range fr.mask {
							fr.mask[l] = false
						}
					} else {
						n = fr.nact
					}
				} else {
					for l, a := range fr.mask {
						if a && kv[l]&1 == 0 {
							fr.mask[l] = false
							for _, p := range sep {
								fr.setLaneUni(p[0], p[1], l)
							}
						} else if a {
							n++
						}
					}
				}
				fr.nact = n
				return nil
			}, nil
		}
		if bcode, err = c.region(bb, before); err != nil {
			return nil, err
		}
		if keep == nil {
			return nil, compileErr(before.End, ErrInvalid, "scf.while's first region must end in scf.condition")
		}
		ab := &block{sc: newScope(b.sc), depth: b.depth + 1, inFunc: b.inFunc}
		for i, a := range after.Args {
			ab.sc.vals[a.Name] = aargs[i]
		}
		var yields []*slot
		var tm []*slot
		ab.term = func(y *loom.Op, vals []*slot) (instr, error) {
			yields = vals
			var err error
			if tm, err = c.loopCopies(y.Pos, bargs, vals); err != nil {
				return nil, err
			}
			t, ba := tm, bargs
			return func(fr *frame) error { copyAll(fr, ba, vals, t); return nil }, nil
		}
		if acode, err = c.region(ab, after); err != nil {
			return nil, err
		}
		if len(bargs) > 0 && yields == nil {
			return nil, compileErr(after.End, ErrInvalid, "scf.while's do region must end in scf.yield")
		}
		changed := false
		for i := range bargs {
			if argUni[i] && !yields[i].uni {
				argUni[i], changed = false, true
			}
		}
		if !changed {
			break
		}
		c.restore(snap)
	}
	c.recordLoop(op, argUni)
	for i := range op.Results {
		if i >= len(aargs) {
			return nil, compileErr(op.Pos, ErrInvalid, "scf.while has more results than forwarded values")
		}
		b.sc.vals[op.Results[i].Name] = outs[i]
	}
	depth := b.depth + 1
	return func(fr *frame) error {
		cur := fr.mask
		for i, a := range bargs {
			fr.copySlot(a, inits[i])
		}
		lm := fr.masks[depth]
		fr.miv[depth].ok = false
		copy(lm, cur)
		fr.mask = lm
		for {
			if err := runCode(fr, bcode); err != nil && err != errAllExited {
				fr.mask = cur
				fr.unbound()
				return err
			}
			if fr.nact == 0 {
				break
			}
			if err := runCode(fr, acode); err != nil && err != errAllExited {
				fr.mask = cur
				fr.unbound()
				return err
			}
			fr.restoreMask(lm)
			if fr.nact == 0 {
				break
			}
		}
		fr.restoreMask(cur)
		if fr.nact == 0 {
			return errAllExited
		}
		return nil
	}, nil
}

func (c *compiler) scfSelect(b *block, op *loom.Op) (instr, error) {
	ops, err := c.operandsN(b, op, 3)
	if err != nil {
		return nil, err
	}
	cond, x, y := ops[0], ops[1], ops[2]
	res, err := c.result(b, op, 0, allUni(cond, x, y))
	if err != nil {
		return nil, err
	}
	if res.kind != x.kind || x.kind != y.kind {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.select operands of different kinds")
	}
	return selectInstr(cond, x, y, res), nil
}

// selectInstr picks x where cond (scalar or per vector component) is true.
func selectInstr(cond, x, y, res *slot) instr {
	if res.kind == kInt && !res.uni && res.comps == 1 && cond.comps <= 1 && !cond.uni {
		// One lane-wise int value (a path's value at a join): over the
		// active bound, without the per-element indexing below.
		// A uniform operand is read at element 0 (stride 0), not spread.
		sa, sb := 1, 1
		if x.uni {
			sa = 0
		}
		if y.uni {
			sb = 0
		}
		return func(fr *frame) error {
			lo, hi := fr.span(res)
			cv, a, b, r := fr.I[cond.idx][lo:hi], fr.I[x.idx], fr.I[y.idx], fr.I[res.idx][lo:hi]
			for i := range r {
				if cv[i]&1 != 0 {
					r[i] = a[(lo+i)*sa]
				} else {
					r[i] = b[(lo+i)*sb]
				}
			}
			return nil
		}
	}
	return func(fr *frame) error {
		L := fr.L
		w := 1
		if !res.uni {
			w = L
		}
		cv := fr.I[cond.idx]
		ccomp := cond.comps > 1
		pick := func(i int) bool {
			l, c := i%w, i/w
			ci := 0
			if ccomp {
				ci = c
				if !cond.uni {
					ci = c*L + l
				}
			} else if !cond.uni {
				ci = l
			}
			return cv[ci]&1 != 0
		}
		switch res.kind {
		case kInt:
			r, a, bb := fr.I[res.idx], fr.ints(x, !res.uni, 0), fr.ints(y, !res.uni, 1)
			for i := range r[:res.comps*w] {
				if pick(i) {
					r[i] = a[i]
				} else {
					r[i] = bb[i]
				}
			}
		case kFloat:
			r, a, bb := fr.F[res.idx], fr.floats(x, !res.uni, 0), fr.floats(y, !res.uni, 1)
			for i := range r[:res.comps*w] {
				if pick(i) {
					r[i] = a[i]
				} else {
					r[i] = bb[i]
				}
			}
		case kView:
			r, a, bb := fr.V[res.idx], fr.V[x.idx], fr.V[y.idx]
			for i := range r[:w] {
				src := a
				if !pick(i) {
					src = bb
				}
				if len(src) == 1 {
					r[i] = src[0]
				} else {
					r[i] = src[i]
				}
			}
		}
		return nil
	}
}

func (c *compiler) scfLookup(b *block, op *loom.Op) (instr, error) {
	if len(op.Operands) != 1 {
		return nil, compileErr(op.Pos, ErrInvalid, "scf.lookup needs a selector")
	}
	sel, err := c.operand(b, op.Operands[0], nil)
	if err != nil {
		return nil, err
	}
	type row struct {
		key  int64
		def  bool
		vals []*slot
	}
	var rows []row
	var def *row
	uni := make([]bool, len(op.Results))
	for i := range uni {
		uni[i] = sel.uni
	}
	for _, cs := range op.Cases {
		r := row{key: cs.Key, def: cs.Default}
		if len(cs.Values) != len(op.Results) {
			return nil, compileErr(cs.Pos, ErrInvalid, "scf.lookup row has %d values for %d results", len(cs.Values), len(op.Results))
		}
		for i, o := range cs.Values {
			s, err := c.operand(b, o, nil)
			if err != nil {
				return nil, err
			}
			r.vals = append(r.vals, s)
			uni[i] = uni[i] && s.uni
		}
		if r.def {
			rr := r
			def = &rr
		} else {
			rows = append(rows, r)
		}
	}
	res := make([]*slot, len(op.Results))
	for i := range op.Results {
		if res[i], err = c.result(b, op, i, uni[i]); err != nil {
			return nil, err
		}
	}
	find := func(v int64) *row {
		for i := range rows {
			if rows[i].key == v {
				return &rows[i]
			}
		}
		return def
	}
	return func(fr *frame) error {
		sv := fr.I[sel.idx]
		if sel.uni {
			r := find(sv[0])
			if r == nil {
				return newTrap(op, -1, ErrInvalid, "scf.lookup: no row for %d and no default", sv[0])
			}
			for i, d := range res {
				fr.copySlot(d, r.vals[i])
			}
			return nil
		}
		// Per lane: copy each row under a mask of the lanes selecting it.
		cur := fr.mask
		saved, savedLo, savedHi := fr.nact, fr.lo, fr.hi
		m := fr.masks[len(fr.masks)-1]
		fr.miv[len(fr.masks)-1].ok = false
		for l, a := range cur {
			if a && find(sv[l]) == nil {
				return newTrap(op, l, ErrInvalid, "scf.lookup: no row for %d and no default", sv[l])
			}
		}
		all := append(append([]row(nil), rows...), func() []row {
			if def != nil {
				return []row{*def}
			}
			return nil
		}()...)
		for ri := range all {
			r := &all[ri]
			n := 0
			for l, a := range cur {
				f := find(sv[l])
				on := a && f != nil && f.key == r.key && f.def == r.def
				m[l] = on
				if on {
					n++
				}
			}
			if n == 0 {
				continue
			}
			fr.use(m, n)
			for i, d := range res {
				fr.copySlot(d, r.vals[i])
			}
		}
		fr.mask, fr.nact, fr.lo, fr.hi = cur, saved, savedLo, savedHi
		return nil
	}, nil
}

// ifCode is a compiled scf.if with a varying condition: its regions and
// the control-flow depth whose scratch mask it uses.
type ifCode struct {
	then, els []instr
	depth     int
	// noExit: no lane can leave the kernel inside the regions, so the
	// masks they run under are never written in place (rangeMaskOf).
	noExit bool
}

// runRange runs the if when its then lanes are the interval [a, b) of the
// current bound, which must be dense with every lane alive (rangeMask and
// rangeIf check that). When the else lanes are one interval too, both masks
// are made without looking at lanes; otherwise ok is false and nothing has
// run, so the caller takes the lane-by-lane path.
func (p *ifCode) runRange(fr *frame, a, b int) (ok bool, err error) {
	then, els := p.then, p.els
	cur := fr.mask
	clo, chi, cn := fr.lo, fr.hi, fr.nact
	ea, eb := clo, chi
	switch {
	case a == b:
	case a == clo:
		ea = b
	case b == chi:
		eb = a
	default:
		if len(els) != 0 {
			return false, nil
		}
	}
	if a < b && len(then) > 0 {
		if a != clo || b != chi {
			// Otherwise every lane goes on: cur serves.
			p.rangeMaskOf(fr, a, b) // the active mask is now [a, b)
		}
		if err := runCode(fr, then); err != nil && err != errAllExited {
			fr.mask = cur
			fr.unbound()
			return true, err
		}
	}
	if ea < eb && len(els) > 0 {
		p.rangeMaskOf(fr, ea, eb)
		if err := runCode(fr, els); err != nil && err != errAllExited {
			fr.mask = cur
			fr.unbound()
			return true, err
		}
	}
	if fr.nalive == fr.L {
		// Nobody left the kernel: cur is unchanged.
		fr.mask, fr.nact, fr.lo, fr.hi = cur, cn, clo, chi
		return true, nil
	}
	fr.restoreMask(cur)
	if fr.nact == 0 {
		return true, errAllExited
	}
	return true, nil
}

// rangeMaskOf makes the lanes [a, b) the active mask. A prefix [0, b) or a
// suffix [a, L) of the workgroup is a window into the frame's read-only
// step tables (pre, suf), which costs nothing to set; that is only done
// for regions that never clear mask lanes in place (noExit), since those
// tables are shared by every such mask. Any other interval is written
// into the if's scratch mask (setRange).
func (p *ifCode) rangeMaskOf(fr *frame, a, b int) {
	L := fr.L
	switch {
	case !p.noExit:
		fr.setRange(p.depth, a, b)
	case a == 0:
		fr.mask, fr.nact, fr.lo, fr.hi = fr.pre[L-b:2*L-b], b, 0, b
	case b == L:
		fr.mask, fr.nact, fr.lo, fr.hi = fr.suf[L-a:2*L-a], b-a, a, b
	default:
		fr.setRange(p.depth, a, b)
	}
}
