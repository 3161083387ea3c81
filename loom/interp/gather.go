package interp

import (
	"math"
	"sync/atomic"
)

// Loads and stores of f32 through a uniform view of rank 2 or more (tiles
// in workgroup memory, matrices, volumes) compute each lane's byte offset
// inline from the index registers, with the uniform indices folded in
// once, instead of calling access.at and the element codec per lane. Any
// index out of its extent hands the whole op to the generic form, which
// reports the exact error (same lane, same message); a store redone that
// way rewrites the same values before it stops. noFuse turns this off so
// tests and the fuzzer can compare the two.

// gatherRuns counts inline-form loads and stores that completed (only while
// countFused is set), so tests can see the form used.
var gatherRuns atomic.Int64

// tileRuns counts the loads of those that took tileByID.
var tileRuns atomic.Int64

// gathered ends a completed inline-form op.
func gathered() error {
	if countFused {
		gatherRuns.Add(1)
	}
	return nil
}

// gatherN returns the fast form of a load into r, or nil.
func gatherN(a *access, r *slot, generic instr) instr {
	if noFuse || !gatherable(a) || r.uni {
		return nil
	}
	// byID: the one varying index is a work-item id itself (tile[ty, k],
	// tile[k, tx]), so lanes share or repeat their elements.
	byID, varying := -1, 0
	for _, s := range a.idx {
		if !s.uni {
			byID, varying = int(s.lid)-1, varying+1
		}
	}
	if varying != 1 {
		byID = -1
	}
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		var g gatherIdx
		if !g.init(fr, a, v) {
			return generic(fr)
		}
		out, mem := fr.F[r.idx], v.mem
		full := fr.dense()
		l := fr.lo
		if f32, ok := asF32(mem); ok && g.base%4 == 0 && (g.n == 1 || g.n == 2) {
			if byID >= 0 && full && l == 0 && fr.hi == fr.L && g.tileByID(out[:fr.L], f32, fr.r.launch.WorkgroupSize, byID) {
				if countFused {
					tileRuns.Add(1)
				}
				return gathered()
			}
			// The common tile accesses, one or two varying indices, over
			// aligned little-endian memory: four lanes at a time where
			// the CPU has AVX2, then float32 elements indexed directly.
			var d gatherDims
			if d, ok = g.dimsF32(len(f32)); ok && hasAVX2 && full && fr.hi-l >= 4 {
				k := l + (fr.hi-l)&^3
				i1 := g.rows[g.n-1][l:k]
				if !gatherF32AVX(out[l:k], g.rows[0][l:k], i1, &f32[0], g.base/4, &d) {
					return generic(fr)
				}
				l = k
			}
			if g.n == 1 {
				row, dim := g.rows[0], uint64(g.dims[0])
				b, st, n := g.base/4, g.strd[0]/4, uint64(len(f32))
				for ; l < fr.hi; l++ {
					if !full && !fr.mask[l] {
						continue
					}
					i := row[l]
					e := b + i*st
					if uint64(i) >= dim || uint64(e) >= n {
						return generic(fr)
					}
					out[l] = float64(f32[e])
				}
				return gathered()
			}
		}
		for ; l < fr.hi; l++ {
			if !full && !fr.mask[l] {
				continue
			}
			off, ok := g.at(l)
			if !ok {
				return generic(fr)
			}
			out[l] = float64(math.Float32frombits(le.Uint32(mem[off : off+4])))
		}
		return gathered()
	}
}

// scatterN returns the fast form of a store of x, or nil.
func scatterN(a *access, x *slot, generic instr) instr {
	if noFuse || !gatherable(a) || a.uni() && x.uni {
		return nil
	}
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		var g gatherIdx
		if !g.init(fr, a, v) {
			return generic(fr)
		}
		in := fr.F[x.idx]
		step := 1
		if x.uni {
			step = 0
		}
		full := fr.dense()
		l := fr.lo
		if f32, ok := asF32(v.mem); ok && hasAVX2 && full && step == 1 && fr.hi-l >= 4 && g.base%4 == 0 && (g.n == 1 || g.n == 2) {
			// Four lanes at a time, as gatherN's tile loads.
			if d, ok := g.dimsF32(len(f32)); ok {
				k := l + (fr.hi-l)&^3
				i1 := g.rows[g.n-1][l:k]
				if !scatterF32AVX(in[l:k], g.rows[0][l:k], i1, &f32[0], g.base/4, &d) {
					return generic(fr)
				}
				l = k
			}
		}
		for ; l < fr.hi; l++ {
			if !full && !fr.mask[l] {
				continue
			}
			off, ok := g.at(l)
			if !ok {
				return generic(fr)
			}
			le.PutUint32(v.mem[off:off+4], math.Float32bits(float32(in[l*step])))
		}
		return gathered()
	}
}

// gatherable: a plain f32 view of rank 2 or more, the same on every lane.
func gatherable(a *access) bool {
	return a.v.uni && len(a.idx) >= 2 && a.cd.isFloat && a.cd.size == 4 && a.v.typ.Elem.Name == "f32"
}

// gatherIdx is one op's offset computation: the uniform indices' part in
// base, the varying ones as rows with their byte strides and extents.
type gatherIdx struct {
	base  int64
	n     int
	rows  [maxRank][]int64
	strd  [maxRank]int64
	dims  [maxRank]int64
	limit int64 // the last valid element offset (bound bytes)
}

// init folds the uniform indices into base; false if one is out of its
// extent or the view's elements do not all lie in the bound bytes (then
// the generic form checks each access against them).
func (g *gatherIdx) init(fr *frame, a *access, v *view) bool {
	if v.mem == nil || !v.fits(4) {
		return false
	}
	g.base = v.base
	for k, s := range a.idx {
		row := fr.I[s.idx]
		if s.uni {
			i := row[0]
			if uint64(i) >= uint64(v.dims[k]) {
				return false
			}
			g.base += i * v.strides[k] * 4
			continue
		}
		g.rows[g.n], g.strd[g.n], g.dims[g.n] = row, v.strides[k]*4, v.dims[k]
		g.n++
	}
	g.limit = int64(len(v.mem)) - 4
	return true
}

// tileByID loads every lane of one whole workgroup (out, lanes linearized
// x fastest) where g's one varying index is the work-item id along axis ax:
// each element the ids reach is read once, then repeated along x (ax = 0)
// or spread over the lanes that share it (ax = 1, 2). False, having
// written nothing, where an id reaches past the index's extent or an
// element lies outside src (the lane loops then find and report the lane).
func (g *gatherIdx) tileByID(out []float64, src []float32, size [3]int, ax int) bool {
	sx, sy, sz := size[0], size[1], size[2]
	n := int64(size[ax])
	if len(out) != sx*sy*sz || n < 1 || n > g.dims[0] {
		return false
	}
	b, st := g.base/4, g.strd[0]/4
	if first, last := b, b+(n-1)*st; min(first, last) < 0 || max(first, last) >= int64(len(src)) {
		return false
	}
	switch ax {
	case 0:
		row := out[:sx]
		for x := range row {
			row[x] = float64(src[b+int64(x)*st])
		}
		for at := sx; at < len(out); at += sx {
			copy(out[at:at+sx], row)
		}
	case 1:
		for at := 0; at < len(out); {
			for y := range int64(sy) {
				fill(out[at:at+sx], float64(src[b+y*st]))
				at += sx
			}
		}
	default:
		for z := range sz {
			fill(out[z*sx*sy:(z+1)*sx*sy], float64(src[b+int64(z)*st]))
		}
	}
	return true
}

// gatherDims are gatherF32AVX's strides and extents of its two varying
// indices and the source's length, in elements (laid out as its assembly
// reads them).
type gatherDims struct {
	st0, dim0, st1, dim1, n int64
}

// dimsF32 returns g's indices for gatherF32AVX over n f32 elements (one
// index: the second repeats the first with stride 0); false where a
// stride or extent does not fit its 31 bits or the base lies outside.
func (g *gatherIdx) dimsF32(n int) (gatherDims, bool) {
	d := gatherDims{st0: g.strd[0] / 4, dim0: g.dims[0], dim1: g.dims[0], n: int64(n)}
	if g.n == 2 {
		d.st1, d.dim1 = g.strd[1]/4, g.dims[1]
	}
	fits := func(v int64) bool { return v > -1<<31 && v < 1<<31 }
	ok := g.strd[0]%4 == 0 && g.strd[g.n-1]%4 == 0 && fits(d.st0) && fits(d.st1) &&
		fits(d.dim0) && fits(d.dim1) && g.base >= 0 && g.base/4 <= d.n
	return d, ok
}

// at is lane l's byte offset; false if an index is outside its extent.
func (g *gatherIdx) at(l int) (int64, bool) {
	off := g.base
	for k := range g.n {
		i := g.rows[k][l]
		if uint64(i) >= uint64(g.dims[k]) {
			return 0, false
		}
		off += i * g.strd[k]
	}
	// fits(4) bounds every in-extent element by the bound bytes; this
	// keeps a slicing mistake from ever reading past the buffer.
	return off, off >= 0 && off <= g.limit
}

// vecGather is a load of n elements (a scalar: n = 1) through a uniform
// view of any rank at indices of which at least one varies, into a varying
// result, of any element type (gatherN and fastLoad take f32): the uniform
// indices' part of the offset once, then one extent test per lane and
// varying index (the last index i … i+n−1 inside its axis), then the
// elements, decoded inline for the common types (loadLanesI, loadLanesF),
// with no offsets through the general path. generic runs where an index
// is outside its extent (it reports the lane), the view does not lie
// wholly in its bound bytes, or its blocks are a batch's workgroup copies
// (gstride).
func vecGather(a *access, r *slot, n int, generic instr) instr {
	size := int64(a.cd.size)
	rank := len(a.idx)
	return func(fr *frame) error {
		v := &fr.V[a.v.idx][0]
		if v.mem == nil || v.gstride != 0 || int(v.rank) != rank || !v.fits(int(size)) {
			return generic(fr)
		}
		L := fr.L
		// An index's limit: its extent, less n−1 on the last axis.
		var lim, st [maxRank]int64
		var vary [maxRank]int
		nv := 0
		base := v.base
		for k, s := range a.idx {
			lim[k], st[k] = v.dims[k], v.strides[k]*size
			if k == rank-1 {
				lim[k] -= int64(n - 1)
			}
			if lim[k] <= 0 {
				return generic(fr) // no index fits: generic reports the lane
			}
			if !s.uni {
				vary[nv] = k
				nv++
				continue
			}
			i := fr.I[s.idx][0]
			if i < 0 || i >= lim[k] {
				return generic(fr)
			}
			base += i * st[k]
		}
		// First each lane's byte offset (-1: not active), so that no lane
		// is written before every one is known to be inside the extent;
		// then the elements, one row of lanes at a time.
		lo, hi := fr.lo, fr.hi
		offs := fr.scrI[0][lo:hi]
		full := fr.dense()
		if nv == 1 {
			// One varying index, the common case, in a loop of its own.
			ix, lk, sk := fr.I[a.idx[vary[0]].idx], uint64(lim[vary[0]]), st[vary[0]]
			for j := range offs {
				if !full && !fr.mask[lo+j] {
					offs[j] = -1
					continue
				}
				i := ix[lo+j]
				if uint64(i) >= lk {
					return generic(fr)
				}
				offs[j] = base + i*sk
			}
		} else {
			for j := range offs {
				if !full && !fr.mask[lo+j] {
					offs[j] = -1
					continue
				}
				off := base
				for _, k := range vary[:nv] {
					i := fr.I[a.idx[k].idx][lo+j]
					if i < 0 || i >= lim[k] {
						return generic(fr)
					}
					off += i * st[k]
				}
				offs[j] = off
			}
		}
		step := st[rank-1]
		for k := range int64(n) {
			at := int(k)*L + lo
			if a.cd.isFloat {
				loadLanesF(&a.cd, fr.F[r.idx][at:at+len(offs)], v.mem, offs, k*step)
			} else {
				loadLanesI(&a.cd, fr.I[r.idx][at:at+len(offs)], v.mem, offs, k*step)
			}
		}
		return gathered()
	}
}

// loadLanesI sets dst[j] to the element at byte offs[j]+add of mem for
// each lane j with an offset (offs[j] >= 0), decoding the common encodings
// inline.
func loadLanesI(cd *codec, dst []int64, mem []byte, offs []int64, add int64) {
	switch cd.enc {
	case encI8:
		decodeLanes(dst, mem, offs, add, func(b []byte) int64 { return int64(int8(b[0])) })
	case encI16:
		decodeLanes(dst, mem, offs, add, func(b []byte) int64 { return int64(int16(le.Uint16(b))) })
	case encI32:
		decodeLanes(dst, mem, offs, add, func(b []byte) int64 { return int64(int32(le.Uint32(b))) })
	default:
		decodeLanes(dst, mem, offs, add, cd.loadI)
	}
}

// loadLanesF is loadLanesI for float elements.
func loadLanesF(cd *codec, dst []float64, mem []byte, offs []int64, add int64) {
	switch cd.enc {
	case encF32:
		decodeLanes(dst, mem, offs, add, func(b []byte) float64 { return float64(math.Float32frombits(le.Uint32(b))) })
	case encF16:
		decodeLanes(dst, mem, offs, add, func(b []byte) float64 { return decodeF16(le.Uint16(b)) })
	case encBF16:
		decodeLanes(dst, mem, offs, add, func(b []byte) float64 { return decodeBF16(le.Uint16(b)) })
	default:
		decodeLanes(dst, mem, offs, add, cd.loadF)
	}
}

// decodeLanes is the loop of loadLanesI and loadLanesF. It is small enough
// to be inlined at each call, where dec, a function literal there, is
// inlined in turn: no call per element.
func decodeLanes[T int64 | float64](dst []T, mem []byte, offs []int64, add int64, dec func([]byte) T) {
	dst = dst[:len(offs)]
	for j, o := range offs {
		if o >= 0 {
			dst[j] = dec(mem[o+add:])
		}
	}
}

// loadRunI sets dst[0], dst[step], … dst[(n−1)·step] to the n elements
// lying one after another at the start of mem (a rank-1 vector read as one
// run), decoding the common encodings inline.
func loadRunI(cd *codec, dst []int64, step int, mem []byte, n int) {
	switch cd.enc {
	case encI8:
		decodeRun(dst, step, mem, n, 1, func(b []byte) int64 { return int64(int8(b[0])) })
	case encI16:
		decodeRun(dst, step, mem, n, 2, func(b []byte) int64 { return int64(int16(le.Uint16(b))) })
	case encI32:
		decodeRun(dst, step, mem, n, 4, func(b []byte) int64 { return int64(int32(le.Uint32(b))) })
	default:
		decodeRun(dst, step, mem, n, cd.size, cd.loadI)
	}
}

// loadRunF is loadRunI for float elements.
func loadRunF(cd *codec, dst []float64, step int, mem []byte, n int) {
	switch cd.enc {
	case encF32:
		decodeRun(dst, step, mem, n, 4, func(b []byte) float64 { return float64(math.Float32frombits(le.Uint32(b))) })
	case encF16:
		decodeRun(dst, step, mem, n, 2, func(b []byte) float64 { return decodeF16(le.Uint16(b)) })
	case encBF16:
		decodeRun(dst, step, mem, n, 2, func(b []byte) float64 { return decodeBF16(le.Uint16(b)) })
	default:
		decodeRun(dst, step, mem, n, cd.size, cd.loadF)
	}
}

// decodeRun is the loop of loadRunI and loadRunF (inlined as decodeLanes
// is), for elements of size bytes.
func decodeRun[T int64 | float64](dst []T, step int, mem []byte, n, size int, dec func([]byte) T) {
	mem = mem[:n*size]
	for i := range n {
		dst[i*step] = dec(mem[i*size:])
	}
}

// anyVaries reports whether some index of an access varies by lane.
func anyVaries(idx []*slot) bool {
	for _, s := range idx {
		if !s.uni {
			return true
		}
	}
	return false
}
