// Command loomdiff runs every Loom kernel of a corpus on the CPU executor
// (loom/interp) and through PTX on an NVIDIA GPU (loom/ptx), and compares
// the results.
//
// Usage:
//
//	loomdiff [flags] PATH...
//
// PATH is a .loom or .loom-test file or a directory searched for them;
// each .loom file is one input, each case of a .loom-test file another
// (internal/loomcorpus). For every kernel.def that compiles on both
// backends (config symbols at their config.def defaults, else 64),
// loomdiff builds deterministic pseudo-random inputs from the kernel's
// analysed signature (internal/crosscheck: one common size for index
// scalars satisfying the kernel's `where`/`assume` checks, else that size
// rounded up to each scalar's `mul` multiple, buffers as long
// as their analysed extents — 64 KiB where the extent is unknown, noted
// per kernel — floats in [-2, 2), integers in [1, 64)), runs it on the
// CPU executor in its checked mode (races and traps) and its fast mode,
// then twice on the GPU (and once more with the kernel's build for aligned
// buffers, ptx.Kernel.AlignedPTX, where it has one), and compares every buffer: bit-exact where the
// kernel's ops are exact, within the bounds of LOOM.md §11 where it uses
// approximate math or reorders float sums (crosscheck.Accuracy). Each
// kernel gets one line:
//
//	same      every buffer agrees
//	differs   the first differing element, both values, and how many differ
//	skipped   why the kernel has no single right answer to compare: it
//	          races (undefined results; it still runs on both, and the
//	          reason ends with whether the race showed), traps on the CPU
//	          executor (out of bounds at every size tried, say), has no
//	          legal inputs the analyses can size, runs nondeterministically
//	          on the GPU, or faulted the device or could not be JIT-compiled
//	not-both  it does not compile on both backends (the errors)
//	ptxas-rejects  (-ptxas) the assembler rejects a PTX build
//
// then the counts. The GPU work runs in a worker process (this command,
// re-executed with -worker), also with -cpu-only: a kernel that faults the device, crashes the
// worker or runs past -timeout is reported as skipped and a fresh worker,
// with a fresh context, continues with the next kernel.
//
// Flags:
//
//	-json        print the results and counts as JSON
//	-log file    write each result to file as a JSON line as it arrives
//	-cpu-only    everything but the GPU (status cpu-checked)
//	-ptxas p     first give every PTX build of each kernel (versioned,
//	             aligned, register-capped) to the ptxas at p ("auto":
//	             $LOOM_PTXAS or on PATH); a kernel it rejects is reported
//	             ptxas-rejects with its messages, one it is too old for
//	             gets a note. NVIDIA's assembler checks the PTX without a
//	             GPU (CUDA 11.8's takes all but the wgmma kernels)
//	-timeout d   time one kernel may take (default 60s)
//	-v           print kernels that agree too (default: only the others),
//	             those that do not compile on both, and each input that
//	             does not parse or analyse with its first error
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loomgen/loomgen/internal/loomcorpus"
	"github.com/loomgen/loomgen/internal/ptxas"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Report is the outcome of a run.
type Report struct {
	Files    int `json:"files"`
	Excluded int `json:"excluded_inputs"`
	// Broken counts inputs that do not parse or analyse; BrokenWhy holds
	// each one's name and first error.
	Broken    int      `json:"broken_inputs"`
	BrokenWhy []string `json:"broken,omitempty"`
	Kernels   int      `json:"kernels"`
	// Counts holds the number of kernels per status.
	Counts  map[string]int `json:"counts"`
	Results []Result       `json:"results"`
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("loomdiff", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print JSON")
	cpuOnly := fl.Bool("cpu-only", false, "run everything but the GPU")
	timeout := fl.Duration("timeout", 60*time.Second, "time one kernel may take")
	verbose := fl.Bool("v", false, "print kernels that agree too, and why each input that does not parse or analyse fails")
	logPath := fl.String("log", "", "append each result to this file as a JSON line as it arrives")
	worker := fl.Int("worker", -1, "internal: run as the GPU worker from this kernel index")
	ptxasFlag := fl.String("ptxas", "", "assemble every PTX build with this ptxas first (\"auto\": $LOOM_PTXAS or on PATH)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: loomdiff [-json] [-log file] [-cpu-only] [-ptxas path|auto] [-timeout d] [-v] PATH...")
		return 2
	}
	asm := *ptxasFlag
	if asm == "auto" {
		p, err := ptxas.Find()
		if err != nil || p == "" {
			fmt.Fprintln(stderr, "loomdiff: -ptxas auto: no ptxas ($LOOM_PTXAS or on PATH)", err)
			return 2
		}
		asm = p
	} else if asm != "" {
		if err := ptxas.Runs(asm); err != nil {
			fmt.Fprintln(stderr, "loomdiff: -ptxas:", err)
			return 2
		}
	}
	paths, err := loomcorpus.Files(fl.Args())
	if err != nil {
		fmt.Fprintln(stderr, "loomdiff:", err)
		return 1
	}
	ts, excluded, broken, err := targets(paths)
	if err != nil {
		fmt.Fprintln(stderr, "loomdiff:", err)
		return 1
	}
	if *worker >= 0 {
		return work(ts, *worker, *cpuOnly, asm, stdout, stderr)
	}
	rep := &Report{Files: len(paths), Excluded: excluded, Broken: len(broken), BrokenWhy: broken, Kernels: len(ts), Counts: map[string]int{}}
	var wargs []string
	if *cpuOnly {
		wargs = append(wargs, "-cpu-only")
	}
	if asm != "" {
		wargs = append(wargs, "-ptxas", asm)
	}
	var log io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			fmt.Fprintln(stderr, "loomdiff:", err)
			return 1
		}
		defer f.Close()
		log = f
	}
	rep.Results, err = supervise(append(wargs, fl.Args()...), ts, *timeout, log)
	if err != nil {
		fmt.Fprintln(stderr, "loomdiff:", err)
		return 1
	}
	for _, r := range rep.Results {
		rep.Counts[r.Status]++
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "loomdiff:", err)
			return 1
		}
		return 0
	}
	printText(stdout, rep, *verbose)
	return 0
}

// work is the worker: it checks kernels from index from on, printing a
// start line and a result line (JSON) for each, and exits with status 3
// after a device fault so that the supervisor starts a fresh context.
func work(ts []target, from int, cpuOnly bool, asm string, stdout, stderr io.Writer) int {
	var dev *device
	if !cpuOnly {
		var err error
		if dev, err = openDevice(); err != nil {
			fmt.Fprintln(stderr, "loomdiff: no GPU:", err)
			return 1
		}
	}
	enc := json.NewEncoder(stdout)
	for i := from; i < len(ts); i++ {
		enc.Encode(Result{Index: i, Status: "start"})
		res, fault := check(i, ts[i], dev, asm)
		enc.Encode(res)
		if fault != nil {
			return 3
		}
	}
	return 0
}

// supervise runs workers until every kernel has a result: a worker that
// dies or stalls on kernel i leaves i skipped with the reason, and the
// next worker starts at i+1.
func supervise(args []string, ts []target, timeout time.Duration, log io.Writer) ([]Result, error) {
	n := len(ts)
	logEnc := json.NewEncoder(log)
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	out := make([]Result, 0, n)
	for len(out) < n {
		from := len(out)
		cmd := exec.Command(exe, append([]string{"-worker", fmt.Sprint(from)}, args...)...)
		var errBuf bytes.Buffer
		cmd.Stderr = &errBuf
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		lines := make(chan Result)
		go func() {
			sc := bufio.NewScanner(pipe)
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			for sc.Scan() {
				var r Result
				if json.Unmarshal(sc.Bytes(), &r) == nil {
					lines <- r
				}
			}
			close(lines)
		}()
		started := -1
		timer := time.NewTimer(timeout)
		stalled := false
	read:
		for {
			select {
			case r, ok := <-lines:
				if !ok {
					break read
				}
				if r.Status == "start" {
					started = r.Index
					timer.Reset(timeout)
					continue
				}
				r.Name = ts[r.Index].Name
				out = append(out, r)
				logEnc.Encode(r)
			case <-timer.C:
				stalled = true
				cmd.Process.Kill()
				for range lines {
				}
				break read
			}
		}
		timer.Stop()
		werr := cmd.Wait()
		if len(out) == n {
			break
		}
		if started < len(out) {
			// The worker never started the next kernel: it could not open
			// the device, or failed before the first kernel.
			if len(out) == from {
				return out, fmt.Errorf("worker: %v: %s", werr, strings.TrimSpace(errBuf.String()))
			}
			continue
		}
		why := "worker died"
		if stalled {
			why = fmt.Sprintf("timed out after %v (worker killed)", timeout)
		}
		// The worker's stderr holds the fault or the crash.
		var ee *exec.ExitError
		if !stalled && errors.As(werr, &ee) {
			why = fmt.Sprintf("worker died (%v)", werr)
		}
		tail := strings.TrimSpace(errBuf.String())
		if len(tail) > 2000 {
			tail = "…" + tail[len(tail)-2000:]
		}
		if tail != "" {
			why += ": " + tail
		}
		r := Result{Index: started, Name: ts[started].Name, Status: Skipped, Detail: why}
		out = append(out, r)
		logEnc.Encode(r)
	}
	return out, nil
}

func printText(w io.Writer, rep *Report, verbose bool) {
	for _, r := range rep.Results {
		if r.Status == Same && !verbose || r.Status == NotBoth && !verbose {
			continue
		}
		fmt.Fprintf(w, "%-11s %s", r.Status, r.Name)
		if r.Detail != "" {
			fmt.Fprintf(w, ": %s", oneLine(r.Detail))
		}
		fmt.Fprintln(w)
		for _, note := range r.Notes {
			fmt.Fprintf(w, "%-11s   note: %s\n", "", note)
		}
	}
	if verbose {
		for _, b := range rep.BrokenWhy {
			fmt.Fprintf(w, "%-11s %s\n", "broken", b)
		}
	}
	both := rep.Kernels - rep.Counts[NotBoth]
	fmt.Fprintf(w, "\n%d files, %d inputs excluded, %d inputs that do not parse or analyse\n", rep.Files, rep.Excluded, rep.Broken)
	fmt.Fprintf(w, "%d kernels, %d compile on both backends\n", rep.Kernels, both)
	for _, k := range slices.Sorted(maps.Keys(rep.Counts)) {
		fmt.Fprintf(w, "  %-11s %d\n", k, rep.Counts[k])
	}
	// Skips grouped by their reason's first words, so a corpus run shows
	// why at a glance.
	groups := map[string]int{}
	for _, r := range rep.Results {
		if r.Status == Skipped {
			groups[skipClass(r.Detail)]++
		}
	}
	gk := slices.Collect(maps.Keys(groups))
	sort.Slice(gk, func(a, b int) bool {
		return groups[gk[a]] > groups[gk[b]] || groups[gk[a]] == groups[gk[b]] && gk[a] < gk[b]
	})
	for _, k := range gk {
		fmt.Fprintf(w, "    skipped: %-50s %d\n", k, groups[k])
	}
}

// skipClass is a skip reason up to its first colon.
func skipClass(detail string) string {
	if i := strings.Index(detail, ":"); i > 0 {
		if strings.HasPrefix(detail, "GPU") {
			if j := strings.Index(detail[i+1:], ":"); j > 0 {
				return detail[:i+1+j]
			}
		}
		return detail[:i]
	}
	return detail
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " | ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}
