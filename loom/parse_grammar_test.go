package loom

import (
	"math"
	"strings"
	"testing"
)

// kernelWith wraps body statements in a kernel whose launch signature
// defines %n, %x (buffer), %v (view over %x), %i and %c for them to use.
func kernelWith(body string) string {
	return `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %x: buffer, %f: f32) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %c = index.cmp ult, %i, %n : index
  %v = buffer.view %x[%z] : buffer -> view<[%n]xf32>
` + body + `
  kernel.return
}
`
}

// TestLayoutFreedom checks layouts Loom's format-driven parser accepts and
// a newline-ended statement grammar must not refuse.
func TestLayoutFreedom(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"results ending a line", "  %a, %b =\n    func.call @two(%i) : (index) -> (f32, f32)\n  view.store %a, %v[%i] : f32, view<[%n]xf32>",
			"func.call @two O=[i] T=[index] RT=[f32, f32] %a:f32 %b:f32"},
		{"call operands over lines", "  %a, %b = func.call @two(\n      %i\n    )\n    : (index)\n    -> (f32, f32)\n  view.store %b, %v[%i] : f32, view<[%n]xf32>",
			"func.call @two O=[i] T=[index] RT=[f32, f32] %a:f32 %b:f32"},
		{"type list over lines", "  %a, %b = func.call @two(%i) : (\n      index) -> (f32,\n      f32)\n  view.store %b, %v[%i] : f32, view<[%n]xf32>",
			"func.call @two O=[i] T=[index] RT=[f32, f32] %a:f32 %b:f32"},
		{"no spaces", "  %s=scalar.fptoui %f : f32 to i32\n  %w = buffer.view %x[%z] : buffer -> view<[%n]xi32>\n  view.store %s,%w[%i] : i32,view<[%n]xi32>",
			"view.store O=[s,w,i] T=[i32, view<[%n]xi32>]"},
		{"one-line region", "  scf.if %c { view.store %f, %v[%i] : f32, view<[%n]xf32> }",
			"scf.if O=[c]"},
		{"one-line else", "  %r = scf.if %c -> (f32) {\n    scf.yield %f : f32\n  } else {scf.yield %f : f32}\n  view.store %r, %v[%i] : f32, view<[%n]xf32>",
			"scf.if O=[c] RT=[f32] W=[else] %r:f32"},
		{"else on its own line", "  %r = scf.if %c -> (f32) {\n    scf.yield %f : f32\n  }\n  else {\n    scf.yield %f : f32\n  }\n  view.store %r, %v[%i] : f32, view<[%n]xf32>",
			"scf.if O=[c] RT=[f32] W=[else] %r:f32"},
		{"two statements on a line", "  %s = scalar.negf %f : f32 %t = scalar.addf %s, %f : f32 view.store %t, %v[%i] : f32, view<[%n]xf32>",
			"scalar.addf O=[s,f] T=[f32] %t:f32"},
		{"statements in a one-line region", "  scf.if %c { %s = scalar.negf %f : f32 view.store %s, %v[%i] : f32, view<[%n]xf32> }",
			"scf.if O=[c]"},
		{"loc on the next line", "  kernel.barrier\n  %s = scalar.negf %f : f32\n    loc(\"m.py\":3:4)\n  view.store %s, %v[%i]\n    : f32, view<[%n]xf32>",
			"scalar.negf O=[f] T=[f32] %s:f32"},
		{"attr dict stays a dict", "  %r = kernel.subgroup.reduce<addf> %f {cluster = 4} : f32\n  view.store %r, %v[%i] : f32, view<[%n]xf32>",
			"kernel.subgroup.reduce<addf> O=[f] T=[f32] cluster=4 %r:f32"},
	}
	helper := "func.def @two(%i: index) -> (f32, f32) {\n  %a = scalar.constant 1.0 : f32\n  func.return %a, %a : f32, f32\n}\n"
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := kernelWith(tc.body) + helper
			m, err := ParseFile("t.loom", []byte(src))
			if err != nil {
				t.Fatalf("%v\n%s", err, src)
			}
			var got []string
			for _, op := range m.Kernels[0].Body.Ops {
				got = append(got, summary(op))
			}
			if !containsLine(got, tc.want) {
				t.Errorf("no op %q among\n%s", tc.want, strings.Join(got, "\n"))
			}
			p, err := NewProgram(m)
			if err != nil {
				t.Fatal(err)
			}
			if acc := p.Access(m.Kernels[0]); acc[0].Access != AccessWrite {
				t.Errorf("access of %%x = %s, want write", acc[0].Access)
			}
		})
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// TestOneLineRegionBody checks that a region written on one line holds the
// statement, not an attribute dictionary.
func TestOneLineRegionBody(t *testing.T) {
	m := mustParse(t, kernelWith("  scf.if %c { view.store %f, %v[%i] : f32, view<[%n]xf32> }"))
	var ifOp *Op
	for _, op := range m.Kernels[0].Body.Ops {
		if op.Name == "scf.if" {
			ifOp = op
		}
	}
	if ifOp == nil || len(ifOp.Regions) != 1 || len(ifOp.Regions[0].Ops) != 1 || ifOp.Regions[0].Ops[0].Name != "view.store" {
		t.Fatalf("scf.if regions: %s", Dump(m))
	}
}

func mustParse(t *testing.T, src string) *Module {
	t.Helper()
	m, err := ParseFile("t.loom", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return m
}

// TestSignatures covers named and tied results, function types, the
// group/pool/hal.buffer/encoding types, export with a linkage and abi().
func TestSignatures(t *testing.T) {
	src := `#q8 = #q8_0<block=32>
#d = #dense
func.decl @mutate(%m: index, %input: tile<[%m]xf32, #q8>) -> (%input as tile<[%m]xf32, #q8>)
func.decl public @shape(%x: tensor<[%M]xf32>, %M: index) -> (tensor<[%M]xf32>, %count: index) where [min(%M, 4), max(%M, 64)]
func.decl @types(%fn: (f32, i32) -> (f32), %g: group<workgroup>, %p: pool<[%m]>, %m: index, %h: hal.buffer, %e: encoding, %z: vector<0xf32>, %w: view<[%m]xf32, %e>)
func.def abi(object_function) export("helper", {linkage = "dso_local"}) @helper(%a: f32) -> (f32) {
  func.return %a : f32
}
kernel.def export("k", {linkage = "dso_local"}) @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %x: buffer) where [min(%n, 1), max(%n, 4096)] {
  %z = index.constant 0 : offset
  %v = buffer.view %x[%z] : buffer -> view<[%n]xf32, #d>
  kernel.return
}
`
	m := mustParse(t, src)
	if len(m.Aliases) != 2 || m.Aliases[0].Value != "#q8_0<block=32>" {
		t.Errorf("aliases %+v", m.Aliases)
	}
	f := m.Funcs[0]
	if len(f.ResultSigs) != 1 || f.ResultSigs[0].Tied == nil || f.ResultSigs[0].Tied.Value != f.Params[1] {
		t.Errorf("tied result of @mutate not resolved to %%input: %+v", f.ResultSigs)
	}
	if ty := f.Params[1].Type; ty.Layout != "#q8_0<block=32>" || ty.Alias != "#q8" {
		t.Errorf("alias not resolved: layout %q alias %q", ty.Layout, ty.Alias)
	}
	shape := m.Funcs[1]
	if rs := shape.ResultSigs; len(rs) != 1 || rs[0].Value == nil || rs[0].Value.Name != "count" || rs[0].Index != 1 {
		t.Errorf("named result: %+v", rs)
	}
	types := m.Funcs[2].Params
	if fn := types[0].Type; fn.Kind != TypeFunc || fn.String() != "(f32, i32) -> (f32)" {
		t.Errorf("function type %v kind %d", fn, fn.Kind)
	}
	if p := types[2].Type; p.String() != "pool<[%m]>" || p.Dims[0].Value.Value != types[3] {
		t.Errorf("pool type %v", p)
	}
	for i, want := range []string{"", "group<workgroup>", "", "index", "hal.buffer", "encoding", "vector<0xf32>", "view<[%m]xf32, %e>"} {
		if want != "" && types[i].Type.String() != want {
			t.Errorf("param %d type %s, want %s", i, types[i].Type, want)
		}
	}
	helper := m.Funcs[3]
	if helper.Export != "helper" || helper.Op.Attr("linkage") == nil || helper.Op.Attr("abi") == nil {
		t.Errorf("helper export/linkage/abi: %+v", helper.Op.Attrs)
	}
	k := m.Kernels[0]
	if k.Export != "k" || k.Linkage != "dso_local" {
		t.Errorf("kernel export %q linkage %q", k.Export, k.Linkage)
	}
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range p.ArgChecks(k) {
		ok, err := c.Eval(&Env{Launch: []Const{{Type: k.Launch[0].Type, Int: 5000}, {}}})
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, c.Text+"="+map[bool]string{true: "holds", false: "fails"}[ok])
	}
	if strings.Join(texts, " ") != "min(%n, 1)=holds max(%n, 4096)=fails" {
		t.Errorf("checks: %v", texts)
	}
	if a := p.Access(k); a[0].Access != AccessNone {
		t.Errorf("%%x access %s, want none", a[0].Access)
	}
}

// TestGlobals covers global.constant/variable with declaration-local
// dimension names and global.load co-results.
func TestGlobals(t *testing.T) {
	src := `global.constant @w : tile<[%m]x[%k]xi8, #q8_0<block=32>> where [mul(%m, 16)]
global.variable @state : f32 = 0.0
global.variable @sv : view<[%n]xf32, %layout>
func.def initializer @init(%value: f32) {
  global.store %value, @state : f32
  func.return
}
func.def @load() {
  %tile, %m, %k = global.load @w : tile<[%m]x[%k]xi8, #q8_0<block=32>>
  %view, %n, %layout = global.load @sv : view<[%n]xf32, %layout>
  global.store %view, @sv : view<[%n]xf32, %layout>
  func.return
}
`
	m := mustParse(t, src)
	if len(m.Globals) != 3 || !m.Globals[1].Mutable || m.Globals[1].Init == nil || m.Globals[1].Init.Float != 0 {
		t.Fatalf("globals %+v", m.Globals)
	}
	if d := m.Globals[0].Dims; len(d) != 2 || d[0].Name != "m" || d[1].Name != "k" {
		t.Errorf("dims of @w: %s", dumpValues(d))
	}
	load := m.Funcs[1].Body.Ops[0]
	got := dumpValues(load.Results)
	if got != "(%tile:tile<[%m]x[%k]xi8, #q8_0<block=32>>, %m:index, %k:index)" {
		t.Errorf("global.load results %s", got)
	}
	if d := load.Types[0].Dims[0].Value; d.Value != load.Results[1] {
		t.Errorf("dim %%m resolves to %v, want the co-result", d.Value)
	}
	if r := m.Funcs[1].Body.Ops[1].Results[2]; r.Type.String() != "encoding" {
		t.Errorf("layout co-result typed %s", r.Type)
	}
	// The declaration-local names are not visible elsewhere.
	_, err := ParseFile("t.loom", []byte("global.constant @w : tile<[%m]xf32>\nfunc.def @f() {\n  %x = index.add %m, %m : index\n  func.return\n}\n"))
	if err == nil || !strings.Contains(err.Error(), "t.loom:3:18: use of undefined value %m") {
		t.Errorf("err = %v", err)
	}
}

// TestGlobalEscapeIsConservative checks that a buffer stored into a global
// is read_write (another function may write through it), not none.
func TestGlobalEscapeIsConservative(t *testing.T) {
	src := `global.variable @saved : buffer
kernel.def @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%x: buffer, %y: buffer) {
  global.store %x, @saved : buffer
  %g = global.load @saved : buffer
  %z = index.constant 0 : offset
  %v = buffer.view %g[%z] : buffer -> view<4xf32>
  %i = index.constant 0 : index
  %f = view.load %v[%i] : view<4xf32> -> f32
  kernel.return
}
`
	m := mustParse(t, src)
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	acc := p.Access(m.Kernels[0])
	if acc[0].Access != AccessReadWrite || acc[0].Basis != BasisConservative {
		t.Errorf("%%x: %s %s, want read_write conservative", acc[0].Access, acc[0].Basis)
	}
	if acc[1].Access != AccessNone {
		t.Errorf("%%y: %s, want none", acc[1].Access)
	}
}

// TestSplitFuncAndChecks covers test.split_func (both regions see the
// signature) and check.* ops, which parse and are ignored by analyses.
func TestSplitFuncAndChecks(t *testing.T) {
	src := `test.split_func @projected(%arg: i32, %other: index) {
  test.use %arg : i32
  test.yield
} launch {
  test.use %arg, %other : i32, index
  test.yield
}
func.decl @scale(%n: index, %in: tensor<[%n]xi32>, %out: tensor<[%n]xi32>)
check.case public @scale_case {
  %n = check.param.choice values([17, 64]) name("n") : index
  %m = check.param.range po2 bounds(1 to 64) : index
  %a = check.param.range linear bounds(0.0 to 1.0) step(0.25) : f32
  %seed = check.param.seed base(0x4c6f6f6d) count(32) : i64
  %in = check.generate.fill value(7) : tensor<[%n]xi32>
  %r = check.generate.random.uniform seed(%seed) range(-1.0 to 1.0) : tensor<[%n]xf32>
  %out = check.generate.iota offset(0) step(1) : tensor<[%n]xi32>
  %lit = check.literal value(42) : i32
  check.requires<target.feature> {feature = "amdgpu.gfx11"}
  check.skip_if<device.memory> {max_bytes = 1073741824} reason("fixture too large")
  func.call @scale(%n, %in, %out) : (index, tensor<[%n]xi32>, tensor<[%n]xi32>)
  %exp = check.oracle.call<reference.scalar> callee(@scale) inputs(%n, %in) : (index, tensor<[%n]xi32>) -> (tensor<[%n]xi32>)
  check.expect.equal actual(%out) expected(%exp) : tensor<[%n]xi32>
  check.expect.close actual(%r) expected(%r) atol(0.0001) rtol(0.0001) nan(same) : tensor<[%n]xf32>
  check.expect.shape value(%out) shape([%n]) : tensor<[%n]xi32>
  check.expect<topk.equal> actual(%out) expected(%exp) {k = 5} : tensor<[%n]xi32>
  check.file.write.npy value(%out) path("out.npy") mode(on_failure) : tensor<[%n]xi32>
  check.return
}
check.benchmark<@scale_case> @scale_small {n = 17}
`
	m := mustParse(t, src)
	split := m.Ops[0]
	if len(split.Regions) != 2 || len(split.Regions[1].Args) != 2 || split.Regions[1].Label != "launch" {
		t.Fatalf("split func regions: %s", Dump(m))
	}
	use := split.Regions[1].Ops[0]
	if use.Operands[1].Value != split.Regions[1].Args[1] {
		t.Errorf("launch region's %%other resolves to %v", use.Operands[1].Value)
	}
}

// TestGrammarErrors checks positions and messages for malformed new syntax.
func TestGrammarErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"#q8 #q8_0<block=32>\n", "t.loom:1:1: expected '=' after #q8"},
		{"#q8 = q8\n", "t.loom:1:7: expected attribute such as #q8_0<block=32> after '='"},
		{"#q8 = #a\n#q8 = #b\n", "t.loom:2:1: duplicate attribute alias #q8 (first defined at t.loom:1:1)"},
		{"func.decl @f(%a: f32) -> (%a f32)\n", "t.loom:1:30: expected 'as' (tied result) or ':' (named result) after %a"},
		{"func.decl @f(%a: f32) -> (%b as f32)\n", "t.loom:1:27: use of undefined value %b"},
		{"func.decl @f(%fn: (f32) f32)\n", "t.loom:1:25: expected '->' and result types of a function type"},
		{"func.decl @f(%p: pool<f32>)\n", "t.loom:1:23: expected pool block size"},
		{"func.decl export(\"f\", {abi = \"x\"}) @f()\n", "t.loom:1:24: unknown export attribute \"abi\""},
		{"global.constant @g tile<4xf32>\n", "t.loom:1:20: expected ':' and a type after the global symbol"},
		{"global.constant @g : f32\nfunc.def @f() {\n  %x = global.load @h : f32\n  func.return\n}\n", "t.loom:3:3: use of undefined symbol @h"},
		{"test.split_func @f(%a: i32) {\n  test.yield\n}\n", "t.loom:3:2: expected 'launch'"},
	}
	for _, tc := range cases {
		_, err := ParseFile("t.loom", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got  %v\n want %s", tc.src, err, tc.want)
		}
	}
}

// TestLoomTestForms covers forms found in Loom's own test files: values
// defined at top level, an encoding as a config value, a string index, and
// loop-carried values whose types are grouped after the last one.
func TestLoomTestForms(t *testing.T) {
	src := `%a = test.constant 1 : i32
%b = test.addi %a, %a : i32
config.def @quant.schema = #q8_0<block=32> : encoding<schema>
func.def @f(%lo: index, %hi: index, %st: index, %g0: vector<1xf32>, %u0: vector<1xf32>, %s: encoding<schema>) -> (vector<1xf32>, vector<1xf32>) {
  %field = test.fact_encoding_matrix_field %s["element_format"] : encoding<schema> -> i64
  %g, %u = scf.for %i = [%lo to %hi step %st](%ga = %g0, %ua = %u0 : vector<1xf32>, vector<1xf32>) -> (vector<1xf32>, vector<1xf32>) {
    scf.yield %ga, %ua : vector<1xf32>, vector<1xf32>
  }
  func.return %g, %u : vector<1xf32>, vector<1xf32>
}
`
	m := mustParse(t, src)
	if op := m.Ops[1]; op.Operands[0].Value != m.Ops[0].Results[0] {
		t.Errorf("top-level %%a not resolved: %+v", op.Operands[0])
	}
	if d := m.ConfigDefs[0]; d.Value.Text != "#q8_0<block=32>" {
		t.Errorf("config.def value %q", d.Value.Text)
	}
	body := m.Funcs[0].Body.Ops
	if body[0].Str != "element_format" {
		t.Errorf("string index: %q", body[0].Str)
	}
	args := body[1].Regions[0].Args
	if len(args) != 3 || args[1].Type.String() != "vector<1xf32>" || args[2].Type.String() != "vector<1xf32>" {
		t.Errorf("grouped iter types: %s", dumpValues(args))
	}
	for _, bad := range []struct{ src, want string }{
		{"%k = kernel.decl @k() launch()\n", "t.loom:1:1: top-level operation kernel.decl cannot define SSA values"},
		{"func.def @f(%x: f32) {\n  %r = scf.for %i = [0 to 4 step 1](%a = %x, %b = %x) -> (f32, f32) {\n  }\n}\n", "t.loom:2:53: expected ':' and a type after the initial value, found ')'"},
	} {
		if _, err := ParseFile("t.loom", []byte(bad.src)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %s", bad.src, err, bad.want)
		}
	}
}

// TestDocOnlyAtLineStart checks that the comment above a line documents
// the op starting that line, not one nested in a one-line region.
func TestDocOnlyAtLineStart(t *testing.T) {
	m := mustParse(t, kernelWith("  // store when in range\n  scf.if %c { view.store %f, %v[%i] : f32, view<[%n]xf32> }"))
	for _, op := range m.Kernels[0].Body.Ops {
		if op.Name == "scf.if" {
			if op.Doc != "store when in range" || op.Regions[0].Ops[0].Doc != "" {
				t.Errorf("docs: if %q, store %q", op.Doc, op.Regions[0].Ops[0].Doc)
			}
		}
	}
}

// TestLocAnnotations checks that loc(…) after an op is carried on it and
// that a malformed or misplaced one is a positioned syntax error.
func TestLocAnnotations(t *testing.T) {
	src := kernelWith("  %r = scalar.negf %f : f32 loc(\"m.py\":7:2 to 7:30)\n" +
		"  scf.if %c {\n    view.store %r, %v[%i] : f32, view<[%n]xf32> loc(fused<\"a\":1:1, opaque<\"t\", \"d\">>)\n  } loc(\"m.py\":8:1)")
	m, err := ParseFile("t.loom", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	got := map[string]string{}
	var walk func([]*Op)
	walk = func(ops []*Op) {
		for _, op := range ops {
			if op.Loc != nil {
				got[op.Name] = op.Loc.Text + " @" + op.Loc.Pos.String()
			}
			for _, r := range op.Regions {
				walk(r.Ops)
			}
		}
	}
	walk(m.Ops)
	want := map[string]string{
		"scalar.negf": `"m.py":7:2 to 7:30 @t.loom:9:29`,
		"view.store":  `fused<"a":1:1, opaque<"t", "d">> @t.loom:11:49`,
		"scf.if":      `"m.py":8:1 @t.loom:12:5`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("loc of %s = %q, want %q", k, got[k], w)
		}
	}
	bad := []struct{ body, want string }{
		{`  kernel.barrier loc("f":1)`, "t.loom:9:27: expected ':' after the line in location, found ')'"},
		{`  kernel.barrier loc("f":1:70000)`, "t.loom:9:28: location column 70000 is not in 0…65535"},
		{`  kernel.barrier loc(unknown)`, `t.loom:9:22: expected a location ("file":line:col, fused<…> or opaque<"tag", "data">), found 'unknown'`},
		{`  kernel.barrier loc(opaque<"t">)`, "t.loom:9:32: expected ',' after the opaque location's tag in location, found '>'"},
		{`  kernel.barrier loc(fused<"a":1:1`, "t.loom:9:35: expected '>' closing fused<…> in location, found newline"},
		{`  kernel.barrier loc("f":1:1) x`, `t.loom:9:18: location annotation loc("f":1:1) must follow a whole operation`},
		{`  %q = scalar.addf %f loc("f":1:1), %f : f32`, `t.loom:9:23: location annotation loc("f":1:1) must follow a whole operation`},
	}
	for _, tc := range bad {
		_, err := ParseFile("t.loom", []byte(kernelWith(tc.body)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %s", tc.body, err, tc.want)
		}
	}
	// A checker error names this file's position, never the annotation's.
	_, err = ParseFile("t.loom", []byte(kernelWith(`  %q = scalar.addf %nope, %f : f32 loc("model.py":99:1)`)))
	if err == nil || !strings.HasPrefix(err.Error(), "t.loom:9:20: ") || strings.Contains(err.Error(), "model.py") {
		t.Errorf("undefined value under a loc: err = %v", err)
	}
	if _, err := ParseFile("t.loom", []byte("#a = #q8_0<block=32> loc(\"f\":1:1)\n")); err == nil || !strings.Contains(err.Error(), "t.loom:1:") {
		t.Errorf("loc after an alias: err = %v", err)
	}
}

// TestNegativeSpecialFloats checks -inf and -nan, one word each in Loom,
// and that the special words are the float literals of a constant.
func TestNegativeSpecialFloats(t *testing.T) {
	src := kernelWith("  %a = scalar.constant -inf : f32\n  %b = scalar.constant -nan : f32\n  %pinf = scalar.constant inf : f32\n  %pnan = scalar.constant nan : f32\n  %s = scalar.addf %a, %b : f32\n  view.store %s, %v[%i] : f32, view<[%n]xf32>")
	m, err := ParseFile("t.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var lits []string
	var vals []float64
	for _, op := range m.Kernels[0].Body.Ops {
		if op.Name == "scalar.constant" {
			if op.Literal == nil || op.Literal.Kind != LitFloat {
				t.Fatalf("%s: literal %+v, want a float literal", op.Pos, op.Literal)
			}
			lits = append(lits, op.Literal.Text)
			vals = append(vals, op.Literal.Float)
		}
	}
	if strings.Join(lits, " ") != "-inf -nan inf nan" {
		t.Errorf("literals = %q", lits)
	}
	if !math.IsInf(vals[0], -1) || !math.IsNaN(vals[1]) || !math.Signbit(vals[1]) || !math.IsInf(vals[2], 1) || !math.IsNaN(vals[3]) {
		t.Errorf("values = %v", vals)
	}
	for _, s := range []string{"-inf", "-nan"} {
		c, err := ParseConst(&Type{Kind: TypeFloat, Name: "f32", Bits: 32}, s)
		if err != nil {
			t.Fatal(err)
		}
		if !math.Signbit(c.Float) {
			t.Errorf("%s: %v has no sign bit", s, c.Float)
		}
	}
}
