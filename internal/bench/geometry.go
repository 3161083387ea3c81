package bench

import "github.com/loomgen/loomgen/loom"

// Geometry evaluates a kernel's launch config for workload arguments on
// the GPU target: the grid and workgroup size every side launches with.
func Geometry(m *loom.Module, export string, workload []int64) (grid, block [3]int, err error) {
	g, err := loom.WorkloadGeometry(m, export, loom.TargetGPU, workload...)
	if err != nil {
		return grid, block, err
	}
	for i := range 3 {
		grid[i], block[i] = int(g.Workgroups[i]), int(g.WorkgroupSize[i])
	}
	return grid, block, nil
}
