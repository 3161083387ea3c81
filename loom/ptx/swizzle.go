package ptx

import (
	"github.com/loomgen/loomgen/loom"
)

// Swizzled workgroup tiles. A tile whose rows are whole 128-byte lines
// (row pitch P a multiple of 128) is conflict-free for 16-byte chunk
// stores (cp.async writes 128-byte aligned lines) but not for ldmatrix,
// whose 8 lanes of one 8×8 matrix read 8 rows at the same column: the
// same four banks. Padding the rows by 16 bytes fixes ldmatrix and
// misaligns the stores: each 128-byte row then straddles two lines. So
// where the compiler can see every access to a workgroup buffer, it owns
// the layout: byte c of row r of a view is
// stored at r·P + (c XOR 16·(r mod 8)), which permutes the 16-byte chunks
// inside each 128-byte group of a row. Eight consecutive rows then spread
// one column over all 32 banks, and a row stays one aligned line.
//
// The permutation is invisible to the program when every access moves
// whole 16-byte chunks at the same (row, chunk) coordinates through views
// of the same pitch. swizzledViews proves that for a buffer from
// kernel.workgroup.storage or buffer.alloca<workgroup>: each use is a
// buffer.view at a constant offset giving a static rank-2 view with P a
// multiple of 128, and each use of such a view is either
//   - view.subview to one row of exactly 16 bytes at a column that is a
//     multiple of 16 bytes (the chunk stays contiguous, so the subview is
//     an ordinary view of its physical bytes and may be used freely), or
//   - vector.fragment.load<lhs|rhs> of 16-bit elements (or i8 lhs) in the
//     32-lane subgroup layout, of a depth that is a whole number of
//     ldmatrix steps, at a column that is a multiple of 16 bytes, on sm_75
//     or later (lowered to ldmatrix, whose lane addresses carry the same
//     permutation; anything ldmatrix would refuse keeps the tile
//     row-major, so no fragment load of a swizzled tile needs another
//     lowering);
// views over overlapping bytes must have the same offset and pitch. Any
// other use (a load, a store, a call) leaves the buffer row-major.

// swizzledViews maps each buffer.view result of a swizzled workgroup
// buffer in body to its row pitch in bytes; sm is the target and wave the
// kernel's fragment subgroup width (fragWave).
func swizzledViews(body *loom.Region, sm, wave int) map[*loom.Value]int64 {
	if body == nil || sm < 75 || wave != 32 {
		return nil
	}
	uses := valueUses(body)
	var bufs []*loom.Value
	walkOps(body, func(_ *loom.Region, _ int, op *loom.Op) {
		if len(op.Results) == 1 && (op.Name == "kernel.workgroup.storage" || workgroupAlloca(op)) {
			bufs = append(bufs, op.Results[0])
		}
	})
	var out map[*loom.Value]int64
	for _, b := range bufs {
		views, ok := swizzleBuffer(b, uses)
		if !ok {
			continue
		}
		if out == nil {
			out = map[*loom.Value]int64{}
		}
		for _, v := range views {
			out[v.val] = v.pitch
		}
	}
	return out
}

// tileView is one buffer.view of a workgroup buffer: its bytes
// [off, off+rows·pitch).
type tileView struct {
	val              *loom.Value
	off, rows, pitch int64
}

// swizzleBuffer returns the views of buffer b when b may be swizzled.
func swizzleBuffer(b *loom.Value, uses map[*loom.Value][]*loom.Op) ([]tileView, bool) {
	var views []tileView
	for _, u := range uses[b] {
		if u.Name != "buffer.view" || len(u.Operands) != 2 || u.Operands[0].Value != b || len(u.Results) != 1 {
			return nil, false
		}
		off, ok := constOperandInt(u.Operands[1])
		t := u.Results[0].Type
		if !ok || off < 0 || off%16 != 0 || t == nil || t.Kind != loom.TypeView || len(t.Dims) != 2 || t.Elem == nil {
			return nil, false
		}
		rows, cols := t.Dims[0], t.Dims[1]
		size := int64(carrierBytes(t.Elem))
		if rows.Value != nil || cols.Value != nil || size == 0 || rows.Size <= 0 || (cols.Size*size)%128 != 0 {
			return nil, false
		}
		v := tileView{val: u.Results[0], off: off, rows: rows.Size, pitch: cols.Size * size}
		for _, w := range uses[v.val] {
			if !swizzleUse(w, v.val, size) {
				return nil, false
			}
		}
		views = append(views, v)
	}
	if len(views) == 0 {
		return nil, false
	}
	// Views over the same bytes must agree on where rows start.
	for i, x := range views {
		for _, y := range views[i+1:] {
			if x.off < y.off+y.rows*y.pitch && y.off < x.off+x.rows*x.pitch && (x.off != y.off || x.pitch != y.pitch) {
				return nil, false
			}
		}
	}
	return views, true
}

// swizzleUse reports whether op's use of the tile view v (of elements of
// size bytes) moves whole 16-byte chunks (see above).
func swizzleUse(op *loom.Op, v *loom.Value, size int64) bool {
	switch op.Name {
	case "view.subview":
		// view.subview %v[%row, %col] : view<RxCxT> -> view<1xNxT>
		if len(op.Operands) != 3 || op.Operands[0].Value != v || len(op.Results) != 1 {
			return false
		}
		t := op.Results[0].Type
		if t == nil || t.Kind != loom.TypeView || len(t.Dims) != 2 || t.Dims[0].Value != nil || t.Dims[1].Value != nil ||
			t.Dims[0].Size != 1 || t.Dims[1].Size*size != 16 {
			return false
		}
		return multipleOf(op.Operands[2], 16/size, 8)
	case "vector.fragment.load":
		// vector.fragment.load<role> %v[%row, %col] shape [%r, %c]
		if op.Param != "lhs" && op.Param != "rhs" || len(op.Operands) != 5 || op.Operands[0].Value != v || len(op.Results) != 1 {
			return false
		}
		t := op.Results[0].Type
		if t == nil || t.Kind != loom.TypeVector || t.Elem == nil || !(t.Elem.Bits == 16 || t.Elem.Bits == 8 && op.Param == "lhs") ||
			int64(t.Elem.Bits/8) != size {
			return false
		}
		// The subgroup layout ldmatrix loads: [16, K] lhs or [K, 16] rhs
		// in K components, K a multiple of the 16-byte step.
		rows, ok1 := constOperandInt(op.Operands[3])
		cols, ok2 := constOperandInt(op.Operands[4])
		payload := int64(1)
		for _, d := range t.Dims {
			if d.Value != nil {
				return false
			}
			payload *= d.Size
		}
		role, ok3 := loom.ParseFragmentRole(op.Param)
		if !ok1 || !ok2 || !ok3 {
			return false
		}
		lay, err := loom.NewFragmentLayout(role, rows, cols, payload, 32)
		if err != nil || !lay.Subgroup {
			return false
		}
		depth := int64(lay.Cols)
		if op.Param == "rhs" {
			depth = int64(lay.Rows)
		}
		if depth*size%32 != 0 { // ldmatrix steps of 32 bytes (16 halves or 32 bytes deep)
			return false
		}
		return multipleOf(op.Operands[2], 16/size, 8)
	}
	return false
}

// multipleOf reports whether an index operand is provably a multiple of
// m, looking through at most depth index.add/sub/mul definitions.
func multipleOf(o *loom.Operand, m int64, depth int) bool {
	if m <= 1 {
		return true
	}
	if c, ok := constOperandInt(o); ok {
		return c%m == 0
	}
	if depth == 0 || o.Value == nil || o.Value.Def == nil || len(o.Value.Def.Operands) != 2 {
		return false
	}
	d := o.Value.Def
	x, y := d.Operands[0], d.Operands[1]
	switch d.Name {
	case "index.add", "index.sub":
		return multipleOf(x, m, depth-1) && multipleOf(y, m, depth-1)
	case "index.mul":
		if c, ok := constOperandInt(x); ok {
			return multipleOf(y, m/gcd(m, abs64(c)), depth-1)
		}
		if c, ok := constOperandInt(y); ok {
			return multipleOf(x, m/gcd(m, abs64(c)), depth-1)
		}
		return multipleOf(x, m, depth-1) || multipleOf(y, m, depth-1)
	}
	return false
}

// constOperandInt is the value of an integer literal or constant operand.
func constOperandInt(o *loom.Operand) (int64, bool) {
	if o.Lit != nil {
		return o.Lit.Int, o.Lit.Kind == loom.LitInt
	}
	if o.Value == nil || o.Value.Def == nil || o.Value.Def.Literal == nil {
		return 0, false
	}
	switch o.Value.Def.Name {
	case "index.constant", "scalar.constant":
		return o.Value.Def.Literal.Int, o.Value.Def.Literal.Kind == loom.LitInt
	}
	return 0, false
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

// swizzleXor is 16·(row mod 8) for a row index register: the bits the
// permutation flips in a row's byte offset.
func (e *emitter) swizzleXor(row string) string {
	t := e.newReg(cR)
	e.ins("and.b32 %s, %s, 7", t, row)
	e.ins("shl.b32 %s, %s, 4", t, t)
	return t
}

// swizzledChunk is the physical address of the 16-byte chunk at (row,
// col) of a swizzled view v: base + row·P + (col·size XOR 16·(row mod 8)).
func (e *emitter) swizzledChunk(op *loom.Op, v *val, row, col *val) (string, error) {
	size := int64(carrierBytes(v.elem))
	acc, imm, err := e.addressParts(op, v, []*val{row, e.constInt(indexType, 0)})
	if err != nil {
		return "", err
	}
	var x string
	if row.known {
		x = e.newReg(cR)
		e.ins("mov.b32 %s, %d", x, (row.ci&7)<<4)
	} else {
		x = e.swizzleXor(row.reg)
	}
	s := e.newReg(cR)
	if col.known {
		e.ins("xor.b32 %s, %s, %d", s, x, col.ci*size)
	} else {
		cb := e.newReg(cR)
		e.ins("mul.lo.s32 %s, %s, %d", cb, col.reg, size)
		e.ins("xor.b32 %s, %s, %s", s, x, cb)
	}
	n := e.addrLike(acc)
	e.addrMad(n, s, 1, acc, false)
	if imm == 0 {
		return n, nil
	}
	m := e.addrLike(n)
	e.addrAddImm(m, n, imm)
	return m, nil
}

// swizzledLanes gives ldmatrix's lane addresses in a swizzled tile v at
// origin idx = (row, col): lane l reads row r = row + l mod 16 at byte
// c = col·size + 16·(l / 16), plus step·kc bytes along the row for lhs
// (16 rows down for rhs, which keeps r mod 8). The physical address is
// base + r·P + (c XOR x), x = 16·(r mod 8). Where the column's register
// part is a multiple of 128 bytes it passes the XOR unchanged, and so
// does the constant's part above 7 bits: c XOR x = hi + ((lo + 16·(l/16))
// XOR x), one lane register per step that ptxas keeps out of loops.
func (e *emitter) swizzledLanes(op *loom.Op, v *val, idx []*val, lhs bool, step int64) (func(kc int) string, bool) {
	if len(idx) != 2 {
		return nil, false
	}
	size := int64(carrierBytes(v.elem))
	pitch := v.swz
	row, col := idx[0], idx[1]
	l := e.lanes()
	// x = 16·((row + l mod 16) mod 8): from the lane alone when row is a
	// multiple of 8.
	var x string
	switch {
	case pow2Of(row) >= 8:
		x = e.swizzleXor(l.lo)
	case row.known:
		t := e.newReg(cR)
		e.ins("add.s32 %s, %s, %d", t, l.lo, row.ci)
		x = e.swizzleXor(t)
	default:
		t := e.newReg(cR)
		e.ins("add.s32 %s, %s, %s", t, l.lo, row.reg)
		x = e.swizzleXor(t)
	}
	zero := e.constInt(indexType, 0)
	// The column: a register part (bytes: cb, or none) and a constant k.
	var reg *val
	var k int64
	switch b, off := affineParts(col); {
	case col.known:
		k = col.ci
	case b.known:
		k = b.ci + off
	default:
		reg, k = b, off
	}
	colIdx := zero
	var loose string // a column register part below 128-byte multiples, in bytes
	if reg != nil {
		if pow2Of(reg)*size >= 128 {
			colIdx = reg
		} else {
			loose = e.newReg(cR)
			e.ins("mul.lo.s32 %s, %s, %d", loose, reg.reg, size)
		}
	}
	base, imm, err := e.addressParts(op, v, []*val{row, colIdx})
	if err != nil {
		return nil, false
	}
	sa := e.addrLike(base)
	e.addrMad(sa, l.lo, pitch, base, false)
	return func(kc int) string {
		kb := k * size
		rows := int64(0)
		if lhs {
			kb += int64(kc) * step
		} else {
			rows = int64(kc) * 16 * pitch
		}
		lo := kb & 127
		hi := kb - lo
		c := e.newReg(cR)
		if loose != "" {
			// (loose + kb + 16·(l/16)) XOR x, all of it at run time.
			e.ins("add.s32 %s, %s, %s", c, loose, l.hi16)
			e.ins("add.s32 %s, %s, %d", c, c, kb)
			hi = 0
		} else {
			e.ins("add.s32 %s, %s, %d", c, l.hi16, lo)
		}
		e.ins("xor.b32 %s, %s, %s", c, c, x)
		a := e.addrLike(sa)
		e.addrMad(a, c, 1, sa, false)
		return addrPlus(a, imm+hi+rows)
	}, true
}

// walkOps calls f on every op of r and its nested regions, in order, with
// the op's region and position.
func walkOps(r *loom.Region, f func(r *loom.Region, i int, op *loom.Op)) {
	for i, op := range r.Ops {
		f(r, i, op)
		for _, sub := range op.Regions {
			walkOps(sub, f)
		}
	}
}

// valueUses maps each value used in r (nested regions included) to the
// ops using it, once per operand.
func valueUses(r *loom.Region) map[*loom.Value][]*loom.Op {
	uses := map[*loom.Value][]*loom.Op{}
	walkOps(r, func(_ *loom.Region, _ int, op *loom.Op) {
		for _, o := range op.Operands {
			if o.Value != nil {
				uses[o.Value] = append(uses[o.Value], op)
			}
		}
	})
	return uses
}
