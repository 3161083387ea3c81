package bench

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// CPUOptions configure the CPU suite.
type CPUOptions struct {
	Rounds int
	// N is the element count of each kernel's input.
	N   int
	Log func(format string, args ...any)
}

// cpuCase is a kernel on the CPU executor and the plain Go loop doing the
// same work with p goroutines.
type cpuCase struct {
	name, file, export string
	// args builds the kernel's arguments for the grid it runs on.
	args func(groups int) []interp.Arg
	// goLoop is the Go version on p goroutines.
	goLoop func(p int)
	// check compares the kernel's arguments after a run with the Go
	// reference.
	check func(args []interp.Arg) error
	// target is the lowest acceptable one-worker ratio (0: none).
	target float64
}

// parallel runs body(lo, hi) over [0, n) split across p goroutines.
func parallel(n, p int, body func(lo, hi int)) {
	if p <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + p - 1) / p
	for w := range p {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		wg.Go(func() { body(lo, hi) })
	}
	wg.Wait()
}

func cpuCases(n int) []cpuCase {
	x := uniform(n, 11, -1, 2)
	y0 := uniform(n, 12, -1, 2)
	xb := f32le(x)
	groups := (n + 255) / 256
	partial := make([]float32, groups)
	goY := make([]float32, n)
	return []cpuCase{
		{
			name: "tree reduction", file: "reduce_sum_workgroup.loom", export: "reduce_sum_f32", target: 1.0 / 3,
			args: func(g int) []interp.Arg {
				return []interp.Arg{{Bits: uint64(n)}, {Buffer: xb}, {Buffer: make([]byte, 4*g)}}
			},
			// The Go loop sums each 256-element block, as the kernel does.
			goLoop: func(p int) {
				parallel(groups, p, func(lo, hi int) {
					for g := lo; g < hi; g++ {
						var s float32
						for _, v := range x[g*256 : min(g*256+256, n)] {
							s += v
						}
						partial[g] = s
					}
				})
			},
			check: func(a []interp.Arg) error {
				got := f32s(a[2].Buffer)
				for g := range groups {
					var s, mag float64
					for _, v := range x[g*256 : min(g*256+256, n)] {
						s += float64(v)
						mag += math.Abs(float64(v))
					}
					if !(math.Abs(float64(got[g])-s) <= 1e-5*mag+1e-30) {
						return fmt.Errorf("block %d: sum %g, reference %g", g, got[g], s)
					}
				}
				return nil
			},
		},
		{
			name: "saxpy", file: "saxpy.loom", export: "saxpy",
			args: func(int) []interp.Arg {
				return []interp.Arg{{Bits: uint64(n)}, {Bits: uint64(math.Float32bits(1.5))}, {Buffer: xb}, {Buffer: f32le(y0)}}
			},
			// The plain Go expression, as a Go programmer writes it; the
			// check compares the kernel's fused result with math.FMA.
			goLoop: func(p int) {
				parallel(n, p, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						goY[i] = 1.5*x[i] + y0[i]
					}
				})
			},
			check: func(a []interp.Arg) error {
				got := f32s(a[3].Buffer)
				for i := range got {
					want := float32(math.FMA(1.5, float64(x[i]), float64(y0[i])))
					if got[i] != want {
						return fmt.Errorf("y[%d] = %g, reference %g", i, got[i], want)
					}
				}
				return nil
			},
		},
	}
}

// RunCPU times the CPU executor against Go loops at worker counts 1, 2,
// 4, … up to GOMAXPROCS. Every kernel is checked once per worker count
// before it is timed. Rerunning saxpy on its own output changes the
// values, not the work.
func RunCPU(opt CPUOptions, rep *Report) error {
	all := runtime.GOMAXPROCS(0)
	counts := []int{1}
	for p := 2; p < all; p *= 2 {
		counts = append(counts, p)
	}
	if all > 1 {
		counts = append(counts, all)
	}
	for _, c := range cpuCases(opt.N) {
		m, err := parseKernel(c.file)
		if err != nil {
			return err
		}
		grid, block, err := Geometry(m, c.export, []int64{int64(opt.N)})
		if err != nil {
			return err
		}
		l := interp.Launch{Workgroups: grid, WorkgroupSize: block}
		for _, p := range counts {
			k, err := interp.Compile([]*loom.Module{m}, c.export, interp.Options{Workers: p})
			if err != nil {
				return err
			}
			args := c.args(grid[0])
			if err := k.Run(l, args); err != nil {
				return err
			}
			if err := c.check(args); err != nil {
				return fmt.Errorf("%s on %d workers: %w", c.name, p, err)
			}
			run := func() (float64, error) {
				t0 := time.Now()
				err := k.Run(l, args)
				return float64(time.Since(t0).Nanoseconds()) / 1e6, err
			}
			goRun := func() (float64, error) {
				t0 := time.Now()
				c.goLoop(p)
				return float64(time.Since(t0).Nanoseconds()) / 1e6, nil
			}
			for range 2 {
				run()
				goRun()
			}
			t, err := rounds(opt.Rounds, run, goRun)
			if err != nil {
				return err
			}
			target := 0.0
			if p == 1 {
				target = c.target
			}
			r := Result{
				Group: "cpu", Name: fmt.Sprintf("%s/%d", c.name, p), Shape: fmt.Sprintf("%d f32", opt.N),
				Sides:  []Side{side("interp", "ms", t[0]), side("go", "ms", t[1])},
				Ratios: []Ratio{ratio("go", t[0], t[1], target)},
				Check:  "Go float64 reference on every output",
			}
			rep.Results = append(rep.Results, r)
			if opt.Log != nil {
				opt.Log("cpu %s: %s", r.Name, summary(r))
			}
		}
	}
	return nil
}
