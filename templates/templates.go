// Package templates holds the text/template files loomgen writes besides
// bindings: the Markdown kernel reference of `loomgen doc`, the test file
// that runs a package's check cases (loom_check_test.go), and the scaffold
// of `loomgen init` (an example kernel, the go:generate line and a smoke
// test). The files are embedded, so the loomgen binary is self-contained.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"text/template"
)

//go:embed doc.md.tmpl checktest.go.tmpl init
var files embed.FS

// funcs are the helpers the templates use.
var funcs = template.FuncMap{
	"join": strings.Join,
	"code": func(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" },
	"cell": func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") },
}

// Doc renders the Markdown kernel reference. data is the value the
// generator passes (gen.DocData); the template only reads its fields.
func Doc(w io.Writer, data any) error {
	t, err := template.New("doc.md.tmpl").Funcs(funcs).ParseFS(files, "doc.md.tmpl")
	if err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	return t.Execute(w, data)
}

// CheckTestData fills the generated loom_check_test.go.
type CheckTestData struct {
	Package    string
	Cases      []string // check.case names, without '@'
	Benchmarks []string // check.benchmark names
}

// CheckTest renders loom_check_test.go, which runs a package's check cases
// and benchmarks through checkrun (unformatted; the caller gofmts it).
func CheckTest(w io.Writer, data CheckTestData) error {
	t, err := template.New("checktest.go.tmpl").Funcs(funcs).ParseFS(files, "checktest.go.tmpl")
	if err != nil {
		return fmt.Errorf("templates: %w", err)
	}
	return t.Execute(w, data)
}

// InitData fills the scaffold templates.
type InitData struct {
	Package string // Go package name of the new model package
	// Generate is the command the go:generate line runs, e.g.
	// "go run github.com/loomgen/loomgen/cmd/loomgen".
	Generate string
}

// File is one file of the scaffold, with its path relative to the target
// directory.
type File struct {
	Path string
	Text []byte
}

// Init renders the scaffold of `loomgen init`: every file under init/,
// with the .tmpl suffix dropped, in path order.
func Init(data InitData) ([]File, error) {
	var names []string
	err := fs.WalkDir(files, "init", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tmpl") {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	sort.Strings(names)
	var out []File
	for _, name := range names {
		t, err := template.New(path.Base(name)).Funcs(funcs).ParseFS(files, name)
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return nil, fmt.Errorf("templates: %s: %w", name, err)
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(name, "init/"), ".tmpl")
		out = append(out, File{Path: rel, Text: buf.Bytes()})
	}
	return out, nil
}
