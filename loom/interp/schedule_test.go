package interp

import (
	"errors"
	"sync"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// The claimer hands every unit out exactly once, in runs no longer than
// maxRun that shrink towards the end, from many goroutines at once.
func TestClaimerCoversUnitsOnce(t *testing.T) {
	for _, tc := range []struct{ units, workers int64 }{{1, 1}, {7, 16}, {1000, 3}, {4096, 16}, {100003, 8}} {
		c := claimer{units: tc.units, workers: tc.workers}
		c.stop.Store(tc.units)
		seen := make([]int32, tc.units)
		var mu sync.Mutex
		var lastRuns []int
		var wg sync.WaitGroup
		for range tc.workers {
			wg.Go(func() {
				for {
					from, to := c.next()
					if from >= to {
						return
					}
					if to-from > maxRun || to > int(tc.units) {
						t.Errorf("%d units: run [%d,%d) too long or past the end", tc.units, from, to)
						return
					}
					mu.Lock()
					for u := from; u < to; u++ {
						seen[u]++
					}
					if int64(to) == tc.units {
						lastRuns = append(lastRuns, to-from)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for u, n := range seen {
			if n != 1 {
				t.Fatalf("%d units, %d workers: unit %d claimed %d times", tc.units, tc.workers, u, n)
			}
		}
		if len(lastRuns) != 1 || lastRuns[0] != 1 {
			t.Errorf("%d units, %d workers: the last run is %v units long, want one unit", tc.units, tc.workers, lastRuns)
		}
	}
}

// scheduleKernels fail in every workgroup from %b on, at an index that
// names the group, so the error says which group it came from.
var scheduleKernels = map[string]string{
	// No barrier or workgroup memory: runs in batches of groups.
	"batched": `
  %i = kernel.workitem.dispatch.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %out = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %x = index.cast %i : index to i32
  %bad = index.cmp uge, %g, %b : index
  %j = scf.if %bad -> (index) {
    %far = index.add %i, %n : index
    scf.yield %far : index
  } else {
    scf.yield %i : index
  }
  view.store %x, %out[%j] : i32, view<[%n]xi32>`,
	// Workgroup memory and a barrier: one group at a time.
	"workgroup_memory": `
  %i = kernel.workitem.dispatch.id<x> : index
  %t = kernel.workitem.id<x> : index
  %g = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %out = buffer.view %o[%z] : buffer -> view<[%n]xi32>
  %bytes = index.constant 256 : offset
  %tile = buffer.alloca<workgroup> align(16) %bytes : buffer
  %tv = buffer.view %tile[%z] : buffer -> view<64xi32>
  %x = index.cast %i : index to i32
  view.store %x, %tv[%t] : i32, view<64xi32>
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  %y = view.load %tv[%t] : view<64xi32> -> i32
  %bad = index.cmp uge, %g, %b : index
  %j = scf.if %bad -> (index) {
    %far = index.add %i, %n : index
    scf.yield %far : index
  } else {
    scf.yield %i : index
  }
  view.store %y, %out[%j] : i32, view<[%n]xi32>`,
}

// A dispatch's error is the lowest failing workgroup's whatever the number
// of workers and however the groups were shared out, and the groups below
// it all ran.
func TestErrorIndependentOfWorkers(t *testing.T) {
	const groups, L = 3000, 64
	n := int64(groups * L)
	for name, body := range scheduleKernels {
		m := parseSrc(t, inlineKernel("%n: index, %b: index, %o: buffer", body))
		for _, bad := range []int64{0, 1, 1234, groups - 1} {
			var want string
			for _, w := range []int{1, 2, 5, 16} {
				k, err := Compile([]*loom.Module{m}, "k", Options{Workers: w})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for rep := range 5 {
					out := make([]byte, 4*n)
					err := k.Run(Launch{Workgroups: [3]int{groups, 1, 1}, WorkgroupSize: [3]int{L, 1, 1}}, []Arg{idx(n), idx(bad), buf(out)})
					var re *RunError
					if !errors.As(err, &re) || !errors.Is(err, ErrOutOfBounds) {
						t.Fatalf("%s, group %d, %d workers: got %v, want a bounds error", name, bad, w, err)
					}
					if re.Workgroup[0] != int(bad) {
						t.Fatalf("%s, group %d, %d workers, run %d: error names group %d: %v", name, bad, w, rep, re.Workgroup[0], err)
					}
					if want == "" {
						want = err.Error()
					} else if err.Error() != want {
						t.Fatalf("%s, group %d, %d workers: error %q, with one worker %q", name, bad, w, err, want)
					}
					got := bytesI32(out)
					for i := range bad * L {
						if got[i] != int32(i) {
							t.Fatalf("%s, group %d, %d workers: element %d of a group below the failing one is %d", name, bad, w, i, got[i])
						}
					}
				}
			}
		}
	}
}
