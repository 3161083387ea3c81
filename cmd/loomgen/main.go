package main

import (
	"errors"
	"flag"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"

	"github.com/loomgen/loomgen/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // input errors, stale output under -check
	exitUsage = 2
)

// run is the whole command, with its streams, so tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "inspect":
			return runInspect(args[1:], stdout, stderr)
		case "doc":
			return runDoc(args[1:], stdout, stderr)
		case "init":
			return runInit(args[1:], stdout, stderr)
		case "test":
			return runTest(args[1:], stdout, stderr)
		case "help":
			fmt.Fprint(stdout, manual)
			return exitOK
		}
	}
	return runGenerate(args, stdout, stderr)
}

// newFlags makes a flag set whose -h prints the manual to stdout and whose
// errors point at it.
func newFlags(name string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args; it returns a non-negative exit status when the
// command should stop (after -h, or on a usage error).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, manual)
			return exitOK
		}
		fmt.Fprintln(stderr, "run 'loomgen -h' for usage")
		return exitUsage
	}
	return -1
}

// validPkgFlag reports whether a -pkg value is empty (not given) or a
// package name Go accepts; a bad one is a usage error, not an input error.
func validPkgFlag(name string) bool {
	return name == "" || (token.IsIdentifier(name) && !token.IsKeyword(name) && name != "_")
}

func usageError(stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "loomgen: "+format+"\n", args...)
	fmt.Fprintln(stderr, "run 'loomgen -h' for usage")
	return exitUsage
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("loomgen", stdout, stderr)
	out := fs.String("o", "", "output file, or directory for "+gen.DefaultOutput)
	pkg := fs.String("pkg", "", "package name of the output")
	check := fs.Bool("check", false, "compare with the output file instead of writing it")
	verbose := fs.Bool("v", false, "report what was generated")
	checkTests := fs.Bool("checktests", true, "also write "+gen.CheckTestFile+" when the sources hold check cases")
	if st := parseFlags(fs, args, stdout, stderr); st >= 0 {
		return st
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "no inputs: name .loom files, globs or directories")
	}
	if !validPkgFlag(*pkg) {
		return usageError(stderr, "-pkg %q is not a Go package name", *pkg)
	}
	res, err := gen.Generate(gen.Options{Inputs: fs.Args(), Output: *out, Package: *pkg, NoCheckTests: !*checkTests})
	if err != nil {
		printErrors(stderr, err)
		return exitError
	}
	label := displayPath(res.Path)
	if *check {
		diff, err := res.Check(label)
		if err != nil {
			fmt.Fprint(stdout, diff)
			fmt.Fprintf(stderr, "%v; regenerate with go generate (or loomgen without -check)\n", err)
			return exitError
		}
		if *verbose {
			fmt.Fprintf(stderr, "loomgen: %s is up to date\n", label)
		}
		return exitOK
	}
	wrote, err := res.Write()
	if err != nil {
		fmt.Fprintf(stderr, "loomgen: %v\n", err)
		return exitError
	}
	if *verbose {
		if wrote {
			fmt.Fprintf(stderr, "loomgen: wrote %s (package %s, %d kernels, %d config fields)\n",
				label, res.Package.Name, len(res.Model.Kernels), len(res.Model.Config))
		} else {
			fmt.Fprintf(stderr, "loomgen: %s unchanged\n", label)
		}
	}
	return exitOK
}

func runDoc(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("loomgen doc", stdout, stderr)
	out := fs.String("o", "", "write the reference to this file instead of standard output")
	pkg := fs.String("pkg", "", "package name shown in the reference")
	if st := parseFlags(fs, args, stdout, stderr); st >= 0 {
		return st
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "doc: no inputs")
	}
	if !validPkgFlag(*pkg) {
		return usageError(stderr, "doc: -pkg %q is not a Go package name", *pkg)
	}
	res, err := gen.Analyze(gen.Options{Inputs: fs.Args(), Package: *pkg})
	if err != nil {
		printErrors(stderr, err)
		return exitError
	}
	md, err := gen.RenderDoc(res.Model)
	if err != nil {
		fmt.Fprintf(stderr, "loomgen: %v\n", err)
		return exitError
	}
	if *out == "" {
		stdout.Write(md)
		return exitOK
	}
	if err := os.WriteFile(*out, md, 0o644); err != nil {
		fmt.Fprintf(stderr, "loomgen: %v\n", err)
		return exitError
	}
	return exitOK
}

func runInit(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("loomgen init", stdout, stderr)
	pkg := fs.String("pkg", "", "package name (default: from the directory name)")
	if st := parseFlags(fs, args, stdout, stderr); st >= 0 {
		return st
	}
	if fs.NArg() > 1 {
		return usageError(stderr, "init: at most one directory")
	}
	if !validPkgFlag(*pkg) {
		return usageError(stderr, "init: -pkg %q is not a Go package name", *pkg)
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	files, err := gen.Init(gen.InitOptions{Dir: dir, Package: *pkg})
	if err != nil {
		printErrors(stderr, err)
		return exitError
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "created %s\n", displayPath(f))
	}
	// The bindings import the runtime, whose dependencies the module may not
	// list yet; say so rather than let the first build fail on go.sum.
	fmt.Fprintln(stdout, "next: go mod tidy && go generate ./... && go test ./...")
	return exitOK
}

// printErrors prints every error of a run, one per line: positioned Loom
// diagnostics as path:line:col: message.
func printErrors(w io.Writer, err error) {
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range u.Unwrap() {
			printErrors(w, e)
		}
		return
	}
	fmt.Fprintln(w, err.Error())
}

// displayPath shortens an absolute path to one relative to the working
// directory when that is shorter, for messages.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && len(rel) < len(p) {
		return rel
	}
	return p
}
