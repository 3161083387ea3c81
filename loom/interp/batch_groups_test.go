package interp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// bothForms compiles export twice: as Compile makes it, and with its
// batched form removed, so every workgroup runs alone.
func bothForms(t *testing.T, mods []*loom.Module, export string, opts Options) (batched, single *Kernel) {
	t.Helper()
	var err error
	if batched, err = Compile(mods, export, opts); err != nil {
		t.Fatalf("compile %s: %v", export, err)
	}
	if single, err = Compile(mods, export, opts); err != nil {
		t.Fatal(err)
	}
	single.batch = nil
	return batched, single
}

// sameRuns runs both forms on copies of args, one worker each, with
// batches of each size in ks, and requires identical bytes and errors; it
// returns the unbatched error. mk builds fresh arguments per run.
func sameRuns(t *testing.T, batched, single *Kernel, l Launch, mk func() []Arg, ks []int) error {
	t.Helper()
	defer func() { batchGroups = 0 }()
	batchGroups = 0
	want := mk()
	werr := single.Run(l, want)
	for _, K := range ks {
		batchGroups = K
		before := batchesRun.Load()
		got := mk()
		gerr := batched.Run(l, got)
		batchGroups = 0
		if K > 1 && K <= l.Workgroups[0]*l.Workgroups[1]*l.Workgroups[2] && batchesRun.Load() == before {
			t.Errorf("%s: batches of %d: no batch ran", batched.export, K)
		}
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("%s: batches of %d: error\n%v\nwant\n%v", batched.export, K, gerr, werr)
		}
		for i := range got {
			if g, w := got[i].Buffer, want[i].Buffer; !bytes.Equal(g, w) {
				at := 0
				for at < len(g) && at < len(w) && g[at] == w[at] {
					at++
				}
				t.Errorf("%s %v: batches of %d: argument %d differs from the unbatched run from byte %d", batched.export, l, K, i, at)
			}
		}
	}
	return werr
}

// Corpus kernels with barriers and collectives run batched and give the
// bytes of the unbatched form, for batch sizes that divide the launch and
// sizes that leave groups over.
func TestBatchedCollectivesCorpus(t *testing.T) {
	one := Options{Workers: 1}
	ks := []int{2, 3, 5, 0}
	t.Run("workgroup_reduce", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{corpus(t, "workgroup_reduce.loom")}, "block_max", one)
		const n = 1000
		src := f32bytes(ramp(n, 4, 3))
		g := (n + 127) / 128
		sameRuns(t, b, s, Launch{Workgroups: [3]int{g, 1, 1}, WorkgroupSize: [3]int{128, 1, 1}}, func() []Arg {
			return []Arg{idx(n), buf(src), buf(make([]byte, 4*g)), buf(make([]byte, 4*g))}
		}, ks)
	})
	t.Run("subgroup_reduce", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{corpus(t, "subgroup_reduce.loom")}, "subgroup_sum_max", one)
		const n = 500
		src := f32bytes(ramp(n, 5, 3))
		g := (n + 31) / 32
		sameRuns(t, b, s, Launch{Workgroups: [3]int{g, 1, 1}, WorkgroupSize: [3]int{32, 1, 1}}, func() []Arg {
			return []Arg{idx(n), buf(src), buf(make([]byte, 4*g)), buf(make([]byte, 4*g))}
		}, ks)
	})
	t.Run("scan_subgroup", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{corpus(t, "scan_subgroup.loom")}, "scan_blocks_i32", one)
		const n = 333
		src := make([]int32, n)
		for i := range src {
			src[i] = int32(i*7%13) - 5
		}
		sb := i32bytes(src)
		g := (n + 31) / 32
		sameRuns(t, b, s, Launch{Workgroups: [3]int{g, 1, 1}, WorkgroupSize: [3]int{32, 1, 1}}, func() []Arg {
			return []Arg{idx(n), buf(sb), buf(make([]byte, 4*n))}
		}, ks)
	})
	for _, tc := range []struct{ file, export string }{{"layernorm.loom", "layernorm_f32"}, {"softmax_row.loom", "softmax_rows_f32"}} {
		t.Run(tc.export, func(t *testing.T) {
			r := compileRun(t, corpus(t, tc.file), tc.export, one)
			b, s := bothForms(t, r.mods, tc.export, one)
			const rows, cols = 7, 300
			x := f32bytes(ramp(rows*cols, 6, 3))
			l := r.launch(rows, cols)
			sameRuns(t, b, s, l, func() []Arg {
				y := buf(make([]byte, 4*rows*cols))
				if tc.export == "layernorm_f32" {
					return []Arg{idx(rows), idx(cols), f32a(1e-5), buf(x), buf(f32bytes(ramp(cols, 8, 1))), buf(f32bytes(ramp(cols, 9, 1))), y}
				}
				return []Arg{idx(rows), idx(cols), buf(x), y}
			}, ks)
		})
	}
	t.Run("reduce_sum_strided", func(t *testing.T) {
		r := compileRun(t, ownKernel(t, "reduce_sum_strided.loom"), "reduce_sum_strided", one)
		b, s := bothForms(t, r.mods, "reduce_sum_strided", one)
		const n = 5*16384 + 77
		src := f32bytes(ramp(n, 7, 2))
		l := r.launch(n)
		sameRuns(t, b, s, l, func() []Arg {
			return []Arg{idx(n), buf(src), buf(make([]byte, 4*l.Workgroups[0]))}
		}, ks)
	})
}

// subgroupOps exercises every subgroup collective and the subgroup ids,
// with a workgroup size given at launch: sizes that are not a multiple of
// the subgroup leave a partial subgroup at each workgroup's end, which a
// batch must not join with the next workgroup's first lanes.
const subgroupOps = `
  %i = kernel.workitem.dispatch.id<x> : index
  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c3 = index.constant 3 : index
  %c2 = index.constant 2 : index
  %out = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %lane = kernel.subgroup.lane.id : index
  %sgid = kernel.subgroup.id : index
  %sgn = kernel.subgroup.count : index
  %x = index.cast %i : index to i32
  %odd = index.rem %tid, %c3 : index
  %sel = index.cmp ne, %odd, %c0 : index
  %w = scalar.constant 8 : i32
  %one = scalar.constant 1 : i32
  %bl = scalar.constant 2 : i32
  %s1 = kernel.subgroup.reduce<addi> %x : i32
  %sc = kernel.subgroup.scan<maxsi> %x {mode = exclusive, direction = reverse} : i32
  %cl = kernel.subgroup.reduce<addi> %x {cluster_size = 4, cluster_stride = 2} : i32
  %v1 = kernel.subgroup.vote.ballot %sel : i1 -> i32
  %v2b = kernel.subgroup.vote.any %sel : i1
  %v2 = scalar.extui %v2b : i1 to i32
  %wr = kernel.workgroup.reduce<addi> %x : i32
  %ws = kernel.workgroup.scan<addi> %x {mode = inclusive, direction = forward} : i32
  %wc32 = kernel.workgroup.vote.count %sel : i1 -> i32
  %acc = scf.if %sel -> (i32) {
    %sh, %ok = kernel.subgroup.shuffle<xor> %x, %one, %w : i32, i32, i32
    %sd, %ok2 = kernel.subgroup.shuffle<down> %x, %one, %w : i32, i32, i32
    %bc = kernel.subgroup.broadcast %x, %bl : i32, i32
    %bf = kernel.subgroup.broadcast.first %x : i32
    %a1 = scalar.addi %sh, %sd : i32
    %a2 = scalar.muli %bc, %bf : i32
    %a3 = scalar.xori %a1, %a2 : i32
    %o1 = scalar.extui %ok : i1 to i32
    %a4 = scalar.addi %a3, %o1 : i32
    scf.yield %a4 : i32
  } else {
    scf.yield %x : i32
  }
  %l32 = index.cast %lane : index to i32
  %g32 = index.cast %sgid : index to i32
  %n32 = index.cast %sgn : index to i32
  %t1 = scalar.muli %l32, %g32 : i32
  %t2 = scalar.addi %t1, %n32 : i32
  %t3 = scalar.xori %t2, %s1 : i32
  %t4 = scalar.addi %t3, %sc : i32
  %t5 = scalar.xori %t4, %cl : i32
  %t6 = scalar.addi %t5, %v1 : i32
  %t7 = scalar.addi %t6, %v2 : i32
  %t8 = scalar.xori %t7, %wr : i32
  %t9 = scalar.addi %t8, %ws : i32
  %t10 = scalar.addi %t9, %wc32 : i32
  %t11 = scalar.xori %t10, %acc : i32
  %ok3 = index.cmp ult, %i, %n : index
  scf.if %ok3 {
    view.store %t11, %out[%i] : i32, view<[%n]xi32>
  }`

// Every subgroup and workgroup collective, batched vs alone, for
// workgroups of a whole number of subgroups and not.
func TestBatchedSubgroupOps(t *testing.T) {
	m := parseSrc(t, inlineKernel("%n: index, %o: buffer", subgroupOps))
	for _, opts := range []Options{{Workers: 1}, {Workers: 1, Target: loom.Target{IndexBits: 32, OffsetBits: 64, SubgroupSize: 8}}} {
		b, s := bothForms(t, []*loom.Module{m}, "k", opts)
		if b.batch == nil {
			t.Fatalf("no batched form (noBatch %q)", b.noBatch)
		}
		for _, L := range []int{32, 48, 20, 7} {
			const groups = 9
			n := int64(groups*L - 3)
			sameRuns(t, b, s, Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}, func() []Arg {
				return []Arg{idx(n), buf(make([]byte, 4*n))}
			}, []int{2, 4, 9, 0})
		}
	}
}

// barrierKernels are bodies with barriers and workgroup collectives under
// per-group control flow: lanes that leave before a barrier, a group none
// of whose lanes reaches one, and (with %bad set) one group of the launch
// reaching a barrier or a collective with only part of its work-items.
var barrierKernels = map[string]string{
	"exit_then_barrier": `
  %i = kernel.workitem.dispatch.id<x> : index
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c3 = index.constant 3 : index
  %out = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %gp = index.rem %g, %c2 : index
  %odd = index.cmp eq, %gp, %c1 : index
  %hi = index.cmp uge, %tid, %c3 : index
  %leave = scalar.andi %odd, %hi : i1
  kernel.exit %leave
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %x = index.cast %i : index to i32
  %s = kernel.workgroup.reduce<addi> %x : i32
  %g3 = index.rem %g, %c3 : index
  %only = index.cmp eq, %g3, %c1 : index
  scf.if %only {
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  }
  %t32 = kernel.workgroup.vote.count %hi : i1 -> i32
  %y = scalar.addi %s, %t32 : i32
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    view.store %y, %out[%i] : i32, view<[%n]xi32>
  }`,
	// A loop whose trip count is uniform in each workgroup but differs
	// between the workgroups of a batch, with a barrier and a reduction
	// in its body: groups that have finished sit out the others' trips.
	"group_trip_count": `
  %i = kernel.workitem.dispatch.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c3 = index.constant 3 : index
  %out = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %trips = index.rem %g, %c3 : index
  %x = index.cast %i : index to i32
  %r = scf.for %k = [%c0 to %trips step %c1] (%acc = %x : i32) -> (i32) {
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
    %s = kernel.workgroup.reduce<addi> %acc : i32
    %t = kernel.workgroup.scan<addi> %acc {mode = exclusive, direction = forward} : i32
    %u = scalar.xori %s, %t : i32
    scf.yield %u : i32
  }
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    view.store %r, %out[%i] : i32, view<[%n]xi32>
  }`,
	"divergent_barrier": `
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %c3 = index.constant 3 : index
  %bad = index.cmp eq, %g, %b : index
  %lo = index.cmp ult, %tid, %c3 : index
  %both = scalar.andi %bad, %lo : i1
  scf.if %both {
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  }`,
	"divergent_reduce": `
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %c2 = index.constant 2 : index
  %bad = index.cmp eq, %g, %b : index
  %lo = index.cmp uge, %tid, %c2 : index
  %both = scalar.andi %bad, %lo : i1
  %one = scalar.constant 1 : i32
  scf.if %both {
    %s = kernel.workgroup.reduce<addi> %one : i32
  }`,
	// Every group after %b stores out of bounds early, group %b divides
	// by zero later: the lowest failing group, %b, is the error wherever
	// the batch boundaries fall.
	"late_low_error": `
  %i = kernel.workitem.dispatch.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %out = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %late = index.cmp ugt, %g, %b : index
  %x = index.cast %i : index to i32
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %early = index.cmp eq, %g, %b : index
  %d = scf.if %early -> (index) {
    scf.yield %c0 : index
  } else {
    scf.yield %c1 : index
  }
  scf.if %late {
    %far = index.add %i, %n : index
    view.store %x, %out[%far] : i32, view<[%n]xi32>
  }
  %q = index.div %i, %d : index
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}`,
}

// Barriers and collectives under per-group control flow: the batched form
// gives the bytes and the error of the unbatched one, with the batch's own
// error too (no rerun) where only one group fails.
func TestBatchedBarriersAndErrors(t *testing.T) {
	defer func() { noRerun = false }()
	for name, body := range barrierKernels {
		m := parseSrc(t, inlineKernel("%n: index, %b: index, %o: buffer", body))
		b, s := bothForms(t, []*loom.Module{m}, "k", Options{Workers: 1})
		if b.batch == nil {
			t.Fatalf("%s: no batched form (noBatch %q)", name, b.noBatch)
		}
		const groups, L = 7, 8
		l := Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}
		n := int64(groups*L - 5)
		for _, bad := range []int64{-1, 0, 2, 5, 6} {
			for _, rerun := range []bool{true, false} {
				noRerun = !rerun
				if !rerun && name == "late_low_error" {
					continue // several groups fail: the batch meets a later one first
				}
				err := sameRuns(t, b, s, l, func() []Arg {
					return []Arg{idx(n), idx(bad), buf(make([]byte, 4*n))}
				}, []int{2, 3, 4, 0})
				noRerun = false
				var re *RunError
				switch {
				case name == "exit_then_barrier" || name == "group_trip_count" || bad < 0:
					if err != nil {
						t.Errorf("%s bad=%d: %v", name, bad, err)
					}
				case !errors.As(err, &re) || re.Workgroup[0] != int(bad):
					t.Errorf("%s bad=%d: error %v, want one in workgroup %d", name, bad, err, bad)
				case name != "late_low_error" && !errors.Is(err, ErrDivergentBarrier):
					t.Errorf("%s bad=%d: error %v, want a divergent barrier", name, bad, err)
				}
			}
		}
	}
}

// rerunSafe follows views to the parameters they reach: a kernel reading
// only buffers it does not write may run a failed batch's groups again;
// one reading what it writes (in place, atomics, a view of unknown root)
// may not, and with barriers or collectives it gets no batched form.
func TestRerunSafety(t *testing.T) {
	for _, c := range []struct {
		name, file, export string
		safe, batched      bool
	}{
		{"in place", "saxpy.loom", "saxpy", false, true},
		{"atomics", "histogram.loom", "histogram_i32", false, true},
		{"collective", "workgroup_reduce.loom", "block_max", true, true},
		{"layernorm", "layernorm.loom", "layernorm_f32", true, true},
	} {
		k, err := Compile([]*loom.Module{corpus(t, c.file)}, c.export, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if k.rerunSafe != c.safe || (k.batch != nil) != c.batched {
			t.Errorf("%s: rerunSafe %v, batched form %v; want %v, %v", c.name, k.rerunSafe, k.batch != nil, c.safe, c.batched)
		}
	}
	inPlace := `
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %v = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %w = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %x = view.load %v[%i] : view<[%n]xi32> -> i32
  %s = kernel.subgroup.reduce<addi> %x : i32
  view.store %s, %w[%i] : i32, view<[%n]xi32>`
	k, err := compileInline(t, "%n: index, %o: buffer", inPlace)
	if err != nil {
		t.Fatal(err)
	}
	if k.rerunSafe || k.batch != nil || k.noBatch == "" {
		t.Errorf("in-place collective: rerunSafe %v, batched form %v (noBatch %q)", k.rerunSafe, k.batch != nil, k.noBatch)
	}
	// Two parameters bound to overlapping bytes: a read one and a
	// written one alias, so running again would not be exact.
	k, err = Compile([]*loom.Module{corpus(t, "workgroup_reduce.loom")}, "block_max", Options{})
	if err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, 64)
	if k.overlapping([]Arg{idx(4), buf(mem[:16]), buf(mem[16:32]), buf(mem[32:])}) {
		t.Error("disjoint buffers reported as overlapping")
	}
	if !k.overlapping([]Arg{idx(4), buf(mem[:16]), buf(mem[8:24]), buf(mem[32:])}) {
		t.Error("the input overlapping an output not reported")
	}
}
