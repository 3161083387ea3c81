package interp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// mlpModule parses the example MLP kernels (layer norm and the tiled
// matmul with bias use workgroup memory).
func mlpModule(t testing.TB) *loom.Module {
	t.Helper()
	p := filepath.Join("..", "..", "examples", "gen", "kernels", "mlp.loom")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(p, src)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every kernel with workgroup memory we have runs batched and gives the
// bytes of the unbatched form, for batch sizes that divide the launch and
// sizes that leave groups over.
func TestBatchedWorkgroupMemoryCorpus(t *testing.T) {
	one := Options{Workers: 1}
	ks := []int{2, 3, 5, 8}
	t.Run("reduce_sum_workgroup", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{corpus(t, "reduce_sum_workgroup.loom")}, "reduce_sum_f32", one)
		if b.batch == nil {
			t.Fatalf("no batched form: %s", b.noBatch)
		}
		for _, n := range []int{1, 256, 1000, 256*9 + 17} {
			src := f32bytes(ramp(n, 7, 3))
			g := (n + 255) / 256
			sameRuns(t, b, s, Launch{Workgroups: [3]int{g, 1, 1}, WorkgroupSize: [3]int{256, 1, 1}}, func() []Arg {
				return []Arg{idx(int64(n)), buf(src), buf(make([]byte, 4*g))}
			}, ks)
		}
	})
	t.Run("matmul_tiled", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{corpus(t, "matmul_tiled.loom")}, "matmul_f32", one)
		if b.batch == nil {
			t.Fatalf("no batched form: %s", b.noBatch)
		}
		const m, n, k = 37, 53, 45
		a, bb := f32bytes(ramp(m*k, 10, 1)), f32bytes(ramp(k*n, 11, 1))
		sameRuns(t, b, s, Launch{Workgroups: [3]int{(n + 15) / 16, (m + 15) / 16, 1}, WorkgroupSize: [3]int{16, 16, 1}}, func() []Arg {
			return []Arg{idx(m), idx(n), idx(k), buf(a), buf(bb), buf(make([]byte, 4*m*n))}
		}, ks)
	})
	mlp := mlpModule(t)
	t.Run("layer_norm", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{mlp}, "layer_norm", one)
		if b.batch == nil {
			t.Fatalf("no batched form: %s", b.noBatch)
		}
		const rows, cols = 11, 150
		x, gm, bt := f32bytes(ramp(rows*cols, 3, 2)), f32bytes(ramp(cols, 4, 1)), f32bytes(ramp(cols, 5, 1))
		sameRuns(t, b, s, Launch{Workgroups: [3]int{rows, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}}, func() []Arg {
			return []Arg{idx(rows), idx(cols), f32a(1e-5), buf(x), buf(gm), buf(bt), buf(make([]byte, 4*rows*cols))}
		}, ks)
	})
	t.Run("matmul_bias", func(t *testing.T) {
		b, s := bothForms(t, []*loom.Module{mlp}, "matmul_bias", one)
		if b.batch == nil {
			t.Fatalf("no batched form: %s", b.noBatch)
		}
		const m, n, k = 29, 40, 33
		a, bb, bias := f32bytes(ramp(m*k, 1, 1)), f32bytes(ramp(k*n, 2, 1)), f32bytes(ramp(n, 3, 1))
		sameRuns(t, b, s, Launch{Workgroups: [3]int{(n + 15) / 16, (m + 15) / 16, 1}, WorkgroupSize: [3]int{16, 16, 1}}, func() []Arg {
			return []Arg{idx(m), idx(n), idx(k), buf(a), buf(bb), buf(bias), buf(make([]byte, 4*m*n))}
		}, ks)
	})
}

// wgErrKernels use workgroup memory and fail in one workgroup (%b) only:
// an index past the group's block (which in a batch is the next group's
// block, so it must still be an error), a barrier reached by part of the
// group, and a uniform index read back from workgroup memory.
var wgErrKernels = map[string]string{
	"oob_store": `
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %sz = index.constant 32 : offset
  %c8 = index.constant 8 : index
  %s = buffer.alloca<workgroup> align(16) %sz : buffer
  %tile = buffer.view %s[%z] : buffer -> view<8xf32>
  %out = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %bad = index.cmp eq, %g, %b : index
  %j = scf.if %bad -> (index) {
    %p = index.add %tid, %c8 : index
    scf.yield %p : index
  } else {
    scf.yield %tid : index
  }
  %f = scalar.constant 1.5 : f32
  view.store %f, %tile[%j] : f32, view<8xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %i = kernel.workitem.dispatch.id<x> : index
  %v = view.load %tile[%tid] : view<8xf32> -> f32
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    view.store %v, %out[%i] : f32, view<[%n]xf32>
  }
  kernel.return`,
	"oob_load_buffer_bytes": `
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %sz = index.constant 32 : offset
  %c1 = index.constant 1 : index
  %s = buffer.alloca<workgroup> align(16) %sz : buffer
  %tile = buffer.view %s[%z] : buffer -> view<16xf32>
  %out = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %f = scalar.constant 2.0 : f32
  view.store %f, %tile[%tid] : f32, view<16xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %bad = index.cmp eq, %g, %b : index
  %j = scf.if %bad -> (index) {
    %p = index.add %tid, %c1 : index
    scf.yield %p : index
  } else {
    scf.yield %tid : index
  }
  %v = view.load %tile[%j] : view<16xf32> -> f32
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    view.store %v, %out[%i] : f32, view<[%n]xf32>
  }
  kernel.return`,
	"divergent_barrier": `
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %sz = index.constant 32 : offset
  %c0 = index.constant 0 : index
  %c3 = index.constant 3 : index
  %s = buffer.alloca<workgroup> align(16) %sz : buffer
  %tile = buffer.view %s[%z] : buffer -> view<8xf32>
  %out = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %f = scalar.constant 3.0 : f32
  view.store %f, %tile[%tid] : f32, view<8xf32>
  %bad = index.cmp eq, %g, %b : index
  %low = index.cmp ult, %tid, %c3 : index
  %both = scalar.andi %bad, %low : i1
  scf.if %both {
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  }
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %v = view.load %tile[%c0] : view<8xf32> -> f32
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    view.store %v, %out[%i] : f32, view<[%n]xf32>
  }
  kernel.return`,
	"uniform_index_from_memory": `
  %tid = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %sz = index.constant 32 : offset
  %c0 = index.constant 0 : index
  %c9 = index.constant 9 : index
  %s = buffer.alloca<workgroup> align(16) %sz : buffer
  %tile = buffer.view %s[%z] : buffer -> view<8xi32>
  %out = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %first = index.cmp eq, %tid, %c0 : index
  scf.if %first {
    %bad = index.cmp eq, %g, %b : index
    %w = scf.select %bad, %c9, %g : index
    %wi = index.cast %w : index to i32
    view.store %wi, %tile[%c0] : i32, view<8xi32>
  }
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %k32 = view.load %tile[%c0] : view<8xi32> -> i32
  %k = index.cast %k32 : i32 to index
  %sc = buffer.alloca<workgroup> align(16) %sz : buffer
  %t2 = buffer.view %sc[%z] : buffer -> view<8xf32>
  %f = scalar.constant 4.0 : f32
  view.store %f, %t2[%k] : f32, view<8xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %v = view.load %t2[%tid] : view<8xf32> -> f32
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    view.store %v, %out[%i] : f32, view<[%n]xf32>
  }
  kernel.return`,
}

// A failure in one group of a batch is reported as the unbatched form
// reports it (workgroup, work-item, index), and no group reaches into
// another group's block of workgroup memory.
func TestBatchedWorkgroupMemoryErrors(t *testing.T) {
	defer func() { noRerun = false }()
	for name, body := range wgErrKernels {
		m := parseSrc(t, inlineKernel("%n: index, %b: index, %o: buffer", body))
		b, s := bothForms(t, []*loom.Module{m}, "k", Options{Workers: 1})
		if b.batch == nil {
			t.Fatalf("%s: no batched form (noBatch %q)", name, b.noBatch)
		}
		const groups, L = 7, 8
		l := Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}
		n := int64(groups*L - 3)
		for _, bad := range []int64{-1, 0, 2, 5, 6} {
			// Without reruns too: one failing group makes the batch's own
			// first trap that group's.
			// (Its bytes differ: the groups before the failing one in its
			// batch stopped with it.)
			werr := s.Run(l, []Arg{idx(n), idx(bad), buf(make([]byte, 4*n))})
			noRerun = true
			for _, K := range []int{2, 3, 4, 7} {
				batchGroups = K
				if gerr := b.Run(l, []Arg{idx(n), idx(bad), buf(make([]byte, 4*n))}); fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Errorf("%s bad=%d: batches of %d without reruns: error\n%v\nwant\n%v", name, bad, K, gerr, werr)
				}
			}
			batchGroups, noRerun = 0, false
			err := sameRuns(t, b, s, l, func() []Arg {
				return []Arg{idx(n), idx(bad), buf(make([]byte, 4*n))}
			}, []int{2, 3, 4, 7})
			// Several workers: still the lowest failing group's error.
			w4, err4 := Compile([]*loom.Module{m}, "k", Options{Workers: 4})
			if err4 != nil {
				t.Fatal(err4)
			}
			for _, K := range []int{2, 3} {
				batchGroups = K
				if gerr := w4.Run(l, []Arg{idx(n), idx(bad), buf(make([]byte, 4*n))}); fmt.Sprint(gerr) != fmt.Sprint(err) {
					t.Errorf("%s bad=%d: 4 workers, batches of %d: error\n%v\nwant\n%v", name, bad, K, gerr, err)
				}
			}
			batchGroups = 0
			var re *RunError
			switch {
			case bad < 0:
				if err != nil {
					t.Errorf("%s bad=%d: %v", name, bad, err)
				}
			case !errors.As(err, &re) || re.Workgroup[0] != int(bad):
				t.Errorf("%s bad=%d: error %v, want one in workgroup %d", name, bad, err, bad)
			case name == "divergent_barrier" && !errors.Is(err, ErrDivergentBarrier),
				name != "divergent_barrier" && !errors.Is(err, ErrOutOfBounds):
				t.Errorf("%s bad=%d: error %v of the wrong class", name, bad, err)
			}
		}
	}
}

// treeBody is a tree reduction with a start stride %b: strides b, b/2, …,
// over a 256-element tile, then lane 0 of each group stores its sum and
// lanes equal to, and below, a bound copy tile elements through a second
// tile. A stride at or above the group size reads past the group's
// elements (within the tile up to 256, past it an error).
const treeBody = `
  %tid = kernel.workitem.id<x> : index
  %gid = kernel.workitem.dispatch.id<x> : index
  %wgid = kernel.workgroup.id<x> : index
  %ng = kernel.workgroup.count<x> : index
  %z = index.constant 0 : offset
  %bytes = index.constant 1024 : offset
  %s1 = buffer.alloca<workgroup> align(16) %bytes : buffer
  %s2 = buffer.alloca<workgroup> align(16) %bytes : buffer
  %tile = buffer.view %s1[%z] : buffer -> view<256xf32>
  %t2 = buffer.view %s2[%z] : buffer -> view<256xf32>
  %in = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %out = buffer.view %o[%z] : buffer -> view<[%ng]xf32>
  %cp = buffer.view %o2[%z] : buffer -> view<[%n]xf32>
  %zero = scalar.constant 0.0 : f32
  %ok = index.cmp ult, %gid, %n : index
  %x = scf.if %ok -> (f32) {
    %v = view.load %in[%gid] : view<[%n]xf32> -> f32
    scf.yield %v : f32
  } else {
    scf.yield %zero : f32
  }
  view.store %x, %tile[%tid] : f32, view<256xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c3 = index.constant 3 : index
  %c9 = index.constant 9 : index
  %quarter = scalar.constant 0.25 : f32
  view.store %quarter, %t2[%tid] : f32, view<256xf32>
  %lt3 = index.cmp slt, %tid, %c3 : index
  scf.if %lt3 {
    %a = view.load %tile[%tid] : view<256xf32> -> f32
    %b2 = view.load %tile[%tid] : view<256xf32> -> f32
    %p = scalar.mulf %a, %b2 : f32
    view.store %p, %t2[%tid] : f32, view<256xf32>
  }
  scf.for %k = [%c0 to %c9 step %c1] {
    %stride = index.shrui %b, %k : index
    %active = index.cmp ult, %tid, %stride : index
    scf.if %active {
      %j = index.add %tid, %stride : index
      %a = view.load %tile[%tid] : view<256xf32> -> f32
      %c = view.load %tile[%j] : view<256xf32> -> f32
      %s = scalar.addf %a, %c : f32
      view.store %s, %tile[%tid] : f32, view<256xf32>
      %e1 = view.load %t2[%tid] : view<256xf32> -> f32
      %e2 = view.load %tile[%tid] : view<256xf32> -> f32
      %e3 = scalar.maximumf %e1, %e2 : f32
      %e4 = scalar.mulf %e3, %e3 : f32
      %ei = index.mul %tid, %c1 : index
      %e5 = index.cast %ei : index to i32
      %e6 = scalar.sitofp %e5 : i32 to f32
      %e7 = scalar.addf %e4, %e6 : f32
      view.store %e7, %t2[%ei] : f32, view<256xf32>
      %two = index.cmp eq, %tid, %c1 : index
      scf.if %two {
        %q = view.load %t2[%tid] : view<256xf32> -> f32
        %r = view.load %tile[%j] : view<256xf32> -> f32
        %d = scalar.subf %q, %r : f32
        view.store %d, %t2[%tid] : f32, view<256xf32>
      }
    }
    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  }
  %first = index.cmp eq, %tid, %c0 : index
  scf.if %first {
    %total = view.load %tile[%c0] : view<256xf32> -> f32
    %extra = view.load %t2[%c1] : view<256xf32> -> f32
    %all = scalar.addf %total, %extra : f32
    view.store %all, %out[%wgid] : f32, view<[%ng]xf32>
  }
  %c200 = index.constant 200 : index
  %lt = index.cmp ult, %tid, %c200 : index
  scf.if %lt {
    %ok2 = index.cmp ult, %gid, %n : index
    scf.if %ok2 {
      %w = view.load %t2[%tid] : view<256xf32> -> f32
      view.store %w, %cp[%gid] : f32, view<[%n]xf32>
    }
  }`

// The periodic facts (batchwg.go) on a tree reduction with extra guards
// (eq, slt, nested), for group sizes that are and are not powers of two,
// strides that stay inside the group, reach the next group's lanes (still
// this group's own tile) and leave the tile: batched bytes and errors are
// those of the groups run alone, and the fused forms do run.
func TestBatchedPeriodicTree(t *testing.T) {
	m := parseSrc(t, inlineKernel("%n: index, %b: index, %src: buffer, %o: buffer, %o2: buffer", treeBody))
	b, s := bothForms(t, []*loom.Module{m}, "k", Options{Workers: 1})
	if b.batch == nil || !b.batch.wgFast {
		t.Fatalf("want a fast batched form (noBatch %q)", b.noBatch)
	}
	defer func() { countFused = false }()
	for _, L := range []int{1, 3, 8, 48, 64, 256} {
		for _, bs := range []int64{int64(L / 2), int64(L), 128, 256} {
			const groups = 9
			n := int64(groups*L - L/3)
			src := f32bytes(ramp(int(n), uint32(L), 2))
			l := Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}
			countFused = true
			fusedRuns.Store(0)
			rangeIfRuns.Store(0)
			sameRuns(t, b, s, l, func() []Arg {
				return []Arg{idx(n), idx(bs), buf(src), buf(make([]byte, 4*groups)), buf(make([]byte, 4*n))}
			}, []int{2, 4, 5, 0})
			if L >= 8 && bs == int64(L/2) && (fusedRuns.Load() == 0 || rangeIfRuns.Load() == 0) {
				t.Errorf("L=%d b=%d: fused %d, guards %d: the periodic forms did not run", L, bs, fusedRuns.Load(), rangeIfRuns.Load())
			}
			countFused = false
		}
	}
}

// Run batches the tree reduction of the corpus by itself (its batched
// form keeps a block form for every workgroup-memory access), and not the
// tiled matmul, whose rank-2 tiles would go lane by lane.
func TestBatchedWorkgroupMemoryPolicy(t *testing.T) {
	r := compileRun(t, corpus(t, "reduce_sum_workgroup.loom"), "reduce_sum_f32", Options{Workers: 1})
	const g = 70 // two batches of 32 groups and 6 alone
	const n = 256 * g
	src := f32bytes(ramp(n, 1, 1))
	before := batchesRun.Load()
	out := make([]byte, 4*g)
	r.run(wl(n), idx(n), buf(src), buf(out))
	x := bytesF32(src)
	for i, got := range bytesF32(out) {
		// The tree's order of additions, in f32.
		tr := append([]float32(nil), x[256*i:256*(i+1)]...)
		for s := 128; s > 0; s /= 2 {
			for j := range s {
				tr[j] += tr[j+s]
			}
		}
		if got != tr[0] {
			t.Fatalf("partial[%d] = %v, want %v", i, got, tr[0])
		}
	}
	if batchesRun.Load() == before {
		t.Error("reduce_sum_f32: no batch ran")
	}
	mm := compileRun(t, corpus(t, "matmul_tiled.loom"), "matmul_f32", Options{Workers: 1})
	if mm.k.batch == nil || mm.k.batch.wgFast {
		t.Errorf("matmul_f32: batched form %v, want one Run does not use", mm.k.batch != nil)
	}
}

// A view reached through a yielded buffer has an origin the compiler does
// not track: it may be workgroup memory (no uniform shortcut, no fast
// path in a batch) and any parameter (so the kernel reads what it writes
// and gets no batched form at all); either way it runs exactly.
func TestBatchedWorkgroupMemoryUnknownOrigin(t *testing.T) {
	body := `
  %tid = kernel.workitem.id<x> : index
  %i = kernel.workitem.dispatch.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %sz = index.constant 64 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %s1 = buffer.alloca<workgroup> align(16) %sz : buffer
  %s2 = buffer.alloca<workgroup> align(16) %sz : buffer
  %pick = index.cmp ult, %n, %b : index
  %buf = scf.if %pick -> (buffer) {
    scf.yield %s1 : buffer
  } else {
    scf.yield %s2 : buffer
  }
  %tile = buffer.view %buf[%z] : buffer -> view<16xf32>
  %out = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %gi = index.cast %g : index to i32
  %gf = scalar.sitofp %gi : i32 to f32
  view.store %gf, %tile[%tid] : f32, view<16xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %first = view.load %tile[%c0] : view<16xf32> -> f32
  %j = index.add %tid, %c1 : index
  %ok = index.cmp ult, %j, %c1 : index
  %nb = scf.if %ok -> (f32) {
    %x = view.load %tile[%j] : view<16xf32> -> f32
    scf.yield %x : f32
  } else {
    scf.yield %first : f32
  }
  %sum = scalar.addf %first, %nb : f32
  %in = index.cmp ult, %i, %n : index
  scf.if %in {
    view.store %sum, %out[%i] : f32, view<[%n]xf32>
  }`
	m := parseSrc(t, inlineKernel("%n: index, %b: index, %o: buffer", body))
	b, s := bothForms(t, []*loom.Module{m}, "k", Options{Workers: 1})
	if b.batch != nil || b.noBatch != "reads a buffer it writes" {
		t.Fatalf("batched form %v (noBatch %q), want none: the yielded view may reach %%o", b.batch != nil, b.noBatch)
	}
	want := [][]float32{}
	for _, pick := range []int64{0, 1 << 20} {
		const groups, L = 9, 16
		out := make([]byte, 4*(groups*L-7))
		if err := s.Run(Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}, []Arg{idx(groups*L - 7), idx(pick), buf(out)}); err != nil {
			t.Fatal(err)
		}
		want = append(want, bytesF32(out))
	}
	for _, got := range want {
		for i, v := range got {
			// Every lane adds its group's first element (the group id)
			// to itself: %j < 1 never holds.
			if g := float32(i / 16); v != 2*g {
				t.Fatalf("out[%d] = %v, want %v", i, v, 2*g)
			}
		}
	}
}

// Workgroup ids read only as store indices are left unwritten in a batch
// and written where a store reads them (writeBatched), on grids of one,
// two and three dimensions.
func TestBatchedLazyGroupIDs(t *testing.T) {
	body := `
  %gx = kernel.workgroup.id<x> : index
  %gy = kernel.workgroup.id<y> : index
  %gz = kernel.workgroup.id<z> : index
  %tid = kernel.workitem.id<x> : index
  %iy = kernel.workitem.dispatch.id<y> : index
  %z = index.constant 0 : offset
  %c1 = index.constant 1 : index
  %ox = buffer.view %o[%z] : buffer -> view<64xf32>
  %oy = buffer.view %o2[%z] : buffer -> view<64xf32>
  %oz = buffer.view %o3[%z] : buffer -> view<64xf32>
  %yi = index.cast %iy : index to i32
  %yf = scalar.sitofp %yi : i32 to f32
  %ti = index.cast %tid : index to i32
  %tf = scalar.sitofp %ti : i32 to f32
  %v = scalar.addf %yf, %tf : f32
  %one = index.cmp eq, %tid, %c1 : index
  scf.if %one {
    view.store %v, %ox[%gx] : f32, view<64xf32>
    view.store %v, %oy[%gy] : f32, view<64xf32>
  }
  view.store %tf, %oz[%gz] : f32, view<64xf32>`
	m := parseSrc(t, inlineKernel("%n: index, %o: buffer, %o2: buffer, %o3: buffer", body))
	b, s := bothForms(t, []*loom.Module{m}, "k", Options{Workers: 1})
	if b.batch == nil {
		t.Fatalf("no batched form (noBatch %q)", b.noBatch)
	}
	for _, grid := range [][3]int{{20, 1, 1}, {5, 4, 1}, {3, 2, 4}} {
		sameRuns(t, b, s, Launch{Workgroups: grid, WorkgroupSize: [3]int{4, 2, 1}}, func() []Arg {
			return []Arg{idx(0), buf(make([]byte, 256)), buf(make([]byte, 256)), buf(make([]byte, 256))}
		}, []int{2, 3, 7})
	}
}

// A batch whose workgroup memory would pass wgBatchBytes runs its groups
// alone instead, with their results; Run's own batches stay under it.
func TestBatchedWorkgroupMemoryTooLarge(t *testing.T) {
	body := `
  %tid = kernel.workitem.id<x> : index
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %sz = index.constant 1048576 : offset
  %c1 = index.constant 1 : index
  %s = buffer.alloca<workgroup> align(16) %sz : buffer
  %tile = buffer.view %s[%z] : buffer -> view<262144xf32>
  %in = index.cmp ult, %i, %n : index
  %ii = index.cast %i : index to i32
  %f = scalar.sitofp %ii : i32 to f32
  view.store %f, %tile[%tid] : f32, view<262144xf32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %j = index.add %tid, %c1 : index
  %out = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %v = view.load %tile[%j] : view<262144xf32> -> f32
  scf.if %in {
    view.store %v, %out[%i] : f32, view<[%n]xf32>
  }`
	m := parseSrc(t, inlineKernel("%n: index, %o: buffer", body))
	b, s := bothForms(t, []*loom.Module{m}, "k", Options{Workers: 1})
	if b.batch == nil {
		t.Fatalf("no batched form (noBatch %q)", b.noBatch)
	}
	const groups, L = 12, 8
	sameRuns(t, b, s, Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}, func() []Arg {
		return []Arg{idx(groups * L), buf(make([]byte, 4*groups*L))}
	}, []int{2, 8})
	// Run's own batches: three 1 MiB tiles each.
	before := batchesRun.Load()
	sameRuns(t, b, s, Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}, func() []Arg {
		return []Arg{idx(groups * L), buf(make([]byte, 4*groups*L))}
	}, []int{0})
	if ran := batchesRun.Load() - before; ran != groups/3 {
		t.Errorf("Run made %d batches of 1 MiB tiles, want %d (3 tiles in %d bytes)", ran, groups/3, wgBatchBytes)
	}
}
