package interp

import (
	"strings"

	"github.com/loomgen/loomgen/loom"
)

func axisOf(op *loom.Op) (int, error) {
	switch op.Param {
	case "x":
		return 0, nil
	case "y":
		return 1, nil
	case "z":
		return 2, nil
	}
	return 0, compileErr(op.Pos, ErrInvalid, "%s: axis <%s> is not x, y or z", op.Name, op.Param)
}

func (c *compiler) kernelOp(b *block, op *loom.Op, rest string) (instr, error) {
	switch rest {
	case "workgroup.storage":
		return c.workgroupStorage(b, op)
	case "workgroup.id", "workgroup.size", "workgroup.count":
		ax, err := axisOf(op)
		if err != nil {
			return nil, err
		}
		if c.k.batched && rest == "workgroup.id" {
			return c.batchedGroupID(b, op, ax)
		}
		r, err := c.result(b, op, 0, true)
		if err != nil {
			return nil, err
		}
		return func(fr *frame) error {
			var v int64
			switch rest {
			case "workgroup.id":
				v = fr.wg[ax]
			case "workgroup.size":
				v = int64(fr.r.launch.WorkgroupSize[ax])
			default:
				v = int64(fr.r.launch.Workgroups[ax])
			}
			fr.I[r.idx][0] = v
			return nil
		}, nil
	case "workitem.id", "workitem.dispatch.id":
		ax, err := axisOf(op)
		if err != nil {
			return nil, err
		}
		r, err := c.result(b, op, 0, false)
		if err != nil {
			return nil, err
		}
		dispatch := rest == "workitem.dispatch.id"
		if c.k.batched {
			if dispatch {
				in := batchedDispatchID(op, r, ax)
				if r.aff {
					c.lazyCandidate(r, op)
				}
				return in, nil
			}
			// Along x of a one-dimensional workgroup the id is the lane
			// within its group: a periodic fact (batchwg.go).
			r.aff = ax == 0
			if r.aff {
				c.lazyCandidate(r, op)
			}
			return func(fr *frame) error {
				if r.aff {
					m := &fr.meta[r.idx]
					m.aff, m.unwritten, m.rng, m.grpc = false, false, false, false
					m.per, m.pa, m.pb, m.a0 = fr.grp == fr.r.launch.WorkgroupSize[0], 0, fr.grp, 0
					if m.per && r.lazyAff {
						// Every use reads the facts first (lazy.go).
						m.unwritten = true
						return nil
					}
				}
				copy(fr.I[r.idx], fr.r.lid[ax])
				return nil
			}, nil
		}
		r.aff = ax == 0
		if r.aff {
			c.lazyCandidate(r, op)
		}
		if !dispatch {
			r.lid = int8(ax + 1)
		}
		return func(fr *frame) error {
			out := fr.I[r.idx]
			lid := fr.r.lid[ax]
			if r.aff {
				// Along x of a one-dimensional workgroup the id is the lane.
				m := &fr.meta[r.idx]
				m.aff, m.alo, m.ahi, m.a0 = fr.L == fr.r.launch.WorkgroupSize[0], 0, fr.L, 0
				if dispatch {
					m.a0 = fr.wg[0] * int64(fr.L)
				}
				// Every lane's value fits the carrier when the last does.
				m.unwritten = r.lazyAff && m.aff && m.a0+int64(fr.L)-1 <= fr.k.tgt.idMax
				if m.unwritten {
					return nil
				}
			}
			if !dispatch {
				copy(out, lid)
				return nil
			}
			base := fr.wg[ax] * int64(fr.r.launch.WorkgroupSize[ax])
			for l, v := range lid {
				out[l] = base + v
			}
			if hi := base + int64(fr.r.launch.WorkgroupSize[ax]) - 1; hi > fr.k.tgt.idMax {
				for l, v := range out {
					if v > fr.k.tgt.idMax && fr.mask[l] {
						return newTrap(op, l, ErrOverflow, "dispatch id %d exceeds the %d-bit index carrier", v, fr.k.tgt.indexBits)
					}
				}
			}
			return nil
		}, nil
	case "subgroup.id", "subgroup.lane.id":
		c.k.groupOps = true
		r, err := c.result(b, op, 0, false)
		if err != nil {
			return nil, err
		}
		sg := int64(c.k.tgt.subgroup)
		lane := rest == "subgroup.lane.id"
		return func(fr *frame) error {
			// Subgroups are counted within each workgroup (a batch holds
			// several, fr.grp lanes each).
			out := fr.I[r.idx][:fr.L]
			grp := fr.grp
			for l := range out {
				w := int64(l % grp)
				if lane {
					out[l] = w % sg
				} else {
					out[l] = w / sg
				}
			}
			return nil
		}, nil
	case "subgroup.size":
		s, err := c.constInt(op.Pos, typeIndex, int64(c.k.tgt.subgroup))
		if err != nil {
			return nil, err
		}
		return nil, c.bind(b, op, 0, s)
	case "subgroup.count":
		r, err := c.result(b, op, 0, true)
		if err != nil {
			return nil, err
		}
		sg := c.k.tgt.subgroup
		return func(fr *frame) error {
			// Every workgroup of a batch has the same size.
			fr.I[r.idx][0] = int64((fr.grp + sg - 1) / sg)
			return nil
		}, nil
	case "barrier":
		c.k.groupOps = true
		return func(fr *frame) error {
			if fr.nact != fr.nalive {
				return fr.divergent(op, "barrier")
			}
			if fr.san != nil {
				fr.san.epoch++ // accesses on either side are ordered
			}
			return nil
		}, nil
	case "return":
		if b.inFunc {
			return nil, compileErr(op.Pos, ErrInvalid, "kernel.return inside a function")
		}
		if b.top {
			return nil, nil
		}
		c.exits++
		return exitLanes(nil), nil
	case "exit":
		if len(op.Operands) != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "kernel.exit needs a condition")
		}
		cond, err := c.operand(b, op.Operands[0], nil)
		if err != nil {
			return nil, err
		}
		var epi []instr
		if len(op.Regions) > 0 {
			inner := &block{sc: newScope(b.sc), depth: b.depth + 1, top: false}
			if epi, err = c.region(inner, op.Regions[0]); err != nil {
				return nil, err
			}
		}
		c.exits++
		return c.exitInstr(b.depth+1, cond, epi), nil
	case "assert":
		if len(op.Operands) != 1 {
			return nil, compileErr(op.Pos, ErrInvalid, "kernel.assert needs a condition")
		}
		cond, err := c.operand(b, op.Operands[0], nil)
		if err != nil {
			return nil, err
		}
		msg := op.Str
		if msg == "" {
			msg = "kernel.assert failed"
		}
		return func(fr *frame) error {
			v := fr.I[cond.idx]
			for l, a := range fr.mask {
				i := l
				if cond.uni {
					i = 0
				}
				if a && v[i]&1 == 0 {
					return newTrap(op, l, ErrAssert, "%s", msg)
				}
			}
			return nil
		}, nil
	}
	if strings.HasPrefix(rest, "subgroup.") || strings.HasPrefix(rest, "workgroup.") {
		c.k.groupOps = true
		return c.collective(b, op, rest)
	}
	return nil, compileErr(op.Pos, ErrUnsupported, "op %s is not supported by the CPU executor", op.Name)
}

// exitLanes ends the active lanes (all, or those where cond is true).
func exitLanes(cond *slot) instr {
	return func(fr *frame) error {
		for l, a := range fr.mask {
			if !a {
				continue
			}
			if cond != nil {
				i := l
				if cond.uni {
					i = 0
				}
				if fr.I[cond.idx][i]&1 == 0 {
					continue
				}
			}
			fr.mask[l] = false
			fr.alive[l] = false
			fr.nalive--
			fr.forgetMasks()
			fr.nact--
		}
		if fr.nact == 0 {
			return errAllExited
		}
		return nil
	}
}

// exitInstr runs the epilogue for lanes whose condition holds, then ends them.
func (c *compiler) exitInstr(depth int, cond *slot, epi []instr) instr {
	kill := exitLanes(cond)
	if len(epi) == 0 {
		return kill
	}
	return func(fr *frame) error {
		cur := fr.mask
		m := fr.masks[depth]
		fr.miv[depth].ok = false
		n := 0
		for l, a := range cur {
			i := l
			if cond.uni {
				i = 0
			}
			on := a && fr.I[cond.idx][i]&1 != 0
			m[l] = on
			if on {
				n++
			}
		}
		if n > 0 {
			fr.use(m, n)
			if err := runCode(fr, epi); err != nil && err != errAllExited {
				fr.mask = cur
				fr.unbound()
				return err
			}
			fr.restoreMask(cur)
		}
		return kill(fr)
	}
}
