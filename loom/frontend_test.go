package loom

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files of testdata/frontend hold one construct of real Loom each that
// the front end once refused (found by internal/corpusrate): every one must
// parse, resolve every operand, be analysed, and format back to the same
// tree.

// frontendUse says that the use of %Name on line UseLine resolves to the
// value defined on DefLine.
type frontendUse struct {
	File             string
	Name             string
	UseLine, DefLine int
}

var frontendUses = []frontendUse{
	// A block argument is defined by its label; a successor's arguments
	// are uses.
	{"cfg_blocks.loom", "winner", 12, 11},
	{"cfg_blocks.loom", "a", 8, 4},
	{"cfg_blocks.loom", "b", 10, 4},
	{"cfg_blocks.loom", "i", 20, 19},
	{"cfg_blocks.loom", "next", 24, 23},
	{"cfg_blocks.loom", "lay", 34, 33}, // in the type of a later argument
	{"cfg_blocks.loom", "w", 34, 33},
	// A result type names a co-result of its op.
	{"result_type_refs.loom", "lay", 4, 4},
	{"result_type_refs.loom", "l2", 17, 17},
	{"result_type_refs.loom", "v2", 20, 17},
	// Loop-carried values typed in a group after the values.
	{"iter_args_grouped.loom", "s", 6, 4},
	{"iter_args_grouped.loom", "seed", 4, 3},
	{"iter_args_grouped.loom", "start", 11, 3},
	{"iter_args_grouped.loom", "y", 14, 11},
	// The operand of an op with a field selector.
	{"field_selector.loom", "schema", 4, 3},
	// Module-level values.
	{"top_level_values.loom", "two", 4, 2},
	{"top_level_values.loom", "three", 4, 3},
	// iter_args(%acc: T) uses the parameter; do(…) defines region args.
	{"iter_args_uses.loom", "acc", 6, 5},
	{"iter_args_uses.loom", "running", 7, 6},
}

// TestFrontendBranchAccess: a write through a block argument is not
// missed (the successor's operands once were dropped, and the buffer
// inferred untouched).
func TestFrontendBranchAccess(t *testing.T) {
	src, err := os.ReadFile("testdata/frontend/cfg_branch_buffer.loom")
	if err != nil {
		t.Fatal(err)
	}
	p := parseProgram(t, string(src))
	k := mustKernel(t, p, "k")
	got := map[string]Access{}
	for _, a := range p.Access(k) {
		got[a.Param.Name] = a.Access
	}
	if got["src"] != 0 || got["dst"] != AccessReadWrite {
		t.Errorf("access %v; want src none, dst read_write", got)
	}
}

// TestFrontendValues checks what the parser keeps of constructs that
// define no uses: grouped loop-carried types, a field selector, an
// attribute-valued config.def.
func TestFrontendValues(t *testing.T) {
	parse := func(name string) *Module {
		t.Helper()
		src, err := os.ReadFile(filepath.Join("testdata/frontend", name))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseFile(name, src)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := parse("iter_args_grouped.loom")
	var types []string
	for _, op := range m.Funcs[0].Body.Ops {
		if op.Name != "scf.for" {
			continue
		}
		for _, a := range op.Regions[0].Args[1:] {
			types = append(types, a.Name+":"+a.Type.String())
		}
	}
	if got, want := strings.Join(types, " "), "m:f32 s:i32 x:f32 y:i32 z:f32"; got != want {
		t.Errorf("loop-carried types %q, want %q", got, want)
	}
	m = parse("field_selector.loom")
	if op := m.Funcs[0].Body.Ops[1]; op.Str != "payload_elements" || len(op.Operands) != 1 {
		t.Errorf("field selector: Str %q, %d operands; want payload_elements, 1", op.Str, len(op.Operands))
	}
	m = parse("config_attr_value.loom")
	if len(m.ConfigDefs) != 2 || m.ConfigDefs[0].Value.Text != "#q4_0<block=32>" || m.ConfigDefs[0].Type.String() != "encoding<schema>" {
		t.Fatalf("config defs %+v", m.ConfigDefs)
	}
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	defs, err := p.ConfigDefaults()
	if err != nil || len(defs) != 1 || defs["toy.width"].String() != "128" {
		t.Errorf("config defaults %v, %v; want only toy.width = 128", defs, err)
	}
}

func TestFrontendFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/frontend/*.loom")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/frontend files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseFile(path, src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			roundTrip(t, "f.loom", src)
			p, err := NewProgram(m)
			if err != nil {
				t.Fatalf("program: %v", err)
			}
			for _, k := range p.Kernels() {
				p.Access(k)
				if _, err := p.LaunchExprs(k); err != nil {
					t.Errorf("launch config of %s: %v", k.Export, err)
				}
				p.Extents(k)
			}
			uses := map[[2]any]*Operand{} // (name, line) → operand
			var walk func(ops []*Op)
			walk = func(ops []*Op) {
				for _, op := range ops {
					var ts []*Type
					ts = append(append(ts, op.Types...), op.ResultTypes...)
					for _, r := range op.Results {
						ts = append(ts, r.Type)
					}
					for _, ty := range ts {
						if ty == nil {
							continue
						}
						for _, d := range ty.Dims {
							if d.Value != nil {
								uses[[2]any{d.Value.Name, d.Value.Pos.Line}] = d.Value
							}
						}
						if ty.LayoutValue != nil {
							uses[[2]any{ty.LayoutValue.Name, ty.LayoutValue.Pos.Line}] = ty.LayoutValue
						}
					}
					for _, o := range op.Operands {
						if o.Lit == nil && o.Value == nil {
							t.Errorf("%s: %s: operand %%%s unresolved", o.Pos, op.Name, o.Name)
						}
						uses[[2]any{o.Name, o.Pos.Line}] = o
					}
					for _, r := range op.Regions {
						walk(r.Ops)
					}
				}
			}
			walk(m.Ops)
			for _, u := range frontendUses {
				if u.File != filepath.Base(path) {
					continue
				}
				o := uses[[2]any{u.Name, u.UseLine}]
				switch {
				case o == nil:
					t.Errorf("no use of %%%s on line %d", u.Name, u.UseLine)
				case o.Value == nil:
					t.Errorf("%%%s on line %d is unresolved", u.Name, u.UseLine)
				case o.Value.Pos.Line != u.DefLine:
					t.Errorf("%%%s on line %d resolves to line %d, want %d", u.Name, u.UseLine, o.Value.Pos.Line, u.DefLine)
				}
			}
		})
	}
}

// TestFrontendErrors: the constructs above keep clear errors for what
// they do not allow.
func TestFrontendErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"declaration with results", "%x = func.decl @f() -> (i32)\n",
			"x.loom:1:1: top-level operation func.decl cannot define SSA values"},
		{"top-level use before definition", "%a = test.addi %b, %b : i32\n%b = test.constant 1 : i32\n",
			"x.loom:1:16: use of undefined value %b"},
		{"grouped types missing", "func.def @f(%n: index, %v: f32) {\n  %r, %q = scf.for %i = [%n to %n step %n](%a = %v, %b = %v : f32) -> (f32, f32) {\n    scf.yield %a, %b : f32, f32\n  }\n  func.return\n}\n",
			"x.loom:2:66: expected ':' and a type for %b before ')'"},
		{"grouped types too many", "func.def @f(%n: index, %v: f32) {\n  %r = scf.for %i = [%n to %n step %n](%a = %v : f32, f32) -> (f32) {\n    scf.yield %a : f32\n  }\n  func.return\n}\n",
			"x.loom:2:55: expected loop-carried value such as %acc = %init : f32, found 'f32'"},
		{"block argument without a name", "func.def @f() {\n  cfg.br ^b\n^b(i32):\n  func.return\n}\n",
			"x.loom:3:4: block argument of ^b needs a name, such as %x: i32"},
		{"block label without colon", "func.def @f() {\n  cfg.br ^b\n^b(%x: i32)\n  func.return\n}\n",
			"x.loom:3:12: expected ':' after block label ^b, found newline"},
		{"block argument used before its block", "func.def @f() {\n  %y = scalar.negi %x : i32\n^b(%x: i32):\n  func.return\n}\n",
			"x.loom:2:20: use of undefined value %x"},
	} {
		_, err := ParseFile("x.loom", []byte(c.src))
		if err == nil {
			t.Errorf("%s: no error, want %s", c.name, c.want)
			continue
		}
		if got := firstError(err); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func firstError(err error) string {
	var list ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return list[0].Error()
	}
	return err.Error()
}

// TestFrontendBlockArgExtent: a view offset carried by a block argument
// has no host value; the extent says which block.
func TestFrontendBlockArgExtent(t *testing.T) {
	src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  cfg.br ^at(%z: offset)
^at(%off: offset):
  %v = buffer.view %out[%off] : buffer -> view<4xf32>
  %i = index.constant 0 : index
  %f = scalar.constant 1.0 : f32
  view.store %f, %v[%i] : f32, view<4xf32>
  kernel.return
}
`
	p := parseProgram(t, src)
	k := mustKernel(t, p, "k")
	ext := p.Extents(k)
	if len(ext) != 1 || ext[0].Bytes != nil || !strings.Contains(ext[0].Reason, "%off is an argument of block ^at and has no value on the host") {
		t.Errorf("extents %+v; want unknown: %%off is an argument of block ^at", ext)
	}
}

// TestFrontendDenseLayoutExtent: a view laid out by a dense encoding value
// spans what a #dense view spans; a strided one stays unknown.
func TestFrontendDenseLayoutExtent(t *testing.T) {
	src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %a: buffer, %b: buffer, %c: buffer) {
  %z = index.constant 0 : offset
  %i = index.constant 0 : index
  %dense = encoding.layout.dense : encoding<layout>
  %fact = encoding.layout.assume.dense %dense : encoding<layout>
  %odd = encoding.layout.strided [2] : encoding<layout>
  %av = buffer.view %a[%z] : buffer -> view<[%n]xf32, %dense>
  %bv = buffer.view %b[%z] : buffer -> view<8x2xi16, %fact>
  %cv = buffer.view %c[%z] : buffer -> view<[%n]xf32, %odd>
  %x = view.load %av[%i] : view<[%n]xf32, %dense> -> f32
  %y = view.load %bv[%i, %i] : view<8x2xi16, %fact> -> i16
  view.store %x, %cv[%i] : f32, view<[%n]xf32, %odd>
  kernel.return
}
`
	p := parseProgram(t, src)
	k := mustKernel(t, p, "k")
	got := map[string]string{}
	for _, e := range p.Extents(k) {
		if e.Bytes == nil {
			got[e.Param.Name] = "unknown"
		} else {
			got[e.Param.Name] = e.Bytes.String()
		}
	}
	want := map[string]string{"a": "(mul (cast index l0 to offset) 4:offset)", "b": "32:offset", "c": "unknown"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("extent %%%s = %s, want %s", name, got[name], w)
		}
	}
}
