package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	loomrt "github.com/loomgen/loomgen/runtime"
)

// tolerance bounds the largest absolute difference between the kernels'
// float32 class probabilities and the float64 reference. The kernels
// accumulate in float32 over at most 256 terms of magnitude around one, so
// errors stay near 1e-6; 1e-4 leaves room without hiding a wrong kernel,
// which is off by 1e-2 or more.
const tolerance = 1e-4

func main() {
	var (
		backend  = flag.String("backend", "auto", "backend: auto, cpu, cuda or hip (LOOM_BACKEND overrides)")
		batches  = flag.Int("batches", 4, "batches to run through the recorded graph")
		seed     = flag.Uint64("seed", 1, "seed of the weights and inputs")
		geluTanh = flag.Bool("gelu-tanh", false, "use the tanh approximation of GELU")
		samples  = flag.Int("samples", 20, "samples of the graph-versus-direct benchmark")
	)
	flag.Parse()
	if err := run(*backend, *batches, *seed, *geluTanh, *samples); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// defaultShape is the model the example runs: 64 tokens of 128 features, an
// MLP of 256 hidden units and 16 classes.
var defaultShape = Shape{Tokens: 64, Dim: 128, Hidden: 256, Classes: 16}

func run(backend string, batches int, seed uint64, geluTanh bool, samples int) error {
	s, err := loomrt.Open(loomrt.Options{Backend: backend})
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Printf("backend: %s (%s)\n", s.Backend(), s.BackendReason())

	sh := defaultShape
	cfg := DefaultConfig()
	cfg.MlpGeluTanh = geluTanh
	const eps = 1e-5
	params := newParams(sh, seed)
	m, err := newModel(s, cfg, sh, params, eps)
	if err != nil {
		return err
	}
	fmt.Printf("model: %d tokens × %d features, %d hidden, %d classes; scratch %d bytes planned (%d unplanned)\n",
		sh.Tokens, sh.Dim, sh.Hidden, sh.Classes, m.scratchBytes, m.unplannedBytes)

	worst := 0.0
	for b := range batches {
		x := newBatch(sh, seed+uint64(b)+1)
		got, err := m.forward(x)
		if err != nil {
			return fmt.Errorf("batch %d: %w", b, err)
		}
		want := reference(sh, params, x, eps, geluTanh)
		diff := maxAbsDiff(got, want)
		worst = math.Max(worst, diff)
		fmt.Printf("batch %d: max |probability - float64 reference| = %.3g\n", b, diff)
	}
	if worst > tolerance {
		return fmt.Errorf("output differs from the reference by %.3g, more than %.0e", worst, tolerance)
	}
	fmt.Printf("all %d batches within %.0e of the reference\n", batches, tolerance)

	res, err := s.Benchmark(graphKey, samples)
	if err != nil {
		return err
	}
	fmt.Printf("graph replay: median %v, p95 %v; direct: median %v, p95 %v; graph/direct %.2f (%d commands, %d samples)\n",
		res.Graph.Median, res.Graph.P95, res.Direct.Median, res.Direct.P95, res.Ratio(), res.Commands, samples)
	return nil
}

func maxAbsDiff(got []float32, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i])-want[i]))
	}
	return worst
}
