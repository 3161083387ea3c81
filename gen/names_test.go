package gen

import "testing"

func TestExportedName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"scale_f32", "ScaleF32"},
		{"scale.f32", "ScaleF32"},
		{"scaleF32", "ScaleF32"},
		{"demo.rows", "DemoRows"},
		{"layer_id", "LayerID"},
		{"2d_copy", "K2dCopy"},
		{"", "K"},
		{"__", "K"},
		{"matmul-bias", "MatmulBias"},
	} {
		if got := exportedName(c.in); got != c.want {
			t.Errorf("exportedName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParamName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"n", "n"},
		{"element_count", "elementCount"},
		{"N", "n"},
		{"0", "v0"},
		{"type", "type_"},
		{"range", "range_"},
		{"len", "len_"},
		{"k", "k_"},
		{"fmt", "fmt_"},
		{"need", "need_"},
		{"groups_x", "groupsX_"},
		{"row_id", "rowID"},
	} {
		if got := paramName(c.in); got != c.want {
			t.Errorf("paramName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUniqueNamer(t *testing.T) {
	u := newUniqueNamer("Config")
	got := []string{u.name("Config"), u.name("Scale"), u.name("Scale"), u.name("ScaleF32"), u.name("ScaleF32"), u.name("Scale")}
	want := []string{"Config2", "Scale", "Scale2", "ScaleF32", "ScaleF32_2", "Scale3"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("names %v, want %v", got, want)
		}
	}
}
