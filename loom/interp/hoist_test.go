package interp

import (
	"errors"
	"strings"
	"testing"
)

// hoistBody copies x[g+off] into y[g] for the global id g. The views of the
// parameter buffers and the size product are the same in every workgroup
// (hoisted); the group's base is not. The barrier keeps it unbatched.
const hoistBody = `  %tid = kernel.workitem.id<x> : index
  %wg = kernel.workgroup.id<x> : index
  %ng = kernel.workgroup.count<x> : index
  %sz = kernel.workgroup.size<x> : index
  %z = index.constant 0 : offset
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xi32>
  %total = index.mul %ng, %sz : index
  %yv = buffer.view %y[%z] : buffer -> view<[%total]xi32>
  %base = index.mul %wg, %sz : index
  %g = index.add %base, %tid : index
  %src = index.add %g, %off : index
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  %v = view.load %xv[%src] : view<[%n]xi32> -> i32
  view.store %v, %yv[%g] : i32, view<[%total]xi32>`

const hoistParams = "%n: index, %off: index, %x: buffer, %y: buffer"

func TestHoistedPrologue(t *testing.T) {
	k, err := compileInline(t, hoistParams, hoistBody)
	if err != nil {
		t.Fatal(err)
	}
	// count, size, both views and their product; not the group's base.
	if len(k.pre) != 5 || len(k.body)+len(k.pre) != len(k.code) {
		t.Fatalf("hoisted %d of %d instructions (body %d), want 5", len(k.pre), len(k.code), len(k.body))
	}
	// One Kernel, reused frames, different arguments each Run: the
	// prologue must see each Run's own.
	for _, c := range []struct{ groups, size, off int }{{4, 8, 0}, {3, 16, 5}, {7, 4, 1}, {4, 8, 2}} {
		total := c.groups * c.size
		n := total + c.off
		x := make([]byte, 4*n)
		for i := range n {
			le.PutUint32(x[4*i:], uint32(1000*c.off+i))
		}
		y := make([]byte, 4*total)
		if err := k.Run(grid(c.groups, c.size), []Arg{idx(int64(n)), idx(int64(c.off)), buf(x), buf(y)}); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		for g := range total {
			if got, want := le.Uint32(y[4*g:]), uint32(1000*c.off+g+c.off); got != want {
				t.Fatalf("%+v: y[%d] = %d, want %d", c, g, got, want)
			}
		}
	}
}

// A hoisted op that traps in the prologue leaves the frame on the whole
// code: where every lane exits before reaching it there is no error, and
// where they reach it the error is the unhoisted one.
func TestHoistedTrapFallsBack(t *testing.T) {
	body := `  %c0 = index.constant 0 : index
  %stop = index.cmp eq, %q, %c0 : index
  kernel.exit %stop : i1
  %z = index.constant 0 : offset
  %v = buffer.view %b[%z] : buffer -> view<[%n]xi32>
  kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)`
	k, err := compileInline(t, "%n: index, %b: buffer, %q: index", body)
	if err != nil {
		t.Fatal(err)
	}
	if len(k.pre) != 1 {
		t.Fatalf("hoisted %d instructions, want the view", len(k.pre))
	}
	if err := k.Run(grid(3, 4), []Arg{idx(-1), buf(nil), idx(0)}); err != nil {
		t.Fatalf("every lane exits before the view: %v", err)
	}
	err = k.Run(grid(3, 4), []Arg{idx(-1), buf(nil), idx(1)})
	if !errors.Is(err, ErrOutOfBounds) {
		t.Fatalf("got %v, want ErrOutOfBounds", err)
	}
	for _, w := range []string{"buffer.view", "negative", "workgroup ("} {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%q lacks %q", err, w)
		}
	}
}
