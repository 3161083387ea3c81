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
	const tmpl = `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %a: buffer, %o: buffer) {
  %tid = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
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
