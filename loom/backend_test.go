package loom

import (
	"slices"
	"testing"
)

const twoKernels = `func.def @twice(%x: f32) -> (f32) {
  %y = scalar.addf %x, %x : f32
  func.return %y : f32
}

kernel.def export("first") @first() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch() {
  kernel.return
}

kernel.def export("second") @second() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch() {
  kernel.return
}
`

// TestOnlyKernel: the other kernels leave Kernels and Ops, everything else
// stays, the input is not changed, and a module with no other kernel is
// passed through as it is.
func TestOnlyKernel(t *testing.T) {
	m := mustParse(t, twoKernels)
	fn := &Module{File: "fn.loom", Funcs: m.Funcs, Ops: m.Ops[:1]}
	mods := []*Module{m, nil, fn}
	ops, kernels := slices.Clone(m.Ops), slices.Clone(m.Kernels)
	got := OnlyKernel(mods, "second")
	if len(got) != 3 || got[1] != nil || got[2] != fn {
		t.Fatalf("got %v, want [filtered, nil, the function module as it is]", got)
	}
	g := got[0]
	if len(g.Kernels) != 1 || g.Kernels[0].Export != "second" {
		t.Fatalf("kernels %v, want only second", g.Kernels)
	}
	if len(g.Ops) != 2 || g.Ops[0] != m.Ops[0] || g.Ops[1] != m.Kernels[1].Op {
		t.Fatalf("ops %v, want the function and second", g.Ops)
	}
	if len(g.Funcs) != 1 || g.Funcs[0] != m.Funcs[0] {
		t.Fatalf("funcs %v, want @twice", g.Funcs)
	}
	if !slices.Equal(m.Ops, ops) || !slices.Equal(m.Kernels, kernels) {
		t.Fatal("the input module changed")
	}
	if none := OnlyKernel(mods, "absent"); len(none[0].Kernels) != 0 || len(none[0].Ops) != 1 {
		t.Fatalf("an export no kernel has: kernels %v, ops %v, want none and the function", none[0].Kernels, none[0].Ops)
	}
}

// TestCallChain: short chains in full, long ones with the middle elided.
func TestCallChain(t *testing.T) {
	for _, c := range []struct {
		calls []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "; inlining @a here"},
		{[]string{"a", "b", "c", "d", "e", "f"}, "; inlining @a → @b → @c → @d → @e → @f here"},
		{[]string{"a", "b", "c", "d", "e", "f", "g"}, "; inlining @a → @b → @c → … → @e → @f → @g here"},
		{[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, "; inlining @a → @b → @c → … → @g → @h → @i here"},
	} {
		if got := CallChain(c.calls); got != c.want {
			t.Errorf("CallChain(%q) = %q, want %q", c.calls, got, c.want)
		}
	}
}
