package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/loomgen/loomgen/loom"
)

// ErrPackage is the class of errors about the output package: no package
// name can be determined, or a generated name collides with an identifier
// the package already declares.
var ErrPackage = errors.New("loomgen: output package")

// Package describes the Go package the bindings are generated into.
type Package struct {
	Dir        string // absolute directory
	Name       string
	ImportPath string // "" when unknown (no module, or a directory go list cannot see)
	// Decls are the package-level identifiers the package's other files
	// declare (the output file itself excluded), by name.
	Decls map[string]Decl
	// Methods are the methods declared in other files, keyed "Type.Method".
	Methods map[string]Decl
}

// Decl is one declaration found in the package's existing files.
type Decl struct {
	Kind string // "func", "type", "var", "const", "method"
	Pos  loom.Pos
}

// PackageOptions says how to find the output package.
type PackageOptions struct {
	Dir     string // the package directory
	Output  string // the generated file's path; its current contents are not "existing identifiers"
	Name    string // explicit package name (-pkg); skips discovery of the name
	Getenv  func(string) string
	Workdir string // the directory go generate runs in; $GOPACKAGE describes it
}

// LoadPackage determines the output package's name and import path and the
// identifiers its existing files declare. The name comes from opts.Name,
// else from $GOPACKAGE when the output goes into the directory go generate
// runs in, else from go/packages in its cheap modes (no type checking), else
// from the package clause of the directory's Go files, else from the
// directory's name.
func LoadPackage(opts PackageOptions) (*Package, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPackage, err)
	}
	p := &Package{Dir: dir, Name: opts.Name, Decls: map[string]Decl{}, Methods: map[string]Decl{}}
	clauses, err := p.scanFiles(opts.Output)
	if err != nil {
		return nil, err
	}
	wd := opts.Workdir
	if wd == "" {
		wd, _ = os.Getwd()
	}
	if awd, err := filepath.Abs(wd); err == nil && awd == dir && p.Name == "" {
		p.Name = getenv("GOPACKAGE")
	}
	// go/packages runs `go list` (tens of milliseconds), so it is asked only
	// when neither -pkg nor go generate named the package; it also supplies
	// the import path.
	if p.Name == "" {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedModule, Dir: dir}
		if pkgs, err := packages.Load(cfg, "."); err == nil && len(pkgs) == 1 && len(pkgs[0].Errors) == 0 {
			p.Name = pkgs[0].Name
			p.ImportPath = pkgs[0].PkgPath
		}
	}
	if p.Name == "" && len(clauses) > 0 {
		p.Name = clauses[0]
	}
	if p.Name == "" {
		p.Name = packageNameFromDir(dir)
	}
	if !token.IsIdentifier(p.Name) {
		return nil, fmt.Errorf("%w: %q is not a valid package name (use -pkg)", ErrPackage, p.Name)
	}
	return p, nil
}

// scanFiles parses the package's Go files (package clause and top-level
// declarations only; no type checking) and records what they declare. It
// returns the package names of the non-test files, sorted, so a caller can
// fall back on them.
func (p *Package) scanFiles(output string) ([]string, error) {
	entries, err := os.ReadDir(p.Dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %v", ErrPackage, err)
	}
	outAbs := ""
	if output != "" {
		outAbs, _ = filepath.Abs(output)
	}
	type parsed struct {
		name string
		file *ast.File
		fset *token.FileSet
	}
	var files []parsed
	names := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			continue
		}
		path := filepath.Join(p.Dir, n)
		if path == outAbs {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			// A file that does not parse cannot be checked for collisions;
			// the Go compiler will report it, so it is not our error.
			continue
		}
		files = append(files, parsed{n, f, fset})
		if !strings.HasSuffix(n, "_test.go") {
			names[f.Name.Name] = true
		}
	}
	var clauses []string
	for n := range names {
		clauses = append(clauses, n)
	}
	sort.Strings(clauses)
	pkgName := p.Name
	if pkgName == "" && len(clauses) > 0 {
		pkgName = clauses[0]
	}
	for _, pf := range files {
		// An external test package (foo_test) has its own namespace.
		if pkgName != "" && pf.file.Name.Name != pkgName {
			continue
		}
		p.collect(pf.fset, pf.name, pf.file)
	}
	return clauses, nil
}

func (p *Package) collect(fset *token.FileSet, name string, f *ast.File) {
	pos := func(tp token.Pos) loom.Pos {
		ps := fset.Position(tp)
		return loom.Pos{File: name, Line: ps.Line, Col: ps.Column, Offset: ps.Offset}
	}
	add := func(id *ast.Ident, kind string) {
		if id == nil || id.Name == "_" {
			return
		}
		if _, ok := p.Decls[id.Name]; !ok {
			p.Decls[id.Name] = Decl{Kind: kind, Pos: pos(id.Pos())}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				if d.Name.Name != "init" {
					add(d.Name, "func")
				}
				continue
			}
			if recv := receiverType(d.Recv); recv != "" {
				key := recv + "." + d.Name.Name
				if _, ok := p.Methods[key]; !ok {
					p.Methods[key] = Decl{Kind: "method", Pos: pos(d.Name.Pos())}
				}
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					add(s.Name, "type")
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range s.Names {
						add(n, kind)
					}
				}
			}
		}
	}
}

func receiverType(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	t := fl.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// packageNameFromDir derives a package name for a directory with no Go
// files yet: its base name, lower-cased, without characters an identifier
// cannot hold.
func packageNameFromDir(dir string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(filepath.Base(dir)) {
		if r >= 'a' && r <= 'z' || r == '_' || (r >= '0' && r <= '9' && b.Len() > 0) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 || token.IsKeyword(b.String()) {
		return "kernels"
	}
	return b.String()
}
