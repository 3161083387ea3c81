package interp

import (
	"errors"
	"strings"
	"testing"
)

// shruiBody shifts two uniform index arguments and stores the result as
// i32, so index.shrui runs its one-value path. Every lane stores the same
// value to one element: tests launch a single workgroup (no cross-group race).
const shruiBody = `  %c0 = index.constant 0 : index
  %z = index.constant 0 : offset
  %v = buffer.view %b[%z] : buffer -> view<1xi32>
  %q = index.shrui %x, %s : index
  %qi = index.cast %q : index to i32
  view.store %qi, %v[%c0] : i32, view<1xi32>`

const shruiParams = "%b: buffer, %x: index, %s: index"

// TestUniformShruiMatchesGo: index.shrui is over the 64-bit logical
// value (LOOM.md 6.1); a negative index shifted by 1..31 leaves the 32-bit
// carrier.
func TestUniformShruiMatchesGo(t *testing.T) {
	for _, x := range []int64{0, 1, 128, 255, 12345678, 1<<31 - 1, -1, -1 << 31, -12345} {
		for _, s := range []int64{0, 1, 7, 16, 31, 32, 33, 40, 63} {
			out := make([]byte, 4)
			want := int64(uint64(x) >> uint(s))
			err := runInline(t, shruiParams, shruiBody, grid(1, 8), buf(out), idx(x), idx(s))
			if want > 1<<32-1 {
				if !errors.Is(err, ErrOverflow) {
					t.Fatalf("%d >> %d: got %v, want ErrOverflow", x, s, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%d >> %d: %v", x, s, err)
			}
			if got := le.Uint32(out); got != uint32(want) {
				t.Fatalf("%d >> %d = %#x, want %#x", x, s, got, uint32(want))
			}
		}
	}
}

func TestUniformShruiCountError(t *testing.T) {
	for _, s := range []int64{64, 70, -1} {
		err := runInline(t, shruiParams, shruiBody, grid(1, 4), buf(make([]byte, 4)), idx(5), idx(s))
		if !errors.Is(err, ErrShift) {
			t.Fatalf("shift by %d: got %v, want ErrShift", s, err)
		}
		for _, w := range []string{"index.shrui", "shift count not below the operand width", "operands 5,"} {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("shift by %d: %q lacks %q", s, err, w)
			}
		}
	}
}
