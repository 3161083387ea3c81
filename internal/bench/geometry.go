package bench

import (
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

// Geometry evaluates a kernel's launch config for workload arguments on
// the GPU target: the grid and workgroup size every side launches with.
func Geometry(m *loom.Module, export string, workload []int64) (grid, block [3]int, err error) {
	prog, err := loom.NewProgram(m)
	if err != nil {
		return grid, block, err
	}
	kd, err := prog.Kernel(export)
	if err != nil {
		return grid, block, err
	}
	if len(kd.Workload) != len(workload) {
		return grid, block, fmt.Errorf("%s takes %d workload arguments, %d given", export, len(kd.Workload), len(workload))
	}
	env := &loom.Env{Target: loom.TargetGPU}
	for i, w := range kd.Workload {
		env.Workload = append(env.Workload, loom.Const{Type: w.Type, Int: workload[i]})
	}
	g, err := prog.LaunchConfig(kd, env)
	if err != nil {
		return grid, block, err
	}
	for i := range 3 {
		grid[i], block[i] = int(g.Workgroups[i]), int(g.WorkgroupSize[i])
	}
	return grid, block, nil
}
