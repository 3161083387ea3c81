package loom

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
}

// WorkgroupStorageUses lists the kernel.workgroup.storage ops of k's body
// (not of the helpers it calls), in source order.
func (p *Program) WorkgroupStorageUses(k *Kernel) []StorageUse {
	if k == nil || k.Body == nil {
		return nil
	}
	var ops []*Op
	var walk func(r *Region)
	walk = func(r *Region) {
		for _, op := range r.Ops {
			if op.Name == "kernel.workgroup.storage" {
				ops = append(ops, op)
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
