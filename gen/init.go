package gen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loomgen/loomgen/templates"
)

// InitOptions configures Init.
type InitOptions struct {
	Dir     string // target directory, created when missing
	Package string // package name; "" derives it from the directory name
	// Generate is the command of the go:generate line; "" means
	// `go run github.com/loomgen/loomgen/cmd/loomgen`.
	Generate string
}

// Init scaffolds a model package in opts.Dir from templates/: an example
// kernel under kernels/, the go:generate line, a smoke test that runs every
// kernel on the CPU backend, and the bindings generated from them. It never
// overwrites a file; the paths it created are returned.
func Init(opts InitOptions) ([]string, error) {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	pkg := opts.Package
	if pkg == "" {
		pkg = packageNameFromDir(dir)
	}
	cmd := opts.Generate
	if cmd == "" {
		cmd = "go run github.com/loomgen/loomgen/cmd/loomgen"
	}
	files, err := templates.Init(templates.InitData{Package: pkg, Generate: cmd})
	if err != nil {
		return nil, err
	}
	var exist []string
	for _, f := range append(files, templates.File{Path: DefaultOutput}) {
		if _, err := os.Stat(filepath.Join(dir, f.Path)); err == nil {
			exist = append(exist, f.Path)
		}
	}
	if len(exist) > 0 {
		return nil, fmt.Errorf("%w: %s already holds %s; init writes only into a fresh package", ErrInput, dir, strings.Join(exist, ", "))
	}
	var created []string
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return created, err
		}
		if err := os.WriteFile(path, f.Text, 0o644); err != nil {
			return created, err
		}
		created = append(created, path)
	}
	res, err := Generate(Options{Inputs: []string{"kernels"}, Dir: dir, Package: pkg})
	if err != nil {
		return created, errors.Join(fmt.Errorf("loomgen init: the example kernel does not generate"), err)
	}
	if _, err := res.Write(); err != nil {
		return created, err
	}
	return append(created, res.Path), nil
}
