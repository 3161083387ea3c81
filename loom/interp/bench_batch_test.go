package interp

import (
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// BenchmarkBatchedGroups runs kernels with collectives on one worker once
// with their batched form allowed (as Run decides) and once with every
// workgroup alone, in one run: the ratio is what batching buys or costs
// at each workgroup size.
func BenchmarkBatchedGroups(b *testing.B) {
	const n = 1 << 20
	src := f32bytes(ramp(n, 3, 1))
	for _, tc := range []struct {
		name   string
		m      func() *loom.Module
		export string
		size   int
		out    int // f32 outputs per workgroup
		sg     int // the target's subgroup size (0: the GPU default)
	}{
		{"subgroup_reduce/32", func() *loom.Module { return corpus(b, "subgroup_reduce.loom") }, "subgroup_sum_max", 32, 1, 0},
		{"scan_subgroup/32", func() *loom.Module { return corpus(b, "scan_subgroup.loom") }, "scan_blocks_i32", 32, 32, 0},
		{"scan_subgroup/8", func() *loom.Module { return corpus(b, "scan_subgroup.loom") }, "scan_blocks_i32", 8, 8, 8},
		{"workgroup_reduce/128", func() *loom.Module { return corpus(b, "workgroup_reduce.loom") }, "block_max", 128, 1, 0},
		{"reduce_sum_strided/256", func() *loom.Module { return ownKernel(b, "reduce_sum_strided.loom") }, "reduce_sum_strided", 16384, 1, 0},
	} {
		m := tc.m()
		opts := Options{Workers: 1}
		if tc.sg != 0 {
			opts.Target = loom.Target{IndexBits: 32, OffsetBits: 64, SubgroupSize: tc.sg}
		}
		batched, err := Compile([]*loom.Module{m}, tc.export, opts)
		if err != nil {
			b.Fatal(err)
		}
		single, err := Compile([]*loom.Module{m}, tc.export, opts)
		if err != nil {
			b.Fatal(err)
		}
		single.batch = nil
		r := compileRun(b, m, tc.export, opts)
		g := (n + tc.size - 1) / tc.size
		wsz := min(tc.size, 256)
		l := Launch{Workgroups: [3]int{g, 1, 1}, WorkgroupSize: [3]int{wsz, 1, 1}}
		if tc.size == 16384 {
			wsz = 256
			l.WorkgroupSize[0] = wsz
		}
		if tc.size == 128 {
			l = r.launch(n)
			g = l.Workgroups[0]
		}
		args := []Arg{idx(n), buf(src)}
		for range len(r.k.params) - 2 {
			args = append(args, buf(make([]byte, 4*max(g*tc.out, n))))
		}
		for _, form := range []struct {
			name string
			k    *Kernel
		}{{"batched", batched}, {"alone", single}} {
			b.Run(tc.name+"/"+form.name, func(b *testing.B) {
				b.SetBytes(n * 4)
				for b.Loop() {
					if err := form.k.Run(l, args); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkBatchedSaxpy is BenchmarkBatchedGroups for saxpy (128-lane
// workgroups, no barriers), which reads and writes y.
func BenchmarkBatchedSaxpy(b *testing.B) {
	const n = 1 << 22
	m := corpus(b, "saxpy.loom")
	r := compileRun(b, m, "saxpy", Options{Workers: 1})
	single, err := Compile([]*loom.Module{m}, "saxpy", Options{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	single.batch = nil
	l := r.launch(n)
	args := []Arg{idx(n), f32a(1.5), buf(f32bytes(ramp(n, 1, 1))), buf(f32bytes(ramp(n, 2, 1)))}
	for _, form := range []struct {
		name string
		k    *Kernel
	}{{"batched", r.k}, {"alone", single}} {
		b.Run(form.name, func(b *testing.B) {
			b.SetBytes(n * 12)
			for b.Loop() {
				if err := form.k.Run(l, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
