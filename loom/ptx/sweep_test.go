package ptx

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestSweepUnrollChoice checks which loops the backend unrolls
// (sweepUnroll) and how many body copies a trip runs; sweep_edges.loom
// checks the results on the GPU against the CPU executor.
func TestSweepUnrollChoice(t *testing.T) {
	const tmpl = sweepKernelHead + `  %c0 = index.constant 0 : index
  %c16 = index.constant 16 : index
  %step = index.constant 64 : index
  %av = buffer.view %a[%z] : buffer -> view<[%n]xf32>
  %ov = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %f0 = scalar.constant 0.0 : f32
  %s = scf.for %c = [LB to UB step %step] (%acc = %f0 : f32) -> (f32) CLAUSE{
    BODY
    scf.yield %acc2 : f32
  }
  view.store %s, %ov[%tid] : f32, view<[%n]xf32>
  kernel.return
}
`
	load := "%x = view.load %av[%c] : view<[%n]xf32> -> f32\n    %acc2 = scalar.addf %acc, %x : f32"
	for _, c := range []struct {
		name, lb, ub, clause, body string
		copies                     int // body copies per sweep trip; 0: not unrolled
	}{
		{"run-time trip count", "%tid", "%n", "", load, 4},
		{"constant bounds", "%c0", "%c16", "", load, 0},
		{"no load", "%tid", "%n", "", "%acc2 = scalar.addf %acc, %acc : f32", 0},
		{"barrier", "%tid", "%n", "", load + "\n    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}", 0},
		{"unroll(1)", "%tid", "%n", "unroll(1) ", load, 0},
		{"unroll(2)", "%tid", "%n", "unroll(2) ", load, 2},
		{"unroll(2) of a body with a barrier", "%tid", "%n", "unroll(2) ", load + "\n    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}", 0},
		{"bare unroll", "%tid", "%n", "unroll ", load, 0},
		{"workgroup id in the body", "%tid", "%n", "", "%wgi = kernel.workgroup.id<x> : index\n    " + load, 4},
		{"workgroup reduction in the body", "%tid", "%n", "", load + "\n    %red = kernel.workgroup.reduce<addf> %x : f32", 0},
	} {
		src := strings.NewReplacer("LB", c.lb, "UB", c.ub, "CLAUSE", c.clause, "BODY", c.body).Replace(tmpl)
		m, err := loom.ParseFile("sweep.loom", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		k, err := Compile([]*loom.Module{m}, "k", Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The loads between the sweep head and the rest loop: one per copy
		// in each version of the body (none when it is not unrolled).
		copies := 0
		if m := sweepHead.FindStringIndex(k.PTX); m != nil {
			sweep, _, _ := strings.Cut(k.PTX[m[1]:], "bra.uni")
			copies = strings.Count(sweep, "ld.global")
		}
		if copies != c.copies {
			t.Errorf("%s: %d body copies per sweep trip, want %d\n%s", c.name, copies, c.copies, k.PTX)
		}
	}
}

// sweepKernelHead opens the one-workgroup test kernels of this file:
// launch parameters %n, %a and %o, with %tid and %z defined.
const sweepKernelHead = `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %a: buffer, %o: buffer) {
  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
`

// sweepHead matches the label of a sweep trip's head.
var sweepHead = regexp.MustCompile(`(?m)^\$L_sweep_\d+:$`)

// TestSweepUnrollBytes checks the factor keeps a trip's loads within
// maxSweepBytes: one or two 16-byte loads a body are copied four times,
// four twice, eight not at all (a body unrolled by hand already).
func TestSweepUnrollBytes(t *testing.T) {
	const tmpl = `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 256 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %a: buffer, %o: buffer) where [mul(%n, 8192)] {
  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %c4 = index.constant 4 : index
  %c1024 = index.constant 1024 : index
  %step = index.constant STEP : index
  %av = buffer.view %a[%z] : buffer -> view<[%n]xf32>
  %ov = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %f0 = scalar.constant 0.0 : f32
  %first = index.mul %tid, %c4 : index
  %s = scf.for %c = [%first to %n step %step] (%acc = %f0 : f32) -> (f32) {
BODY    scf.yield %a_LAST : f32
  }
  view.store %s, %ov[%tid] : f32, view<[%n]xf32>
  kernel.return
}
`
	for _, c := range []struct {
		loads, copies int
	}{{1, 4}, {2, 4}, {4, 2}, {8, 0}} {
		var body strings.Builder
		prev := "%acc"
		for i := range c.loads {
			fmt.Fprintf(&body, "    %%o%d = index.constant %d : index\n    %%cc%d = index.add %%c, %%o%d : index\n", i, 1024*i, i, i)
			fmt.Fprintf(&body, "    %%x%d = vector.load %%av[%%cc%d] : view<[%%n]xf32> -> vector<4xf32>\n", i, i)
			fmt.Fprintf(&body, "    %%a_%d = vector.dotf %%x%d, %%x%d, %s : vector<4xf32>, vector<4xf32>, f32\n", i, i, i, prev)
			prev = fmt.Sprintf("%%a_%d", i)
		}
		src := strings.NewReplacer("STEP", strconv.Itoa(1024*c.loads), "BODY", body.String(), "%a_LAST", prev).Replace(tmpl)
		m, err := loom.ParseFile("bytes.loom", []byte(src))
		if err != nil {
			t.Fatalf("%d loads: %v", c.loads, err)
		}
		k, err := Compile([]*loom.Module{m}, "k", Options{})
		if err != nil {
			t.Fatalf("%d loads: %v", c.loads, err)
		}
		copies := 0
		if m := sweepHead.FindStringIndex(k.PTX); m != nil {
			sweep, _, _ := strings.Cut(k.PTX[m[1]:], "bra.uni")
			copies = strings.Count(sweep, "ld.global.v4") / c.loads
		}
		if copies != c.copies {
			t.Errorf("%d 16-byte loads a body: %d copies per sweep trip, want %d", c.loads, copies, c.copies)
		}
	}
}

// TestSweepFront checks which loads a sweep trip issues for all its
// copies ahead of the rest (sweepFront): loads of read-only memory, with
// the index arithmetic of their addresses, go first when the body stores;
// a load of the stored buffer, one whose address needs a carried value,
// and every load of a body that stores nothing keep their place.
func TestSweepFront(t *testing.T) {
	const tmpl = sweepKernelHead + `  %one = index.constant 1 : index
  %step = index.constant 64 : index
  %an, %on = buffer.assume.noalias %a, %o : buffer, buffer
  %av = buffer.view %an[%z] : buffer -> view<[%n]xf32>
  %ov = buffer.view %on[%z] : buffer -> view<[%n]xf32>
  %r = scf.for %c = [%tid to %n step %step] (%k = %tid : index) -> (index) {
    BODY
    %k2 = index.add %k, %one : index
    scf.yield %k2 : index
  }
  kernel.return
}
`
	for _, c := range []struct {
		name, body string
		front      int // ld.global.nc of the trip before its first st.global (of 4 copies)
	}{
		{"read-only load and a store", "%x = view.load %av[%c] : view<[%n]xf32> -> f32\n    view.store %x, %ov[%c] : f32, view<[%n]xf32>", 4},
		{"its address computed in the body",
			"%c2 = index.add %c, %one : index\n    %x = view.load %av[%c2] : view<[%n]xf32> -> f32\n    view.store %x, %ov[%c] : f32, view<[%n]xf32>", 4},
		{"its address from a carried value", "%x = view.load %av[%k] : view<[%n]xf32> -> f32\n    view.store %x, %ov[%c] : f32, view<[%n]xf32>", 1},
		{"no store", "%x = view.load %av[%c] : view<[%n]xf32> -> f32\n    %y = view.load %ov[%c] : view<[%n]xf32> -> f32", -1},
	} {
		src := strings.NewReplacer("BODY", c.body).Replace(tmpl)
		m, err := loom.ParseFile("front.loom", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		k, err := Compile([]*loom.Module{m}, "k", Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		loc := sweepHead.FindStringIndex(k.PTX)
		if loc == nil {
			t.Fatalf("%s: no sweep trip\n%s", c.name, k.PTX)
		}
		trip, _, _ := strings.Cut(k.PTX[loc[1]:], "bra.uni")
		// The register budget comes with loads issued first, only.
		if budget := strings.Contains(k.PTX, "\n.reqntid 64, 1, 1\n.maxnreg 64\n{"); budget != (c.front > 1) {
			t.Errorf("%s: .maxnreg 64 stated %v, want %v", c.name, budget, c.front > 1)
		}
		if c.front < 0 {
			// Program order: the first copy's two loads, then its
			// carried add (the only add of two registers).
			at := carriedAdd.FindStringIndex(trip)
			if at == nil || strings.Count(trip[:at[0]], "ld.global") != 2 {
				t.Errorf("%s: the loads moved\n%s", c.name, trip)
			}
			continue
		}
		before, _, ok := strings.Cut(trip, "st.global")
		if !ok {
			t.Fatalf("%s: no store in the trip\n%s", c.name, trip)
		}
		if got := strings.Count(before, "ld.global.nc"); got != c.front {
			t.Errorf("%s: %d read-only loads before the first store, want %d\n%s", c.name, got, c.front, trip)
		}
		if got := strings.Count(trip, "ld.global.nc"); got != 4 {
			t.Errorf("%s: %d read-only loads in the trip, want 4", c.name, got)
		}
	}
}

// carriedAdd matches an add of two registers (TestSweepFront's carried
// index; the copies' induction values add immediates).
var carriedAdd = regexp.MustCompile(`add\.s32 %r\d+, %r\d+, %r\d+;`)

// TestSweepBudgetCapped checks that CappedPTX replaces the sweeps'
// register budget with its own cap rather than state two: a 512-invocation
// workgroup allows 128 registers.
func TestSweepBudgetCapped(t *testing.T) {
	src := strings.Replace(sweepKernelHead, "%wg = index.constant 64", "%wg = index.constant 512", 1) + `  %one = index.constant 1 : index
  %step = index.constant 512 : index
  %an, %on = buffer.assume.noalias %a, %o : buffer, buffer
  %av = buffer.view %an[%z] : buffer -> view<[%n]xf32>
  %ov = buffer.view %on[%z] : buffer -> view<[%n]xf32>
  scf.for %c = [%tid to %n step %step] {
    %x = view.load %av[%c] : view<[%n]xf32> -> f32
    view.store %x, %ov[%c] : f32, view<[%n]xf32>
  }
  kernel.return
}
`
	m, err := loom.ParseFile("budget.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(k.PTX, "\n.reqntid 512, 1, 1\n.maxnreg 64\n{") {
		t.Errorf("no sweep budget:\n%.600s", k.PTX)
	}
	c := k.CappedPTX()
	if k.MaxRegs != 128 || strings.Count(c, ".maxnreg") != 1 || !strings.Contains(c, "\n.reqntid 512, 1, 1\n.maxnreg 128\n{") {
		t.Errorf("MaxRegs %d, capped:\n%.600s", k.MaxRegs, c)
	}
}
