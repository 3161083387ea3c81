package loom

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pkgCommon is the shared file of a package: a template family with two
// providers, a helper function, config, a target record and a global.
const pkgCommon = `// Shared by the kernel files.
template.decl @pkg.load(%src: buffer, %i: index, %n: index) -> (f32)

template.def<@pkg.load> priority(1) @pkg.load_plain(%src: buffer, %i: index, %n: index) -> (f32) {
  %z = index.constant 0 : offset
  %v = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %x = view.load %v[%i] : view<[%n]xf32> -> f32
  template.return %x : f32
}

func.def @pkg.twice(%x: f32) -> (f32) {
  %y = scalar.addf %x, %x : f32
  func.return %y : f32
}

config.decl @pkg.block : %b: index where [range(%b, 1, 1024)]
config.def @pkg.block = 64 : index

target.generic<reference> @pkg.gpu {
  subgroup_size = 32
}

global.variable @pkg.state : f32 = 0.0
`

// pkgKernel uses every kind of symbol pkgCommon defines.
const pkgKernel = `kernel.def target(@pkg.gpu) export("twice") @twice(%n: index) {
  %one = index.constant 1 : index
  %b = config.get @pkg.block : index
  kernel.launch.config workgroups(%n, %one, %one) workgroup_size(%b, %one, %one) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %ok = index.cmp ult, %i, %n : index
  %z = index.constant 0 : offset
  %out = buffer.view %dst[%z] : buffer -> view<[%n]xf32>
  scf.if %ok {
    %x = template.apply<@pkg.load>(%src, %i, %n) : (buffer, index, index) -> (f32)
    %y = func.call @pkg.twice(%x) : (f32) -> (f32)
    view.store %y, %out[%i] : f32, view<[%n]xf32>
  }
  kernel.return
}
`

func TestPackageSeesEveryFile(t *testing.T) {
	// Alone, the kernel file uses undefined symbols.
	if _, err := ParseFile("kernels/twice.loom", []byte(pkgKernel)); err == nil || !strings.Contains(err.Error(), "use of undefined symbol @pkg.") {
		t.Fatalf("kernel file alone: %v, want undefined symbols", err)
	}
	for _, order := range [][]File{
		{{"kernels/common.loom", []byte(pkgCommon)}, {"kernels/twice.loom", []byte(pkgKernel)}},
		{{"kernels/twice.loom", []byte(pkgKernel)}, {"kernels/common.loom", []byte(pkgCommon)}},
	} {
		mods, err := ParsePackage(order...)
		if err != nil {
			t.Fatalf("%s first: %v", order[0].Name, err)
		}
		p, err := NewProgram(mods...)
		if err != nil {
			t.Fatal(err)
		}
		k, err := p.Kernel("twice")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Access{}
		for _, a := range p.Access(k) {
			got[a.Param.Name] = a.Access
		}
		// The read of %src happens in the other file's provider.
		if got["src"] != AccessRead || got["dst"] != AccessWrite {
			t.Errorf("access %v, want src read (through @pkg.load_plain) and dst write", got)
		}
		l, err := p.LaunchExprs(k)
		if err != nil {
			t.Fatal(err)
		}
		if d := l.Deps(); len(d.Config) != 1 || d.Config[0] != "pkg.block" {
			t.Errorf("launch config depends on %v, want the other file's @pkg.block", d.Config)
		}
	}
}

// TestPackageDuplicates: a symbol defined in two files of a package is an
// error at the second definition that names the first.
func TestPackageDuplicates(t *testing.T) {
	kernel := func(sym, export string) string {
		return `kernel.def export("` + export + `") @` + sym + `() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch() {
  kernel.return
}
`
	}
	cases := []struct {
		name, a, b string
		want       string
	}{
		{"func", "func.def @f() {\n  func.return\n}\n", "\n\nfunc.def @f() {\n  func.return\n}\n",
			"b.loom:3:1: duplicate definition of @f (first defined at a.loom:1:1)"},
		{"template provider", pkgCommon, "\ntemplate.def<@pkg.load> @pkg.load_plain(%src: buffer, %i: index, %n: index) -> (f32) {\n  %x = scalar.constant 0.0 : f32\n  template.return %x : f32\n}\n",
			"b.loom:2:1: duplicate definition of @pkg.load_plain (first defined at a.loom:4:1)"},
		{"config.decl", "config.decl @c : index\n", "config.decl @c : index\n",
			"b.loom:1:1: duplicate definition of @c (first defined at a.loom:1:1)"},
		{"config.def", "config.decl @c : index\nconfig.def @c = 1 : index\n", "config.def @c = 1 : index\n",
			"b.loom:1:1: duplicate config.def of @c (first at a.loom:2:1)"},
		{"target", "amdgpu.target<gfx1100> @t\n", "\namdgpu.target<gfx1100> @t\n",
			"b.loom:2:1: duplicate definition of @t (first defined at a.loom:1:1)"},
		{"global", "global.variable @g : f32 = 0.0\n", "global.variable @g : f32 = 1.0\n",
			"b.loom:1:1: duplicate definition of @g (first defined at a.loom:1:1)"},
		{"kernel symbol", kernel("k", "k1"), kernel("k", "k2"),
			"b.loom:1:1: duplicate definition of @k (first defined at a.loom:1:1)"},
		{"kernel export", kernel("k1", "k"), kernel("k2", "k"),
			`b.loom:1:1: duplicate export name "k" (also @k1 at a.loom:1:1)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mods, err := ParsePackage(File{"a.loom", []byte(c.a)}, File{"b.loom", []byte(c.b)})
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q, want it to contain %q", err, c.want)
			}
			if len(mods) != 1 || mods[0].File != "a.loom" {
				t.Errorf("returned the modules of %v, want only a.loom (b.loom has the error)", files(mods))
			}
		})
	}
	// Declarations may repeat what another file defines.
	decls := "func.decl @f()\ntemplate.decl @pkg.load(%src: buffer, %i: index, %n: index) -> (f32)\n"
	if _, err := ParsePackage(File{"a.loom", []byte(pkgCommon + "func.def @f() {\n  func.return\n}\n")}, File{"b.loom", []byte(decls)}); err != nil {
		t.Errorf("declarations of another file's definitions: %v", err)
	}
}

// TestPackageSyntaxError: a file that does not parse is reported; the
// others' uses of symbols it may define are not called undefined, and
// their own errors are still reported.
func TestPackageSyntaxError(t *testing.T) {
	bad := "func.def @pkg.twice(%x: f32 -> (f32) {\n}\n"
	kernelErr := strings.Replace(pkgKernel, "%y = func.call", "%q = index.add %nope, %nope : index\n    %y = func.call", 1)
	mods, err := ParsePackage(File{"common.loom", []byte(bad)}, File{"k.loom", []byte(kernelErr)})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !errors.Is(err, ErrSyntax) || !strings.HasPrefix(msg, "common.loom:1:") {
		t.Errorf("error %q, want common.loom's syntax error first", msg)
	}
	if strings.Contains(msg, "undefined symbol") {
		t.Errorf("error %q calls symbols undefined that the broken file may define", msg)
	}
	if !strings.Contains(msg, "k.loom:12:20:") || !strings.Contains(msg, "use of undefined value %nope") {
		t.Errorf("error %q lacks k.loom's own error", msg)
	}
	if len(mods) != 0 {
		t.Errorf("returned modules of %v", files(mods))
	}
}

func files(mods []*Module) []string {
	var out []string
	for _, m := range mods {
		out = append(out, m.File)
	}
	return out
}

// An unreadable file of the package is reported, and the others' uses of
// symbols it may define are not called undefined.
func TestParseFilesUnreadable(t *testing.T) {
	dir := t.TempDir()
	k := filepath.Join(dir, "twice.loom")
	if err := os.WriteFile(k, []byte(pkgKernel), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFiles(filepath.Join(dir, "common.loom"), k)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "undefined symbol") {
		t.Errorf("error %v, want the missing file and no undefined symbols", err)
	}
}
