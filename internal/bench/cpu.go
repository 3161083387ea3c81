package bench

import (
	"cmp"
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
	// workload and shape, where they are not the suite's n elements.
	workload []int64
	shape    string
	// args builds the kernel's arguments for the grid it runs on.
	args func(groups int) []interp.Arg
	// goLoop is the Go version on p goroutines.
	goLoop func(p int)
	// check compares the kernel's arguments after a run with the Go
	// reference.
	check func(args []interp.Arg) error
	// target is the lowest acceptable one-worker ratio (0: none).
	target float64
	// checkWhat states the check where it is not a float64 reference on
	// every output.
	checkWhat string
	// goCheck, where set, checks the Go loop's own output after a run.
	goCheck func() error
}

// attentionCase is the suite's decode attention (Attention) at kvh kv
// heads and seq positions against the same algorithm in plain Go: per
// (kv head, 128-position chunk), an online softmax per query head in
// float32 over the chunk's positions in order, the kernel's partial state
// written out. The check merges the kernel's partials against a float64
// softmax·V (Attention's check).
func attentionCase(kvh, seq int) cpuCase {
	inst := Attention(kvh, seq)
	const dim, group, rec = 128, 4, 130
	chunks := seq / 128
	scale := math.Float32frombits(uint32(inst.Args[2].Bits))
	q, k, v := f32s(inst.Args[3].Buffer), bytesHalf(inst.Args[4].Buffer), bytesHalf(inst.Args[5].Buffer)
	out := make([]float32, kvh*chunks*group*rec)
	args := make([]interp.Arg, len(inst.Args))
	for i, a := range inst.Args {
		args[i] = interp.Arg{Bits: a.Bits, Buffer: a.Buffer}
	}
	return cpuCase{
		name: "attention", file: inst.File, export: inst.Export,
		workload: inst.Workload, shape: inst.Shape, checkWhat: inst.CheckWhat,
		args: func(int) []interp.Arg {
			args[len(args)-1].Buffer = make([]byte, inst.Args[len(args)-1].Out)
			return args
		},
		goLoop: func(p int) {
			parallel(kvh*chunks, p, func(lo, hi int) {
				for hc := lo; hc < hi; hc++ {
					h, c := hc/chunks, hc%chunks
					for g := range group {
						qr := q[(h*group+g)*dim:][:dim]
						m, l := float32(-math.MaxFloat32), float32(0)
						acc := out[(hc*group+g)*rec:][:dim]
						clear(acc)
						for p := c * 128; p < c*128+128; p++ {
							kr, vr := k[(h*seq+p)*dim:][:dim], v[(h*seq+p)*dim:][:dim]
							var s float32
							for d, x := range kr {
								s += qr[d] * scale * x
							}
							mn := max(m, s)
							corr := float32(math.Exp(float64(m - mn)))
							e := float32(math.Exp(float64(s - mn)))
							l = l*corr + e
							for d, x := range vr {
								acc[d] = acc[d]*corr + e*x
							}
							m = mn
						}
						out[(hc*group+g)*rec+dim], out[(hc*group+g)*rec+dim+1] = m, l
					}
				}
			})
		},
		check: func(a []interp.Arg) error {
			_, err := inst.Check(a[len(a)-1].Buffer)
			return err
		},
		goCheck: func() error {
			_, err := inst.Check(f32le(out))
			return err
		},
	}
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
		// 4096 positions at the suite's default n (4M), fewer for small n.
		attentionCase(8, min(4096, max(128, n/1024/128*128))),
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
		workload, shape := c.workload, c.shape
		if workload == nil {
			workload, shape = []int64{int64(opt.N)}, fmt.Sprintf("%d f32", opt.N)
		}
		grid, block, err := Geometry(m, c.export, workload)
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
			if c.goCheck != nil {
				c.goLoop(p)
				if err := c.goCheck(); err != nil {
					return fmt.Errorf("%s: the Go loop on %d goroutines: %w", c.name, p, err)
				}
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
				Group: "cpu", Name: fmt.Sprintf("%s/%d", c.name, p), Shape: shape,
				Sides:  []Side{side("interp", "ms", t[0]), side("go", "ms", t[1])},
				Ratios: []Ratio{ratio("go", t[0], t[1], target)},
				Check:  cmp.Or(c.checkWhat, "Go float64 reference on every output"),
			}
			rep.Results = append(rep.Results, r)
			if opt.Log != nil {
				opt.Log("cpu %s: %s", r.Name, summary(r))
			}
		}
	}
	return nil
}
