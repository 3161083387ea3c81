package loom

import "math/bits"

// rootSet is a bit set of root indices (launch parameters of a kernel, or
// parameters of a function being summarized).
type rootSet []uint64

func (s rootSet) has(i int) bool {
	w := i / 64
	return w < len(s) && s[w]&(1<<(uint(i)%64)) != 0
}

func (s rootSet) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// with returns s plus i, and whether that added anything. The receiver's
// backing array may be reused.
func (s rootSet) with(i int) (rootSet, bool) {
	w := i / 64
	for len(s) <= w {
		s = append(s, 0)
	}
	m := uint64(1) << (uint(i) % 64)
	if s[w]&m != 0 {
		return s, false
	}
	s[w] |= m
	return s, true
}

// union returns s ∪ o and whether s grew.
func (s rootSet) union(o rootSet) (rootSet, bool) {
	changed := false
	for len(s) < len(o) {
		s = append(s, 0)
	}
	for i, w := range o {
		if s[i]|w != s[i] {
			s[i] |= w
			changed = true
		}
	}
	return s, changed
}

func (s rootSet) each(fn func(int)) {
	for wi, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			fn(wi*64 + b)
			w &^= 1 << uint(b)
		}
	}
}

func (s rootSet) equal(o rootSet) bool {
	n := max(len(s), len(o))
	for i := 0; i < n; i++ {
		var a, b uint64
		if i < len(s) {
			a = s[i]
		}
		if i < len(o) {
			b = o[i]
		}
		if a != b {
			return false
		}
	}
	return true
}

func (s rootSet) clone() rootSet { return append(rootSet(nil), s...) }
