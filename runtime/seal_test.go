package runtime

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// guardedSource states its argument facts two ways: a where clause on the
// launch signature and a top-level index.assume in the body; its output
// view starts 64 bytes into %dst.
const guardedSource = `
kernel.def export("guarded") @guarded(%n: index) {
  %one = index.constant 1 : index
  %wg = index.constant 64 : index
  %wgm1 = index.constant 63 : index
  %padded = index.add %n, %wgm1 : index
  %groups = index.div %padded, %wg : index
  kernel.launch.config workgroups(%groups, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch(%n: index, %step: i32, %dst: buffer) where [range(%n, 1, 4096)] {
  %s = index.assume %step [range(%step, 1, 8)] : i32
  %i = kernel.workitem.dispatch.id<x> : index
  %inside = index.cmp ult, %i, %n : index
  %at = index.constant 64 : offset
  %out = buffer.view %dst[%at] : buffer -> view<[%n]xi32>
  scf.if %inside {
    view.store %s, %out[%i] : i32, view<[%n]xi32>
  }
  kernel.return
}
`

// TestDispatchIsSealed: a Dispatch has no field a caller could change
// after NewDispatch checked it; its grid is the launch config's.
func TestDispatchIsSealed(t *testing.T) {
	ty := reflect.TypeFor[Dispatch]()
	for i := range ty.NumField() {
		if f := ty.Field(i); f.IsExported() {
			t.Errorf("Dispatch has the exported field %s", f.Name)
		}
	}
	s := testSession(t)
	ks := must(s.Compile(pipelineSpecs(t, ConfigValue{"pipe.block", "256"})[:1]))
	x := must(Alloc[float32](s, 1000))
	y := must(Alloc[float32](s, 1000))
	if err := Upload(s, y, slices.Repeat([]float32{-1}, 1000)); err != nil {
		t.Fatal(err)
	}
	d := newDispatch(t, s, ks[0], []Arg{Index(1000)}, Index(1000), F32(1), Buffer(x.Read()), Buffer(y.ReadWrite()))
	if d.Workgroups() != [3]int{4, 1, 1} || d.WorkgroupSize() != [3]int{256, 1, 1} {
		t.Fatalf("grid %v × %v, want the launch config's [4 1 1] × [256 1 1]", d.Workgroups(), d.WorkgroupSize())
	}
	if err := s.Run([]Command{d}); err != nil {
		t.Fatal(err)
	}
	for i, v := range must(ReadSlice(s, y)) {
		if v != -1 {
			t.Fatalf("y[%d] = %v, want -1 + 1*0", i, v)
		}
	}
}

// TestNewDispatchEnforcesTheKernel: what only generated code checked
// before — buffer extents for these arguments, where and assume ranges,
// the grid of the launch config — the runtime now checks for hand-built
// dispatches too.
func TestNewDispatchEnforcesTheKernel(t *testing.T) {
	s := testSession(t)
	ks := must(s.Compile([]KernelSpec{{Sources: []Source{{Name: "guarded.loom", Text: []byte(guardedSource)}}, Export: "guarded"}}))
	exact := must(Alloc[int32](s, 16+100)) // 64 bytes in, then 100 elements
	short := must(Alloc[int32](s, 100))    // the old, unshifted span
	cases := []struct {
		name     string
		n, step  int
		dst      Slice[int32]
		want     error
		mentions string
	}{
		{"fits", 100, 3, exact, nil, ""},
		{"buffer shorter than the shifted view", 100, 3, short, ErrArgument, "views span 464 bytes"},
		{"n past its where range", 5000, 3, must(Alloc[int32](s, 16+5000)), ErrArgument, "range(%n, 1, 4096)"},
		{"step past its assume range", 100, 9, exact, ErrArgument, "range(%step, 1, 8)"},
		{"step below its assume range", 100, 0, exact, ErrArgument, "range(%step, 1, 8)"},
	}
	for _, c := range cases {
		d, err := s.NewDispatch(ks[0], []Arg{Index(c.n)}, []Arg{Index(c.n), I32(int32(c.step)), Buffer(c.dst.Write())})
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if err := s.Run([]Command{d}); err != nil {
				t.Errorf("%s: run: %v", c.name, err)
			}
			got := must(ReadSlice(s, c.dst))
			if got[15] != 0 || got[16] != 3 || got[115] != 3 {
				t.Errorf("%s: wrote %v… around the view's start", c.name, got[14:18])
			}
			continue
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.mentions) || !strings.Contains(err.Error(), "kernel guarded") {
			t.Errorf("%s: %v, want %v mentioning %q", c.name, err, c.want, c.mentions)
		}
		if !d.IsZero() {
			t.Errorf("%s: a refused NewDispatch returned a dispatch", c.name)
		}
	}
	// Zero workgroups is refused here, not later at launch.
	if _, err := s.NewDispatch(ks[0], []Arg{Index(0)}, []Arg{Index(0), I32(1), Buffer(exact.Write())}); !errors.Is(err, ErrArgument) {
		t.Errorf("n = 0: %v", err)
	}
	// The workload signature is checked like the launch one.
	if _, err := s.NewDispatch(ks[0], nil, []Arg{Index(100), I32(1), Buffer(exact.Write())}); !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "workload") {
		t.Errorf("no workload arguments: %v", err)
	}
	if _, err := s.NewDispatch(ks[0], []Arg{F32(100)}, []Arg{Index(100), I32(1), Buffer(exact.Write())}); !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "%n") {
		t.Errorf("f32 workload argument: %v", err)
	}
}
