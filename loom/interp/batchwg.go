package interp

// Workgroup memory in a batch. A batched frame runs K workgroups of grp
// lanes each; every buffer.alloca<workgroup> gives it K blocks, gstride
// bytes apart (the size rounded up to 64, so alignments within a block
// are those of the unbatched allocation), and one uniform view over them
// whose base, limit and shape are each group's own. Lane l's element is
// then in block l/grp: access.at checks the index against the group's
// block alone and adds the block's offset, so no group reads or writes
// another's bytes and every error message is the unbatched one.
//
// The compiler marks the accesses whose view may reach workgroup memory
// (access.wg): those never take a uniform shortcut (a uniform index names
// a different element in each group) nor a fast path that addresses the
// view's bytes itself, only the per-group forms here. A view whose origin
// the compiler does not track (a loop-carried or selected view) counts as
// workgroup memory whenever the kernel allocates any.

// wgOrigin records that view r reaches workgroup memory (batched form).
func (c *compiler) wgOrigin(r *slot) {
	if !c.k.batched {
		return
	}
	if c.wgv == nil {
		c.wgv = map[*slot]bool{}
	}
	c.wgv[r] = true
}

// mayWG reports whether, in a batched form, view v may reach workgroup
// memory.
func (c *compiler) mayWG(v *slot) bool {
	if !c.k.batched || v == nil || v.kind != kView {
		return false
	}
	if c.wgv[v] {
		return true
	}
	if _, known := c.roots[v]; known {
		return false
	}
	return c.allocatesWG()
}

// allocatesWG reports whether any op the compiler can see allocates
// workgroup memory (an access compiled before the alloca, in a loop,
// may still read a view of it).
func (c *compiler) allocatesWG() bool {
	if c.hasWG == 0 {
		c.hasWG = 1
		for op := range c.uses {
			if op.Name == "buffer.alloca" && op.Param == "workgroup" {
				c.hasWG = 2
				break
			}
		}
	}
	return c.hasWG == 2
}

// wgLoad is the fast form of an f32 load through workgroup memory in a
// batch, or nil.
func wgLoad(a *access, r *slot) instr { return nil }

// wgStore is wgLoad for stores.
func wgStore(a *access, x *slot) instr { return nil }

// wgGeneric is the per-lane form of an access through workgroup memory.
func wgGeneric(a *access, generic instr) instr { return generic }
