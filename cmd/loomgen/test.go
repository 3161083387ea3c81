package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/loomgen/loomgen/checkrun"
	"github.com/loomgen/loomgen/gen"
)

// runTest is `loomgen test`: every check.case of the inputs, with all its
// parameter combinations, on one backend; -bench adds the check.benchmark
// entries. Exit status 1 when a case fails or cannot be evaluated.
func runTest(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("loomgen test", stdout, stderr)
	backend := fs.String("backend", "auto", "auto, cpu, cuda or hip")
	runPat := fs.String("run", "", "run only the sub-cases (and benchmarks) whose name matches this regexp")
	asJSON := fs.Bool("json", false, "print one JSON object per case")
	race := fs.Bool("race", false, "run every case in the CPU executor's checked mode (races, out of bounds)")
	bench := fs.Bool("bench", false, "also run the check.benchmark entries")
	if st := parseFlags(fs, args, stdout, stderr); st >= 0 {
		return st
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "test: no inputs: name .loom files, globs or directories")
	}
	opts := checkrun.Options{Backend: *backend, Race: *race}
	if *runPat != "" {
		re, err := regexp.Compile(*runPat)
		if err != nil {
			return usageError(stderr, "test: -run: %v", err)
		}
		opts.Run = re
	}
	files, err := gen.ExpandInputs(".", fs.Args())
	if err != nil {
		printErrors(stderr, err)
		return exitError
	}
	suite, err := checkrun.LoadFiles(files)
	if err != nil {
		printErrors(stderr, err)
		return exitError
	}
	r, err := checkrun.NewRunner(suite, opts)
	if err != nil {
		fmt.Fprintf(stderr, "loomgen test: %v\n", err)
		return exitError
	}
	defer r.Close()
	enc := json.NewEncoder(stdout)
	counts := map[checkrun.Status]int{}
	start := time.Now()
	for _, in := range r.Instances() {
		res := r.Run(in)
		counts[res.Status]++
		if *asJSON {
			enc.Encode(res)
			continue
		}
		switch res.Status {
		case checkrun.Pass:
			fmt.Fprintf(stdout, "PASS %s %s\n", res.Name(), roundDuration(res.Elapsed))
		default:
			fmt.Fprintf(stdout, "%s %s: %s\n", res.Status, res.Name(), res.Reason)
		}
	}
	if *bench {
		for _, b := range suite.Benchmarks {
			for _, br := range r.Bench(b) {
				counts[br.Status]++
				if *asJSON {
					enc.Encode(br)
					continue
				}
				name := br.Bench + " " + br.Case
				if br.Params != "" {
					name += "[" + br.Params + "]"
				}
				if br.Status != checkrun.Pass {
					fmt.Fprintf(stdout, "%s %s: %s\n", br.Status, name, br.Reason)
					continue
				}
				fmt.Fprintf(stdout, "BENCH %s %d iterations %.0f ns/op %.3f GB/s\n", name, br.Iterations, br.NsPerOp, br.BytesPerSecond()/1e9)
			}
		}
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "%s: %d passed, %d failed, %d errors, %d skipped in %s\n", r.Backend(),
			counts[checkrun.Pass], counts[checkrun.Fail], counts[checkrun.Error], counts[checkrun.Skip], roundDuration(time.Since(start)))
	}
	if counts[checkrun.Fail]+counts[checkrun.Error] > 0 {
		return exitError
	}
	return exitOK
}

// roundDuration keeps three significant digits: 1.23ms, 45.6µs.
func roundDuration(d time.Duration) time.Duration {
	for r := time.Duration(1); r < time.Second; r *= 10 {
		if d < 1000*r {
			return d.Round(r)
		}
	}
	return d.Round(time.Millisecond)
}
