package interp

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// shiftBody copies x[i+s] (s uniform) into y[i] for i < n: an affine index
// plus a uniform, under a tail guard, so it runs the contiguous f32 paths,
// the affine add and the range mask.
const shiftBody = `  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %ok = index.cmp ult, %i, %n : index
  %xv = buffer.view %x[%z] : buffer -> view<[%m]xf32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  scf.if %ok {
    %j = index.add %i, %s : index
    %v = view.load %xv[%j] : view<[%m]xf32> -> f32
    %w = scalar.mulf %v, %v : f32
    view.store %w, %yv[%i] : f32, view<[%n]xf32>
  }`

const shiftParams = "%n: index, %m: index, %s: index, %x: buffer, %y: buffer"

func TestAffineShiftMatchesReference(t *testing.T) {
	for _, c := range []struct {
		n, s, groups, size int
		sy                 int
	}{
		{1000, 1, 8, 128, 1}, {1024, 0, 8, 128, 1}, {1, 3, 1, 64, 1}, {77, 5, 3, 32, 1},
		{200, 2, 4, 16, 4}, // two-dimensional workgroups: ids are not lane-affine
	} {
		m := c.n + c.s
		x := ramp(m, 11, 100)
		y := make([]float32, c.n)
		yb := f32bytes(y)
		l := Launch{Workgroups: [3]int{c.groups, 1, 1}, WorkgroupSize: [3]int{c.size, c.sy, 1}}
		if err := runInline(t, shiftParams, shiftBody, l, idx(int64(c.n)), idx(int64(m)), idx(int64(c.s)), buf(f32bytes(x)), buf(yb)); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		// Ids along x reach groups*size; rows of a 2-D workgroup repeat them.
		covered := min(c.n, c.groups*c.size)
		for i := 0; i < c.n; i++ {
			got := math.Float32frombits(le.Uint32(yb[4*i:]))
			want := float32(0)
			if i < covered {
				want = x[i+c.s] * x[i+c.s]
			}
			if got != want {
				t.Fatalf("%+v: y[%d] = %v, want %v", c, i, got, want)
			}
		}
	}
}

func TestAffineAccessErrors(t *testing.T) {
	cases := []struct {
		name string
		n, m int
		s    int
		xlen int // bytes bound to x
		want []string
	}{
		// x[i+1] with x of n elements: the last active lane reads past the view.
		{"load past view", 100, 100, 1, 400, []string{"view.load", "index [100] out of bounds: axis 0 has size 100", "workgroup (3,0,0)", "workitem (3,0,0)"}},
		// The view claims more than the bound bytes hold.
		{"load past buffer", 100, 101, 1, 400, []string{"view.load", "index [100]", "outside its 400 bound bytes", "workgroup (3,0,0)", "workitem (3,0,0)"}},
	}
	for _, c := range cases {
		y := make([]byte, 4*c.n)
		err := runInline(t, shiftParams, shiftBody, grid(4, 32), idx(int64(c.n)), idx(int64(c.m)), idx(int64(c.s)), buf(make([]byte, c.xlen)), buf(y))
		if !errors.Is(err, ErrOutOfBounds) {
			t.Fatalf("%s: err = %v, want ErrOutOfBounds", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
	}
	// A store through a view larger than its buffer.
	y := make([]byte, 4*50)
	err := runInline(t, shiftParams, shiftBody, grid(2, 64), idx(60), idx(60), idx(0), buf(make([]byte, 240)), buf(y))
	if !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "view.store") || !strings.Contains(err.Error(), "workitem (50,0,0)") {
		t.Fatalf("store past buffer: %v", err)
	}
	// The affine add past 2^31-1 stays exact (a 32-bit index carrier holds
	// non-negative values up to 2^32-1, unsigned): lane 4's index is
	// 2^31, not wrapped, and the load reports it out of bounds.
	err = runInline(t, shiftParams, shiftBody, grid(1, 8), idx(8), idx(1<<31-1), idx(math.MaxInt32-3), buf(make([]byte, 32)), buf(make([]byte, 32)))
	if !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "index [2147483648]") && !strings.Contains(err.Error(), "index [2147483644]") {
		t.Fatalf("affine add past 2^31: %v", err)
	}
}

// maddBody stores y[g*s + tid] = tid+1 through index.madd of two uniforms
// and the affine work-item id, bounded by n.
const maddBody = `  %t = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  %j = index.madd %g, %s, %t : index
  %ok = index.cmp ult, %j, %n : index
  scf.if %ok {
    %v = index.cast %t : index -> i32
    %one = scalar.constant 1 : i32
    %w = scalar.addi %v, %one : i32
    %f = scalar.sitofp %w : i32 -> f32
    view.store %f, %yv[%j] : f32, view<[%n]xf32>
  }`

const maddParams = "%n: index, %s: index, %y: buffer"

func TestAffineMaddMatchesReference(t *testing.T) {
	for _, c := range []struct{ n, s, groups, size, sy int }{
		{1000, 128, 8, 128, 1}, {500, 100, 5, 100, 1}, {77, 40, 3, 32, 1},
		{64, 16, 4, 8, 2}, // two-dimensional workgroups: the general path
	} {
		yb := make([]byte, 4*c.n)
		l := Launch{Workgroups: [3]int{c.groups, 1, 1}, WorkgroupSize: [3]int{c.size, c.sy, 1}}
		if err := runInline(t, maddParams, maddBody, l, idx(int64(c.n)), idx(int64(c.s)), buf(yb)); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		want := make([]float32, c.n)
		for g := 0; g < c.groups; g++ {
			for tid := 0; tid < c.size; tid++ {
				if j := g*c.s + tid; j < c.n {
					want[j] = float32(tid + 1)
				}
			}
		}
		exactF32(t, "y", bytesF32(yb), want)
	}
	// Overflow of g*s+tid is reported at the first lane past the carrier,
	// which holds non-negative values up to 2^32-1: 2·(2^31-2)+4 = 2^32.
	err := runInline(t, maddParams, maddBody, grid(3, 8), idx(8), idx(math.MaxInt32-1), buf(make([]byte, 32)))
	if !errors.Is(err, ErrOverflow) || !strings.Contains(err.Error(), "index.madd") || !strings.Contains(err.Error(), "workgroup (2,0,0)") || !strings.Contains(err.Error(), "workitem (4,0,0)") {
		t.Fatalf("affine madd overflow: %v", err)
	}
}
