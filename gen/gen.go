// Package gen turns Loom kernel sources into typed Go bindings: one Go file
// per package with a type per kernel, a typed Dispatch constructor, a
// Config struct and a Load function (see DESIGN.md, "The generated API").
// It is the library behind the loomgen command.
package gen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// DefaultOutput is the name of the generated file when no -o is given.
const DefaultOutput = "loom_gen.go"

// Options configures one generation run.
type Options struct {
	// Inputs are .loom files, glob patterns or directories, relative to Dir.
	Inputs []string
	// Dir is the directory the run happens in (go generate runs in the
	// package directory); "" is the current directory.
	Dir string
	// Output is the generated file, or a directory to put loom_gen.go in;
	// "" means loom_gen.go in Dir. The output's directory is the package.
	Output string
	// Package overrides the package name.
	Package string
	// Getenv reads the environment ($GOPACKAGE); nil means os.Getenv.
	Getenv func(string) string
	// NoCheckTests leaves out loom_check_test.go, which is otherwise
	// generated beside the bindings when the sources hold check cases.
	NoCheckTests bool
}

// Result is a generated file, not yet written.
type Result struct {
	Path    string // the output file
	Package *Package
	Model   *Model
	Source  []byte
	// TestPath and Test are the generated check test file (CheckTestFile);
	// Test is nil when the sources hold no check.case or Options said no.
	TestPath string
	Test     []byte
}

// Generate reads the inputs, analyses them and renders the bindings. All
// problems of the run are reported together: positioned Loom errors as a
// loom.ErrorList (path:line:col: message, one per line).
func Generate(opts Options) (*Result, error) {
	r, err := Analyze(opts)
	if err != nil {
		return nil, err
	}
	if err := checkCollisions(r.Model, r.Package); err != nil {
		return nil, err
	}
	src, err := Render(r.Model)
	if err != nil {
		return nil, err
	}
	r.Source = src
	if !opts.NoCheckTests {
		if r.Test, err = renderCheckTest(r.Model); err != nil {
			return nil, err
		}
		if r.Test != nil {
			r.TestPath = checkTestPath(r.Path)
		}
	}
	return r, nil
}

// Analyze does everything Generate does short of rendering: it finds the
// output file and package, reads the inputs and builds the model. The
// returned Result has no Source.
func Analyze(opts Options) (*Result, error) {
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	out := opts.Output
	if out == "" {
		out = DefaultOutput
	}
	if !filepath.IsAbs(out) {
		out = filepath.Join(dir, out)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		out = filepath.Join(out, DefaultOutput)
	}
	if !strings.HasSuffix(out, ".go") {
		return nil, fmt.Errorf("%w: output %s is not a .go file", ErrInput, out)
	}
	pkgDir := filepath.Dir(out)
	paths, err := ExpandInputs(dir, opts.Inputs)
	if err != nil {
		return nil, err
	}
	sources, err := readSources(pkgDir, paths)
	if err != nil {
		return nil, err
	}
	pkg, err := LoadPackage(PackageOptions{Dir: pkgDir, Output: out, Name: opts.Package, Getenv: opts.Getenv, Workdir: dir})
	if err != nil {
		return nil, err
	}
	model, err := BuildModel(pkg.Name, sources)
	if err != nil {
		return nil, err
	}
	return &Result{Path: out, Package: pkg, Model: model}, nil
}

func readSources(pkgDir string, paths []string) ([]Source, error) {
	var errs []error
	var out []Source
	names := map[string]string{}
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", ErrInput, err))
			continue
		}
		name := relSlash(pkgDir, p)
		if prev, ok := names[name]; ok {
			errs = append(errs, fmt.Errorf("%w: %s and %s have the same package-relative name %s", ErrInput, prev, p, name))
			continue
		}
		names[name] = p
		out = append(out, Source{Name: name, Path: p, Text: text, Embed: canEmbed(pkgDir, name)})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// canEmbed reports whether //go:embed can name the file: it must lie inside
// the package directory, outside any nested module, with a name the
// pattern syntax takes literally.
func canEmbed(pkgDir, name string) bool {
	if strings.HasPrefix(name, "../") || name == ".." || strings.ContainsAny(name, "*?[\\\"`'") {
		return false
	}
	parts := strings.Split(name, "/")
	dir := pkgDir
	for _, part := range parts[:len(parts)-1] {
		if part == "." || part == "" {
			return false
		}
		dir = filepath.Join(dir, part)
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return false
		}
	}
	return true
}

// checkCollisions reports every generated identifier that the package's own
// files already declare, naming both places.
func checkCollisions(m *Model, pkg *Package) error {
	var errs loom.ErrorList
	for _, n := range m.TopLevelNames() {
		d, ok := pkg.Decls[n.Name]
		if !ok {
			continue
		}
		pos := n.Pos
		if !pos.IsValid() {
			pos = d.Pos
		}
		errs.Add(pos, ErrPackage, fmt.Sprintf("%s needs the Go name %s, but %s %s is declared at %s (rename one of them)",
			n.What, n.Name, d.Kind, n.Name, d.Pos))
	}
	generatedMethods := map[string][]string{"Config": {"Validate", "loomValues"}}
	for _, k := range m.Kernels {
		generatedMethods[k.GoName] = []string{"Dispatch"}
	}
	for _, typ := range sortedKeys(generatedMethods) {
		for _, meth := range generatedMethods[typ] {
			if d, ok := pkg.Methods[typ+"."+meth]; ok {
				errs.Add(d.Pos, ErrPackage, fmt.Sprintf("method %s.%s is generated by loomgen; remove this declaration", typ, meth))
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return errs
	}
	return nil
}

// Write writes the bindings and the check test file, each unless its
// bytes are already on disk, so file times and build caches stay put. It
// reports whether it wrote either.
func (r *Result) Write() (bool, error) {
	wrote, err := writeIfChanged(r.Path, r.Source)
	if err != nil || r.Test == nil {
		return wrote, err
	}
	wroteTest, err := writeIfChanged(r.TestPath, r.Test)
	return wrote || wroteTest, err
}

func writeIfChanged(path string, data []byte) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	// Write through a temporary file so a failed run never leaves half a file.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".loomgen-*.tmp")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, err
	}
	return true, nil
}

// ErrStale is returned by Check when the file on disk differs from what
// generation produces.
var ErrStale = errors.New("loomgen: generated file is stale")

// Check compares the files on disk (bindings, and the check test file when
// one is generated) with the generated bytes. It returns a unified diff
// (disk → generated) and an error wrapping ErrStale when they differ,
// including when a file does not exist.
func (r *Result) Check(label string) (string, error) {
	diff, err := checkFile(r.Path, r.Source, label)
	if err != nil || r.Test == nil {
		return diff, err
	}
	testLabel := r.TestPath
	if label != "" {
		testLabel = filepath.Join(filepath.Dir(label), CheckTestFile)
	}
	return checkFile(r.TestPath, r.Test, testLabel)
}

func checkFile(path string, data []byte, label string) (string, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err == nil && bytes.Equal(old, data) {
		return "", nil
	}
	if label == "" {
		label = path
	}
	diff := UnifiedDiff(label+" (on disk)", label+" (generated)", old, data)
	if errors.Is(err, os.ErrNotExist) {
		return diff, fmt.Errorf("%w: %s does not exist", ErrStale, label)
	}
	return diff, fmt.Errorf("%w: %s", ErrStale, label)
}
