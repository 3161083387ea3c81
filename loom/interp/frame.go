package interp

import (
	"github.com/loomgen/loomgen/loom"
)

// kind is the register file a slot lives in.
type kind uint8

const (
	kInt   kind = iota + 1 // i1…i64, index, offset (sign-extended canonical form; offset as raw bits)
	kFloat                 // every float type, as the float64 it denotes
	kView                  // buffer and view values
)

// slot is the register of one SSA value. A uniform slot holds comps
// elements (one per vector component); a varying slot holds comps*L,
// component-major: element (c, lane) at c*L+lane.
type slot struct {
	kind  kind
	uni   bool
	comps int
	// typ is the scalar element type for int and float slots, the view or
	// buffer type for view slots.
	typ *loom.Type
	idx int
	// cst marks a uniform int scalar whose value ci is known at Compile.
	cst bool
	ci  int64
	// shape is the vector shape of a vector register (nil for scalars).
	shape []int64
	// aff marks an int register whose producer records lane facts in the
	// frame's meta (see affine.go).
	aff bool
	// lazyAff (lazy.go): every use of this affine register reads its
	// meta and writes its lanes before reading them, so its producer may
	// leave them unwritten.
	lazyAff bool
	// lid is 1+axis where the register is kernel.workitem.id along that
	// axis in a kernel run one workgroup a frame: lane l holds the
	// work-item id of lane l, whether or not its lanes are written.
	lid int8
}

// instr is one compiled operation, executed for all active lanes.
type instr func(fr *frame) error

// frame is the state of one worker running one workgroup at a time.
type frame struct {
	k *Kernel
	r *runState
	L int // lanes (work-items) per workgroup

	I    [][]int64
	meta []regMeta // per int register; read only for slots with aff set
	F    [][]float64
	V    [][]view
	// hoisted: the kernel's group-invariant prologue ran on this frame
	// for the current Run, so workgroups run only the body (hoist.go).
	hoisted bool

	// mask is the active mask of the code running now; nact its count.
	mask []bool
	nact int
	// lo and hi bound the active lanes: every active lane l has
	// lo <= l < hi (a superset is always allowed; lo=0, hi=L is the
	// trivial bound). Lane loops of single-component registers run over
	// [lo, hi) only, which is what makes narrowing control flow (tree
	// reductions, tails) cheap.
	lo, hi int
	alive  []bool
	// nalive counts lanes that have not left the kernel.
	nalive int
	// clean: top and alive are all set (no lane exited in the last group).
	clean bool
	masks [][]bool // one scratch mask per control-flow depth
	miv   []maskIv // what is known of each scratch mask's contents
	top   []bool   // the workgroup-level mask
	all   []bool   // every lane set; never modified
	// pre is L set lanes then L clear ones, suf the reverse; never
	// modified. pre[L-b:2L-b] is the mask of lanes [0, b), suf[L-a:2L-a]
	// that of lanes [a, L) (ifCode.rangeMaskOf).
	pre, suf []bool

	wg    [3]int64
	wgLin int // the (first) workgroup's linear index
	// grp is the lanes of one workgroup: L, or L/K in a batch of K.
	grp    int
	scrI   [4][]int64
	scrF   [4][]float64
	wgMem  [][]byte // per workgroup alloca site
	wgUsed []bool
	steps  [][]int64 // per depth: the step of a varying scf.for
	// pw describes a periodic mask a fused guard set (batchwg.go).
	pw perWin
	// san is the workgroup-memory shadow of the checked mode
	// (sanitize.go); nil otherwise.
	san *sanFrame
}

// active reports whether lane l runs the current op.
func (fr *frame) active(l int) bool { return fr.mask[l] }

// full reports whether every lane of the workgroup runs the current op.
func (fr *frame) full() bool { return fr.nact == fr.L }

// setMask makes m the active mask, counts it and bounds it.
func (fr *frame) setMask(m []bool) {
	fr.mask = m
	n, lo, hi := 0, len(m), 0
	for l, b := range m {
		if b {
			n++
			hi = l + 1
			if l < lo {
				lo = l
			}
		}
	}
	if n == 0 {
		lo = 0
	}
	fr.nact, fr.lo, fr.hi = n, lo, hi
}

// use makes m (with n active lanes) the active mask, bounding it by scan.
func (fr *frame) use(m []bool, n int) {
	fr.mask, fr.nact = m, n
	fr.bound()
}

// bound recomputes lo and hi from the current mask.
func (fr *frame) bound() {
	m := fr.mask
	lo, hi := 0, len(m)
	for lo < hi && !m[lo] {
		lo++
	}
	for hi > lo && !m[hi-1] {
		hi--
	}
	fr.lo, fr.hi = lo, hi
}

// unbound resets the active bound to every lane (always valid).
func (fr *frame) unbound() { fr.lo, fr.hi = 0, fr.L }

// dense reports whether the active lanes are exactly [lo, hi).
func (fr *frame) dense() bool { return fr.nact == fr.hi-fr.lo }

// span returns the element range of register r that an element-wise op
// must compute: every element of a uniform or vector register, the active
// bound of a single-component varying one.
func (fr *frame) span(r *slot) (int, int) {
	if r.uni {
		return 0, r.comps
	}
	if r.comps != 1 {
		return 0, r.comps * fr.L
	}
	return fr.lo, fr.hi
}

// firstActive returns the lowest active lane, or -1.
func (fr *frame) firstActive() int {
	for l, b := range fr.mask {
		if b {
			return l
		}
	}
	return -1
}

// ints returns the int register of s at the width the consumer needs:
// a uniform slot read by a varying op is broadcast into scratch k.
func (fr *frame) ints(s *slot, varying bool, k int) []int64 {
	x := fr.I[s.idx]
	if s.uni && varying {
		L := fr.L
		buf := fr.scrI[k][:s.comps*L]
		for c := 0; c < s.comps; c++ {
			v := x[c]
			seg := buf[c*L : (c+1)*L]
			for i := range seg {
				seg[i] = v
			}
		}
		return buf
	}
	return x
}

// floats is ints for float registers.
func (fr *frame) floats(s *slot, varying bool, k int) []float64 {
	x := fr.F[s.idx]
	if s.uni && varying {
		L := fr.L
		buf := fr.scrF[k][:s.comps*L]
		for c := 0; c < s.comps; c++ {
			v := x[c]
			seg := buf[c*L : (c+1)*L]
			for i := range seg {
				seg[i] = v
			}
		}
		return buf
	}
	return x
}

// laneOf maps a flat element index of a register to its lane (-1 for a
// uniform register).
func (fr *frame) laneOf(s *slot, i int) int {
	if s.uni {
		return -1
	}
	return i % fr.L
}

// elemActive reports whether element i of register s belongs to an active
// lane (always true for uniform registers: they run only when some lane is
// active).
func (fr *frame) elemActive(s *slot, i int) bool {
	if s.uni {
		return true
	}
	return fr.mask[i%fr.L]
}

// copySlot copies src into dst for the active lanes.
func (fr *frame) copySlot(dst, src *slot) {
	L := fr.L
	switch dst.kind {
	case kInt:
		d, s := fr.I[dst.idx], fr.I[src.idx]
		copyLanes(fr, d, s, dst.uni, src.uni, dst.comps, L)
	case kFloat:
		d, s := fr.F[dst.idx], fr.F[src.idx]
		copyLanes(fr, d, s, dst.uni, src.uni, dst.comps, L)
	case kView:
		d, s := fr.V[dst.idx], fr.V[src.idx]
		copyLanes(fr, d, s, dst.uni, src.uni, dst.comps, L)
	}
}

// setLaneUni writes uniform src to lane l of varying dst.
func (fr *frame) setLaneUni(dst, src *slot, l int) {
	L := fr.L
	switch dst.kind {
	case kInt:
		setLane(fr.I[dst.idx], fr.I[src.idx], dst.comps, L, l)
	case kFloat:
		setLane(fr.F[dst.idx], fr.F[src.idx], dst.comps, L, l)
	case kView:
		setLane(fr.V[dst.idx], fr.V[src.idx], dst.comps, L, l)
	}
}

func setLane[T any](d, s []T, comps, L, l int) {
	for c := 0; c < comps; c++ {
		d[c*L+l] = s[c]
	}
}

func copyLanes[T any](fr *frame, d, s []T, duni, suni bool, comps, L int) {
	switch {
	case duni:
		copy(d[:comps], s[:comps])
	case suni:
		for c := 0; c < comps; c++ {
			v := s[c]
			seg := d[c*L : (c+1)*L]
			for l := range seg {
				if fr.mask[l] {
					seg[l] = v
				}
			}
		}
	case fr.full():
		copy(d, s)
	default:
		for c := 0; c < comps; c++ {
			ds, ss := d[c*L:(c+1)*L], s[c*L:(c+1)*L]
			for l := range ds {
				if fr.mask[l] {
					ds[l] = ss[l]
				}
			}
		}
	}
}

// runCode executes a block; errAllExited ends it early when every lane of
// the block has left the kernel.
func runCode(fr *frame, code []instr) error {
	for _, in := range code {
		if err := in(fr); err != nil {
			return err
		}
	}
	return nil
}

// exitedErr is returned by kernel.exit/kernel.return when no lane of the
// current block is left; enclosing control flow stops running the block.
type exitedErr struct{}

func (exitedErr) Error() string { return "all lanes exited" }

var errAllExited error = exitedErr{}

// restoreMask makes m the active mask again after a nested block, dropping
// lanes that left the kernel inside it.
func (fr *frame) restoreMask(m []bool) {
	if fr.nalive != fr.L {
		for l := range m {
			if m[l] && !fr.alive[l] {
				m[l] = false
			}
		}
	}
	fr.setMask(m)
}

// constInit is a register whose value is known at Compile (a float
// constant or a vector splat); every component gets i or f.
type constInit struct {
	s *slot
	i int64
	f float64
}
