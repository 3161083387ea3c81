package loom

import (
	"strconv"
	"strings"
	"testing"
)

// summary spells the layout-relevant parts of an op compactly.
func summary(op *Op) string {
	var b strings.Builder
	b.WriteString(op.Name)
	if op.Param != "" {
		b.WriteString("<" + op.Param + ">")
	}
	if op.Symbol != "" {
		b.WriteString(" @" + op.Symbol)
	}
	if op.Pred != "" {
		b.WriteString(" pred=" + op.Pred)
	}
	var os []string
	for _, o := range op.Operands {
		if o.Lit != nil {
			os = append(os, o.Lit.Text)
		} else {
			os = append(os, o.Name)
		}
	}
	b.WriteString(" O=[" + strings.Join(os, ",") + "]")
	if len(op.Types) > 0 {
		b.WriteString(" T=[" + dumpTypes(op.Types) + "]")
	}
	if len(op.ResultTypes) > 0 {
		b.WriteString(" RT=[" + dumpTypes(op.ResultTypes) + "]")
	}
	if len(op.Words) > 0 {
		b.WriteString(" W=[" + strings.Join(op.Words, ",") + "]")
	}
	for _, a := range op.Attrs {
		b.WriteString(" " + a.Key + "=" + dumpLit(&a.Value))
	}
	if len(op.Preds) > 0 {
		b.WriteString(" preds=" + dumpPreds(op.Preds))
	}
	if op.Literal != nil {
		b.WriteString(" lit=" + dumpLit(op.Literal))
	}
	if op.Str != "" {
		b.WriteString(" str=" + op.Str)
	}
	for _, r := range op.Results {
		b.WriteString(" %" + r.Name + ":" + r.Type.String())
	}
	if op.Opaque {
		b.WriteString(" opaque")
	}
	return b.String()
}

// parseStmt parses one statement inside a function whose parameters define
// the values the cases use, and returns the last top-level body op.
func parseStmt(t *testing.T, stmt string) *Op {
	t.Helper()
	src := "func.def @f(%v: view<8x8xf32>, %w: view<64xf32>, %b: buffer, %i: index, %j: index, %x: f32, %y: f32, %c: i1, %n: i32, %m: vector<8xi1>, %vec: vector<8xf32>, %o: offset, %h: view<16x16xf16>, %hf: view<16x16xf32>) -> (f32, index) {\n" + stmt + "\n}\nfunc.decl @g(%a: f32, %b: buffer) -> (f32)\n"
	m, err := ParseFile("t.loom", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	ops := m.Funcs[0].Body.Ops
	return ops[len(ops)-1]
}

// TestOpLayouts checks the operand layout of opsyntax.go op by op.
func TestOpLayouts(t *testing.T) {
	cases := []struct{ src, want string }{
		{"%r = index.constant 4 : index", "index.constant O=[] T=[index] lit=4 %r:index"},
		{"%r = scalar.constant true : i1", "scalar.constant O=[] T=[i1] lit=true %r:i1"},
		{"%r = scalar.constant -2.5e1 : f32", "scalar.constant O=[] T=[f32] lit=-25 %r:f32"},
		{"%r = vector.constant 0.0 : vector<4xf32>", "vector.constant O=[] T=[vector<4xf32>] lit=0 %r:vector<4xf32>"},
		{"%r = scalar.addf<fast> %x, %y : f32", "scalar.addf<fast> O=[x,y] T=[f32] %r:f32"},
		{"%r = index.madd %i, %j, %i : index", "index.madd O=[i,j,i] T=[index] %r:index"},
		{"%r = index.cmp ult, %i, %j : index", "index.cmp pred=ult O=[i,j] T=[index] %r:i1"},
		{"%r = scalar.cmpf olt, %x, %y : f32", "scalar.cmpf pred=olt O=[x,y] T=[f32] %r:i1"},
		{"%r = vector.cmpf olt, %vec, %vec : vector<8xf32> -> vector<8xi1>", "vector.cmpf pred=olt O=[vec,vec] T=[vector<8xf32>] RT=[vector<8xi1>] %r:vector<8xi1>"},
		{"%r = scalar.extsi %n : i32 to i64", "scalar.extsi O=[n] T=[i32] RT=[i64] %r:i64"},
		{"%r = index.scale %i, %o : index, offset -> offset", "index.scale O=[i,o] T=[index, offset] RT=[offset] %r:offset"},
		{"%r, %s = index.assume %i, %j [range(%i, 0, 7), pow2(%j)] : index, index", "index.assume O=[i,j] T=[index, index] preds=[range[%i@1:62, 0, 7], pow2[%j@1:73]] %r:index %s:index"},
		{"%r = scalar.geluf<erf> %x {scale = 1.0} : f32", "scalar.geluf<erf> O=[x] T=[f32] scale=1 %r:f32"},
		{"%r = buffer.view %b[%o] : buffer -> view<[%i]xf32>", "buffer.view O=[b,o] T=[buffer] RT=[view<[%i]xf32>] %r:view<[%i]xf32>"},
		{"%r = buffer.alloca<workgroup> align(64) %o : buffer", "buffer.alloca<workgroup> O=[o] T=[buffer] align=64 %r:buffer"},
		{"%r = buffer.length %b : buffer -> offset", "buffer.length O=[b] T=[buffer] RT=[offset] %r:offset"},
		{"%r, %s = buffer.assume.noalias %b, %b : buffer, buffer", "buffer.assume.noalias O=[b,b] T=[buffer, buffer] %r:buffer %s:buffer"},
		{"%r = buffer.assume.alignment %b {minimum_alignment = 16} : buffer", "buffer.assume.alignment O=[b] T=[buffer] minimum_alignment=16 %r:buffer"},
		{"%r = view.subview %v[2, %i] : view<8x8xf32> -> view<4x4xf32>", "view.subview O=[v,2,i] T=[view<8x8xf32>] RT=[view<4x4xf32>] %r:view<4x4xf32>"},
		{"%r = view.refine %w : view<64xf32> -> view<64xf32, #dense>", "view.refine O=[w] T=[view<64xf32>] RT=[view<64xf32, #dense>] %r:view<64xf32, #dense>"},
		{"%r = view.load<volatile> %v[%i, %j] : view<8x8xf32> -> f32", "view.load<volatile> O=[v,i,j] T=[view<8x8xf32>] RT=[f32] %r:f32"},
		{"view.store %x, %v[%i, %j] : f32, view<8x8xf32>", "view.store O=[x,v,i,j] T=[f32, view<8x8xf32>]"},
		{"%r = view.atomic.rmw<addf> %x, %w[%i] {ordering = relaxed, scope = device} : f32, view<64xf32> -> f32", "view.atomic.rmw<addf> O=[x,w,i] T=[f32, view<64xf32>] RT=[f32] ordering=relaxed scope=device %r:f32"},
		{"view.atomic.reduce<addf> %x, %w[%i] {ordering = relaxed, scope = device} : f32, view<64xf32>", "view.atomic.reduce<addf> O=[x,w,i] T=[f32, view<64xf32>] ordering=relaxed scope=device"},
		{"%r = view.atomic.cmpxchg %x, %y, %w[%i] {success_ordering = acq_rel, failure_ordering = relaxed, scope = device} : f32, view<64xf32> -> f32", "view.atomic.cmpxchg O=[x,y,w,i] T=[f32, view<64xf32>] RT=[f32] success_ordering=acq_rel failure_ordering=relaxed scope=device %r:f32"},
		{"%r = vector.load %w[%i] : view<64xf32> -> vector<8xf32>", "vector.load O=[w,i] T=[view<64xf32>] RT=[vector<8xf32>] %r:vector<8xf32>"},
		{"vector.store %vec, %w[%i] : vector<8xf32>, view<64xf32>", "vector.store O=[vec,w,i] T=[vector<8xf32>, view<64xf32>]"},
		{"%r = vector.load.mask %w[%i], %m, %vec : view<64xf32>, vector<8xi1>, vector<8xf32>", "vector.load.mask O=[w,i,m,vec] T=[view<64xf32>, vector<8xi1>, vector<8xf32>] %r:vector<8xf32>"},
		{"vector.store.mask %vec, %w[%i], %m : vector<8xf32>, view<64xf32>, vector<8xi1>", "vector.store.mask O=[vec,w,i,m] T=[vector<8xf32>, view<64xf32>, vector<8xi1>]"},
		{"%r = vector.splat %x : vector<8xf32>", "vector.splat O=[x] T=[vector<8xf32>] %r:vector<8xf32>"},
		{"%r = vector.splat %x : f32 -> vector<8xf32>", "vector.splat O=[x] T=[f32] RT=[vector<8xf32>] %r:vector<8xf32>"},
		{"%r = vector.iota %i step %j : vector<8xindex>", "vector.iota O=[i,j] T=[vector<8xindex>] W=[step] %r:vector<8xindex>"},
		{"%r = vector.mask.range [%i to %j step %i] : index -> vector<8xi1>", "vector.mask.range O=[i,j,i] T=[index] RT=[vector<8xi1>] W=[to,step] %r:vector<8xi1>"},
		{"%r = vector.extract %vec[%i] : vector<8xf32> -> f32", "vector.extract O=[vec,i] T=[vector<8xf32>] RT=[f32] %r:f32"},
		{"%r = vector.insert %x into %vec[%i] : f32, vector<8xf32> -> vector<8xf32>", "vector.insert O=[x,vec,i] T=[f32, vector<8xf32>] RT=[vector<8xf32>] W=[into] %r:vector<8xf32>"},
		{"%r = vector.reduce<addf> %vec, %x : vector<8xf32>, f32", "vector.reduce<addf> O=[vec,x] T=[vector<8xf32>, f32] %r:f32"},
		{"%r = vector.dotf %vec, %vec, %x : vector<8xf32>, vector<8xf32>, f32", "vector.dotf O=[vec,vec,x] T=[vector<8xf32>, vector<8xf32>, f32] %r:f32"},
		{"%r = vector.mma %vec, %vec, %vec : vector<16xf16>, vector<16xf16>, vector<8xf32>", "vector.mma O=[vec,vec,vec] T=[vector<16xf16>, vector<16xf16>, vector<8xf32>] %r:vector<8xf32>"},
		{"%r = vector.fragment.load<lhs> %h[%i, 0] shape [%i, %j] : view<16x16xf16> -> vector<16xf16>", "vector.fragment.load<lhs> O=[h,i,0,i,j] T=[view<16x16xf16>] RT=[vector<16xf16>] W=[shape] %r:vector<16xf16>"},
		{"vector.fragment.store<result> %vec, %hf[0, %i] shape [%i, %j] : vector<8xf32>, view<16x16xf32>", "vector.fragment.store<result> O=[vec,hf,0,i,i,j] T=[vector<8xf32>, view<16x16xf32>] W=[shape]"},
		{"%r = vector.fragment<init> %vec shape [%i, %j] : vector<8xf32>", "vector.fragment<init> O=[vec,i,j] T=[vector<8xf32>] W=[shape] %r:vector<8xf32>"},
		{"%r = scf.select %c, %x, %y : f32", "scf.select O=[c,x,y] T=[f32] %r:f32"},
		{"%r = kernel.workitem.id<y> : index", "kernel.workitem.id<y> O=[] T=[index] %r:index"},
		{"%r = kernel.subgroup.lane.id : index", "kernel.subgroup.lane.id O=[] T=[index] %r:index"},
		{"kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}", "kernel.barrier<workgroup> O=[] ordering=acq_rel scope=workgroup"},
		{"kernel.barrier<global> scope(workgroup) ordering(release)", "kernel.barrier<global> O=[] scope=workgroup ordering=release"},
		{"kernel.assert %c \"bad \\\"x\\\"\" : i1", "kernel.assert O=[c] T=[i1] str=bad \"x\""},
		{"%r = kernel.subgroup.reduce<maxnumf> %x {cluster_size = 4, cluster_stride = 1} : f32", "kernel.subgroup.reduce<maxnumf> O=[x] T=[f32] cluster_size=4 cluster_stride=1 %r:f32"},
		{"%r, %ok = kernel.subgroup.shuffle<xor> %x, %n, %n : f32, i32, i32", "kernel.subgroup.shuffle<xor> O=[x,n,n] T=[f32, i32, i32] %r:f32 %ok:i1"},
		{"%r = kernel.subgroup.broadcast %x from %n : f32, i32", "kernel.subgroup.broadcast O=[x,n] T=[f32, i32] W=[from] %r:f32"},
		{"%r = kernel.workgroup.vote.count %c : i1 -> i32", "kernel.workgroup.vote.count O=[c] T=[i1] RT=[i32] %r:i32"},
		{"%r = func.call pure inline @g(%x, %b) : (f32, buffer) -> (f32)", "func.call @g O=[x,b] T=[f32, buffer] RT=[f32] W=[pure,inline] %r:f32"},
		{"%r = func.apply<my.key>(%x) pure : (f32) -> (f32)", "func.apply<my.key> O=[x] T=[f32] RT=[f32] W=[pure] %r:f32"},
		{"func.return %x, %i : f32, index", "func.return O=[x,i] T=[f32, index]"},
		{"%r = vendor.thing<k> %b, %x {a = [1, 2]} : buffer, f32 -> f32", "vendor.thing<k> O=[b,x] T=[buffer, f32] RT=[f32] a=[1, 2] %r:f32 opaque"},
	}
	for _, c := range cases {
		op := parseStmt(t, c.src)
		if got := summary(op); got != c.want {
			t.Errorf("%s\n got: %s\nwant: %s", c.src, got, c.want)
		}
	}
}

// TestManyAliases: a duplicate alias is found by name, not by a scan of
// the aliases before it (20000 aliases took seconds that way).
func TestManyAliases(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString("#a0 = #dense\n")
	for i := 1; i < n; i++ {
		b.WriteString("#a" + strconv.Itoa(i) + " = #a" + strconv.Itoa(i-1) + "\n")
	}
	m, err := ParseFile("a.loom", []byte(b.String()))
	if err != nil || len(m.Aliases) != n {
		t.Fatalf("%d aliases, %v", len(m.Aliases), err)
	}
	b.WriteString("#a7 = #dense\n")
	_, err = ParseFile("a.loom", []byte(b.String()))
	if want := "a.loom:20001:1: duplicate attribute alias #a7 (first defined at a.loom:8:1)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want %s", err, want)
	}
}
