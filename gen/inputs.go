package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrInput is the class of errors about the inputs named on the command
// line: a missing file, a glob that matches nothing, a directory without
// .loom files.
var ErrInput = errors.New("loomgen: bad input")

// ExpandInputs turns the inputs of a run — .loom files, glob patterns and
// directories (whose *.loom files are taken, not recursively) — into a
// sorted, duplicate-free list of paths relative to dir where possible. Every
// bad input is reported, joined into one error.
func ExpandInputs(dir string, inputs []string) ([]string, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no inputs: name .loom files, globs or directories", ErrInput)
	}
	seen := map[string]bool{}
	var out []string
	var errs []error
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, in := range inputs {
		abs := in
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, in)
		}
		if hasMeta(in) {
			matches, err := filepath.Glob(abs)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: %v", ErrInput, in, err))
				continue
			}
			n := 0
			for _, m := range matches {
				if st, err := os.Stat(m); err == nil && !st.IsDir() {
					add(m)
					n++
				}
			}
			if n == 0 {
				errs = append(errs, fmt.Errorf("%w: %s: pattern matches no files", ErrInput, in))
			}
			continue
		}
		st, err := os.Stat(abs)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrInput, in, unwrapPathError(err)))
			continue
		}
		if !st.IsDir() {
			add(abs)
			continue
		}
		entries, err := os.ReadDir(abs)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrInput, in, unwrapPathError(err)))
			continue
		}
		n := 0
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".loom") {
				add(filepath.Join(abs, e.Name()))
				n++
			}
		}
		if n == 0 {
			errs = append(errs, fmt.Errorf("%w: %s: directory holds no .loom files", ErrInput, in))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	sort.Strings(out)
	return out, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

// HasGlobMeta reports whether an input is a glob pattern (ExpandInputs
// expands it).
func HasGlobMeta(p string) bool { return hasMeta(p) }

// unwrapPathError drops the path an *fs.PathError repeats, since the caller
// already names the input as the user wrote it.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// relSlash names path relative to base with forward slashes, the way
// generated code and error positions spell source names; a path that cannot
// be made relative keeps its base name.
func relSlash(base, path string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}
