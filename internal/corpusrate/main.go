// Command corpusrate measures how much of a corpus of real Loom the front
// end, the generator and the backends accept. It is how issues 12 and 13
// are tracked against Loom's own test files.
//
// Usage:
//
//	go run ./internal/corpusrate [flags] DIR...
//
// It finds the .loom and .loom-test files under the directories (files
// named directly are taken as well). A .loom file is one input, parsed as a
// package of its own; with -packages, the .loom files of one directory are
// one input, parsed as one package (as a model's kernels folder is). A
// .loom-test file is split into its test cases (loomcorpus.SplitTest says how); each
// case's input section is one input, and expected-output sections are
// measured only with -expected. Inputs the test expects Loom to reject
// (verify cases with ERROR annotations, parser/verifier error domains
// elsewhere) and empty inputs are excluded and counted apart.
//
// For each counted input it reports whether it
//
//   - parses (loom.ParsePackage);
//   - formats: loom.Format's output of a parsed single-file input parses
//     to the same tree, positions aside;
//   - is analysed: loom.NewProgram, then what `loomgen inspect` runs on
//     every kernel (access inference, launch config, argument checks,
//     extents, workgroup storage, fingerprints) and the config defaults;
//   - gets Go bindings: gen.BuildModel and gen.Render, as go generate
//     runs them;
//
// and for each kernel.def whether it compiles on the CPU executor
// (interp.Compile) and to PTX text (ptx.Compile), both with no config
// values but the defaults. It prints the rates with their denominators,
// then the failures of each step grouped by their first error message with
// positions, names, quoted strings and numbers replaced, most common first,
// each with an example; then, as notes, the buffers whose access had to be
// assumed read_write and the extents the analysis could not express,
// grouped the same way.
//
// Flags:
//
//	-json        print the summary, the groups and every input as JSON
//	-examples n  examples printed per group (default 1)
//	-list step   print every failing input of one step (parse, format,
//	             analyse, bindings, cpu, ptx, or notes) with its full
//	             first error, instead of groups
//	-packages    the .loom files of a directory are one package
//	-expected    measure the expected outputs of pass cases (Loom's printer
//	             wrote them) instead of the inputs
//	-invalid s   comma-separated path suffixes of files the corpus means
//	             to be rejected (a .loom file has no annotations to say
//	             so); they are excluded
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/loomgen/loomgen/internal/loomcorpus"
	"github.com/loomgen/loomgen/loom"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("corpusrate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print JSON")
	examples := fl.Int("examples", 1, "examples per failure group")
	list := fl.String("list", "", "print every failure of one step: parse, analyse, cpu or ptx")
	invalid := fl.String("invalid", "", "comma-separated path suffixes of files the corpus expects to be rejected")
	packages := fl.Bool("packages", false, "measure the .loom files of each directory as one package")
	expected := fl.Bool("expected", false, "measure the expected outputs of pass cases instead of the inputs")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: corpusrate [-json] [-examples n] [-list step] [-packages] [-expected] [-invalid suffixes] DIR...")
		return 2
	}
	paths, err := loomcorpus.Files(fl.Args())
	if err != nil {
		fmt.Fprintln(stderr, "corpusrate:", err)
		return 1
	}
	var inputs []*Input
	pkgs := map[string]int{} // directory -> index in inputs, with -packages
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(stderr, "corpusrate:", err)
			return 1
		}
		if named(path, *invalid) {
			inputs = append(inputs, &Input{Name: path, Excluded: "named by -invalid"})
			continue
		}
		if *packages && strings.HasSuffix(path, ".loom") {
			dir := filepath.Dir(path)
			if i, ok := pkgs[dir]; ok {
				inputs[i].files = append(inputs[i].files, loom.File{Name: path, Src: src})
				continue
			}
			pkgs[dir] = len(inputs)
			inputs = append(inputs, &Input{Name: filepath.Join(dir, "*.loom"), files: []loom.File{{Name: path, Src: src}}})
			continue
		}
		inputs = append(inputs, measureFile(path, src, *expected)...)
	}
	for _, i := range pkgs {
		in := inputs[i]
		measure(in, in.files...)
		if len(in.files) == 1 {
			in.Name = in.files[0].Name
		}
	}
	rep := summarize(inputs, len(paths))
	if *list != "" {
		return printList(stdout, stderr, inputs, *list)
	}
	if *asJSON {
		rep.List = inputs
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, "corpusrate:", err)
			return 1
		}
		return 0
	}
	printText(stdout, rep, *examples)
	return 0
}

// named reports whether path ends with one of the comma-separated
// suffixes of list.
func named(path, list string) bool {
	for _, suf := range strings.Split(list, ",") {
		if suf != "" && strings.HasSuffix(filepath.ToSlash(path), suf) {
			return true
		}
	}
	return false
}

// measureFile measures a .loom file as one input, or each case of a
// .loom-test file.
func measureFile(path string, src []byte, expected bool) []*Input {
	if expected {
		return measureExpected(path, src)
	}
	var out []*Input
	for _, s := range loomcorpus.Sources(path, src) {
		in := &Input{Name: s.Name, Mode: s.Mode, Excluded: s.Excluded}
		if s.Excluded == "" {
			measure(in, s.File)
		}
		out = append(out, in)
	}
	return out
}

// measureExpected measures the expected-output sections of the pass cases
// of a .loom-test file: Loom's own printer wrote them, so they are valid
// Loom in its canonical layout (the other modes expect reports, JSON or
// target assembly). A .loom file gives no input.
func measureExpected(path string, src []byte) []*Input {
	if !strings.HasSuffix(path, ".loom-test") {
		return nil
	}
	var out []*Input
	for _, c := range loomcorpus.SplitTest(string(src)) {
		if c.Mode != "pass" || c.ExpectedLine == 0 {
			continue
		}
		in := &Input{Name: fmt.Sprintf("%s:%d", path, c.ExpectedLine), Mode: "pass (expected output)"}
		if loomcorpus.OnlyComments(c.Expected) {
			in.Excluded = "empty expected output"
		} else {
			measure(in, loom.File{Name: path, Src: []byte(strings.Repeat("\n", c.ExpectedLine-1) + c.Expected)})
		}
		out = append(out, in)
	}
	return out
}

// Report is the summary of a run.
type Report struct {
	Files int `json:"files"`
	// Inputs counts every input; Excluded those not counted, by reason.
	Inputs   int            `json:"inputs"`
	Excluded map[string]int `json:"excluded"`
	Valid    int            `json:"valid"`
	Parsed   int            `json:"parsed"`
	// Formatted counts the parsed single-file inputs whose loom.Format
	// output parses to the same tree.
	Formatted int `json:"formatted"`
	Analysed  int `json:"analysed"`
	// Bound counts the analysed inputs whose Go bindings generate.
	Bound int `json:"bindings"`
	// Kernels counts the kernel.defs of analysed inputs; CPU and PTX those
	// that compiled.
	Kernels int `json:"kernels"`
	CPU     int `json:"cpu"`
	PTX     int `json:"ptx"`
	// Conservative and Unknown sum the inputs' counts of buffers with
	// conservative access and unknown extents.
	Conservative int `json:"conservative_access"`
	Unknown      int `json:"unknown_extents"`
	// Groups holds the failure groups of each step (parse, analyse, cpu,
	// ptx), most common first.
	Groups map[string][]Group `json:"groups"`
	// List holds every input (JSON output only).
	List []*Input `json:"list,omitempty"`
}

// Group is the failures of one step that share a normalised first error.
type Group struct {
	Message  string   `json:"message"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

// steps names the measured steps in order; "notes" groups what the
// analyses could not make exact (conservative access, unknown extents)
// in inputs that were analysed, which are not failures.
var steps = []string{"parse", "format", "analyse", "bindings", "cpu", "ptx", "notes"}

// failures returns, for one step, each failure as (where, error text).
func failures(inputs []*Input, stepName string) [][2]string {
	var out [][2]string
	for _, in := range inputs {
		if in.Excluded != "" {
			continue
		}
		switch stepName {
		case "parse":
			if in.ParseErr != "" {
				out = append(out, [2]string{in.Name, in.ParseErr})
			}
		case "format":
			if in.FormatErr != "" {
				out = append(out, [2]string{in.Name, in.FormatErr})
			}
		case "bindings":
			if in.BindErr != "" {
				out = append(out, [2]string{in.Name, in.BindErr})
			}
		case "analyse":
			if in.Parsed() && in.AnalyseErr != "" {
				out = append(out, [2]string{in.Name, in.AnalyseErr})
			}
		case "notes":
			if !in.Analysed() {
				continue
			}
			for _, n := range in.Notes {
				_, why, _ := strings.Cut(n, ": ")
				out = append(out, [2]string{in.Name + " " + strings.SplitN(n, ":", 2)[0], why})
			}
		case "cpu", "ptx":
			for _, k := range in.Kernels {
				e := k.CPUErr
				if stepName == "ptx" {
					e = k.PTXErr
				}
				if e != "" {
					out = append(out, [2]string{in.Name + " " + k.Export, e})
				}
			}
		}
	}
	return out
}

func summarize(inputs []*Input, files int) Report {
	r := Report{Files: files, Inputs: len(inputs), Excluded: map[string]int{}, Groups: map[string][]Group{}}
	for _, in := range inputs {
		if in.Excluded != "" {
			r.Excluded[in.Excluded]++
			continue
		}
		r.Valid++
		if in.Parsed() {
			r.Parsed++
			if in.FormatErr == "" {
				r.Formatted++
			}
		}
		if in.Analysed() {
			r.Analysed++
			if in.BindErr == "" {
				r.Bound++
			}
		}
		r.Conservative += in.Conservative
		r.Unknown += in.Unknown
		for _, k := range in.Kernels {
			r.Kernels++
			if k.CPUErr == "" {
				r.CPU++
			}
			if k.PTXErr == "" {
				r.PTX++
			}
		}
	}
	for _, s := range steps {
		r.Groups[s] = group(failures(inputs, s))
	}
	return r
}

// group collects failures by normalised message, most common first (ties
// by message).
func group(fails [][2]string) []Group {
	idx := map[string]int{}
	var out []Group
	for _, f := range fails {
		msg := normalize(f[1])
		i, ok := idx[msg]
		if !ok {
			i = len(out)
			idx[msg] = i
			out = append(out, Group{Message: msg})
		}
		out[i].Count++
		out[i].Examples = append(out[i].Examples, f[0]+": "+f[1])
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Count != out[b].Count {
			return out[a].Count > out[b].Count
		}
		return out[a].Message < out[b].Message
	})
	return out
}

var (
	rePos    = regexp.MustCompile(`\S+:\d+:\d+:?`)
	reQuoted = regexp.MustCompile(`"[^"]*"`)
	reSym    = regexp.MustCompile(`[@%^][\w.$#-]+`)
	reNum    = regexp.MustCompile(`\b\d+\b`)
	reKernel = regexp.MustCompile(`^kernel \S+: `)
	reSpace  = regexp.MustCompile(`\s+`)
)

// normalize strips from an error message what varies between inputs with
// the same cause: positions, value and symbol names, quoted text, numbers
// and the "kernel NAME:" prefix of the CPU executor.
func normalize(msg string) string {
	msg = rePos.ReplaceAllString(msg, "")
	msg = strings.TrimSpace(msg)
	msg = reKernel.ReplaceAllString(msg, "")
	msg = rePos.ReplaceAllString(msg, "")
	msg = reQuoted.ReplaceAllString(msg, `"…"`)
	msg = reSym.ReplaceAllStringFunc(msg, func(s string) string { return s[:1] + "…" })
	msg = reNum.ReplaceAllString(msg, "N")
	return strings.TrimSpace(reSpace.ReplaceAllString(msg, " "))
}

func rate(n, d int) string {
	if d == 0 {
		return fmt.Sprintf("%d/%d", n, d)
	}
	return fmt.Sprintf("%d/%d = %.2f%%", n, d, 100*float64(n)/float64(d))
}

func printText(w io.Writer, r Report, examples int) {
	fmt.Fprintf(w, "files %d, inputs %d, excluded %d, valid %d\n", r.Files, r.Inputs, r.Inputs-r.Valid, r.Valid)
	var reasons []string
	for k := range r.Excluded {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		fmt.Fprintf(w, "  excluded: %s: %d\n", k, r.Excluded[k])
	}
	fmt.Fprintf(w, "parse    %s\n", rate(r.Parsed, r.Valid))
	fmt.Fprintf(w, "format   %s of parsed (round trip)\n", rate(r.Formatted, r.Parsed))
	fmt.Fprintf(w, "analyse  %s\n", rate(r.Analysed, r.Valid))
	fmt.Fprintf(w, "bindings %s of analysed (go generate)\n", rate(r.Bound, r.Analysed))
	fmt.Fprintf(w, "cpu      %s kernels\n", rate(r.CPU, r.Kernels))
	fmt.Fprintf(w, "ptx      %s kernels\n", rate(r.PTX, r.Kernels))
	fmt.Fprintf(w, "buffers with conservative access %d, unknown extents %d\n", r.Conservative, r.Unknown)
	for _, s := range steps {
		gs := r.Groups[s]
		if len(gs) == 0 {
			continue
		}
		what := "failures"
		if s == "notes" {
			what = "(not failures: conservative access, unknown extents)"
		}
		fmt.Fprintf(w, "\n%s %s (%d groups):\n", s, what, len(gs))
		for _, g := range gs {
			fmt.Fprintf(w, "%5d  %s\n", g.Count, g.Message)
			for i := 0; i < examples && i < len(g.Examples); i++ {
				fmt.Fprintf(w, "         e.g. %s\n", g.Examples[i])
			}
		}
	}
}

func printList(stdout, stderr io.Writer, inputs []*Input, stepName string) int {
	known := false
	for _, s := range steps {
		known = known || s == stepName
	}
	if !known {
		fmt.Fprintf(stderr, "corpusrate: -list %q: want one of %s\n", stepName, strings.Join(steps, ", "))
		return 2
	}
	for _, f := range failures(inputs, stepName) {
		fmt.Fprintf(stdout, "%s: %s\n", f[0], f[1])
	}
	return 0
}
