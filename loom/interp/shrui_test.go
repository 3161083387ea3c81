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

func TestUniformShruiMatchesGo(t *testing.T) {
	for _, x := range []uint32{0, 1, 128, 255, 1 << 31, 0xffffffff, 0x80000001, 12345678} {
		for _, s := range []uint32{0, 1, 7, 16, 31} {
			out := make([]byte, 4)
			if err := runInline(t, shruiParams, shruiBody, grid(1, 8), buf(out), idx(int64(x)), idx(int64(s))); err != nil {
				t.Fatalf("%#x >> %d: %v", x, s, err)
			}
			if got, want := le.Uint32(out), x>>s; got != want {
				t.Fatalf("%#x >> %d = %#x, want %#x", x, s, got, want)
			}
		}
	}
}

func TestUniformShruiCountError(t *testing.T) {
	for _, s := range []int64{32, 40} {
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
