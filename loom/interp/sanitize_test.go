package interp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// sanitizerKernels parses testdata/sanitize.loom, the sanitizer's own
// kernels (shared with the runtime's sanitizer test).
func sanitizerKernels(t testing.TB) *loom.Module {
	t.Helper()
	p := filepath.Join("testdata", "sanitize.loom")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(p, src)
	if err != nil {
		t.Fatalf("parse %s: %v", p, err)
	}
	return m
}

func runSanitized(t *testing.T, export string, san Sanitize) (error, []byte) {
	t.Helper()
	r := compileRun(t, sanitizerKernels(t), export, Options{Sanitize: san, Workers: 4})
	out := make([]byte, 16)
	err := r.k.Run(r.launch(), []Arg{buf(out)})
	return err, out
}

func TestSanitizerWorkgroupRaces(t *testing.T) {
	all := Sanitize{Races: true, GlobalRaces: true}
	cases := []struct {
		name, export string
		san          Sanitize
		// want is the race's access kinds, "" for none.
		access, prior string
		offset        int64
		lane, prLane  int
	}{
		{name: "all lanes store one slot", export: "wg_same_slot", san: all, access: "write", prior: "write", offset: 0, lane: 1, prLane: 0},
		{name: "read a neighbour's store without a barrier", export: "wg_neighbour_no_barrier", san: all, access: "read", prior: "write", offset: 4, lane: 0, prLane: 1},
		{name: "lanes store their output, then one slot", export: "wg_race_after_output", san: all, access: "write", prior: "write", offset: 0, lane: 1, prLane: 0},
		{name: "a later allocation orders nothing", export: "race_across_alloca", san: all, access: "read", prior: "write", offset: 0, lane: 1, prLane: 0},
		{name: "a barrier orders them", export: "wg_neighbour_barrier", san: all},
		{name: "races off", export: "wg_same_slot", san: Sanitize{GlobalRaces: true}},
		{name: "workgroups store their own slot", export: "global_own_slot", san: all},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err, _ := runSanitized(t, tc.export, tc.san)
			if tc.access == "" {
				if err != nil {
					t.Fatalf("want no report, got %v", err)
				}
				return
			}
			var re *RunError
			if !errors.As(err, &re) || !errors.Is(err, ErrRace) || re.Event == nil {
				t.Fatalf("want an ErrRace RunError with an event, got %v", err)
			}
			ev := re.Event
			if ev.Type != "tsan_report" || ev.Check != "data_race" || ev.Memory != "workgroup" ||
				ev.Access != tc.access || ev.PriorAccess != tc.prior || ev.Length != 4 || ev.Offset != tc.offset ||
				ev.Workitem[0] != tc.lane || ev.PriorWorkitem[0] != tc.prLane || !ev.Pos.IsValid() || !ev.PriorPos.IsValid() {
				t.Fatalf("event %+v", ev)
			}
		})
	}
}

// TestSanitizerRaceFreeUnchecked: without the checked mode the same racy
// kernel runs (its result is whatever the lockstep order gives).
func TestSanitizerOffRunsRacyKernel(t *testing.T) {
	if err, _ := runSanitized(t, "wg_same_slot", Sanitize{}); err != nil {
		t.Fatal(err)
	}
}

func TestSanitizerGlobalRaceBetweenWorkgroups(t *testing.T) {
	err, out := runSanitized(t, "global_same_slot", Sanitize{GlobalRaces: true})
	var re *RunError
	if !errors.As(err, &re) || re.Event == nil || re.Event.Memory != "global" || re.Event.Param != 0 ||
		re.Event.Access != "write" || re.Event.PriorAccess != "write" || re.Event.Workgroup[0] != 1 || re.Event.PriorWorkgroup[0] != 0 {
		t.Fatalf("want a global write/write race of workgroups 1 and 0, got %v (%+v)", err, re)
	}
	// The dispatch stopped at the report: workgroup 0's store stands.
	if got := bytesI32(out)[0]; got != 0 {
		t.Fatalf("out[0] = %d after the report, want workgroup 0's 0", got)
	}
	// Global races off: unreported. One worker, so the kernel's own race
	// between workgroups is not one between goroutines (go test -race).
	r := compileRun(t, sanitizerKernels(t), "global_same_slot", Options{Sanitize: Sanitize{Races: true}, Workers: 1})
	if err := r.k.Run(r.launch(), []Arg{buf(make([]byte, 16))}); err != nil {
		t.Fatalf("global races off: %v", err)
	}
}

// TestSanitizerGlobalRaceWithinWorkgroup: with both checks on, lanes of
// one workgroup touching the same bytes of a bound buffer race unless a
// barrier lies between.
func TestSanitizerGlobalRaceWithinWorkgroup(t *testing.T) {
	all := Sanitize{Races: true, GlobalRaces: true}
	for _, tc := range []struct {
		export, access, prior string
		offset                int64
		lane, prLane          int
	}{
		{export: "global_lanes_same_slot", access: "write", prior: "write", offset: 0, lane: 1, prLane: 0},
		{export: "global_lanes_no_barrier", access: "read", prior: "write", offset: 4, lane: 0, prLane: 1},
		{export: "global_lanes_barrier"},
		{export: "fragment_dense_store", access: "write", prior: "write", offset: 0, lane: 1, prLane: 0},
	} {
		t.Run(tc.export, func(t *testing.T) {
			err, out := runSanitized(t, tc.export, all)
			if tc.access == "" {
				if err != nil {
					t.Fatalf("want no report, got %v", err)
				}
				if got := bytesI32(out); got[0] != 1 || got[3] != 0 {
					t.Fatalf("out = %v, want each lane's neighbour", got)
				}
				return
			}
			var re *RunError
			if !errors.As(err, &re) || !errors.Is(err, ErrRace) || re.Event == nil {
				t.Fatalf("want an ErrRace RunError with an event, got %v", err)
			}
			if ev := re.Event; ev.Memory != "global" || ev.Param != 0 || ev.Access != tc.access || ev.PriorAccess != tc.prior ||
				ev.Offset != tc.offset || ev.Workitem[0] != tc.lane || ev.PriorWorkitem[0] != tc.prLane || ev.PriorWorkgroup != ev.Workgroup {
				t.Fatalf("event %+v", ev)
			}
		})
	}
	// A subgroup fragment whose layout replicates elements across lanes
	// (the lhs layout: lanes 16-31 hold lanes 0-15's) is stored by the
	// subgroup as one op: its lanes do not race with each other.
	r := compileRun(t, corpus(t, "fragment_mma.loom"), "fragment_splat_init", Options{Sanitize: all})
	if err := r.k.Run(r.launch(), []Arg{buf(make([]byte, 512)), buf(make([]byte, 512)), buf(make([]byte, 1024)), buf(make([]byte, 512))}); err != nil {
		t.Fatalf("fragment_splat_init: %v", err)
	}
	// Global races alone check workgroups against each other only.
	if err, _ := runSanitized(t, "global_lanes_same_slot", Sanitize{GlobalRaces: true}); err != nil {
		t.Fatalf("GlobalRaces alone: %v", err)
	}
}

func TestSanitizerOutOfBoundsEvent(t *testing.T) {
	// A plain store and a fragment store each write at byte 16 of 16.
	for _, export := range []string{"past_the_end", "fragment_past_the_end"} {
		for _, san := range []Sanitize{{}, {Races: true}} {
			err, _ := runSanitized(t, export, san)
			var re *RunError
			if !errors.As(err, &re) || !errors.Is(err, ErrOutOfBounds) || re.Event == nil {
				t.Fatalf("%s %+v: want an out-of-bounds event, got %v", export, san, err)
			}
			if ev := re.Event; ev.Type != "asan_report" || ev.Access != "write" || ev.Length != 4 || ev.Memory != "global" || ev.Offset != 16 {
				t.Fatalf("%s %+v: event %+v", export, san, ev)
			}
		}
	}
}

// TestSanitizerNoFalseReports runs corpus kernels with workgroup memory and
// barriers (a tree reduction, a tiled matmul) in the checked mode, on
// several workgroups: none races, and the results are the unchecked ones.
func TestSanitizerNoFalseReports(t *testing.T) {
	all := Options{Sanitize: Sanitize{Races: true, GlobalRaces: true}}
	const g = 5
	const n = 256 * g
	src := f32bytes(ramp(n, 1, 1))
	checked, plain := make([]byte, 4*g), make([]byte, 4*g)
	compileRun(t, corpus(t, "reduce_sum_workgroup.loom"), "reduce_sum_f32", all).run(wl(n), idx(n), buf(src), buf(checked))
	compileRun(t, corpus(t, "reduce_sum_workgroup.loom"), "reduce_sum_f32", Options{}).run(wl(n), idx(n), buf(src), buf(plain))
	exactF32(t, "reduce_sum_f32 checked vs plain", bytesF32(checked), bytesF32(plain))

	const m, k, nn = 20, 24, 36
	a, b := f32bytes(ramp(m*k, 2, 1)), f32bytes(ramp(k*nn, 3, 1))
	c1, c2 := make([]byte, 4*m*nn), make([]byte, 4*m*nn)
	compileRun(t, corpus(t, "matmul_tiled.loom"), "matmul_f32", all).run(wl(m, nn, k), idx(m), idx(nn), idx(k), buf(a), buf(b), buf(c1))
	compileRun(t, corpus(t, "matmul_tiled.loom"), "matmul_f32", Options{}).run(wl(m, nn, k), idx(m), idx(nn), idx(k), buf(a), buf(b), buf(c2))
	exactF32(t, "matmul_f32 checked vs plain", bytesF32(c1), bytesF32(c2))
}

// TestSanitizerExactForm: the checked mode compiles no batched form and
// hoists nothing (the tree reduction has both otherwise), so every lane of
// every workgroup makes its own accesses.
func TestSanitizerExactForm(t *testing.T) {
	m := corpus(t, "reduce_sum_workgroup.loom")
	plain := compileRun(t, m, "reduce_sum_f32", Options{})
	if plain.k.batch == nil {
		t.Fatal("reduce_sum_f32 has no batched form unchecked; pick another kernel")
	}
	checked := compileRun(t, m, "reduce_sum_f32", Options{Sanitize: Sanitize{Races: true}})
	if checked.k.batch != nil || checked.k.pre != nil || checked.k.noBatch != "checked mode" {
		t.Fatalf("checked: batch %v, hoisted %d ops, noBatch %q", checked.k.batch != nil, len(checked.k.pre), checked.k.noBatch)
	}
}
