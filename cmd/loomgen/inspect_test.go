package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

func corpus(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../loom/testdata/*.loom")
	if err != nil || len(files) == 0 {
		t.Skip("no corpus")
	}
	// Files the parser rejects are the parser's tests' concern; inspect is
	// tested on the ones it accepts (and on bad input separately).
	var ok []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := loom.ParseFile(f, src); err != nil {
			t.Logf("skipping %s: %v", f, err)
			continue
		}
		ok = append(ok, f)
	}
	return ok
}

func TestInspectCorpusText(t *testing.T) {
	var out, errb bytes.Buffer
	code := runInspect(corpus(t), &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		`kernel "saxpy" @saxpy at ../../loom/testdata/saxpy.loom:4:1`,
		"launch   (%n: index, %a: f32, %x: buffer, %y: buffer)",
		"access %x read (exact) elem f32",
		"access %y read_write (exact) elem f32",
		"launch config: needs %n",
		"extent %y bytes (mul (cast index %n to offset) 4)",
		"fingerprint ",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestInspectJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runInspect(append([]string{"-json"}, corpus(t)...), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep inspectReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Kernels) == 0 {
		t.Fatal("no kernels")
	}
	for _, k := range rep.Kernels {
		if !strings.HasPrefix(k.Fingerprint, "v2-") || k.Export == "" || k.Pos == "" {
			t.Errorf("incomplete kernel report %+v", k)
		}
		for _, a := range k.Access {
			if a.Access != "none" && len(a.Evidence) == 0 {
				t.Errorf("%s %%%s: %s without evidence", k.Export, a.Param, a.Access)
			}
		}
	}
}

func TestInspectStatic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.loom")
	src := `config.decl @s.size : %v: index where [range(%v, 1, 64), pow2(%v)]
config.def @s.size = 8 : index
kernel.def export("fill") @fill() {
  %c1 = index.constant 1 : index
  %c64 = index.constant 64 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c64, %c1, %c1) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %v = buffer.view %out[%z] : buffer -> view<64xf32>
  %x = scalar.constant 0.0 : f32
  view.store %x, %v[%i] : f32, view<64xf32>
  kernel.return
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := runInspect([]string{path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"launch config: static: workgroups [1 1 1] workgroup_size [64 1 1] cluster_size [1 1 1]",
		"access %out write (exact) elem f32",
		"extent %out bytes 256",
		"config @s.size : index at " + path + ":1:1 where [range(%v, 1, 64), pow2(%v)] = 8",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.loom")
	if err := os.WriteFile(bad, []byte("kernel.def export(\"k\") @k() {\n  %x = index.add %nope, %nope : index\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "no input files"},
		{[]string{"-bogus", "x.loom"}, 2, "bogus"},
		{[]string{filepath.Join(dir, "missing.loom")}, 1, "missing.loom: no such file"},
		{[]string{bad}, 1, ""},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := runInspect(tc.args, &out, &errb)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %s)", tc.args, code, tc.code, errb.String())
		}
		if !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, errb.String(), tc.msg)
		}
	}
	var out, errb bytes.Buffer
	runInspect([]string{bad}, &out, &errb)
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(bad) + `:\d+:\d+: `).MatchString(errb.String()) {
		t.Errorf("error not in path:line:col form: %q", errb.String())
	}
}

// A directory is one package: the kernel files use the templates, helpers
// and config of common.loom, and the output says which files it analysed.
func TestInspectPackage(t *testing.T) {
	dir := "../../gen/testdata/pkg/kernels"
	var out, errb bytes.Buffer
	if code := runInspect([]string{dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.HasPrefix(first, "package of 4 files: ") || !strings.Contains(first, "common.loom") {
		t.Errorf("first line %q does not name the package's four files", first)
	}
	if !strings.Contains(out.String(), "template.apply<@pkg.load> read — @pkg.load_f32 %src read by view.load at "+filepath.Join(dir, "common.loom")) {
		t.Errorf("access evidence does not reach into common.loom:\n%s", out.String())
	}

	out.Reset()
	errb.Reset()
	if code := runInspect([]string{"-json", filepath.Join(dir, "addf.loom"), filepath.Join(dir, "common.loom")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var rep inspectReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Package) != 2 || len(rep.Kernels) != 1 || rep.Kernels[0].Launch.Error != "" {
		t.Errorf("package %v, %d kernels, launch error %q", rep.Package, len(rep.Kernels), rep.Kernels[0].Launch.Error)
	}

	// Alone, a kernel file misses what common.loom defines.
	errb.Reset()
	if code := runInspect([]string{filepath.Join(dir, "addf.loom")}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "use of undefined symbol @pkg.") {
		t.Errorf("addf.loom alone: exit %d, %s", code, errb.String())
	}
}

// TestInspectBackends checks -backends: each kernel's compile on the CPU
// executor and the PTX backend, with the reason a backend refuses one, in
// text and JSON; without the flag nothing is compiled or reported.
func TestInspectBackends(t *testing.T) {
	file := filepath.Join("testdata", "backends", "module_state.loom")
	var out, errb bytes.Buffer
	if code := runInspect([]string{"-backends", file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{
		"  backend cpu: kernel use_state: testdata/backends/module_state.loom:11:3: global.load: @state is a global.variable",
		"  backend ptx: testdata/backends/module_state.loom:11:3: ptx: unsupported: global.load: @state is a global.variable",
		"  backend cpu: compiles\n  backend ptx: compiles",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	out.Reset()
	if code := runInspect([]string{"-json", "-backends", file}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, errb.String())
	}
	var rep inspectReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range rep.Kernels {
		if len(k.Backends) != 2 || k.Backends[0].Name != "cpu" || k.Backends[1].Name != "ptx" ||
			k.Backends[0].Compiles != (k.Export == "saxpy") || k.Backends[1].Compiles != (k.Export == "saxpy") {
			t.Errorf("%s: backends %+v", k.Export, k.Backends)
		}
	}
	out.Reset()
	if code := runInspect([]string{file}, &out, &errb); code != 0 || strings.Contains(out.String(), "backend ") {
		t.Errorf("without -backends: exit %d, output\n%s", code, out.String())
	}
}
