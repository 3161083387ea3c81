package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/internal/loomcorpus"
	"github.com/loomgen/loomgen/internal/ptxas"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
	"github.com/loomgen/loomgen/loom/ptx"
)

// target is one kernel.def of one corpus input.
type target struct {
	Name string // input name + "/" + export
	src  loomcorpus.Source
	// export names the kernel in its input.
	export string
}

// Status values of a Result.
const (
	Same    = "same"
	Differs = "differs"
	Skipped = "skipped"
	// NotBoth: the kernel does not compile on both backends.
	NotBoth = "not-both"
	// Checked: -cpu-only ran everything but the GPU.
	Checked = "cpu-checked"
	// Rejected: -ptxas's assembler rejects a PTX build of the kernel.
	Rejected = "ptxas-rejects"
)

// Result is what became of one kernel.
type Result struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Status string `json:"status"`
	// Detail is the first difference, the reason for a skip, or for
	// NotBoth the backends' errors.
	Detail string `json:"detail,omitempty"`
	// CPU and PTX say whether each backend compiled the kernel.
	CPU bool `json:"cpu"`
	PTX bool `json:"ptx"`
	// Accuracy lists what makes the kernel inexact (empty: bit-exact).
	Accuracy []string `json:"accuracy,omitempty"`
	// Size is the value index scalars had (crosscheck.Sizes).
	Size int64 `json:"size,omitempty"`
	// Notes are the input choices the kernel left open.
	Notes []string `json:"notes,omitempty"`
}

// targets lists the kernels of the corpus files in a fixed order: files
// as loomcorpus.Files sorts them, inputs in file order, kernels in source
// order. Inputs that do not parse or analyse have no kernels here
// (internal/corpusrate measures those); excluded inputs are counted.
func targets(paths []string) (ts []target, excluded int, broken []string, err error) {
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, 0, nil, err
		}
		for _, s := range loomcorpus.Sources(path, src) {
			if s.Excluded != "" {
				excluded++
				continue
			}
			mods, err := loom.ParsePackage(s.File)
			if err == nil {
				_, err = loom.NewProgram(mods...)
			}
			if err != nil {
				broken = append(broken, fmt.Sprintf("%s: %s", s.Name, oneLine(err.Error())))
				continue
			}
			for _, m := range mods {
				for _, kd := range m.Kernels {
					if !kd.Decl {
						ts = append(ts, target{Name: s.Name + "/" + kd.Export, src: s, export: kd.Export})
					}
				}
			}
		}
	}
	return ts, excluded, broken, nil
}

// assembleBuilds gives every PTX build of k to the ptxas at asm. It
// returns ptxas's first rejection (rejected true), or a note when ptxas
// is too old for some build, or "".
func assembleBuilds(asm string, k *ptx.Kernel) (why string, rejected bool) {
	dir, err := os.MkdirTemp("", "loomdiff-ptxas")
	if err != nil {
		return "ptxas: " + err.Error(), true
	}
	defer os.RemoveAll(dir)
	var old []string
	for i, text := range [4]string{k.PTX, k.AlignedPTX, k.CappedPTX(), k.CappedAlignedPTX()} {
		if text == "" {
			continue
		}
		build := ptxas.BuildNames[i]
		switch err := ptxas.Assemble(asm, dir, text); {
		case errors.Is(err, ptxas.ErrTooOld):
			v, t := ptxas.Header(text)
			old = append(old, fmt.Sprintf("%s (ISA %s, %s)", build, v, t))
		case err != nil:
			return fmt.Sprintf("%s build: %v", build, err), true
		}
	}
	if len(old) > 0 {
		return "not assembled, ptxas too old: " + strings.Join(old, ", "), false
	}
	return "", false
}

// seed is the inputs' pseudo-random seed (fixed: runs are reproducible).
const seed = 12345

// check compiles t on both backends, builds its inputs and runs it on the
// CPU executor, then (dev non-nil) on the GPU, and compares. A panic in
// any step becomes a skip naming it. It returns an error wrapping crosscheck.ErrDeviceFault when the device
// context is lost.
func check(i int, t target, dev *device, asm string) (res Result, fault error) {
	res = Result{Index: i, Name: t.Name}
	defer func() {
		if r := recover(); r != nil {
			res.Status, res.Detail = Skipped, fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	mods, err := loom.ParsePackage(t.src.File)
	if err != nil {
		return skip(res, "parse: %v", err), nil
	}
	prog, err := loom.NewProgram(mods...)
	if err != nil {
		return skip(res, "analyse: %v", err), nil
	}
	kd, err := prog.Kernel(t.export)
	if err != nil {
		return skip(res, "%v", err), nil
	}
	cfg, notes, err := crosscheck.Config(mods, prog)
	if err != nil {
		return skip(res, "config: %v", err), nil
	}
	res.Notes = notes
	_, cpuErr := interp.Compile(mods, t.export, interp.Options{Config: cfg})
	pk, ptxErr := ptx.Compile(mods, t.export, ptx.Options{Config: cfg})
	res.CPU, res.PTX = cpuErr == nil, ptxErr == nil
	if cpuErr != nil || ptxErr != nil {
		res.Status = NotBoth
		if cpuErr != nil {
			res.Detail = "cpu: " + cpuErr.Error()
		}
		if ptxErr != nil {
			if res.Detail != "" {
				res.Detail += "; "
			}
			res.Detail += "ptx: " + ptxErr.Error()
		}
		return res, nil
	}
	if asm != "" {
		if why, rejected := assembleBuilds(asm, pk); rejected {
			res.Status, res.Detail = Rejected, why
			return res, nil
		} else if why != "" {
			res.Notes = append(res.Notes, why)
		}
	}
	// The checked mode first: a kernel that races has no single right
	// result, and one that traps has none at all. A kernel that reads
	// past its buffers at one size may assume whole workgroups: the next
	// size is tried.
	var c *crosscheck.Case
	var checked [][]byte
	var oob []string
	for first := 0; ; first++ {
		c, err = crosscheck.NewCase(mods, prog, kd, cfg, seed, first)
		if err != nil {
			return skip(res, "no inputs: %v", err), nil
		}
		checked, err = crosscheck.RunCPU(c, invocations(c) <= maxChecked)
		if !errors.Is(err, interp.ErrOutOfBounds) || c.Size == crosscheck.Sizes[len(crosscheck.Sizes)-1] {
			break
		}
		first = slices.Index(crosscheck.Sizes, c.Size)
		oob = append(oob, fmt.Sprint(c.Size))
	}
	if invocations(c) > maxChecked {
		res.Notes = append(res.Notes, fmt.Sprintf("%d invocations: races not checked (the checked mode runs workgroups one at a time)", invocations(c)))
	}
	if len(oob) > 0 && err == nil {
		res.Notes = append(res.Notes, fmt.Sprintf("out of bounds with index scalars %s; ran with %d", strings.Join(oob, ", "), c.Size))
	}
	res.Notes = append(res.Notes, c.Notes...)
	res.Accuracy = c.Accuracy.Why
	res.Size = c.Size
	// A racing kernel still runs, to tell whether the race shows: it is
	// skipped whatever the outcome, with the outcome noted.
	var race error
	if errors.Is(err, interp.ErrRace) {
		race, err = err, nil
	}
	if err != nil {
		if len(oob) > 0 {
			return skip(res, "traps on the CPU executor at every size tried: sizes %s, %d: %v", strings.Join(oob, ", "), c.Size, err), nil
		}
		return skip(res, "traps on the CPU executor: %v", err), nil
	}
	// The fast and checked modes must agree bit for bit: they are the
	// same executor, with fused and batched forms or without.
	exact := *c
	exact.Accuracy = crosscheck.Accuracy{}
	want := checked
	if race != nil || invocations(c) <= maxChecked {
		want, err = crosscheck.RunCPU(c, false)
		if err != nil && race != nil {
			// The checked run stopped at the race before the trap.
			return skip(res, "traps on the CPU executor: %v (and races: %v)", err, race), nil
		}
		if err != nil {
			return skip(res, "traps on the CPU executor (fast mode only: a CPU executor bug): %v", err), nil
		}
		for j := range want {
			if race != nil {
				break // the checked run stopped at the race
			}
			if want[j] == nil {
				continue
			}
			if d := crosscheck.Compare(&exact, j, want[j], checked[j]); d != nil {
				res.Status, res.Detail = Differs, "CPU executor's checked mode against its fast mode: "+d.Describe("fast")
				return res, nil
			}
		}
	}
	if dev == nil {
		res.Status = Checked
		if race != nil {
			return skip(res, "data race (undefined results): %v", race), nil
		}
		return res, nil
	}
	got, err := dev.run(pk, c)
	if err != nil {
		res.Status, res.Detail = Skipped, "GPU: "+err.Error()
		if errors.Is(err, crosscheck.ErrDeviceFault) {
			return res, err
		}
		return res, nil
	}
	// A second run tells nondeterministic kernels (atomics whose order
	// shows, races the checked mode cannot see) from wrong ones.
	again, err := dev.run(pk, c)
	if err != nil {
		res.Status, res.Detail = Skipped, "GPU (second run): "+err.Error()
		if errors.Is(err, crosscheck.ErrDeviceFault) {
			return res, err
		}
		return res, nil
	}
	var rerun, diff *crosscheck.Difference
	for j := range got {
		if got[j] != nil {
			if rerun = crosscheck.Compare(&exact, j, again[j], got[j]); rerun != nil {
				break
			}
		}
	}
	for j := range got {
		if got[j] != nil {
			if diff = crosscheck.Compare(c, j, got[j], want[j]); diff != nil {
				break
			}
		}
	}
	if res = verdict(res, race, rerun, diff); res.Status != Same || pk.AlignedPTX == "" {
		return res, nil
	}
	// The build the runtime launches where the buffers are aligned, as
	// these are: the same instructions as the aligned version the runs
	// above took, assembled alone.
	ak := *pk
	ak.PTX = pk.AlignedPTX
	al, err := dev.run(&ak, c)
	if err != nil {
		res.Status, res.Detail = Skipped, "GPU (aligned build): "+err.Error()
		if errors.Is(err, crosscheck.ErrDeviceFault) {
			return res, err
		}
		return res, nil
	}
	for j := range al {
		if al[j] != nil {
			if d := crosscheck.Compare(c, j, al[j], want[j]); d != nil {
				res.Status, res.Detail = Differs, "aligned build: "+d.Describe("gpu")
				return res, nil
			}
		}
	}
	return res, nil
}

// verdict is a kernel's outcome once it ran on both backends: race is the
// CPU executor's race report (nil: none), rerun the first difference
// between the two GPU runs, diff the first between the GPU's first run
// and the CPU executor. A racing kernel is skipped as racing whatever the
// runs gave, the outcome noted (two GPU runs that differ are the race
// showing, not unexplained nondeterminism).
func verdict(res Result, race error, rerun, diff *crosscheck.Difference) Result {
	switch {
	case race != nil && rerun != nil:
		return skip(res, "data race (undefined results): %v [the race shows: two GPU runs differ at %s]", race, runsDiffer(rerun))
	case race != nil && diff == nil:
		return skip(res, "data race (undefined results): %v [the GPU's result equals the CPU executor's in this run]", race)
	case race != nil:
		return skip(res, "data race (undefined results): %v [the race shows: %s]", race, diff.Describe("gpu"))
	case rerun != nil:
		// Atomics whose order shows, or races the checked mode cannot see.
		return skip(res, "nondeterministic on the GPU: two runs differ at %s", runsDiffer(rerun))
	case diff != nil:
		res.Status, res.Detail = Differs, diff.Describe("gpu")
	default:
		res.Status = Same
	}
	return res
}

// runsDiffer describes a difference between two GPU runs (Describe would
// call the first run "cpu").
func runsDiffer(d *crosscheck.Difference) string {
	return fmt.Sprintf("%%%s[%d] (%s): first run %s, second run %s; %d elements differ", d.Name, d.Element, d.Type, d.CPU, d.Other, d.Count)
}

// maxChecked is the largest launch run in the CPU executor's checked mode
// (races, one workgroup at a time); a larger one, a real model's shape,
// runs in the fast mode only.
const maxChecked = 1 << 20

func invocations(c *crosscheck.Case) int {
	n := 1
	for ax := 0; ax < 3; ax++ {
		n *= c.Launch.Workgroups[ax] * c.Launch.WorkgroupSize[ax]
	}
	return n
}

func skip(res Result, format string, args ...any) Result {
	res.Status, res.Detail = Skipped, fmt.Sprintf(format, args...)
	return res
}
