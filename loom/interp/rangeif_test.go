package interp

import (
	"bytes"
	"errors"
	"testing"
)

// rangeIfSrc guards on the work-item id in every shape rangeIf handles
// (ult then-only, slt with an else, eq, a shrinking bound in a loop, a
// guard inside a non-dense outer branch, a guard on a non-affine index)
// and accumulates a distinct amount per guard into out[gid].
const rangeIfSrc = `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %c64 = index.constant 64 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c64, %c1, %c1) : index
} launch(%n: index, %m: index, %e: index, %out: buffer) {
  %tid = kernel.workitem.id<x> : index
  %gid = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %v = buffer.view %out[%z] : buffer -> view<[%n]xi32>
  %one = scalar.constant 1 : i32
  %ten = scalar.constant 10 : i32
  %hun = scalar.constant 100 : i32
  %tho = scalar.constant 1000 : i32
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c4 = index.constant 4 : index
  %c32 = index.constant 32 : index
  %g1 = index.cmp ult, %tid, %m : index
  scf.if %g1 {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %one : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  %g2 = index.cmp slt, %tid, %m : index
  scf.if %g2 {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %ten : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  } else {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %hun : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  %g3 = index.cmp eq, %tid, %e : index
  scf.if %g3 {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %tho : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  } else {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %one : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  scf.for %k = [%c0 to %c4 step %c1] {
    %s = index.shrui %c32, %k : index
    %g4 = index.cmp ult, %tid, %s : index
    scf.if %g4 {
      %x = view.load %v[%gid] : view<[%n]xi32> -> i32
      %y = scalar.addi %x, %ten : i32
      view.store %y, %v[%gid] : i32, view<[%n]xi32>
    }
  }
  %r = index.rem %tid, %c2 : index
  %odd = index.cmp eq, %r, %c1 : index
  scf.if %odd {
    %g5 = index.cmp ult, %tid, %m : index
    scf.if %g5 {
      %x = view.load %v[%gid] : view<[%n]xi32> -> i32
      %y = scalar.addi %x, %hun : i32
      view.store %y, %v[%gid] : i32, view<[%n]xi32>
    }
  }
  %t2 = index.mul %tid, %c2 : index
  %g6 = index.cmp ult, %t2, %m : index
  scf.if %g6 {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %tho : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  kernel.return
}
`

// rangeIfWant is the Go reference of rangeIfSrc for one work-item.
func rangeIfWant(tid, m, e int64) int32 {
	var v int32
	if uint32(tid) < uint32(m) {
		v++
	}
	if tid < m {
		v += 10
	} else {
		v += 100
	}
	if tid == e {
		v += 1000
	} else {
		v++
	}
	for k := 0; k < 4; k++ {
		if tid < 32>>k {
			v += 10
		}
	}
	if tid%2 == 1 && uint32(tid) < uint32(m) {
		v += 100
	}
	if uint32(tid*2) < uint32(m) {
		v += 1000
	}
	return v
}

// TestRangeIf runs the guards fused and unfused against the Go reference,
// for bounds below, inside and above the workgroup, negative ones (slt
// takes the range, ult falls back), and checks the fused form ran.
func TestRangeIf(t *testing.T) {
	m := parseSrc(t, rangeIfSrc)
	countFused = true
	defer func() { countFused, noRangeIf = false, false }()
	const groups, L = 3, 64
	for _, bound := range []int64{0, 1, 5, 31, 63, 64, 70, -3} {
		for _, e := range []int64{0, 17, 63, 64} {
			var outs [2][]byte
			for pass, off := range []bool{false, true} {
				noRangeIf = off
				r := compileRun(t, m, "k", Options{Workers: 2})
				out := make([]byte, 4*groups*L)
				before := rangeIfRuns.Load()
				if err := r.k.Run(grid(groups, L), []Arg{idx(groups * L), idx(bound), idx(e), buf(out)}); err != nil {
					t.Fatalf("m=%d e=%d unfused=%v: %v", bound, e, off, err)
				}
				ran := rangeIfRuns.Load() - before
				if off && ran != 0 || !off && ran == 0 {
					t.Fatalf("m=%d e=%d unfused=%v: %d fused guards ran", bound, e, off, ran)
				}
				want := make([]int32, groups*L)
				for i := range want {
					want[i] = rangeIfWant(int64(i%L), bound, e)
				}
				exactI32(t, "rangeif", bytesI32(out), want)
				outs[pass] = out
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatalf("m=%d e=%d: fused and unfused bytes differ", bound, e)
			}
		}
	}
}

// TestRangeIfErrors checks that a bounds error and a divergent barrier
// inside a fused guard are reported exactly as unfused.
func TestRangeIfErrors(t *testing.T) {
	defer func() { noRangeIf = false }()
	const params = "%n: index, %m: index, %b: buffer"
	oob := `  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %v = buffer.view %b[%z] : buffer -> view<[%n]xi32>
  %one = scalar.constant 1 : i32
  %g = index.cmp ult, %tid, %m : index
  scf.if %g {
    view.store %one, %v[%tid] : i32, view<[%n]xi32>
  }`
	bar := `  %tid = kernel.workitem.id<x> : index
  %g = index.cmp slt, %tid, %m : index
  scf.if %g {
    kernel.barrier<workgroup> scope(workgroup) ordering(acq_rel)
  }`
	for _, c := range []struct {
		name, body string
		class      error
	}{{"bounds", oob, ErrOutOfBounds}, {"barrier", bar, ErrDivergentBarrier}} {
		var msgs [2]string
		for pass, off := range []bool{false, true} {
			noRangeIf = off
			err := runInline(t, params, c.body, grid(1, 16), idx(4), idx(9), buf(make([]byte, 64)))
			var re *RunError
			if !errors.As(err, &re) || !errors.Is(err, c.class) || !re.HasItem {
				t.Fatalf("%s unfused=%v: err = %v, want %v naming a work-item", c.name, off, err, c.class)
			}
			msgs[pass] = err.Error()
		}
		if msgs[0] != msgs[1] {
			t.Fatalf("%s: fused error %q, unfused %q", c.name, msgs[0], msgs[1])
		}
	}
}

// rangeMaskSrc runs guards whose then lanes are a prefix or a suffix of
// the workgroup (the shared read-only step masks) around code that reads
// the mask lane by lane (a non-affine guard inside, per-lane i32 stores),
// and a guard whose region ends lanes with kernel.exit (which must not
// write into a shared mask), followed by a guard the exited lanes skip.
const rangeMaskSrc = `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %c64 = index.constant 64 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c64, %c1, %c1) : index
} launch(%n: index, %m: index, %e: index, %out: buffer) {
  %tid = kernel.workitem.id<x> : index
  %gid = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %v = buffer.view %out[%z] : buffer -> view<[%n]xi32>
  %one = scalar.constant 1 : i32
  %sev = scalar.constant 7 : i32
  %hun = scalar.constant 100 : i32
  %c0 = index.constant 0 : index
  %c3 = index.constant 3 : index
  %g1 = index.cmp ult, %tid, %m : index
  scf.if %g1 {
    %r = index.rem %tid, %c3 : index
    %t = index.cmp eq, %r, %c0 : index
    scf.if %t {
      %x = view.load %v[%gid] : view<[%n]xi32> -> i32
      %y = scalar.addi %x, %sev : i32
      view.store %y, %v[%gid] : i32, view<[%n]xi32>
    }
  } else {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %one : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  %g2 = index.cmp slt, %tid, %m : index
  scf.if %g2 {
    %d = index.cmp eq, %tid, %e : index
    kernel.exit %d : i1
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %one : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  %g3 = index.cmp ult, %tid, %m : index
  scf.if %g3 {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %hun : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  %g4 = index.cmp ult, %tid, %m : index
  scf.if %g4 {
    %x = view.load %v[%gid] : view<[%n]xi32> -> i32
    %y = scalar.addi %x, %sev : i32
    view.store %y, %v[%gid] : i32, view<[%n]xi32>
  }
  kernel.return
}
`

// TestRangeMasks runs rangeMaskSrc fused and unfused against Go, in
// frames reused across workgroups and runs (a shared mask written by an
// exit would corrupt later groups).
func TestRangeMasks(t *testing.T) {
	m := parseSrc(t, rangeMaskSrc)
	defer func() { noRangeIf = false }()
	const groups, L = 4, 64
	for _, bound := range []int64{0, 1, 20, 63, 64, 100} {
		for _, e := range []int64{0, 5, 63, 64} {
			var outs [2][]byte
			for pass, off := range []bool{false, true} {
				noRangeIf = off
				r := compileRun(t, m, "k", Options{Workers: 1})
				out := make([]byte, 4*groups*L)
				for rep := 0; rep < 2; rep++ {
					if err := r.k.Run(grid(groups, L), []Arg{idx(groups * L), idx(bound), idx(e), buf(out)}); err != nil {
						t.Fatalf("m=%d e=%d unfused=%v: %v", bound, e, off, err)
					}
				}
				want := make([]int32, groups*L)
				for i := range want {
					tid := int64(i % L)
					var v int32
					if tid < bound {
						if tid%3 == 0 {
							v += 7
						}
					} else {
						v++
					}
					if tid < bound {
						if tid == e {
							want[i] = 2 * v
							continue
						}
						v++
					}
					if tid < bound {
						v += 107
					}
					want[i] = 2 * v // two runs accumulate
				}
				exactI32(t, "rangemask", bytesI32(out), want)
				outs[pass] = out
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatalf("m=%d e=%d: fused and unfused bytes differ", bound, e)
			}
		}
	}
}

// ifElseKernel picks 1.0 or 2.0 on each of 32 lanes by a flag it loads, so
// the mask comes from the lanes' values, not from a lane range.
const ifElseKernel = `
kernel.def export("if_else") @if_else() {
  %c1 = index.constant 1 : index
  %c32 = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c32, %c1, %c1) : index
} launch(%flags: buffer, %dst: buffer) {
  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %fv = buffer.view %flags[%z] : buffer -> view<32xi32>
  %out = buffer.view %dst[%z] : buffer -> view<32xf32>
  %flag = view.load %fv[%tid] : view<32xi32> -> i32
  %zero = scalar.constant 0 : i32
  %on = scalar.cmpi ne, %flag, %zero : i32
  %v = scf.if %on -> (f32) {
    %one = scalar.constant 1.0 : f32
    scf.yield %one : f32
  } else {
    %two = scalar.constant 2.0 : f32
    scf.yield %two : f32
  }
  view.store %v, %out[%tid] : f32, view<32xf32>
  kernel.return
}
`

// TestIfElseByValues: an scf.if whose condition varies by value runs the
// else region for exactly the lanes that did not take the then region,
// with none of them (which skips building the else mask), one of them at
// either end or inside, or all.
func TestIfElseByValues(t *testing.T) {
	m := parseSrc(t, ifElseKernel)
	r := compileRun(t, m, "if_else", Options{Workers: 1})
	for _, off := range [][]int{nil, {0}, {7}, {31}, {3, 30}, {-1}} {
		flags := make([]byte, 4*32)
		want := make([]float32, 32)
		for l := range 32 {
			on := off == nil || off[0] != -1
			for _, o := range off {
				on = on && o != l
			}
			want[l] = 2
			if on {
				flags[4*l] = 1
				want[l] = 1
			}
		}
		out := make([]byte, 4*32)
		r.run(nil, buf(flags), buf(out))
		for l, g := range bytesF32(out) {
			if g != want[l] {
				t.Fatalf("lanes %v off: lane %d got %v, want %v", off, l, g, want[l])
			}
		}
	}
}
