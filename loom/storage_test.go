package loom

import (
	"os"
	"strings"
	"testing"
)

func TestWorkgroupStorageUses(t *testing.T) {
	src, err := os.ReadFile("testdata/storage/views.loom")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseFile("views.loom", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := p.Kernel("views")
	uses := p.WorkgroupStorageUses(k)
	if len(uses) != 2 {
		t.Fatalf("%d uses, want 2", len(uses))
	}
	u := uses[0]
	if u.Whole || u.Bytes == nil || u.Views == nil {
		t.Fatalf("first use: whole %v bytes %v views %v (%s)", u.Whole, u.Bytes, u.Views, u.ViewsReason)
	}
	env := &Env{Target: TargetGPU, Launch: []Const{{Type: typeOffset, Int: 100}, {Type: typeIndex, Int: 5}, {Type: typeOffset, Int: 12}}}
	if c, err := u.Bytes.Eval(env); err != nil || c.Int != 100 {
		t.Errorf("bytes = %v, %v; want 100", c, err)
	}
	// max(5·4, 12 + 2·5·4) = 52
	if c, err := u.Views.Eval(env); err != nil || c.Int != 52 {
		t.Errorf("views span %v, %v; want 52", c, err)
	}
	v := uses[1]
	if !v.Whole || v.Views != nil || !strings.Contains(v.ViewsReason, "func.call") {
		t.Errorf("second use: whole %v, views %v, reason %q; want the whole storage, views unknown through the call", v.Whole, v.Views, v.ViewsReason)
	}
	if l, err := p.LaunchExprs(k); err != nil || l.DynamicWorkgroupStorage == nil {
		t.Fatalf("launch exprs %v, %v", l, err)
	}
	if n, err := p.LaunchStorage(k, &Env{Workload: []Const{{Type: typeOffset, Int: 4096}}}); err != nil || n != 4096 {
		t.Errorf("LaunchStorage = %d, %v; want 4096", n, err)
	}
}

// The clauses of kernel.launch.config are assigned by keyword, in any
// order; a repeated or short clause is an error at its keyword.
func TestSplitLaunchConfig(t *testing.T) {
	cfg := func(clauses string) string {
		return "kernel.def @k(%s: offset) {\n  %a = index.constant 1 : index\n  %b = index.constant 2 : index\n  kernel.launch.config " + clauses + " : index\n} launch() {\n  kernel.return\n}\n"
	}
	cases := []struct{ clauses, err string }{
		{"workgroups(%a, %a, %a) workgroup_size(%b, %a, %a)", ""},
		{"workgroups(%a, %a, %a) workgroup_size(%b, %a, %a) cluster_size(%a, %a, %a) dynamic_workgroup_storage(%s)", ""},
		{"dynamic_workgroup_storage(%s) workgroup_size(%b, %a, %a) workgroups(%a, %a, %a)", ""},
		{"workgroups(%a, %a) workgroup_size(%b, %a, %a, %a)", "k.loom:4:24: workgroups takes 3 values, found 2"},
		{"workgroups(%a, %a, %a) workgroup_size(%b, %a, %a) dynamic_workgroup_storage(%s, %s)", "dynamic_workgroup_storage takes 1 values, found 2"},
		{"workgroups(%a, %a, %a) workgroup_size(%b, %a, %a) dynamic_workgroup_storage(%a) dynamic_workgroup_storage(%s)", "two dynamic_workgroup_storage clauses"},
		{"workgroups(%a, %a, %a) workgroup_size(%b, %a, %a) dynamic_workgroup_storage(%b)", ""},
		{"workgroups(%a, %a, %a) workgroup_size(%b, %a, %a) dynamic_workgroup_storage(%t)", "use of undefined value %t"},
	}
	for _, c := range cases {
		m, err := ParseFile("k.loom", []byte(cfg(c.clauses)))
		if c.err == "" {
			if err != nil {
				t.Errorf("%s: %v", c.clauses, err)
				continue
			}
			p, _ := NewProgram(m)
			l, err := p.LaunchExprs(m.Kernels[0])
			if err != nil || !l.WorkgroupSize[0].IsConst() || l.WorkgroupSize[0].Const.Int != 2 {
				t.Errorf("%s: launch exprs %v, %v", c.clauses, l, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want %q", c.clauses, err, c.err)
		}
	}
}
