package loomcorpus

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Files returns the .loom and .loom-test files under the arguments,
// sorted within each argument.
func Files(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".loom") || strings.HasSuffix(path, ".loom-test")) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Source is one input of a corpus file: a whole .loom file, or the input
// section of one case of a .loom-test file.
type Source struct {
	// Name is the path, with ":line" of the case's first line for a
	// .loom-test case.
	Name string
	// Mode is the case's RUN mode ("" for a .loom file).
	Mode string
	// Excluded says why the input is not valid source (SplitTest); File
	// is then empty.
	Excluded string
	// File is the source to parse. A case's input is preceded by blank
	// lines, so positions keep the file's line numbers.
	File loom.File
}

// Sources returns the inputs of the corpus file at path: the file itself,
// or each case of a .loom-test file.
func Sources(path string, src []byte) []Source {
	if !strings.HasSuffix(path, ".loom-test") {
		return []Source{{Name: path, File: loom.File{Name: path, Src: src}}}
	}
	var out []Source
	for _, c := range SplitTest(string(src)) {
		s := Source{Name: fmt.Sprintf("%s:%d", path, c.Line), Mode: c.Mode, Excluded: c.Excluded}
		if c.Excluded == "" {
			s.File = loom.File{Name: path, Src: []byte(strings.Repeat("\n", c.Line-1) + c.Input)}
		}
		out = append(out, s)
	}
	return out
}
