package loom

import (
	"math"
	"testing"
)

func TestArgChecks(t *testing.T) {
	p := parseProgram(t, `
config.decl @demo.rows : %value: index where [range(%value, 1, 4096), mul(%value, 16)]
kernel.def export("k") @k(%n: index) where [range(%n, 1, 65536)] {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %m: index, %s: f32, %b: buffer) where [mul(%n, 4), pow2(%m), lt(%m, %n), ne(%m, 2), finite(%s)] {
  kernel.return
}`)
	k := mustKernel(t, p, "k")
	checks := p.ArgChecks(k)
	var texts []string
	for _, c := range checks {
		texts = append(texts, c.Text)
	}
	want := []string{"range(%n, 1, 65536)", "mul(%n, 4)", "pow2(%m)", "lt(%m, %n)", "ne(%m, 2)", "finite(%s)"}
	if len(texts) != len(want) {
		t.Fatalf("checks = %q, want %q", texts, want)
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Errorf("check %d = %q, want %q", i, texts[i], want[i])
		}
		if !checks[i].Pos.IsValid() {
			t.Errorf("check %q has no position", texts[i])
		}
	}
	f32 := scalarTypeNamed("f32")
	cases := []struct {
		n, m int64
		s    float64
		ok   []bool
	}{
		{64, 8, 1.5, []bool{true, true, true, true, true, true}},
		{0, 6, math.Inf(1), []bool{false, true, false, false, true, false}},
		{70000, 2, math.NaN(), []bool{false, true, true, true, false, false}},
		{64, 3, 0, []bool{true, true, false, true, true, true}},
	}
	for _, c := range cases {
		env := &Env{Workload: []Const{idx(c.n)}, Launch: []Const{idx(c.n), idx(c.m), {Type: f32, Float: c.s}}}
		for i, ch := range checks {
			got, err := ch.Eval(env)
			if err != nil {
				t.Fatalf("%s: %v", ch.Text, err)
			}
			if got != c.ok[i] {
				t.Errorf("n=%d m=%d s=%v: %s = %v, want %v", c.n, c.m, c.s, ch.Text, got, c.ok[i])
			}
		}
	}
	cc := ConfigChecks(p.ConfigDecl("demo.rows"))
	if len(cc) != 2 {
		t.Fatalf("config checks = %+v", cc)
	}
	for _, v := range []struct {
		v  int64
		ok bool
	}{{32, true}, {4096, true}, {8, false}, {4112, false}} {
		env := &Env{Config: map[string]Const{"demo.rows": idx(v.v)}}
		a, _ := cc[0].Eval(env)
		b, _ := cc[1].Eval(env)
		if a && b != v.ok {
			t.Errorf("rows=%d: range %v mul %v, want %v", v.v, a, b, v.ok)
		}
	}
}

func TestArgChecksFromAssume(t *testing.T) {
	src := `
kernel.def export("k") @k() ` + cfg1 + ` launch(%n: index, %b: buffer) {
  %na = index.assume %n [range(%n, 1, 4096)] : index
  %i = kernel.workitem.id<x> : index
  %ia = index.assume %i [lt(%i, 64)] : index
  kernel.return
}`
	m, err := ParseFile("a.loom", []byte(src))
	if err != nil {
		t.Skipf("parser does not accept index.assume with predicates yet: %v", err)
	}
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	checks := p.ArgChecks(mustKernel(t, p, "k"))
	// The assume on a device query cannot be checked by the host.
	if len(checks) != 1 || checks[0].Text != "range(%n, 1, 4096)" {
		t.Fatalf("checks = %+v", checks)
	}
	ok, err := checks[0].Eval(&Env{Launch: []Const{idx(5000)}})
	if err != nil || ok {
		t.Errorf("range with n=5000 = %v, %v; want false", ok, err)
	}
}

// TestLaunchArityForms accepts each spelling of kernel.launch whose value
// counts match the kernel: bracketed workload, empty brackets, and the
// older bracketless form for a kernel without workload.
func TestLaunchArityForms(t *testing.T) {
	src := `
kernel.def @none() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%out: buffer) {
  kernel.return
}
kernel.decl @two(%n: index, %m: index) launch(%m: index, %out: buffer)
command.program.def @prog(%n: index, %out: buffer) {
  kernel.launch @none[](%out) : [](buffer)
  kernel.launch @none(%out) : (buffer)
  kernel.launch @two[%n, %n](%n, %out) : [index, index](index, buffer)
  command.return
}
`
	m, err := ParseFile("forms.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var launches []*Op
	for _, op := range m.Ops {
		for _, r := range op.Regions {
			for _, in := range r.Ops {
				if in.Name == "kernel.launch" {
					launches = append(launches, in)
				}
			}
		}
	}
	want := []int{0, -1, 2}
	if len(launches) != len(want) {
		t.Fatalf("%d launches, want %d", len(launches), len(want))
	}
	for i, op := range launches {
		if op.LaunchWorkload != want[i] {
			t.Errorf("launch %d: LaunchWorkload = %d, want %d", i, op.LaunchWorkload, want[i])
		}
	}
}
