package runtime

import "sort"

// span is one byte range a command touches, with how it touches it.
type span struct {
	alloc uint32
	off   int
	n     int
	acc   Access
}

// segment is a maximal byte range [start, end) of one allocation whose
// history is uniform: the same last writer and the same readers since.
type segment struct {
	start, end int
	writer     int32   // last node that wrote these bytes; -1 for none
	readers    []int32 // nodes that read them since writer, in order, no repeats in a row
}

// hazardTracker infers dependencies between the commands of one recording.
// Per allocation it keeps a sorted set of disjoint segments (gaps are bytes
// no command has touched yet) and finds the segments a span overlaps by
// binary search, so recording costs O(log segments + overlapped segments)
// per span, not a scan of everything recorded so far.
type hazardTracker struct {
	allocs  [][]segment // indexed by allocation id
	mark    []int32     // mark[d] == n+1 when d is already a dependency of n
	scratch []segment
}

// add records node n touching spans and appends its dependencies to deps:
// a read depends on the last writer of the bytes; a write depends on the last
// writer and on every reader since. All spans of a node are looked up before
// any is applied, so a node never depends on itself, even when it reads and
// writes the same bytes. Empty spans and AccessNone order nothing.
func (h *hazardTracker) add(n int32, spans []span, deps []int32) []int32 {
	for int(n) >= len(h.mark) {
		h.mark = append(h.mark, 0)
	}
	dep := func(d int32) {
		if d >= 0 && d != n && h.mark[d] != n+1 {
			h.mark[d] = n + 1
			deps = append(deps, d)
		}
	}
	for _, sp := range spans {
		if sp.n == 0 || sp.acc == AccessNone || int(sp.alloc) >= len(h.allocs) {
			continue
		}
		segs := h.allocs[sp.alloc]
		end := sp.off + sp.n
		for i := firstEndingAfter(segs, sp.off); i < len(segs) && segs[i].start < end; i++ {
			dep(segs[i].writer)
			if sp.acc.Writes() {
				for _, r := range segs[i].readers {
					dep(r)
				}
			}
		}
	}
	for _, sp := range spans {
		if sp.n > 0 && sp.acc.Reads() {
			h.read(n, sp)
		}
	}
	for _, sp := range spans {
		if sp.n > 0 && sp.acc.Writes() {
			h.write(n, sp)
		}
	}
	return deps
}

// firstEndingAfter is the index of the first segment whose end is past off.
func firstEndingAfter(segs []segment, off int) int {
	return sort.Search(len(segs), func(i int) bool { return segs[i].end > off })
}

func (h *hazardTracker) segs(alloc uint32) []segment {
	for int(alloc) >= len(h.allocs) {
		h.allocs = append(h.allocs, nil)
	}
	return h.allocs[alloc]
}

// read adds n as a reader of every byte of sp, splitting segments at the
// span's ends and filling gaps with fresh segments.
func (h *hazardTracker) read(n int32, sp span) {
	segs := h.segs(sp.alloc)
	a, b := sp.off, sp.off+sp.n
	i := firstEndingAfter(segs, a)
	j := i
	for j < len(segs) && segs[j].start < b {
		j++
	}
	mid := h.scratch[:0]
	if i < j && segs[i].start < a {
		left := segs[i]
		left.end = a
		left.readers = left.readers[:len(left.readers):len(left.readers)]
		mid = append(mid, left)
	}
	pos := a
	for k := i; k < j; k++ {
		s := segs[k]
		lo, hi := max(s.start, a), min(s.end, b)
		if lo > pos {
			mid = append(mid, segment{start: pos, end: lo, writer: -1, readers: []int32{n}})
		}
		// Cap the shared reader list so appends on either side of a split
		// copy instead of overwriting each other's tail.
		rs := s.readers[:len(s.readers):len(s.readers)]
		if len(rs) == 0 || rs[len(rs)-1] != n {
			rs = append(rs, n)
		}
		mid = append(mid, segment{start: lo, end: hi, writer: s.writer, readers: rs})
		pos = hi
	}
	if pos < b {
		mid = append(mid, segment{start: pos, end: b, writer: -1, readers: []int32{n}})
	}
	if i < j && segs[j-1].end > b {
		right := segs[j-1]
		right.start = b
		right.readers = right.readers[:len(right.readers):len(right.readers)]
		mid = append(mid, right)
	}
	h.allocs[sp.alloc] = splice(segs, i, j, mid)
	h.scratch = mid[:0]
}

// write makes n the last writer of every byte of sp, with no readers since;
// the span becomes one segment.
func (h *hazardTracker) write(n int32, sp span) {
	segs := h.segs(sp.alloc)
	a, b := sp.off, sp.off+sp.n
	i := firstEndingAfter(segs, a)
	j := i
	for j < len(segs) && segs[j].start < b {
		j++
	}
	mid := h.scratch[:0]
	if i < j && segs[i].start < a {
		left := segs[i]
		left.end = a
		left.readers = left.readers[:len(left.readers):len(left.readers)]
		mid = append(mid, left)
	}
	mid = append(mid, segment{start: a, end: b, writer: n})
	if i < j && segs[j-1].end > b {
		right := segs[j-1]
		right.start = b
		right.readers = right.readers[:len(right.readers):len(right.readers)]
		mid = append(mid, right)
	}
	h.allocs[sp.alloc] = splice(segs, i, j, mid)
	h.scratch = mid[:0]
}

// splice replaces segs[i:j] with repl (which it copies).
func splice(segs []segment, i, j int, repl []segment) []segment {
	delta := len(repl) - (j - i)
	switch {
	case delta > 0:
		segs = append(segs, make([]segment, delta)...)
		copy(segs[j+delta:], segs[j:len(segs)-delta])
	case delta < 0:
		copy(segs[j+delta:], segs[j:])
		clear(segs[len(segs)+delta:])
		segs = segs[:len(segs)+delta]
	}
	copy(segs[i:], repl)
	return segs
}
