package loom

import (
	"strings"
	"testing"
)

func TestExtents(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		launch []Const
		config map[string]Const
		want   map[string]int64  // bytes for the given launch values
		reason map[string]string // unknown extents: substring of Reason
	}{
		{
			name: "static dims and nonzero byte offsets take the max",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%b: buffer, %idle: buffer) {
  %z = index.constant 0 : offset
  %o = index.constant 256 : offset
  %c0 = index.constant 0 : index
  %a = buffer.view %b[%z] : buffer -> view<4x8xf32>
  %c = buffer.view %b[%o] : buffer -> view<16xf16>
  %x = view.load %a[%c0, %c0] : view<4x8xf32> -> f32
  %y = view.load %c[%c0] : view<16xf16> -> f16
  kernel.return
}`,
			want: map[string]int64{"b": 288, "idle": 0},
		},
		{
			name: "dynamic dims over launch args and config, offset arithmetic",
			src: `
config.decl @k.rows : index
kernel.def export("k") @k() ` + cfg1 + ` launch(%n: index, %base: offset, %b: buffer) {
  %rows = config.get @k.rows : index
  %c4 = index.constant 4 : offset
  %o = index.add %base, %c4 : offset
  %v = buffer.view %b[%o] : buffer -> view<[%rows]x[%n]xi32>
  %c0 = index.constant 0 : index
  %x = view.load %v[%c0, %c0] : view<[%rows]x[%n]xi32> -> i32
  kernel.return
}`,
			launch: []Const{idx(10), {Type: typeOffset, Int: 12}},
			config: map[string]Const{"k.rows": idx(3)},
			want:   map[string]int64{"b": 12 + 4 + 3*10*4},
		},
		{
			name: "subviews add nothing; view params span their type",
			src: `
kernel.def export("k") @k() ` + cfg1 + ` launch(%n: index, %b: buffer, %w: view<[%n]xf64>) {
  %z = index.constant 0 : offset
  %c2 = index.constant 2 : index
  %v = buffer.view %b[%z] : buffer -> view<32xi8>
  %s = view.subview %v[%c2] : view<32xi8> -> view<8xi8>
  %x = view.load %s[%c2] : view<8xi8> -> i8
  kernel.return
}`,
			launch: []Const{idx(5)},
			want:   map[string]int64{"b": 32, "w": 40},
		},
		{
			name: "views built inside a helper, via select",
			src: `
func.def @touch(%buf: buffer, %len: index, %at: offset) {
  %v = buffer.view %buf[%at] : buffer -> view<[%len]xf32>
  %c0 = index.constant 0 : index
  %x = view.load %v[%c0] : view<[%len]xf32> -> f32
  func.return
}
kernel.def export("k") @k() ` + cfg1 + ` launch(%n: index, %f: i1, %a: buffer, %b: buffer) {
  %s = scf.select %f, %a, %b : buffer
  %o = index.constant 8 : offset
  func.call @touch(%s, %n, %o) : (buffer, index, offset)
  kernel.return
}`,
			launch: []Const{idx(6)},
			want:   map[string]int64{"a": 8 + 24, "b": 8 + 24},
		},
		{
			name: "unknown: dims from the body, opaque use",
			src: `
func.decl @ext(%b: buffer)
kernel.def export("k") @k() ` + cfg1 + ` launch(%src: buffer, %b: buffer, %c: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %lenv = buffer.view %src[%z] : buffer -> view<1xindex>
  %len = view.load %lenv[%c0] : view<1xindex> -> index
  %v = buffer.view %b[%z] : buffer -> view<[%len]xf32>
  %x = view.load %v[%c0] : view<[%len]xf32> -> f32
  func.call @ext(%c) : (buffer)
  kernel.return
}`,
			want:   map[string]int64{"src": 4},
			reason: map[string]string{"b": "dimension %len", "c": "opaque"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := parseProgram(t, tc.src)
			k := mustKernel(t, p, "k")
			env := &Env{Launch: tc.launch, Config: tc.config}
			seen := map[string]bool{}
			for _, e := range p.Extents(k) {
				name := e.Param.Name
				seen[name] = true
				if r, ok := tc.reason[name]; ok {
					if e.Bytes != nil || !strings.Contains(e.Reason, r) {
						t.Errorf("%%%s: bytes %v reason %q; want unknown with %q", name, e.Bytes, e.Reason, r)
					}
					continue
				}
				w, ok := tc.want[name]
				if !ok {
					continue
				}
				if e.Bytes == nil {
					t.Errorf("%%%s: unknown (%s), want %d", name, e.Reason, w)
					continue
				}
				got, err := e.Bytes.Eval(env)
				if err != nil {
					t.Errorf("%%%s: eval %s: %v", name, e.Bytes, err)
					continue
				}
				if got.Int != w {
					t.Errorf("%%%s: %s = %d, want %d", name, e.Bytes, got.Int, w)
				}
			}
			for name := range tc.want {
				if !seen[name] {
					t.Errorf("no extent for %%%s", name)
				}
			}
		})
	}
}
