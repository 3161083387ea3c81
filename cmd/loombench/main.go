// Command loombench runs loomgen's performance suite and draws its plots.
//
// On a machine with an NVIDIA GPU it compares Loom kernels compiled by
// loom/ptx with the same algorithms in CUDA C built by nvcc (sources
// embedded from internal/bench/native, built here when nvcc is found),
// with cuBLAS, and with the device's copy bandwidth; anywhere it compares
// the CPU executor with Go loops by worker count. Every result is checked
// against a float64 reference before it is timed. It needs no Go
// toolchain: build it with CGO_ENABLED=0 go build and copy it over.
//
//	loombench -o results.json                   # run what this machine has
//	loombench -ingest launch=hip.txt -o r.json  # add go test -bench output
//	loombench -plot results.json -plotdir docs/bench
//
// Flags:
//
//	-o FILE        write the JSON report (default loombench.json)
//	-gpu, -cpu     run the GPU or CPU part (both default true; a missing
//	               GPU is reported and skipped)
//	-rounds N      timed rounds per comparison (default 21)
//	-run RE        compare only the GPU kernels whose export name matches
//	-n N           elements of the CPU kernels' input (default 4M)
//	-nvcc PATH     nvcc (default: PATH, then /usr/local/cuda/bin/nvcc)
//	-work DIR      where the native side is built (default: a temp dir)
//	-dump DIR      also write our PTX and nvcc's there
//	-ingest G=F    add the ratios of go test -bench output F under group G
//	               (repeatable)
//	-plot FILE     draw the PNG plots of a JSON report instead of running
//	-plotdir DIR   where -plot writes (default .)
//	-table FILE    print a JSON report's results as Markdown tables
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/loomgen/loomgen/internal/bench"
)

// ingestFlags collects -ingest group=file pairs.
type ingestFlags []string

func (f *ingestFlags) String() string     { return strings.Join(*f, ",") }
func (f *ingestFlags) Set(v string) error { *f = append(*f, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main with its arguments and output streams, returning the exit
// status: 0, 1 when a part of the suite failed, 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("loombench", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("o", "loombench.json", "JSON report to write")
	gpu := fl.Bool("gpu", true, "run the GPU suite")
	cpu := fl.Bool("cpu", true, "run the CPU suite")
	rounds := fl.Int("rounds", 21, "timed rounds per comparison")
	only := fl.String("run", "", "compare only the GPU kernels whose export name matches this regexp")
	n := fl.Int("n", 4<<20, "elements of the CPU kernels' input")
	nvcc := fl.String("nvcc", "", "nvcc to build the native side with")
	work := fl.String("work", "", "folder to build the native side in")
	dump := fl.String("dump", "", "folder for our PTX and nvcc's")
	plot := fl.String("plot", "", "draw the plots of this JSON report")
	plotDir := fl.String("plotdir", ".", "where -plot writes PNG files")
	table := fl.String("table", "", "print this JSON report as Markdown tables")
	var ingest ingestFlags
	fl.Var(&ingest, "ingest", "group=file of go test -bench output to add (repeatable)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) }
	if *table != "" {
		rep, err := bench.ReadJSON(*table)
		if err != nil {
			fmt.Fprintln(stderr, "loombench:", err)
			return 1
		}
		bench.Markdown(stdout, rep)
		return 0
	}
	if *plot != "" {
		rep, err := bench.ReadJSON(*plot)
		if err == nil {
			err = bench.Plot(rep, *plotDir)
		}
		if err != nil {
			fmt.Fprintln(stderr, "loombench:", err)
			return 1
		}
		return 0
	}
	rep := &bench.Report{Machine: bench.Machine(), Started: time.Now().UTC(), Method: bench.Method}
	failed := false
	fail := func(what string, err error) {
		fmt.Fprintf(stderr, "loombench: %s: %v\n", what, err)
		failed = true
	}
	// A bad -run stops the run before anything is timed, GPU or not.
	var onlyRE *regexp.Regexp
	if *only != "" {
		re, err := regexp.Compile(*only)
		if err != nil {
			fail("-run", err)
			return 2
		}
		onlyRE = re
		if !*gpu {
			logf("-run selects GPU kernels; with -gpu=false it selects nothing")
		}
	}
	if *gpu {
		opt := bench.GPUOptions{Rounds: *rounds, DumpPTX: *dump, Log: logf, Only: onlyRE}
		if err := buildNative(*nvcc, *work, *dump, &opt, logf); err != nil {
			fail("native side", err)
		}
		if err := bench.RunGPU(opt, rep); bench.NoGPU(err) {
			logf("no NVIDIA GPU (%v): GPU suite skipped", err)
		} else if err != nil {
			fail("GPU suite", err)
		}
	}
	if *cpu {
		if err := bench.RunCPU(bench.CPUOptions{Rounds: *rounds, N: *n, Log: logf}, rep); err != nil {
			fail("CPU suite", err)
		}
	}
	for _, in := range ingest {
		group, file, ok := strings.Cut(in, "=")
		if !ok {
			fail("-ingest", fmt.Errorf("%q is not group=file", in))
			continue
		}
		f, err := os.Open(file)
		if err != nil {
			fail("-ingest", err)
			continue
		}
		rs, err := bench.Ingest(f, group)
		f.Close()
		if err != nil {
			fail("-ingest "+file, err)
		}
		rep.Results = append(rep.Results, rs...)
	}
	if err := rep.WriteJSON(*out); err != nil {
		fail("writing the report", err)
	}
	if failed {
		return 1
	}
	return 0
}

// buildNative builds the embedded CUDA sources with nvcc: each source of
// the comparison kernels (bench.NvccSources) to PTX of its own (loaded
// through the same driver JIT as ours) and the cuBLAS baseline to a
// shared library. Without nvcc the GPU suite runs with neither. It
// returns the errors of the sources that did not build; the others are
// in opt.NvccPTX.
func buildNative(nvcc, work, dump string, opt *bench.GPUOptions, logf func(string, ...any)) error {
	if nvcc == "" {
		if p, err := exec.LookPath("nvcc"); err == nil {
			nvcc = p
		} else if _, err := os.Stat("/usr/local/cuda/bin/nvcc"); err == nil {
			nvcc = "/usr/local/cuda/bin/nvcc"
		} else {
			logf("nvcc not found: no nvcc or cuBLAS comparisons")
			return nil
		}
	}
	if work == "" {
		d, err := os.MkdirTemp("", "loombench")
		if err != nil {
			return err
		}
		work = d
	}
	for _, name := range append(slices.Clone(bench.NvccSources), "entry.cuh", "cublas.c") {
		src, err := bench.NativeFS.ReadFile("native/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(work, name), src, 0o644); err != nil {
			return err
		}
	}
	run := func(args ...string) error {
		cmd := exec.Command(nvcc, args...)
		cmd.Dir = work
		b, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("nvcc %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return nil
	}
	// Each source on its own: one that does not build costs only its
	// kernels' nvcc sides (they are then timed against the copy rate
	// alone), and the error is reported.
	var errs []error
	for _, name := range bench.NvccSources {
		ptx := strings.TrimSuffix(name, ".cu") + "_nvcc.ptx"
		if err := run("-O3", "-arch=sm_90", "-ptx", "-o", ptx, name); err != nil {
			errs = append(errs, err)
			continue
		}
		opt.NvccPTX = append(opt.NvccPTX, filepath.Join(work, ptx))
		if dump != "" {
			if b, err := os.ReadFile(filepath.Join(work, ptx)); err == nil {
				os.WriteFile(filepath.Join(dump, ptx), b, 0o644)
			}
		}
	}
	if err := run("-O2", "-shared", "-Xcompiler", "-fPIC", "-o", "libbench_cublas.so", "cublas.c", "-lcublas"); err != nil {
		logf("cuBLAS baseline not built: %v", err)
	} else {
		opt.CublasLib = filepath.Join(work, "libbench_cublas.so")
	}
	return errors.Join(errs...)
}
