package interp

// Register hand-off. A region's yield normally copies each yielded register
// into its destination (a loop-carried value, an scf.if result), lane by
// lane under the mask. When the yielded value is a varying f32/f64 scalar
// defined inside the region itself, its storage holds nothing anyone reads
// after the yield: the region's next run recomputes it before any use (SSA,
// slots are never shared). The two registers' storage can then be swapped
// instead of copied, which costs nothing per lane.
//
// Lanes outside the mask change too, so this is only done where those
// lanes of the destination are never read: the carried values of a loop
// with uniform bounds (every lane active at entry runs every iteration;
// the rest never read the loop's results) and the then region of an scf.if
// (the else region, which runs after it, writes its own lanes; lanes in
// neither region are inactive and never read the result).

// handoffs reports, per destination, whether src[i] can be handed to dst[i]
// by swapping storage: both varying float scalars, src a register made in
// [lo, hi) (the float slots the region allocated), not a constant filled at
// frame setup, and not yielded twice. nil when none can.
func (c *compiler) handoffs(dst, src []*slot, lo, hi int) []bool {
	var out []bool
	for i, d := range dst {
		if i >= len(src) {
			break
		}
		s := src[i]
		if d.kind != kFloat || s.kind != kFloat || d.uni || s.uni || d.comps != 1 || s.comps != 1 || s.shape != nil || d.shape != nil {
			continue
		}
		if s.idx < lo || s.idx >= hi || d.idx == s.idx || c.initialized(s) {
			continue
		}
		dup := false
		for j, o := range src {
			if j != i && o.kind == kFloat && o.idx == s.idx {
				dup = true
			}
		}
		if dup {
			continue
		}
		if out == nil {
			out = make([]bool, len(dst))
		}
		out[i] = true
	}
	return out
}

// initialized reports whether s is filled once at frame setup (a constant).
func (c *compiler) initialized(s *slot) bool {
	for _, ci := range c.k.inits {
		if ci.s == s || (ci.s.kind == s.kind && ci.s.idx == s.idx) {
			return true
		}
	}
	return false
}

// handOff moves src into dst: a storage swap where sw allows, a masked copy
// otherwise.
func handOff(fr *frame, dst, src []*slot, sw []bool) {
	for i, d := range dst {
		if sw != nil && sw[i] {
			s := src[i]
			fr.F[d.idx], fr.F[s.idx] = fr.F[s.idx], fr.F[d.idx]
			continue
		}
		fr.copySlot(d, src[i])
	}
}
