package interp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"testing"
)

// indexShiftRef is Loom's index shift or rotate: over the 64-bit logical
// value, count 0..63.
func indexShiftRef(op string, x, s int64) int64 {
	switch op {
	case "shli":
		return x << uint(s)
	case "shrsi":
		return x >> uint(s)
	case "shrui":
		return int64(uint64(x) >> uint(s))
	case "rotli":
		return int64(bits.RotateLeft64(uint64(x), int(s)))
	case "rotri":
		return int64(bits.RotateLeft64(uint64(x), -int(s)))
	}
	panic(op)
}

// TestIndexShift64 runs index_shift64.loom against Go: every column is
// the 64-bit result, or the sentinel where the kernel's own guard (the
// range the op reads the carrier in) excludes the row.
func TestIndexShift64(t *testing.T) {
	type col struct {
		op, operand string
		count       int64 // -1: the row's s
		guard       string
	}
	cols := []col{
		{"shli", "xs", -1, "signed"}, {"shrui", "x", -1, "signed"}, {"shrsi", "x", -1, ""},
		{"rotli", "xs", -1, "signed"}, {"rotri", "xs", -1, "signed"}, {"shli", "x", 3, "signed"},
		{"shli", "xs", 31, "wide"}, {"shrui", "x", 32, ""}, {"shrui", "x", 40, ""},
		{"shrui", "x", 1, "signed"}, {"rotri", "xs", 8, "signed"}, {"shli", "x", 40, "signed"},
		{"shrui", "w", -1, ""}, {"shrsi", "w", -1, ""}, {"rotli", "w", -1, "wide"}, {"shrui", "w", 3, ""},
	}
	const n, sentinel = 2048, int64(0x5A5A5A5A5A5A5A5A)
	r := compileRun(t, corpus(t, "index_shift64.loom"), "index_shift64", Options{})
	out := make([]byte, 8*len(cols)*n)
	r.run(wl(n), idx(n), buf(out))
	kept := make([]int, len(cols))
	for i := int64(0); i < n; i++ {
		x32 := int32(uint32(i)*0x9E3779B1) >> uint((5*i+3)&31)
		vals := map[string]int64{"x": int64(x32), "xs": int64(x32 >> 20), "w": i&255 + 4294967000}
		for c, cl := range cols {
			s := cl.count
			if s < 0 {
				s = i & 63
			}
			want := indexShiftRef(cl.op, vals[cl.operand], s)
			switch {
			case cl.guard == "signed" && (want < -1<<31 || want >= 1<<31),
				cl.guard == "wide" && uint64(want) >= 1<<32:
				want = sentinel
			default:
				kept[c]++
			}
			got := int64(binary.LittleEndian.Uint64(out[8*(int(i)*len(cols)+c):]))
			if got != want {
				t.Fatalf("row %d column %d (index.%s %%%s = %d, %d): got %d, want %d", i, c, cl.op, cl.operand, vals[cl.operand], s, got, want)
			}
		}
	}
	// Each guarded column must check some rows, not only the sentinel.
	for c, k := range kept {
		if k == 0 {
			t.Errorf("column %d: no row passes its guard", c)
		}
	}
	t.Logf("rows checked per column: %v", kept)
}

// indexShiftBody applies one index op to two index arguments; the result
// is written as i64 (its logical value).
func indexShiftBody(op string) string {
	return fmt.Sprintf(`  %%c0 = index.constant 0 : index
  %%z = index.constant 0 : offset
  %%v = buffer.view %%b[%%z] : buffer -> view<1xi64>
  %%r = index.%s %%x, %%s : index
  %%q = index.cast %%r : index to i64
  view.store %%q, %%v[%%c0] : i64, view<1xi64>`, op)
}

// TestIndexShiftCarrier: on the 32-bit index carrier the CPU executor
// gives Loom's 64-bit answer wherever the carrier holds it, including
// [2^31, 2^32), and reports ErrOverflow or ErrShift where it does not.
func TestIndexShiftCarrier(t *testing.T) {
	cases := []struct {
		op   string
		x, s int64
		err  error
	}{
		{"shli", 1, 31, nil},           // 2^31: past bit 31, held unsigned
		{"shli", 3, 30, nil},           // 3·2^30 < 2^32
		{"shli", -1, 31, nil},          // -2^31
		{"shli", 1, 32, ErrOverflow},   // 2^32
		{"shli", 0, 63, nil},           // 0
		{"shli", -3, 62, ErrOverflow},  // 2^62 after wrapping
		{"shrui", -1, 32, nil},         // 2^32 - 1
		{"shrui", -8, 33, nil},         // 2^31 - 1
		{"shrui", -8, 1, ErrOverflow},  // 2^63 - 4
		{"shrui", -1, 63, nil},         // 1
		{"shrui", 100, 40, nil},        // 0
		{"shrsi", -5, 40, nil},         // -1
		{"rotli", -1, 17, nil},         // -1
		{"rotli", 1, 31, nil},          // 2^31
		{"rotli", 1, 63, ErrOverflow},  // -2^63
		{"rotri", 2, 1, nil},           // 1
		{"rotri", 1, 1, ErrOverflow},   // -2^63
		{"rotri", 1, 33, nil},          // 2^31
		{"rotri", -2, 1, ErrOverflow},  // 2^63 - 1
		{"rotri", 0x7fff0000, 16, nil}, // 0x7fff
		{"shli", 1, 64, ErrShift},      // count past 63
		{"shrui", 1, -1, ErrShift},     // negative count
		{"rotli", 5, 64, ErrShift},     // count past 63
		{"shrsi", 5, 70, ErrShift},     // count past 63
		{"xori", 1 << 30, -1, nil},     // -(2^30) - 1
		{"andi", -1, 0x7fffffff, nil},  // 2^31 - 1
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s(%d,%d)", c.op, c.x, c.s)
		out := make([]byte, 8)
		err := runInline(t, "%b: buffer, %x: index, %s: index", indexShiftBody(c.op), grid(1, 4), buf(out), idx(c.x), idx(c.s))
		if c.err != nil {
			if !errors.Is(err, c.err) || !strings.Contains(err.Error(), "index."+c.op) {
				t.Errorf("%s: got %v, want %v at the op", name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var want int64
		switch c.op {
		case "xori":
			want = c.x ^ c.s
		case "andi":
			want = c.x & c.s
		default:
			want = indexShiftRef(c.op, c.x, c.s)
		}
		if got := int64(binary.LittleEndian.Uint64(out)); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}
