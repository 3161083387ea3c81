package loom

import (
	"strings"
	"testing"
)

// cfg1 is a trivial launch-config region shared by the access tests.
const cfg1 = `{
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
}`

func TestAccessHardCases(t *testing.T) {
	type want struct {
		access string
		basis  Basis
		elem   string // "" for nil
	}
	tests := []struct {
		name  string
		src   string
		want  map[string]want
		evops map[string][]string // param → evidence op names in order
	}{
		{
			name: "one buffer aliased into an input and an output view",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%n: index, %buf: buffer, %other: buffer) {
  %z = index.constant 0 : offset
  %half = index.constant 64 : offset
  %in = buffer.view %buf[%z] : buffer -> view<16xf32>
  %out = buffer.view %buf[%half] : buffer -> view<16xf32>
  %i = kernel.workitem.id<x> : index
  %x = view.load %in[%i] : view<16xf32> -> f32
  view.store %x, %out[%i] : f32, view<16xf32>
  kernel.return
}`,
			want:  map[string]want{"buf": {"read_write", BasisExact, "f32"}, "other": {"none", BasisExact, ""}},
			evops: map[string][]string{"buf": {"view.load", "view.store"}},
		},
		{
			name: "same_root assume joins two parameters",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%a: buffer, %b: buffer) {
  %z = index.constant 0 : offset
  %r = buffer.assume.same_root %a, %b : buffer, buffer
  %v = buffer.view %r[%z] : buffer -> view<4xi32>
  %i = kernel.workitem.id<x> : index
  %c = scalar.constant 7 : i32
  view.store %c, %v[%i] : i32, view<4xi32>
  kernel.return
}`,
			want: map[string]want{"a": {"write", BasisExact, "i32"}, "b": {"write", BasisExact, "i32"}},
		},
		{
			name: "select between two buffer params",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%flag: i1, %a: buffer, %b: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %src = scf.select %flag, %a, %b : buffer
  %in = buffer.view %src[%z] : buffer -> view<8xf16>
  %o = buffer.view %out[%z] : buffer -> view<8xf16>
  %i = kernel.workitem.id<x> : index
  %x = view.load %in[%i] : view<8xf16> -> f16
  view.store %x, %o[%i] : f16, view<8xf16>
  kernel.return
}`,
			want: map[string]want{"a": {"read", BasisExact, "f16"}, "b": {"read", BasisExact, "f16"}, "out": {"write", BasisExact, "f16"}},
		},
		{
			name: "views rotated through scf.for iter args",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%ping: buffer, %pong: buffer, %steps: index) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %p = buffer.view %ping[%z] : buffer -> view<32xf32>
  %q = buffer.view %pong[%z] : buffer -> view<32xf32>
  %i = kernel.workitem.id<x> : index
  %r0, %r1 = scf.for %s = [%c0 to %steps step %c1] (%cur = %p : view<32xf32>, %next = %q : view<32xf32>) -> (view<32xf32>, view<32xf32>) {
    %x = view.load %cur[%i] : view<32xf32> -> f32
    view.store %x, %next[%i] : f32, view<32xf32>
    scf.yield %next, %cur : view<32xf32>, view<32xf32>
  }
  kernel.return
}`,
			want: map[string]want{"ping": {"read_write", BasisExact, "f32"}, "pong": {"read_write", BasisExact, "f32"}},
		},
		{
			name: "never-true branch store still counts",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%out: buffer) {
  %z = index.constant 0 : offset
  %f = scalar.constant false : i1
  %o = buffer.view %out[%z] : buffer -> view<1xi8>
  %c0 = index.constant 0 : index
  scf.if %f {
    %v = scalar.constant 1 : i8
    view.store %v, %o[%c0] : i8, view<1xi8>
  }
  kernel.return
}`,
			want: map[string]want{"out": {"write", BasisExact, "i8"}},
		},
		{
			name: "opaque call to a bodyless declaration",
			src: `
func.decl @mystery(%b: buffer)
kernel.def export("k") @k() ` + cfg1 + ` launch(%b: buffer, %c: buffer) {
  func.call @mystery(%b) : (buffer)
  kernel.return
}`,
			want: map[string]want{"b": {"read_write", BasisConservative, ""}, "c": {"none", BasisExact, ""}},
		},
		{
			name: "unknown op touching a buffer",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%b: buffer, %c: buffer) {
  %z = index.constant 0 : offset
  %v = buffer.view %c[%z] : buffer -> view<4xf32>
  %i = kernel.workitem.id<x> : index
  %x = view.load %v[%i] : view<4xf32> -> f32
  vendor.magic.poke %b, %x : buffer, f32
  kernel.return
}`,
			want: map[string]want{"b": {"read_write", BasisConservative, ""}, "c": {"read", BasisExact, "f32"}},
		},
		{
			name: "inline helper reads one buffer and writes another",
			src: `
func.def inline @copy_one(%in: buffer, %out: buffer, %k: index) {
  %z = index.constant 0 : offset
  %a = buffer.view %in[%z] : buffer -> view<64xbf16>
  %b = buffer.view %out[%z] : buffer -> view<64xbf16>
  %x = view.load %a[%k] : view<64xbf16> -> bf16
  view.store %x, %b[%k] : bf16, view<64xbf16>
  func.return
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%src: buffer, %dst: buffer) {
  %i = kernel.workitem.id<x> : index
  func.call @copy_one(%src, %dst, %i) : (buffer, buffer, index)
  kernel.return
}`,
			want:  map[string]want{"src": {"read", BasisCall, "bf16"}, "dst": {"write", BasisCall, "bf16"}},
			evops: map[string][]string{"src": {"func.call @copy_one"}},
		},
		{
			name: "helper returning a view",
			src: `
func.def @as_view(%b: buffer) -> (view<8xf32>) {
  %z = index.constant 0 : offset
  %v = buffer.view %b[%z] : buffer -> view<8xf32>
  func.return %v : view<8xf32>
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%b: buffer) {
  %v = func.call @as_view(%b) : (buffer) -> (view<8xf32>)
  %i = kernel.workitem.id<x> : index
  %x = scalar.constant 1.0 : f32
  view.store %x, %v[%i] : f32, view<8xf32>
  kernel.return
}`,
			want: map[string]want{"b": {"write", BasisExact, "f32"}},
		},
		{
			name: "recursive helper converges",
			src: `
func.def @walk(%a: buffer, %b: buffer, %d: index) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %more = index.cmp sgt, %d, %c0 : index
  scf.if %more {
    %d1 = index.sub %d, %c1 : index
    func.call @walk(%b, %a, %d1) : (buffer, buffer, index)
  } else {
    %v = buffer.view %a[%z] : buffer -> view<4xf32>
    %x = view.load %v[%c0] : view<4xf32> -> f32
  }
  func.return
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%p: buffer, %q: buffer, %n: index) {
  func.call @walk(%p, %q, %n) : (buffer, buffer, index)
  kernel.return
}`,
			want: map[string]want{"p": {"read", BasisCall, "f32"}, "q": {"read", BasisCall, "f32"}},
		},
		{
			name: "mutual recursion",
			src: `
func.def @even(%a: buffer, %b: buffer, %d: index) {
  %c1 = index.constant 1 : index
  %d1 = index.sub %d, %c1 : index
  func.call @odd(%b, %a, %d1) : (buffer, buffer, index)
  func.return
}
func.def @odd(%a: buffer, %b: buffer, %d: index) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = buffer.view %a[%z] : buffer -> view<4xi32>
  %x = scalar.constant 3 : i32
  view.store %x, %v[%c0] : i32, view<4xi32>
  func.call @even(%a, %b, %d) : (buffer, buffer, index)
  func.return
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%p: buffer, %q: buffer, %n: index) {
  func.call @even(%p, %q, %n) : (buffer, buffer, index)
  kernel.return
}`,
			want: map[string]want{"p": {"write", BasisCall, "i32"}, "q": {"write", BasisCall, "i32"}},
		},
		{
			name: "template providers differing in access (template.def spelling)",
			src: `
template.decl @fam(%x: buffer, %i: index)
template.def<@fam> priority(1) @reader(%x: buffer, %i: index) {
  %z = index.constant 0 : offset
  %v = buffer.view %x[%z] : buffer -> view<8xf32>
  %y = view.load %v[%i] : view<8xf32> -> f32
  template.return
}
template.def<@fam> priority(2) @writer(%x: buffer, %i: index) {
  %z = index.constant 0 : offset
  %v = buffer.view %x[%z] : buffer -> view<8xf32>
  %c = scalar.constant 0.0 : f32
  view.store %c, %v[%i] : f32, view<8xf32>
  template.return
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%b: buffer) {
  %i = kernel.workitem.id<x> : index
  template.apply<@fam>(%b, %i) : (buffer, index) -> ()
  kernel.return
}`,
			want: map[string]want{"b": {"read_write", BasisCall, "f32"}},
		},
		{
			name: "func.template spelling and unresolved apply",
			src: `
func.template<my.key> @only_reads(%x: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = buffer.view %x[%z] : buffer -> view<2xf64>
  %y = view.load %v[%c0] : view<2xf64> -> f64
  func.return
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%b: buffer, %c: buffer) {
  func.apply<my.key>(%b) : (buffer) -> ()
  func.apply<other.key>(%c) : (buffer) -> ()
  kernel.return
}`,
			want: map[string]want{"b": {"read", BasisCall, "f64"}, "c": {"read_write", BasisConservative, ""}},
		},
		{
			name: "async copy: source read, destination written",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%g: buffer, %out: buffer) {
  %z = index.constant 0 : offset
  %n = index.constant 64 : offset
  %src = buffer.view %g[%z] : buffer -> view<16xi8>
  %dst = buffer.view %out[%z] : buffer -> view<16xi8>
  %t = kernel.async.copy %src to %dst {mode = global_to_global} : view<16xi8> to view<16xi8> -> kernel.async.token
  kernel.return
}`,
			want: map[string]want{"g": {"read", BasisExact, "i8"}, "out": {"write", BasisExact, "i8"}},
		},
		{
			name: "atomics, vectors, subviews, refine, while",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%hist: buffer, %vin: buffer, %vout: buffer, %w: buffer, %n: index) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c4 = index.constant 4 : index
  %h = buffer.view %hist[%z] : buffer -> view<256xi32>
  %one = scalar.constant 1 : i32
  %old = view.atomic.rmw<addi> %one, %h[%c0] {ordering = relaxed, scope = device} : i32, view<256xi32> -> i32
  %a = buffer.view %vin[%z] : buffer -> view<[%n]xf32>
  %sub = view.subview %a[%c4] : view<[%n]xf32> -> view<8xf32>
  %r = view.refine %sub : view<8xf32> -> view<8xf32>
  %vec = vector.load %r[%c0] : view<8xf32> -> vector<8xf32>
  %b = buffer.view %vout[%z] : buffer -> view<8xf32>
  vector.store %vec, %b[%c0] : vector<8xf32>, view<8xf32>
  %wv = buffer.view %w[%z] : buffer -> view<4xi32>
  %res = scf.while(%cur = %wv : view<4xi32>) -> (view<4xi32>) {
    %x = view.load %cur[%c0] : view<4xi32> -> i32
    %k = scalar.cmpi eq, %x, %one : i32
    scf.condition %k, %cur : i1, view<4xi32>
  } do(%d: view<4xi32>) {
    view.store %one, %d[%c0] : i32, view<4xi32>
    scf.yield %d : view<4xi32>
  }
  kernel.return
}`,
			want: map[string]want{
				"hist": {"read_write", BasisExact, "i32"}, "vin": {"read", BasisExact, "f32"},
				"vout": {"write", BasisExact, "f32"}, "w": {"read_write", BasisExact, "i32"},
			},
		},
		{
			name: "mixed element types give no Elem; low.invoke is opaque",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%raw: buffer, %l: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %a = buffer.view %raw[%z] : buffer -> view<4xf32>
  %b = buffer.view %raw[%z] : buffer -> view<4xi32>
  %x = view.load %a[%c0] : view<4xf32> -> f32
  %y = view.load %b[%c0] : view<4xi32> -> i32
  low.invoke @native(%l) : (buffer)
  kernel.return
}
low.func.decl @native(%p: buffer)`,
			want: map[string]want{"raw": {"read", BasisExact, ""}, "l": {"read_write", BasisConservative, ""}},
		},
		{
			name: "view parameter and switch/lookup results",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%sel: index, %a: view<8xf32>, %b: view<8xf32>, %c: view<8xf32>) {
  %c0 = index.constant 0 : index
  %s = scf.switch %sel -> (view<8xf32>) {
  case 0 {
    scf.yield %a : view<8xf32>
  }
  default {
    scf.yield %b : view<8xf32>
  }
  }
  %x = view.load %s[%c0] : view<8xf32> -> f32
  %l = scf.lookup %sel { 0 = (%c) } default(%c) : view<8xf32>
  view.store %x, %l[%c0] : f32, view<8xf32>
  kernel.return
}`,
			want: map[string]want{"a": {"read", BasisExact, "f32"}, "b": {"read", BasisExact, "f32"}, "c": {"write", BasisExact, "f32"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseProgram(t, tc.src)
			k := mustKernel(t, p, "k")
			got := map[string]ParamAccess{}
			for _, a := range p.Access(k) {
				got[a.Param.Name] = a
			}
			for name, w := range tc.want {
				a, ok := got[name]
				if !ok {
					t.Fatalf("no access result for %%%s", name)
				}
				elem := ""
				if a.Elem != nil {
					elem = a.Elem.String()
				}
				if a.Access.String() != w.access || a.Basis != w.basis || elem != w.elem {
					t.Errorf("%%%s: got %s/%s elem %q, want %s/%s elem %q; evidence %+v",
						name, a.Access, a.Basis, elem, w.access, w.basis, w.elem, a.Evidence)
				}
				if a.Access != AccessNone && len(a.Evidence) == 0 {
					t.Errorf("%%%s: %s without evidence", name, a.Access)
				}
				for _, e := range a.Evidence {
					if !e.Pos.IsValid() || e.Op == "" {
						t.Errorf("%%%s: evidence without position or op: %+v", name, e)
					}
					if e.Basis == BasisConservative && e.Reason == "" {
						t.Errorf("%%%s: conservative evidence without reason", name)
					}
				}
			}
			for name, ops := range tc.evops {
				var gotOps []string
				for _, e := range got[name].Evidence {
					gotOps = append(gotOps, e.Op)
				}
				if strings.Join(gotOps, ",") != strings.Join(ops, ",") {
					t.Errorf("%%%s evidence ops = %v, want %v", name, gotOps, ops)
				}
			}
		})
	}
}
