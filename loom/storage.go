package loom

import (
	"fmt"
	"strings"
)

// StorageUse is one kernel.workgroup.storage op of a kernel body: the
// buffer it yields is the launch's dynamic workgroup storage (the
// dynamic_workgroup_storage clause of kernel.launch.config), of Bytes
// bytes, which must not exceed what the launch provides.
//
//	%wg = kernel.workgroup.storage [align(N)] [%bytes] : buffer
//
// Without %bytes the buffer spans all the launch provides.
type StorageUse struct {
	Op *Op
	// Bytes is the byte count over launch arguments, config values and
	// the launch geometry; nil when the op takes all the launch provides
	// or when it cannot be translated (Reason says why).
	Bytes  *Expr
	Whole  bool // no byte count: the whole dynamic storage
	Reason string
	// Views is how many bytes from its start the views over the buffer
	// span (the maximum of offset + Π dims · sizeof(elem) over its
	// buffer.views, as Extent computes for parameters); nil with
	// ViewsReason when it cannot be known, a constant 0 without views.
	Views       *Expr
	ViewsReason string
}

// WorkgroupStorageUses lists the kernel.workgroup.storage ops of k's body
// (not of the helpers it calls), in source order.
func (p *Program) WorkgroupStorageUses(k *Kernel) []StorageUse {
	if k == nil || k.Body == nil {
		return nil
	}
	var ops, uses []*Op
	var walk func(r *Region)
	walk = func(r *Region) {
		for _, op := range r.Ops {
			if op.Name == "kernel.workgroup.storage" {
				ops = append(ops, op)
			}
			if len(op.Operands) > 0 {
				uses = append(uses, op)
			}
			for _, in := range op.Regions {
				walk(in)
			}
		}
	}
	walk(k.Body)
	if len(ops) == 0 {
		return nil
	}
	l, _ := p.LaunchExprs(k)
	s := p.bodyEval(k, l)
	out := make([]StorageUse, 0, len(ops))
	for _, op := range ops {
		u := StorageUse{Op: op}
		if n := StorageOperand(op); n == nil {
			u.Whole = true
		} else if e, err := s.operand(n); err != nil {
			u.Reason = err.Error()
		} else {
			u.Bytes = e
		}
		u.Views, u.ViewsReason = storageViews(s, op, uses)
		out = append(out, u)
	}
	return out
}

// StorageOperand is the byte count of a kernel.workgroup.storage op, nil
// when it has none (align(N) is an attribute, not an operand).
func StorageOperand(op *Op) *Operand {
	if len(op.Operands) == 0 {
		return nil
	}
	return op.Operands[len(op.Operands)-1]
}

// storageViews is the byte span of the views over the buffer op yields,
// among the body's ops (uses): buffer.views of it, or of a
// buffer.assume.* of it. Any other use of the buffer (a call, a select)
// makes the span unknown.
func storageViews(s *symEval, op *Op, uses []*Op) (*Expr, string) {
	if len(op.Results) == 0 {
		return nil, "kernel.workgroup.storage has no result"
	}
	roots := map[*Value]bool{op.Results[0]: true}
	var span *Expr
	for _, u := range uses {
		for j, o := range u.Operands {
			if o.Value == nil || !roots[o.Value] {
				continue
			}
			switch {
			case u.Name == "buffer.view" && j == 0:
				e, err := bufferViewBytes(s, u)
				if err != nil {
					return nil, err.Error()
				}
				if span == nil || span.String() != e.String() {
					if span != nil {
						e = foldExpr(&Expr{Op: ExprMax, Type: typeOffset, Args: []*Expr{span, e}, Pos: e.Pos})
					}
					span = e
				}
			case strings.HasPrefix(u.Name, "buffer.assume.") || u.Name == "buffer.length":
				// An alias of the same buffer (results 1:1), or its length.
				if j < len(u.Results) && u.Name != "buffer.length" {
					roots[u.Results[j]] = true
				}
			default:
				return nil, fmt.Sprintf("%s: the buffer reaches %s, whose views are not bounded here", u.Pos, u.Name)
			}
		}
	}
	if span == nil {
		span = &Expr{Op: ExprConst, Type: typeOffset, Const: Const{Type: typeOffset}, Pos: op.Pos}
	}
	return span, ""
}
