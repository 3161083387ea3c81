package loom

import "testing"

// TestKernelHeader checks modifiers in any order, the two signatures, where
// clauses on both, Export defaulting and Doc.
func TestKernelHeader(t *testing.T) {
	src := `// first line
// second line
kernel.def linkage(dso_local) retain export("ex") target(@t) @k(%n: index) where [range(%n, 1, 8)] {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) cluster_size(%c1, %c1, %c1) : index
} launch(
  %n:index,
  %buf:buffer
) where [mul(%n, 4)] {
  kernel.return
}
target.decl @t
kernel.decl @d() launch(%x: f32)
`
	m, err := ParseFile("k.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Kernels) != 2 {
		t.Fatalf("%d kernels", len(m.Kernels))
	}
	k := m.Kernels[0]
	if k.Symbol != "k" || k.Export != "ex" || !k.HasExport || !k.Retain || k.Target != "t" || k.Linkage != "dso_local" {
		t.Errorf("header fields: %+v", k)
	}
	if k.Doc != "first line\nsecond line" {
		t.Errorf("doc %q", k.Doc)
	}
	if len(k.Workload) != 1 || len(k.Launch) != 2 || k.Launch[1].Name != "buf" || k.Launch[1].Type.Kind != TypeBuffer {
		t.Errorf("signatures: %s %s", dumpValues(k.Workload), dumpValues(k.Launch))
	}
	if k.Launch[1].Owner != k.Body || k.Workload[0].Owner != k.Config {
		t.Errorf("signature values are not the region arguments")
	}
	if len(k.WorkloadWhere) != 1 || k.WorkloadWhere[0].Name != "range" || len(k.LaunchWhere) != 1 || k.LaunchWhere[0].Args[0].Value != k.Launch[0] {
		t.Errorf("where clauses: %s / %s", dumpPreds(k.WorkloadWhere), dumpPreds(k.LaunchWhere))
	}
	cfg := k.Config.Ops[len(k.Config.Ops)-1]
	if len(cfg.Operands) != 9 {
		t.Errorf("launch config operands %d", len(cfg.Operands))
	}
	if p := k.Launch[1].Pos; p.Line != 8 || p.Col != 3 || p.File != "k.loom" {
		t.Errorf("position of %%buf: %v", p)
	}
	d := m.Kernels[1]
	if !d.Decl || d.Export != "d" || d.HasExport || d.Config != nil || len(d.Launch) != 1 {
		t.Errorf("decl: %+v", d)
	}
}

// TestDeclarations covers config, func, template and import declarations.
func TestDeclarations(t *testing.T) {
	src := `config.decl @m.rows : %v: index where [range(%v, 1, 4096), mul(%v, 16), pow2(%v)]
config.decl @m.on : i1
config.def @m.rows = 256 : index
config.def @m.on = true : i1
func.decl @ext(%x: buffer) import("lib", "ext_impl")
template.decl @fam(%x: f32) -> (f32)
template.def<@fam> priority(3) @impl(%x: f32) -> (f32) where [finite(%x)] {
  template.return %x : f32
}
func.template<a.key> @p(%x: f32) -> (f32) {
  func.return %x : f32
}
func.def public pure inline @h(%a: index) -> (index) {
  %r = config.get @m.rows : index
  %y = template.apply<@fam>(%a) : (index) -> (index)
  func.return %r : index
}
module.import "vendor" [@ext, @fam]
`
	m, err := ParseFile("d.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ConfigDecls) != 2 || m.ConfigDecls[0].Symbol != "m.rows" || m.ConfigDecls[0].Bind.Name != "v" || len(m.ConfigDecls[0].Preds) != 3 {
		t.Fatalf("config decls: %+v", m.ConfigDecls)
	}
	if a := m.ConfigDecls[0].Preds[1].Args[0]; a.Value != m.ConfigDecls[0].Bind {
		t.Errorf("predicate bind not resolved")
	}
	if len(m.ConfigDefs) != 2 || m.ConfigDefs[0].Value.Int != 256 || m.ConfigDefs[1].Value.Kind != LitBool || m.ConfigDefs[1].Value.Int != 1 {
		t.Errorf("config defs: %+v", m.ConfigDefs)
	}
	funcs := map[string]*Func{}
	for _, f := range m.Funcs {
		funcs[f.Symbol] = f
	}
	if f := funcs["ext"]; f == nil || f.Body != nil || f.Kind != "func.decl" || f.Op.Attr("import") == nil {
		t.Errorf("func.decl: %+v", f)
	}
	if f := funcs["impl"]; f == nil || f.Family != "fam" || f.Priority != 3 || len(f.Where) != 1 || f.Body == nil || len(f.Results) != 1 {
		t.Errorf("template.def: %+v", f)
	}
	if f := funcs["p"]; f == nil || f.Family != "a.key" || f.Kind != "func.template" {
		t.Errorf("func.template: %+v", f)
	}
	if f := funcs["h"]; f == nil || !f.HasModifier("pure") || !f.HasModifier("inline") || !f.HasModifier("public") {
		t.Errorf("func.def modifiers: %+v", f)
	}
	if len(m.Imports) != 1 || m.Imports[0].Key != "vendor" || len(m.Imports[0].Symbols) != 2 {
		t.Errorf("imports: %+v", m.Imports)
	}
}

// TestControlFlowLayouts checks region arguments and operand order of the
// scf ops.
func TestControlFlowLayouts(t *testing.T) {
	src := `func.def @f(%lb: index, %ub: index, %s: index, %x: f32, %sel: index) -> (f32) {
  %r, %q = scf.for %i = [%lb to %ub step %s] (%a = %x : f32, %b = %x : f32) -> (f32, f32) unroll(2) {
    scf.yield %b, %a : f32, f32
  }
  %w = scf.while(%v = %x : f32) -> (f32) {
    %c = scalar.cmpf olt, %v, %x : f32
    scf.condition %c, %v : i1, f32
  } do(%u: f32) {
    scf.yield %u : f32
  }
  %y = scf.if %c0 -> (f32) {
    scf.yield %x : f32
  } else {
    scf.yield %r : f32
  }
  func.return %y : f32
}
`
	m, err := ParseFile("c.loom", []byte(src))
	if err == nil {
		t.Fatal("want an error for the undefined value")
	}
	if got := err.Error(); got != "c.loom:11:15: use of undefined value %c0" {
		t.Errorf("error: %s", got)
	}
	ops := m.Funcs[0].Body.Ops
	loop := ops[0]
	if summary(loop) != "scf.for O=[lb,ub,s,x,x] RT=[f32, f32] unroll=2 %r:f32 %q:f32" {
		t.Errorf("scf.for: %s", summary(loop))
	}
	args := loop.Regions[0].Args
	if len(args) != 3 || args[0].Name != "i" || args[0].Type.Kind != TypeIndex || args[2].Name != "b" || args[2].Type.Name != "f32" {
		t.Errorf("scf.for region args %s", dumpValues(args))
	}
	yield := loop.Regions[0].Ops[0]
	if yield.Operands[0].Value != args[2] {
		t.Errorf("yield does not resolve to the iter arg")
	}
	wl := ops[1]
	if len(wl.Regions) != 2 || wl.Regions[1].Label != "do" || wl.Regions[1].Args[0].Name != "u" || len(wl.Operands) != 1 {
		t.Errorf("scf.while: %s", summary(wl))
	}
	ifop := ops[2]
	if len(ifop.Regions) != 2 || ifop.Regions[1].Label != "else" || ifop.Results[0].Type.Name != "f32" {
		t.Errorf("scf.if: %s", summary(ifop))
	}
}
