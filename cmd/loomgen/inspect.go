package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomgen/loomgen/gen"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
	"github.com/loomgen/loomgen/loom/ptx"
)

const inspectUsage = `usage: loomgen inspect [-json] [-backends] file.loom|dir|glob...

The inputs are one package: files, directories (their *.loom files) and
quoted globs, analysed together, so a kernel may use the functions,
templates and config of any of them; with several files the output starts
by naming them.

Prints, per kernel: export name, symbol, position, workload and launch
parameters with types, each buffer's inferred access with its evidence,
argument checks, whether the launch config is static or needs workload
values (with the static geometry), the byte extent of each buffer, and the
signature fingerprint; with -backends, whether the CPU executor and the
PTX backend compile it (with the config defaults) or why not, as Load
would report it; then the config declarations with their predicates.
Errors are printed as path:line:col: message. Exit status: 0 ok, 1 input
errors, 2 usage errors.
`

// runInspect implements `loomgen inspect`; it returns the exit status.
func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	backends := fs.Bool("backends", false, "also compile each kernel on the CPU executor and the PTX backend and report whether it compiles")
	fs.Usage = func() { fmt.Fprint(stderr, inspectUsage) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, "loomgen inspect: no input files\n"+inspectUsage)
		return 2
	}
	paths, failed := inspectPaths(fs.Args(), stderr)
	var files []loom.File
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, unwrapPathError(err))
			failed = true
			continue
		}
		files = append(files, loom.File{Name: path, Src: src})
	}
	if failed {
		return 1
	}
	// The files are one package: each sees the symbols of the others.
	mods, err := loom.ParsePackage(files...)
	if err != nil {
		printErr(stderr, err)
		return 1
	}
	p, err := loom.NewProgram(mods...)
	if err != nil {
		printErr(stderr, err)
		return 1
	}
	rep := buildReport(p)
	if *backends {
		for i, k := range p.Kernels() {
			rep.Kernels[i].Backends = probeBackends(p, k)
		}
	}
	if len(paths) > 1 {
		rep.Package = paths
	}
	for _, k := range rep.Kernels {
		if k.Launch.Error != "" {
			fmt.Fprintln(stderr, k.Launch.Error)
			failed = true
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "loomgen inspect: %v\n", err)
			return 1
		}
	} else {
		writeText(stdout, rep)
	}
	if failed {
		return 1
	}
	return 0
}

// inspectPaths expands the arguments (files, directories, globs) in
// argument order, each directory's or glob's files sorted, without
// repeating a file; it reports bad arguments on stderr.
func inspectPaths(args []string, stderr io.Writer) (paths []string, failed bool) {
	seen := map[string]bool{}
	for _, a := range args {
		st, err := os.Stat(a)
		if err == nil && !st.IsDir() {
			// A file is read as named, whatever its suffix.
			if !seen[filepath.Clean(a)] {
				seen[filepath.Clean(a)] = true
				paths = append(paths, a)
			}
			continue
		}
		if err != nil && !gen.HasGlobMeta(a) {
			fmt.Fprintf(stderr, "%s: %v\n", a, unwrapPathError(err))
			failed = true
			continue
		}
		expanded, err := gen.ExpandInputs(".", []string{a})
		if err != nil {
			fmt.Fprintln(stderr, err)
			failed = true
			continue
		}
		for _, p := range expanded {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	return paths, failed
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// printErr prints one diagnostic per line.
func printErr(w io.Writer, err error) {
	var list loom.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Fprintln(w, e.Error())
		}
		return
	}
	fmt.Fprintln(w, err.Error())
}

type inspectReport struct {
	// Package lists the files analysed as one package, when there are
	// several.
	Package []string       `json:"package,omitempty"`
	Kernels []kernelReport `json:"kernels"`
	Config  []configReport `json:"config"`
}

type paramReport struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type evidenceReport struct {
	Pos    string `json:"pos"`
	Op     string `json:"op"`
	Effect string `json:"effect"`
	Basis  string `json:"basis"`
	Reason string `json:"reason,omitempty"`
}

type accessReport struct {
	Param    string           `json:"param"`
	Access   string           `json:"access"`
	Basis    string           `json:"basis"`
	Elem     string           `json:"elem,omitempty"`
	Evidence []evidenceReport `json:"evidence"`
}

type launchReport struct {
	Static        bool      `json:"static"`
	NeedsWorkload []string  `json:"needs_workload,omitempty"`
	NeedsConfig   []string  `json:"needs_config,omitempty"`
	NeedsTarget   bool      `json:"needs_target,omitempty"`
	Workgroups    [3]string `json:"workgroups"`
	WorkgroupSize [3]string `json:"workgroup_size"`
	ClusterSize   [3]string `json:"cluster_size"`
	// DynamicWorkgroupStorage is the byte count of the
	// dynamic_workgroup_storage clause, "" without one.
	DynamicWorkgroupStorage string         `json:"dynamic_workgroup_storage,omitempty"`
	Geometry                *loom.Geometry `json:"geometry,omitempty"`
	Error                   string         `json:"error,omitempty"`
}

type extentReport struct {
	Param  string `json:"param"`
	Bytes  string `json:"bytes,omitempty"`
	Reason string `json:"unknown,omitempty"`
}

type storageReport struct {
	Pos    string `json:"pos"`
	Bytes  string `json:"bytes,omitempty"` // "all" without a byte count
	Reason string `json:"unknown,omitempty"`
	// Views is the byte span of the views over the buffer.
	Views       string `json:"views,omitempty"`
	ViewsReason string `json:"views_unknown,omitempty"`
}

type checkReport struct {
	Pos  string `json:"pos"`
	Text string `json:"text"`
}

type kernelReport struct {
	Export   string         `json:"export"`
	Symbol   string         `json:"symbol"`
	Pos      string         `json:"pos"`
	Workload []paramReport  `json:"workload"`
	Launch   launchReport   `json:"launch_config"`
	Params   []paramReport  `json:"launch"`
	Access   []accessReport `json:"access"`
	Checks   []checkReport  `json:"checks,omitempty"`
	Extents  []extentReport `json:"extents"`
	// Storage lists the kernel.workgroup.storage ops of the body.
	Storage     []storageReport `json:"workgroup_storage,omitempty"`
	Fingerprint string          `json:"fingerprint"`
	// Backends (with -backends) says, for the CPU executor and the PTX
	// backend, whether the kernel compiles with the config defaults, or
	// why not: what Load would report, known before any session opens.
	Backends []backendReport `json:"backends,omitempty"`
}

type backendReport struct {
	Name     string `json:"name"`
	Compiles bool   `json:"compiles"`
	Error    string `json:"error,omitempty"`
}

// probeBackends compiles k on each backend (pure Go: no device needed).
func probeBackends(p *loom.Program, k *loom.Kernel) []backendReport {
	probe := func(name string, compile func() error) backendReport {
		if err := compile(); err != nil {
			return backendReport{Name: name, Error: err.Error()}
		}
		return backendReport{Name: name, Compiles: true}
	}
	return []backendReport{
		probe("cpu", func() error { _, err := interp.Compile(p.Modules, k.Export, interp.Options{}); return err }),
		probe("ptx", func() error { _, err := ptx.Compile(p.Modules, k.Export, ptx.Options{}); return err }),
	}
}

type configReport struct {
	Symbol  string   `json:"symbol"`
	Type    string   `json:"type"`
	Pos     string   `json:"pos"`
	Preds   []string `json:"predicates,omitempty"`
	Default string   `json:"default,omitempty"`
}

func params(vs []*loom.Value) []paramReport {
	out := make([]paramReport, 0, len(vs))
	for _, v := range vs {
		out = append(out, paramReport{Name: v.Name, Type: v.Type.String()})
	}
	return out
}

func buildReport(p *loom.Program) inspectReport {
	rep := inspectReport{Kernels: []kernelReport{}, Config: []configReport{}}
	for _, k := range p.Kernels() {
		kr := kernelReport{Export: k.Export, Symbol: k.Symbol, Workload: params(k.Workload), Params: params(k.Launch)}
		if k.Op != nil {
			kr.Pos = k.Op.Pos.String()
		}
		acc := p.Access(k)
		for _, a := range acc {
			ar := accessReport{Param: a.Param.Name, Access: a.Access.String(), Basis: a.Basis.String(), Evidence: []evidenceReport{}}
			if a.Elem != nil {
				ar.Elem = a.Elem.String()
			}
			for _, e := range a.Evidence {
				ar.Evidence = append(ar.Evidence, evidenceReport{Pos: e.Pos.String(), Op: e.Op, Effect: e.Effect.String(), Basis: e.Basis.String(), Reason: e.Reason})
			}
			kr.Access = append(kr.Access, ar)
		}
		if l, err := p.LaunchExprs(k); err != nil {
			kr.Launch.Error = err.Error()
		} else {
			for i := 0; i < 3; i++ {
				kr.Launch.Workgroups[i] = exprText(k, l.Workgroups[i])
				kr.Launch.WorkgroupSize[i] = exprText(k, l.WorkgroupSize[i])
				kr.Launch.ClusterSize[i] = exprText(k, l.ClusterSize[i])
			}
			if l.DynamicWorkgroupStorage != nil {
				kr.Launch.DynamicWorkgroupStorage = exprText(k, l.DynamicWorkgroupStorage)
			}
			if g, ok := l.StaticGeometry(); ok {
				kr.Launch.Static = true
				kr.Launch.Geometry = &g
			}
			d := l.Deps()
			for _, i := range d.Workload {
				kr.Launch.NeedsWorkload = append(kr.Launch.NeedsWorkload, k.Workload[i].Name)
			}
			kr.Launch.NeedsConfig = d.Config
			kr.Launch.NeedsTarget = d.Subgroup
		}
		for _, c := range p.ArgChecks(k) {
			kr.Checks = append(kr.Checks, checkReport{Pos: c.Pos.String(), Text: c.Text})
		}
		for _, e := range p.Extents(k) {
			er := extentReport{Param: e.Param.Name, Reason: e.Reason}
			if e.Bytes != nil {
				er.Bytes = exprText(k, e.Bytes)
			}
			kr.Extents = append(kr.Extents, er)
		}
		for _, u := range p.WorkgroupStorageUses(k) {
			sr := storageReport{Pos: u.Op.Pos.String(), Reason: u.Reason, ViewsReason: u.ViewsReason}
			if u.Views != nil {
				sr.Views = exprText(k, u.Views)
			}
			switch {
			case u.Whole:
				sr.Bytes = "all"
			case u.Bytes != nil:
				sr.Bytes = exprText(k, u.Bytes)
			}
			kr.Storage = append(kr.Storage, sr)
		}
		kr.Fingerprint = loom.Fingerprint(p, k)
		rep.Kernels = append(rep.Kernels, kr)
	}
	defs, _ := p.ConfigDefaults()
	for _, m := range p.Modules {
		for _, d := range m.ConfigDecls {
			cr := configReport{Symbol: d.Symbol, Type: d.Type.String()}
			if d.Op != nil {
				cr.Pos = d.Op.Pos.String()
			}
			for _, c := range loom.ConfigChecks(d) {
				cr.Preds = append(cr.Preds, c.Text)
			}
			if v, ok := defs[d.Symbol]; ok {
				cr.Default = v.String()
			}
			rep.Config = append(rep.Config, cr)
		}
	}
	return rep
}

// exprText prints an expression with parameter names instead of indices.
func exprText(k *loom.Kernel, e *loom.Expr) string {
	if e == nil {
		return "?"
	}
	switch e.Op {
	case loom.ExprConst:
		return e.Const.String()
	case loom.ExprWorkload:
		if e.Arg < len(k.Workload) {
			return "%" + k.Workload[e.Arg].Name
		}
	case loom.ExprLaunch:
		if e.Arg < len(k.Launch) {
			return "%" + k.Launch[e.Arg].Name
		}
	case loom.ExprConfig:
		return "@" + e.Symbol
	case loom.ExprSubgroupSize:
		return "subgroup_size"
	}
	parts := []string{e.Op.String()}
	if e.Pred != "" {
		parts = append(parts, e.Pred)
	}
	for _, a := range e.Args {
		parts = append(parts, exprText(k, a))
	}
	if e.Op == loom.ExprCast && e.Type != nil {
		parts = append(parts, "to", e.Type.String())
	}
	return "(" + strings.Join(parts, " ") + ")"
}

func sig(ps []paramReport) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = "%" + p.Name + ": " + p.Type
	}
	return "(" + strings.Join(s, ", ") + ")"
}

func writeText(w io.Writer, rep inspectReport) {
	if len(rep.Package) > 0 {
		fmt.Fprintf(w, "package of %d files: %s\n\n", len(rep.Package), strings.Join(rep.Package, ", "))
	}
	for i, k := range rep.Kernels {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "kernel %q @%s at %s\n", k.Export, k.Symbol, k.Pos)
		fmt.Fprintf(w, "  workload %s\n", sig(k.Workload))
		fmt.Fprintf(w, "  launch   %s\n", sig(k.Params))
		switch l := k.Launch; {
		case l.Error != "":
			fmt.Fprintf(w, "  launch config: error: %s\n", l.Error)
		case l.Static:
			g := l.Geometry
			fmt.Fprintf(w, "  launch config: static: workgroups %v workgroup_size %v cluster_size %v\n", g.Workgroups, g.WorkgroupSize, g.ClusterSize)
			if l.DynamicWorkgroupStorage != "" {
				fmt.Fprintf(w, "    dynamic_workgroup_storage %s\n", l.DynamicWorkgroupStorage)
			}
		default:
			var needs []string
			for _, n := range l.NeedsWorkload {
				needs = append(needs, "%"+n)
			}
			for _, c := range l.NeedsConfig {
				needs = append(needs, "@"+c)
			}
			if l.NeedsTarget {
				needs = append(needs, "target.subgroup.size")
			}
			fmt.Fprintf(w, "  launch config: needs %s\n", strings.Join(needs, ", "))
			fmt.Fprintf(w, "    workgroups     %s\n", strings.Join(l.Workgroups[:], ", "))
			fmt.Fprintf(w, "    workgroup_size %s\n", strings.Join(l.WorkgroupSize[:], ", "))
			fmt.Fprintf(w, "    cluster_size   %s\n", strings.Join(l.ClusterSize[:], ", "))
			if l.DynamicWorkgroupStorage != "" {
				fmt.Fprintf(w, "    dynamic_workgroup_storage %s\n", l.DynamicWorkgroupStorage)
			}
		}
		for _, a := range k.Access {
			elem := ""
			if a.Elem != "" {
				elem = " elem " + a.Elem
			}
			fmt.Fprintf(w, "  access %%%s %s (%s)%s\n", a.Param, a.Access, a.Basis, elem)
			for _, e := range a.Evidence {
				fmt.Fprintf(w, "    %s: %s %s", e.Pos, e.Op, e.Effect)
				if e.Reason != "" {
					fmt.Fprintf(w, " — %s", e.Reason)
				}
				fmt.Fprintln(w)
			}
		}
		for _, c := range k.Checks {
			fmt.Fprintf(w, "  check %s at %s\n", c.Text, c.Pos)
		}
		for _, e := range k.Extents {
			if e.Bytes != "" {
				fmt.Fprintf(w, "  extent %%%s bytes %s\n", e.Param, e.Bytes)
			} else {
				fmt.Fprintf(w, "  extent %%%s unknown: %s\n", e.Param, e.Reason)
			}
		}
		for _, s := range k.Storage {
			bytes, views := s.Bytes, s.Views
			if bytes == "" {
				bytes = "unknown (" + s.Reason + ")"
			}
			if views == "" {
				views = "unknown (" + s.ViewsReason + ")"
			}
			fmt.Fprintf(w, "  workgroup storage at %s bytes %s, views span %s\n", s.Pos, bytes, views)
		}
		fmt.Fprintf(w, "  fingerprint %s\n", k.Fingerprint)
		for _, b := range k.Backends {
			if b.Compiles {
				fmt.Fprintf(w, "  backend %s: compiles\n", b.Name)
			} else {
				fmt.Fprintf(w, "  backend %s: %s\n", b.Name, b.Error)
			}
		}
	}
	if len(rep.Config) > 0 {
		fmt.Fprintln(w)
		for _, c := range rep.Config {
			fmt.Fprintf(w, "config @%s : %s at %s", c.Symbol, c.Type, c.Pos)
			if len(c.Preds) > 0 {
				fmt.Fprintf(w, " where [%s]", strings.Join(c.Preds, ", "))
			}
			if c.Default != "" {
				fmt.Fprintf(w, " = %s", c.Default)
			}
			fmt.Fprintln(w)
		}
	}
}
