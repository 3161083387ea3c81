package interp

import (
	"fmt"
	"testing"
)

// The corpus and error tests again with batches of 2, 3 and 7 workgroups,
// so small launches run the batched form (results, and error coordinates
// mapped back from batch lanes to workgroup and work-item).
func TestBatchedForm(t *testing.T) {
	tests := []struct {
		name string
		f    func(*testing.T)
	}{ // Reductions and Matmul use barriers, MoreElementwise one workgroup:
		// they run unbatched, which must work too.
		{"Saxpy", TestSaxpy}, {"Elementwise", TestElementwiseCorpus}, {"MoreElementwise", TestMoreElementwiseCorpus},
		{"Reductions", TestReductionsCorpus}, {"Matmul", TestMatmulTiled}, {"Atomics", TestAtomicsCorpus},
		{"Vectors", TestVectorsCorpus}, {"Loops", TestLoopsAndControlCorpus}, {"Memory", TestMemoryAndTypesCorpus},
		{"RunErrors", TestRunErrors}, {"NeverWrites", TestOutOfBoundsNeverWrites},
		{"AffineShift", TestAffineShiftMatchesReference}, {"AffineErrors", TestAffineAccessErrors},
	}
	defer func() { batchGroups = 0 }()
	for _, lanes := range []int{2, 3, 7} {
		batchGroups = lanes
		for _, tc := range tests {
			before := batchesRun.Load()
			t.Run(fmt.Sprintf("%s/%d", tc.name, lanes), tc.f)
			unbatched := map[string]bool{"NeverWrites": true, "Reductions": true, "Matmul": true, "MoreElementwise": true}
			if lanes == 2 && batchesRun.Load() == before && !unbatched[tc.name] {
				t.Errorf("%s: no batch ran", tc.name)
			}
		}
	}
}

// Kernels have a batched form, with or without workgroup memory (barriers
// and collectives act per workgroup of the batch, workgroup memory has a
// block per workgroup).
func TestBatchEligibility(t *testing.T) {
	for _, c := range []struct {
		file, export string
		want         bool
	}{
		{"saxpy.loom", "saxpy", true},
		{"reduce_sum_workgroup.loom", "reduce_sum_f32", true},
		{"matmul_tiled.loom", "matmul_f32", true},
		{"workgroup_reduce.loom", "block_max", true},
		{"subgroup_reduce.loom", "subgroup_sum_max", true},
	} {
		r := compileRun(t, corpus(t, c.file), c.export, Options{})
		if got := r.k.batch != nil; got != c.want {
			t.Errorf("%s: batched form %v, want %v (noBatch %q)", c.export, got, c.want, r.k.noBatch)
		}
	}
}
