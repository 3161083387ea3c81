package interp

import (
	"flag"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/loomgen/loomgen/internal/sidebyside"
	"github.com/loomgen/loomgen/loom"
)

var (
	scalingRounds = flag.Int("interp.rounds", 7, "rounds of BenchmarkScaling")
	// scalingLanes overrides batchLanes, to measure batch sizes.
	scalingLanes = flag.Int("interp.batchlanes", 0, "lanes per batch in BenchmarkScaling (0: the default)")
)

// BenchmarkScaling measures parallel efficiency, T1 ÷ (p·Tp), of the
// executor and of the plain Go loop doing the same work, at p = 2, 4, 8, …
// up to GOMAXPROCS. Each round times one run at every worker count, the Go
// loop's and the executor's, in an order reversed every other round, so a
// clock or neighbour change on a shared machine falls on all of them alike;
// each efficiency is the median of its per-round values. A round is long
// (seconds), so it runs once per benchmark call:
//
//	go test ./loom/interp -run XXX -bench Scaling -benchtime 1x -interp.rounds 9
//
// It reports, per worker count P, interp-eff-P and go-eff-P (medians) and
// min-interp-eff-P, interp-ms-P and go-ms-P (median times; P = 1 too), and
// interp/go-1, the median per-round ratio of the one-core times.
func BenchmarkScaling(b *testing.B) {
	if *scalingLanes > 0 {
		defer func(n int) { batchLanes = n }(batchLanes)
		batchLanes = *scalingLanes
	}
	all := runtime.GOMAXPROCS(0)
	counts := []int{1}
	for p := 2; p < all; p *= 2 {
		counts = append(counts, p)
	}
	if all > 1 {
		counts = append(counts, all)
	}
	x, y, xb, yb := benchSaxpyData()
	gx := ramp(4<<20, 5, 4)
	gxb, gy, gyb := f32bytes(gx), make([]float32, len(gx)), make([]byte, 4*len(gx))
	cases := []struct {
		name, file, export string
		own                bool
		workload           int64
		args               func(l Launch) []Arg
		goLoop             func(p int)
	}{
		{name: "saxpy", file: "saxpy.loom", export: "saxpy", workload: benchN,
			args:   func(Launch) []Arg { return []Arg{idx(benchN), f32a(1.5), buf(xb), buf(yb)} },
			goLoop: func(p int) { goSaxpy(1.5, x, y, p) }},
		{name: "gelu", file: "gelu_tanh.loom", export: "gelu_tanh_f32", workload: int64(len(gx)),
			args:   func(Launch) []Arg { return []Arg{idx(int64(len(gx))), buf(gxb), buf(gyb)} },
			goLoop: func(p int) { goGelu(gx, gy, p) }},
		{name: "tree", file: "reduce_sum_workgroup.loom", export: "reduce_sum_f32", workload: benchN,
			args: func(l Launch) []Arg {
				return []Arg{idx(benchN), buf(xb), buf(make([]byte, 4*l.Workgroups[0]))}
			},
			goLoop: func(p int) { sink = goSum(x, p) }},
		{name: "strided", file: "reduce_sum_strided.loom", export: "reduce_sum_strided", own: true, workload: benchN,
			args: func(l Launch) []Arg {
				return []Arg{idx(benchN), buf(xb), buf(make([]byte, 4*l.Workgroups[0]))}
			},
			goLoop: func(p int) { sink = goSum(x, p) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var m *loom.Module
			if c.own {
				m = ownKernel(b, c.file)
			} else {
				m = corpus(b, c.file)
			}
			runs := make([]func(), len(counts))
			for i, p := range counts {
				r := compileRun(b, m, c.export, Options{Workers: p})
				l := r.launch(c.workload)
				args := c.args(l)
				runs[i] = func() {
					if err := r.k.Run(l, args); err != nil {
						b.Fatal(err)
					}
				}
			}
			// One run of each first, so frames and pages are in place.
			for i, p := range counts {
				runs[i]()
				c.goLoop(p)
			}
			type job struct {
				slot int // index into counts; negative for the Go loop
				f    func()
			}
			var jobs []job
			for i, p := range counts {
				jobs = append(jobs, job{i, runs[i]}, job{-1 - i, func() { c.goLoop(p) }})
			}
			times := map[int][]float64{}
			for round := range *scalingRounds {
				order := slices.Clone(jobs)
				if round%2 == 1 {
					slices.Reverse(order)
				}
				for _, j := range order {
					t0 := time.Now()
					j.f()
					times[j.slot] = append(times[j.slot], float64(time.Since(t0).Nanoseconds()))
				}
			}
			for i, p := range counts {
				b.ReportMetric(sidebyside.Median(times[i])/1e6, fmt.Sprintf("interp-ms-%d", p))
				b.ReportMetric(sidebyside.Median(times[-1-i])/1e6, fmt.Sprintf("go-ms-%d", p))
				if p == 1 {
					ratio := make([]float64, len(times[0]))
					for r := range ratio {
						ratio[r] = times[0][r] / times[-1][r]
					}
					b.ReportMetric(sidebyside.Median(ratio), "interp/go-1")
					continue
				}
				eff, goEff := make([]float64, len(times[i])), make([]float64, len(times[i]))
				for r := range eff {
					eff[r] = times[0][r] / (float64(p) * times[i][r])
					goEff[r] = times[-1][r] / (float64(p) * times[-1-i][r])
				}
				b.ReportMetric(sidebyside.Median(eff), fmt.Sprintf("interp-eff-%d", p))
				b.ReportMetric(slices.Min(eff), fmt.Sprintf("min-interp-eff-%d", p))
				b.ReportMetric(sidebyside.Median(goEff), fmt.Sprintf("go-eff-%d", p))
			}
		})
	}
}
