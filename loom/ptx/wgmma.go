package ptx

import (
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Warpgroup matrix multiply (Hopper's wgmma, sm_90a). A subgroup
// vector.mma on mma.sync multiplies its own 16×16 lhs by a 16×16 rhs the
// warp loads itself. wgmma.mma_async m64nNk16 instead multiplies the lhs
// rows of four consecutive warps (a warpgroup, each warp's 16 rows in
// registers, in mma.sync's lhs layout) by one K×N rhs that the tensor
// core reads from workgroup memory through a matrix descriptor, into
// accumulators laid out per warp exactly as mma.sync's m16n8 ones, one
// n8 tile after another. So four subgroup mmas are one m64n64k16 wgmma
// when, in every warp of the warpgroup,
//   - they share the lhs fragment (f16 or bf16, 16×16, into f32),
//   - their rhs fragments are vector.fragment.load<rhs> [16, 16] of one
//     swizzled workgroup tile (swizzle.go) whose rows are exactly 128
//     bytes (64 elements) at the same row, a multiple of 8 and the same
//     in every warp of the workgroup, and at columns 0, 16, 32 and 48:
//     together the whole 16×64 slab, which the swizzled layout stores as
//     wgmma's N-major 128-byte-swizzle layout (two atoms of 8 rows),
//   - every warp of the warpgroup reaches them: the workgroup is a static
//     multiple of 128 invocations, the enclosing loops and ifs are
//     uniform across it, and nothing returns early.
// Two such slabs of one lhs and tile at constant rows a multiple of 8
// apart are one m64n128k16 wgmma, the descriptor's leading-dimension
// offset stepping from the first slab to the second. The group is emitted
// once, at its first member: a descriptor for the slab, wgmma.fence, and
// wgmma.mma_async with the accumulators as its 32 (64) registers; the rhs
// loads that only the groups read are dropped. wgmma runs asynchronously:
// groups stay in flight until an op that may read their registers or
// overwrite a tile they read (wgmmaBefore), which waits with
// wgmma.commit_group and wgmma.wait_group. The tile's producers write
// through the generic proxy and wgmma reads through the async proxy, so
// every workgroup barrier of such a kernel is preceded by
// fence.proxy.async.

// wgmmaGroup is the four (or eight) vector.mma ops one wgmma computes.
type wgmmaGroup struct {
	mmas  []*loom.Op  // by rhs column 0, 16, 32, 48 (and again for a second slab)
	first *loom.Op    // the member first in program order
	tile  *loom.Value // the rhs view
	row   *loom.Value // the rhs row index of the first slab
	lbo   int64       // bytes from one slab to the next (N = 128); unused at N = 64
	// lhsTile is the swizzled tile the lhs fragments of the warpgroup
	// come from when wgmma reads them through a descriptor (wgmmaLHS),
	// nil when they go in registers; lhsRow and lhsCol locate this warp's
	// fragment in it.
	lhsTile, lhsRow *loom.Value
	lhsCol          int64
}

// wgmmaPlan is the kernel's wgmma groups.
type wgmmaPlan struct {
	group map[*loom.Op]*wgmmaGroup   // each member mma to its group
	skip  map[*loom.Op]bool          // rhs loads only the groups read
	uses  map[*loom.Value][]*loom.Op // each value's users in the kernel body
	// after maps each barrier to what may be written before the next
	// (barrierWrites), for workgroups of several warpgroups.
	after map[*loom.Op]workgroupWrites
	entry map[*loom.Region][]span // loopEntries, with after
	body  *loom.Region
}

// wgmmaAtomBytes is the span of one 128-byte-swizzle atom: 8 rows of 128
// bytes. The descriptor's strides are between atoms along K; the view's
// base must lie on an atom boundary for the swizzle phases to agree.
const wgmmaAtomBytes = 1024

// planWgmma finds the groups of the kernel body, or nil.
func (e *emitter) planWgmma(body *loom.Region) *wgmmaPlan {
	if body == nil || e.sm != 90 || e.fragWave() != loom.FragmentSubgroupSize || !e.wgKnown {
		return nil
	}
	if n := e.wg[0] * e.wg[1] * e.wg[2]; n%128 != 0 {
		return nil
	}
	uses := valueUses(body)
	early := false // a kernel.return before the end of the body
	walkOps(body, func(r *loom.Region, i int, op *loom.Op) {
		if op.Name == "kernel.return" && (r != body || i != len(r.Ops)-1) {
			early = true
		}
	})
	if early {
		return nil
	}
	e.allocaAtomsFit = allocaAtomsFit(body)
	p := &wgmmaPlan{group: map[*loom.Op]*wgmmaGroup{}, skip: map[*loom.Op]bool{}, uses: uses, body: body}
	var walk func(r *loom.Region, uniform bool)
	walk = func(r *loom.Region, uniform bool) {
		if uniform {
			e.groupRegion(p, r, uses)
		}
		for _, op := range r.Ops {
			for _, sub := range op.Regions {
				walk(sub, uniform && uniformControl(op))
			}
		}
	}
	walk(body, true)
	if len(p.group) == 0 {
		return nil
	}
	if e.wg[0]*e.wg[1]*e.wg[2] > 128 {
		p.after = barrierWrites(body)
		p.entry = loopEntries(body, p.after, p.group)
	}
	// Drop the fragment loads whose every use is a group's operand read
	// through a descriptor: the rhs always, the lhs where the group reads
	// it from its tile.
	for op, g := range p.group {
		p.skip[op.Operands[1].Value.Def] = p.onlyDescriptorUses(op.Operands[1].Value, 1)
		if g.lhsTile != nil {
			p.skip[op.Operands[0].Value.Def] = p.onlyDescriptorUses(op.Operands[0].Value, 0)
		}
	}
	return p
}

// onlyDescriptorUses reports whether every use of fragment v is operand i
// of a group member that reads that operand through a descriptor.
func (p *wgmmaPlan) onlyDescriptorUses(v *loom.Value, i int) bool {
	for _, u := range p.uses[v] {
		if g := p.group[u]; g == nil || u.Operands[i].Value != v || i == 0 && g.lhsTile == nil {
			return false
		}
	}
	return true
}

// uniformControl reports whether op's regions run in every invocation of
// the workgroup alike: an scf.for with uniform bounds and an scf.if with a
// uniform condition.
func uniformControl(op *loom.Op) bool {
	switch op.Name {
	case "scf.for":
		return len(op.Operands) >= 3 && loom.WorkgroupUniform(op.Operands[0].Value) && loom.WorkgroupUniform(op.Operands[1].Value) && loom.WorkgroupUniform(op.Operands[2].Value)
	case "scf.if":
		return len(op.Operands) >= 1 && loom.WorkgroupUniform(op.Operands[0].Value)
	}
	return false
}

// slabKey identifies the 16×64 rhs slab of a group member: the lhs it
// multiplies, the tile, and the row (a value, or a constant).
type slabKey struct {
	lhs, tile, row *loom.Value
	rowConst       int64
}

// rhsRow is the row index of a group member's rhs fragment load.
func rhsRow(m *loom.Op) *loom.Value {
	return m.Operands[1].Value.Def.Operands[1].Value
}

// groupRegion adds the complete groups among the mmas of r (not nested
// regions: a group's members are ops of one region).
func (e *emitter) groupRegion(p *wgmmaPlan, r *loom.Region, uses map[*loom.Value][]*loom.Op) {
	pos := map[*loom.Op]int{}
	for i, op := range r.Ops {
		pos[op] = i
	}
	cands := map[slabKey]*[4]*loom.Op{}
	var order []slabKey
	for _, op := range r.Ops {
		col, k, ok := e.wgmmaMember(op)
		if !ok {
			continue
		}
		c := cands[k]
		if c == nil {
			c = &[4]*loom.Op{}
			cands[k] = c
			order = append(order, k)
		}
		if c[col] != nil {
			c[col] = nil // two mmas at one column: not a group's shape
			continue
		}
		c[col] = op
	}
	// Complete slabs, then pairs of slabs of one lhs and tile at constant
	// rows a multiple of 8 apart: one N = 128 wgmma, the second slab one
	// leading-dimension offset after the first.
	var slabs []*wgmmaGroup
	for _, k := range order {
		c := cands[k]
		complete := true
		for _, m := range c {
			complete = complete && m != nil
		}
		if complete {
			slabs = append(slabs, &wgmmaGroup{mmas: c[:], tile: k.tile, row: rhsRow(c[0]), lbo: wgmmaAtomBytes})
		}
	}
	var groups []*wgmmaGroup
	used := map[*wgmmaGroup]bool{}
	for i, a := range slabs {
		if used[a] {
			continue
		}
		g := a
		for _, b := range slabs[i+1:] {
			ra, aok := constIndex(a.row)
			rb, bok := constIndex(b.row)
			if used[b] || !aok || !bok || b.mmas[0].Operands[0].Value != a.mmas[0].Operands[0].Value || b.tile != a.tile || rb <= ra+15 || (rb-ra)%8 != 0 {
				continue
			}
			used[b] = true
			g = &wgmmaGroup{mmas: append(append([]*loom.Op{}, a.mmas...), b.mmas...), tile: a.tile, row: a.row, lbo: (rb - ra) * 128}
			break
		}
		used[a] = true
		groups = append(groups, g)
	}
	for _, g := range groups {
		for _, m := range g.mmas {
			if g.first == nil || pos[m] < pos[g.first] {
				g.first = m
			}
		}
		// Every operand is ready at the first member, and no member reads
		// another's result.
		ready := true
		for _, m := range g.mmas {
			for _, o := range m.Operands[:3] {
				if d := o.Value.Def; d != nil {
					if i, in := pos[d]; in && i >= pos[g.first] {
						ready = false
					}
				}
			}
		}
		// The dropped rhs loads (and an lhs read through a descriptor)
		// read the tile at the first member instead: nothing may write
		// workgroup memory in between.
		for _, m := range g.mmas {
			ready = ready && tileStable(p, r, pos, m.Operands[1].Value.Def, g.first)
		}
		if ld := g.mmas[0].Operands[0].Value.Def; ready && tileStable(p, r, pos, ld, g.first) {
			g.lhsTile, g.lhsRow, g.lhsCol, _ = e.wgmmaLHS(ld)
		}
		if ready {
			for _, m := range g.mmas {
				p.group[m] = g
			}
		}
	}
}

// wgmmaMember reports whether op is a subgroup vector.mma of 16×16 f16 or
// bf16 fragments into f32 whose rhs is a fragment load a group can take,
// with the rhs column's position in the group and the group's key.
func (e *emitter) wgmmaMember(op *loom.Op) (int, slabKey, bool) {
	var k slabKey
	if op.Name != "vector.mma" || len(op.Operands) != 3 || len(op.Types) != 3 {
		return 0, k, false
	}
	ab, acc := op.Types[0].Elem, op.Types[2].Elem
	if ab == nil || acc == nil || (ab.Name != "f16" && ab.Name != "bf16") || acc.Name != "f32" || op.Types[1].Elem == nil || op.Types[1].Elem.Name != ab.Name {
		return 0, k, false
	}
	for i, want := range []int{16, 16, 8} {
		if n, ok := vectorLen(op.Types[i]); !ok || n != want {
			return 0, k, false
		}
	}
	ld := op.Operands[1].Value.Def
	if ld == nil || ld.Name != "vector.fragment.load" || ld.Param != "rhs" || len(ld.Operands) != 5 {
		return 0, k, false
	}
	tile := ld.Operands[0].Value
	if e.swz[tile] != 128 || !e.atomAligned(tile) {
		return 0, k, false
	}
	row, col := ld.Operands[1].Value, ld.Operands[2].Value
	rows, rok := constIndex(ld.Operands[3].Value)
	cols, cok := constIndex(ld.Operands[4].Value)
	c, ok := constIndex(col)
	if !rok || !cok || rows != 16 || cols != 16 || !ok || c%16 != 0 || c < 0 || c > 48 || !multipleOf8(row) || !loom.WorkgroupUniform(row) {
		return 0, k, false
	}
	k.lhs, k.tile, k.row = op.Operands[0].Value, tile, row
	if rc, ok := constIndex(row); ok {
		k.row, k.rowConst = nil, rc // equal constants are one row
	}
	return int(c / 16), k, true
}

// tileStable reports whether a fragment load ld of region r may be read
// at op instead: ld is an op of r before op, and no op in between is a
// barrier or may write workgroup memory.
func tileStable(p *wgmmaPlan, r *loom.Region, pos map[*loom.Op]int, ld, op *loom.Op) bool {
	i, ok := pos[ld]
	if end, in := pos[op]; !ok || !in || i >= end {
		return false
	}
	var w workgroupWrites
	for _, x := range r.Ops[i+1 : pos[op]] {
		if isWorkgroupBarrier(x) {
			return false
		}
		w.addNested(x, p.body)
	}
	return !w.unknown && len(w.spans) == 0
}

// wgmmaLHS reports whether wgmma can read the lhs fragments of a
// warpgroup from workgroup memory (its descriptor form) instead of
// registers: ld is a vector.fragment.load<lhs> [16, 16] of a swizzled
// tile of 128-byte rows starting on an atom, at a constant column
// 0, 16, 32 or 48, and at row 16·subgroup + u for a workgroup-uniform u,
// a multiple of 8. Warp i of a warpgroup then holds rows 16i.. of the 64
// the warpgroup's rows start at (16·4·(subgroup / 4) + u), which is
// wgmma's lhs layout, K-major in the same 128-byte swizzle as the rhs.
func (e *emitter) wgmmaLHS(ld *loom.Op) (tile, row *loom.Value, col int64, ok bool) {
	if ld == nil || ld.Name != "vector.fragment.load" || ld.Param != "lhs" || len(ld.Operands) != 5 {
		return nil, nil, 0, false
	}
	tile, row = ld.Operands[0].Value, ld.Operands[1].Value
	rows, rok := constIndex(ld.Operands[3].Value)
	cols, cok := constIndex(ld.Operands[4].Value)
	col, colOK := constIndex(ld.Operands[2].Value)
	if e.swz[tile] != 128 || !e.atomAligned(tile) || !rok || !cok || rows != 16 || cols != 16 || !colOK || col%16 != 0 || col < 0 || col > 48 || !subgroupRows(row) {
		return nil, nil, 0, false
	}
	return tile, row, col, true
}

// subgroupRows reports whether v is 16·subgroup + u for a
// workgroup-uniform u that is a multiple of 8 (u may be absent).
func subgroupRows(v *loom.Value) bool {
	if v == nil || v.Def == nil || len(v.Def.Operands) != 2 {
		return false
	}
	a, b := v.Def.Operands[0].Value, v.Def.Operands[1].Value
	switch v.Def.Name {
	case "index.mul":
		isSubgroup := func(x *loom.Value) bool { return x != nil && x.Def != nil && x.Def.Name == "kernel.subgroup.id" }
		ca, aok := constIndex(a)
		cb, bok := constIndex(b)
		return isSubgroup(a) && bok && cb == 16 || isSubgroup(b) && aok && ca == 16
	case "index.add":
		uniform := func(x *loom.Value) bool { return loom.WorkgroupUniform(x) && multipleOf8(x) }
		return subgroupRows(a) && uniform(b) || subgroupRows(b) && uniform(a)
	}
	return false
}

// vectorLen is the component count of a static vector type.
func vectorLen(t *loom.Type) (int, bool) {
	if t == nil || t.Kind != loom.TypeVector {
		return 0, false
	}
	n := 1
	for _, d := range t.Dims {
		if d.Value != nil || d.Size <= 0 {
			return 0, false
		}
		n *= int(d.Size)
	}
	return n, true
}

// constIndex is the value of a constant index (constOperandInt's rule).
func constIndex(v *loom.Value) (int64, bool) {
	return constOperandInt(&loom.Operand{Value: v})
}

// multipleOf8 reports whether an index is provably a multiple of 8: a
// constant, or sums and products of such.
func multipleOf8(v *loom.Value) bool {
	if c, ok := constIndex(v); ok {
		return c%8 == 0
	}
	if v == nil || v.Def == nil || len(v.Def.Operands) != 2 {
		return false
	}
	a, b := v.Def.Operands[0].Value, v.Def.Operands[1].Value
	switch v.Def.Name {
	case "index.add", "index.sub":
		return multipleOf8(a) && multipleOf8(b)
	case "index.mul":
		return multipleOf8(a) || multipleOf8(b)
	}
	return false
}

// atomAligned reports whether a view starts on an atom boundary of
// workgroup memory: buffer.view of kernel.workgroup.storage or of a
// workgroup buffer.alloca at a constant offset that is a multiple of
// wgmmaAtomBytes (the storage, or the allocation, is then declared with
// that alignment: atomBuffer). An allocation qualifies only while the
// kernel's allocations, each on an atom boundary, fit the static limit
// (allocaAtomsFit): the alignment must not make a kernel that loads
// today one the driver refuses.
func (e *emitter) atomAligned(view *loom.Value) bool {
	sp, ok := staticSpan(view)
	if !ok || view.Def.Name != "buffer.view" || sp.lo%wgmmaAtomBytes != 0 {
		return false
	}
	return !workgroupAlloca(sp.buf.Def) || e.allocaAtomsFit
}

// maxStaticShared is the static .shared memory an entry may declare.
const maxStaticShared = 48 << 10

// allocaAtomsFit reports whether body's workgroup allocations would fit
// maxStaticShared were each padded to an atom boundary, with an atom to
// spare for the collectives' scratch; a call, whose body may allocate
// more, says no.
func allocaAtomsFit(body *loom.Region) bool {
	total, ok := int64(wgmmaAtomBytes), true
	walkOps(body, func(_ *loom.Region, _ int, op *loom.Op) {
		if strings.HasPrefix(op.Name, "func.") || strings.HasPrefix(op.Name, "template.") {
			ok = false
		}
		if !workgroupAlloca(op) {
			return
		}
		n, known := int64(0), false
		if len(op.Operands) > 0 {
			n, known = constIndex(op.Operands[0].Value)
		}
		ok = ok && known
		total += (n+wgmmaAtomBytes-1)/wgmmaAtomBytes*wgmmaAtomBytes + wgmmaAtomBytes
	})
	return ok && total <= maxStaticShared
}

// atomBuffer reports whether a wgmma group reads workgroup buffer b
// through a descriptor: its allocation must start on an atom boundary.
func (p *wgmmaPlan) atomBuffer(b *loom.Value) bool {
	if p == nil {
		return false
	}
	for _, g := range p.group {
		for _, t := range []*loom.Value{g.tile, g.lhsTile} {
			if sp, ok := staticSpan(t); ok && sp.buf == b {
				return true
			}
		}
	}
	return false
}

// wgmmaInstr is the wgmma.mma_async form for n columns of the element type.
func wgmmaInstr(n int, ab *loom.Type) string {
	return fmt.Sprintf("wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s", n, ab.Name, ab.Name)
}

// wgmma emits group g at its first member; the other members' results are
// bound by then.
func (e *emitter) wgmma(op *loom.Op, g *wgmmaGroup) error {
	if op != g.first {
		if e.vals[op.Results[0]] == nil {
			return invalid(op.Pos, "internal: wgmma group member lowered before its group")
		}
		return nil
	}
	ab := op.Types[0].Elem
	lay := func(role loom.FragmentRole, payload int, elem *loom.Type) *nativeFrag {
		l, _ := loom.NewFragmentLayout(role, 16, 16, int64(payload), loom.FragmentSubgroupSize)
		return &nativeFrag{lay: l, elem: elem}
	}
	// Nothing emitted since the last wgmma, of this shape: its
	// accumulators are only wgmma's, so this one needs no wgmma.fence.
	chained := e.emitted == e.wgChain && e.wgChainN == len(g.mmas)
	// The lhs: this warp's fragment in registers, or the warpgroup's
	// through a descriptor.
	var a string
	if g.lhsTile != nil {
		desc, err := e.wgmmaLHSDescriptor(op, g)
		if err != nil {
			return err
		}
		a = desc
	} else {
		lhs, err := e.get(op.Operands[0])
		if err != nil {
			return err
		}
		nat, err := e.nativize(op, lhs, lay(loom.FragmentLHS, 16, ab))
		if err != nil {
			return err
		}
		regs := make([]string, len(nat.vec))
		for i, r := range nat.vec {
			regs[i] = r.reg
		}
		a = "{" + strings.Join(regs, ", ") + "}"
	}
	fc := lay(loom.FragmentResult, 8, op.Types[2].Elem)
	before := e.emitted // what follows up to the descriptors writes lhs or accumulator registers
	// The accumulators in place where their registers are this group's
	// alone (a value no one else reads, in registers no other value
	// shares); a copy otherwise.
	outs := make([]*val, len(g.mmas))
	var d []string
	for j, m := range g.mmas {
		in, err := e.get(m.Operands[2])
		if err != nil {
			return err
		}
		c, err := e.nativize(m, in, fc)
		if err != nil {
			return err
		}
		out := &val{t: resultType(m, 0), frag: fc}
		if e.ownedAccumulator(m.Operands[2].Value, c) {
			out.vec = c.vec
		} else {
			// A group's result or a loop's carried value may still be
			// written by a wgmma in flight (this trip's or the last).
			if v := m.Operands[2].Value; v.Def != nil && e.wgp.group[v.Def] != nil || v.Owner != nil && e.carried[v.Owner] {
				e.wgmmaFlush()
			}
			for _, r := range c.vec {
				x := e.newVal(fc.regType())
				e.ins("mov.b32 %s, %s", x.reg, r.reg)
				out.vec = append(out.vec, x)
			}
		}
		outs[j] = out
		for _, r := range out.vec {
			d = append(d, r.reg)
		}
	}
	// A fence orders the registers' writes by other instructions before
	// wgmma reads them; wgmma ops of one shape chained on the same
	// accumulators are ordered without one.
	chained = chained && g.lhsTile != nil && e.emitted == before
	desc, err := e.wgmmaDescriptor(op, g)
	if err != nil {
		return err
	}
	on := e.newReg(cPred)
	e.ins("setp.ne.b32 %s, 1, 0", on)
	if !chained {
		e.ins("wgmma.fence.sync.aligned")
	}
	// scale-d on (D = A·B + D), A and B not negated, A K-major (where a
	// descriptor gives it), B N-major.
	if g.lhsTile != nil {
		e.ins("%s {%s}, %s, %s, %s, 1, 1, 0, 1", wgmmaInstr(16*len(g.mmas), ab), strings.Join(d, ", "), a, desc, on)
	} else {
		e.ins("%s {%s}, %s, %s, %s, 1, 1, 1", wgmmaInstr(16*len(g.mmas), ab), strings.Join(d, ", "), a, desc, on)
	}
	e.wgChain, e.wgChainN = e.emitted, len(g.mmas)
	e.wgPending = true
	e.wgUsed = true
	e.wgTiles = append(e.wgTiles, g.tile)
	if g.lhsTile != nil {
		e.wgTiles = append(e.wgTiles, g.lhsTile)
	}
	for j, m := range g.mmas {
		if err := e.define(m, 0, outs[j]); err != nil {
			return err
		}
	}
	return nil
}

// ownedAccumulator reports whether the registers of accumulator c (the
// lowering of Loom value v) may be overwritten: v's only use is its mma,
// and c is a group's result or a loop's carried value, whose registers no
// other value shares.
func (e *emitter) ownedAccumulator(v *loom.Value, c *val) bool {
	if len(e.wgp.uses[v]) != 1 {
		return false
	}
	seen := map[string]bool{}
	for _, r := range c.vec {
		if seen[r.reg] {
			return false
		}
		seen[r.reg] = true
	}
	if v.Def != nil {
		return e.wgp.group[v.Def] != nil
	}
	return v.Owner != nil && e.carried[v.Owner]
}

// wgmmaDescriptor builds the 64-bit matrix descriptor of g's rhs: its
// start address (the view's row g.row) >> 4, the leading-dimension offset
// g.lbo >> 4 (to the second slab; unused at N = 64), the stride offset
// 1024 >> 4 (rows k..k+7 to k+8..k+15), base offset 0 (the start lies on
// an atom) and the 128-byte swizzle.
func (e *emitter) wgmmaDescriptor(op *loom.Op, g *wgmmaGroup) (string, error) {
	v, row, err := e.wgmmaOperand(op, g.tile, g.row, "rhs")
	if err != nil {
		return "", err
	}
	base, imm, err := e.addressParts(op, v, []*val{row, e.constInt(indexType, 0)})
	if err != nil {
		return "", err
	}
	// Leading-dimension offset: from one 64-column slab to the next
	// (N-major: between atoms along N).
	return e.swizzleDescriptor(base, imm, g.lbo), nil
}

// wgmmaOperand is the lowered tile and row of a wgmma operand read
// through a descriptor.
func (e *emitter) wgmmaOperand(op *loom.Op, tile, row *loom.Value, role string) (*val, *val, error) {
	v, ok := e.vals[tile]
	if !ok || v.space != "shared" || v.swz != 128 {
		return nil, nil, invalid(op.Pos, "internal: wgmma %s tile is not a swizzled workgroup view", role)
	}
	r, ok := e.vals[row]
	if !ok {
		return nil, nil, invalid(op.Pos, "internal: wgmma %s row not lowered", role)
	}
	return v, r, nil
}

// swizzleDescriptor is the 64-bit descriptor of a 128-byte-swizzle matrix
// at byte address base+imm of workgroup memory: the start address >> 4,
// the leading-dimension offset lbo >> 4, the stride offset 1024 >> 4 (from
// one 8-row atom to the next: rows k..k+7 to k+8..k+15 of an N-major rhs,
// rows m..m+7 to m+8..m+15 of a K-major lhs), base offset 0 (the start
// lies on an atom's row 0) and the swizzle mode.
func (e *emitter) swizzleDescriptor(base string, imm, lbo int64) string {
	addr := e.newReg(cR)
	e.ins("add.s32 %s, %s, %d", addr, base, imm)
	lo, hi := e.newReg(cR), e.newReg(cR)
	e.ins("bfe.u32 %s, %s, 4, 14", lo, addr)
	e.ins("or.b32 %s, %s, %d", lo, lo, (lbo>>4)<<16)
	e.ins("mov.b32 %s, %d", hi, wgmmaAtomBytes>>4|1<<30)
	desc := e.newReg(cRd)
	e.ins("mov.b64 %s, {%s, %s}", desc, lo, hi)
	return desc
}

// wgmmaLHSDescriptor builds the descriptor of g's lhs, the warpgroup's 64
// rows of its tile: this warp's row less 16 times its rank in the
// warpgroup, at the fragment's column. A K-major lhs of 16 columns lies
// within one swizzled row, so the leading-dimension offset is unused
// (the ISA reads it as 1); the stride offset steps 8 rows.
func (e *emitter) wgmmaLHSDescriptor(op *loom.Op, g *wgmmaGroup) (string, error) {
	v, row, err := e.wgmmaOperand(op, g.lhsTile, g.lhsRow, "lhs")
	if err != nil {
		return "", err
	}
	rank := e.newReg(cR)
	e.ins("bfe.u32 %s, %s, 5, 2", rank, e.linearTid().reg)
	e.ins("shl.b32 %s, %s, 4", rank, rank)
	first := e.newVal(indexType)
	e.ins("sub.s32 %s, %s, %s", first.reg, row.reg, rank)
	base, imm, err := e.addressParts(op, v, []*val{first, e.constInt(indexType, g.lhsCol)})
	if err != nil {
		return "", err
	}
	return e.swizzleDescriptor(base, imm, 16), nil
}
