package main

import (
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/loomgen/loomgen/gen"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
	"github.com/loomgen/loomgen/loom/ptx"
)

// Input is one measured source: a .loom file or one input section of a
// .loom-test case.
type Input struct {
	// Name is the file, with ":line" of the case's input for .loom-test.
	Name string `json:"name"`
	// Mode is the case's RUN mode; "" for .loom files.
	Mode string `json:"mode,omitempty"`
	// Excluded says why the input is not counted (see SplitTest).
	Excluded string `json:"excluded,omitempty"`
	// ParseErr and AnalyseErr are the first error of each step, "" when it
	// passed (AnalyseErr is "" as well when parsing failed).
	ParseErr   string `json:"parse_error,omitempty"`
	AnalyseErr string `json:"analyse_error,omitempty"`
	// FormatErr says how loom.Format failed the round trip (its output
	// must parse to the same tree, positions aside); "" when it held or
	// the input did not parse.
	FormatErr string `json:"format_error,omitempty"`
	// BindErr is the first error of generating Go bindings for the input
	// (gen.BuildModel, gen.Render: what go generate does); "" when they
	// were generated or the input was not analysed.
	BindErr string   `json:"bindings_error,omitempty"`
	Kernels []Kernel `json:"kernels,omitempty"`
	// Conservative counts buffers whose access had to be assumed
	// read_write (something opaque touched them); Unknown counts buffer
	// extents the analysis could not express.
	Conservative int `json:"conservative_access,omitempty"`
	Unknown      int `json:"unknown_extents,omitempty"`
	// Notes are "kernel: why" for each conservative access and unknown
	// extent; they are not failures.
	Notes []string `json:"notes,omitempty"`

	files []loom.File // with -packages, the files of a directory's package
}

// Parsed and Analysed report the front-end steps of a counted input.
func (in *Input) Parsed() bool   { return in.ParseErr == "" }
func (in *Input) Analysed() bool { return in.ParseErr == "" && in.AnalyseErr == "" }

// Kernel is the result of compiling one kernel.def of an input.
type Kernel struct {
	Export string `json:"export"`
	CPUErr string `json:"cpu_error,omitempty"`
	PTXErr string `json:"ptx_error,omitempty"`
}

// stepTimeout bounds one step, so that a backend that loops on some input
// shows up as a failure instead of stopping the measurement.
const stepTimeout = 60 * time.Second

// measure parses the files as one package, analyses it and compiles its
// kernels.
func measure(in *Input, files ...loom.File) {
	var mods []*loom.Module
	in.ParseErr = step(func() error {
		var err error
		mods, err = loom.ParsePackage(files...)
		return err
	})
	if in.ParseErr != "" {
		return
	}
	if len(files) == 1 {
		in.FormatErr = step(func() error { return roundTrip(files[0], mods) })
	}
	var p *loom.Program
	in.AnalyseErr = step(func() error {
		var err error
		if p, err = loom.NewProgram(mods...); err != nil {
			return err
		}
		return analyse(in, p)
	})
	if in.AnalyseErr != "" {
		return
	}
	in.BindErr = step(func() error {
		srcs := make([]gen.Source, len(files))
		for i, f := range files {
			srcs[i] = gen.Source{Name: f.Name, Path: f.Name, Text: f.Src}
		}
		m, err := gen.BuildModel("kernels", srcs)
		if err != nil {
			return err
		}
		_, err = gen.Render(m)
		return err
	})
	for _, k := range p.Kernels() {
		if k.Decl || k.Body == nil {
			continue
		}
		kr := Kernel{Export: k.Export}
		kr.CPUErr = step(func() error {
			_, err := interp.Compile(mods, k.Export, interp.Options{})
			return err
		})
		kr.PTXErr = step(func() error {
			_, err := ptx.Compile(mods, k.Export, ptx.Options{})
			return err
		})
		in.Kernels = append(in.Kernels, kr)
	}
}

// analyse runs what `loomgen inspect` runs on every kernel: access
// inference, launch-config evaluation, argument checks, extents, workgroup
// storage, fingerprints, and the config defaults.
func analyse(in *Input, p *loom.Program) error {
	for _, k := range p.Kernels() {
		for _, a := range p.Access(k) {
			if a.Basis == loom.BasisConservative {
				in.Conservative++
				why := ""
				for _, e := range a.Evidence {
					if e.Basis == loom.BasisConservative {
						why = e.Reason
						break
					}
				}
				in.Notes = append(in.Notes, k.Export+": conservative access: "+why)
			}
		}
		if _, err := p.LaunchExprs(k); err != nil {
			return err
		}
		p.ArgChecks(k)
		for _, e := range p.Extents(k) {
			if e.Bytes == nil {
				in.Unknown++
				in.Notes = append(in.Notes, k.Export+": unknown extent: "+e.Reason)
			}
		}
		p.WorkgroupStorageUses(k)
		loom.Fingerprint(p, k)
	}
	_, err := p.ConfigDefaults()
	return err
}

// positions matches what loom.Dump prints of positions: the line:col
// opening an op line, a region's range, and the definition an operand
// resolves to.
var positions = regexp.MustCompile(`(?m)^(\s*)\d+:\d+ |\s\d+:\d+-\d+:\d+|@\d+:\d+`)

// roundTrip checks that loom.Format's output of f parses to the tree of
// mods (the parse of f), positions aside.
func roundTrip(f loom.File, mods []*loom.Module) error {
	out, err := loom.Format(f.Name, f.Src)
	if err != nil {
		return fmt.Errorf("format: %w", err)
	}
	again, err := loom.ParsePackage(loom.File{Name: f.Name, Src: out})
	if err != nil {
		return fmt.Errorf("formatted output does not parse: %w", err)
	}
	if len(again) != len(mods) {
		return fmt.Errorf("formatted output has %d modules, not %d", len(again), len(mods))
	}
	for i := range mods {
		a := positions.ReplaceAllString(loom.Dump(mods[i]), "$1")
		b := positions.ReplaceAllString(loom.Dump(again[i]), "$1")
		if a != b {
			return fmt.Errorf("formatted output parses differently: %s", firstDiff(a, b))
		}
	}
	return nil
}

// firstDiff describes the first line where two texts differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("dump line %d: %q became %q", i+1, strings.TrimSpace(x), strings.TrimSpace(y))
		}
	}
	return ""
}

// step runs f with a time limit and turns an error, a panic or a timeout
// into the text of its first error line ("" on success).
func step(f func() error) string {
	done := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("panic: %v [%s]", r, panicSite(debug.Stack()))
			}
		}()
		done <- firstError(f())
	}()
	select {
	case s := <-done:
		return s
	case <-time.After(stepTimeout):
		return fmt.Sprintf("timeout: no result after %v", stepTimeout)
	}
}

// firstError is the first diagnostic of err: the first of an ErrorList,
// else the first line of its text.
func firstError(err error) string {
	if err == nil {
		return ""
	}
	var list loom.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return list[0].Error()
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// panicSite is the first frame of a panic's stack inside loomgen, so that
// panics group by where they happen.
func panicSite(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "github.com/loomgen/loomgen/") && !strings.Contains(l, "internal/corpusrate") && i+1 < len(lines) {
			fn, _, _ := strings.Cut(strings.TrimPrefix(l, "github.com/loomgen/loomgen/"), "(")
			return fn
		}
	}
	return "unknown"
}
