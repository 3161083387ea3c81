package ptx

import "github.com/loomgen/loomgen/loom"

// A bit cast that changes the lane count is lowered (loom.lowerBitcast)
// into extracts, zero extensions, shifts and ors. Over the lanes of one
// loaded word — a vector<2xi16> load bitcast to an i32, as q6_K's packed
// quants are read — that rebuilds the very word that was loaded: each lane
// is split out sign-extended (bfe), masked back, shifted and or-ed, and
// ptxas does not see through the chain (five SASS instructions a word).
// bitField tracks which bits of which register an integer holds, so the
// or that completes the word becomes the word itself.

// bitField says an i32 value equals bits lo…lo+n-1 of the 32-bit register
// word, moved to bit at, with every other bit zero.
type bitField struct {
	word      string
	lo, n, at int
}

// whole reports whether the field is its word, unmoved.
func (f *bitField) whole() bool { return f.lo == 0 && f.at == 0 && f.n == 32 }

// isI32 reports whether t is a 32-bit integer carried in one register.
func isI32(t *loom.Type) bool {
	return t != nil && t.Kind == loom.TypeInt && t.Bits == 32 && classOf(t) == cR
}

// extField is the field of the zero extension of x, an n-bit integer
// (n < 32), to i32: x's bits as loaded from a word (val.word) or as held.
func extField(x *val, n int) *bitField {
	if x.known || n >= 32 || classOf(x.t) != cR {
		return nil
	}
	w, sh := x.reg, 0
	if x.word != "" {
		w, sh = x.word, x.wordShift
	}
	if sh+n > 32 {
		return nil
	}
	return &bitField{word: w, lo: sh, n: n}
}

// opField is the field of the i32 result of x op y (shli by a constant,
// andi with a low mask, ori of two adjacent in-place fields of one word),
// or nil where none is known.
func opField(rest string, x, y *val) *bitField {
	switch rest {
	case "shli":
		if f := x.field; f != nil && y.known && y.ci >= 0 && int64(f.at+f.n)+y.ci <= 32 {
			return &bitField{word: f.word, lo: f.lo, n: f.n, at: f.at + int(y.ci)}
		}
	case "andi":
		if x.known {
			x, y = y, x
		}
		if f := x.field; f != nil && f.at == 0 && y.known && y.ci > 0 && y.ci&(y.ci+1) == 0 {
			m := 0
			for ; y.ci>>m != 0; m++ {
			}
			return &bitField{word: f.word, lo: f.lo, n: min(f.n, m)}
		}
	case "ori":
		f, g := x.field, y.field
		if f == nil || g == nil || f.word != g.word || f.lo != f.at || g.lo != g.at {
			return nil
		}
		if g.lo < f.lo {
			f, g = g, f
		}
		if f.lo+f.n != g.lo {
			return nil
		}
		return &bitField{word: f.word, lo: f.lo, n: f.n + g.n, at: f.lo}
	}
	return nil
}

// halvesSelector is, for the or of two 16-bit fields that fill an i32's
// low and high halves (each a half of some register), the prmt that
// builds it from those registers: a word loaded as two 2-byte halves is
// put together by one prmt, where ptxas masked the low half first.
func halvesSelector(x, y *val) (lo, hi string, sel int, ok bool) {
	f, g := x.field, y.field
	if f == nil || g == nil {
		return "", "", 0, false
	}
	if f.at == 16 {
		f, g = g, f
	}
	if f.n != 16 || g.n != 16 || f.at != 0 || g.at != 16 || f.lo%16 != 0 || g.lo%16 != 0 {
		return "", "", 0, false
	}
	a, b := f.lo/8, 4+g.lo/8 // prmt byte indices: 0–3 the first source, 4–7 the second
	return f.word, g.word, a | (a+1)<<4 | b<<8 | (b+1)<<12, true
}

// Known-zero bits and multiples. A sign fill written as
// `b | b << 1 | b << 2` (q6_K's high bits spread over a byte) ors shifted
// copies of one value whose set bits cannot overlap: the sum b·7, one
// multiply, where ptxas emits two (b·2 + b, then ·4 + that).

// multiple says an i32 equals x·k modulo 2^32.
type multiple struct {
	x *val
	k uint32
}

// asMultiple is v as a multiple: its recorded one, or v·1.
func asMultiple(v *val) multiple {
	if v.mul != nil {
		return *v.mul
	}
	return multiple{x: v, k: 1}
}

// knownZeros sets out.zeros, the bits of the i32 result of x op y known
// to be 0, and out.mul for a constant left shift.
func knownZeros(rest string, out, x, y *val) {
	if y.known && !x.known {
		switch s := y.ci; {
		case rest == "andi":
			out.zeros = ^uint32(y.ci) | x.zeros
		case rest == "shli" && s >= 0 && s < 32:
			out.zeros = x.zeros<<s | (1<<s - 1)
			m := asMultiple(x)
			out.mul = &multiple{x: m.x, k: m.k << s}
		case rest == "shrui" && s >= 0 && s < 32:
			out.zeros = x.zeros>>s | ^(^uint32(0) >> s)
		}
		return
	}
	if x.known && rest == "andi" {
		out.zeros = ^uint32(x.ci) | y.zeros
		return
	}
	if rest == "ori" || rest == "andi" && !x.known && !y.known {
		if rest == "ori" {
			out.zeros = x.zeros & y.zeros
		} else {
			out.zeros = x.zeros | y.zeros
		}
	}
}

// disjointSum is, for x | y whose possibly-set bits do not overlap and
// that are multiples of one value, that value and the sum of the factors:
// the or is their sum.
func disjointSum(x, y *val) (multiple, bool) {
	if x.known || y.known || ^x.zeros&^y.zeros != 0 {
		return multiple{}, false
	}
	a, b := asMultiple(x), asMultiple(y)
	if a.x != b.x || a.x.known {
		return multiple{}, false
	}
	return multiple{x: a.x, k: a.k + b.k}, true
}
