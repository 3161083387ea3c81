package loom

import (
	"strings"
	"testing"
)

// TestLowerCFGErrors: control flow the structuring cannot or must not
// handle is an error at the position of the op or block at fault.
func TestLowerCFGErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		// Two entries into the cycle ^a ⇄ ^b.
		{`%c = scalar.constant 1 : i1
  cfg.cond_br %c, ^a, ^b
^a:
  cfg.br ^b
^b:
  cfg.cond_br %c, ^a, ^out
^out:
  kernel.return`, "10:3: cfg: irreducible control flow: the branch from ^b to ^a"},
		{`cfg.br ^spin
^spin:
  cfg.br ^spin`, "6:1: cfg: the loop at ^spin never exits"},
		{`cfg.br ^next(%x: f32)
^next:
  kernel.return`, "5:3: cfg: cfg.br passes 1 values to ^next, which takes 0"},
		{`cfg.br ^nowhere
^next:
  kernel.return`, "5:3: cfg: cfg.br: no block ^nowhere in this region"},
		{`%c = scalar.constant 1 : i1
  cfg.cond_br %c, ^a, ^a
^a(%v: f32):
  kernel.return`, "6:3: cfg: cfg.cond_br passes 0 values to ^a, which takes 1"},
		{`%y = scalar.addf %x, %x : f32
^a:
  kernel.return`, "6:1: cfg: the entry block does not end in a branch or a return"},
		{`cfg.br ^a
^a:
  %y = scalar.addf %x, %x : f32
^b:
  kernel.return`, "8:1: cfg: ^a does not end in a branch or a return"},
		{`cfg.br ^a
^a:
  cfg.switch %x
  kernel.return`, "7:3: cfg: cfg.switch is not a cfg op"},
		{`cfg.br ^a(%x: f32)
^a(%v: i32):
  kernel.return`, "5:3: cfg: cfg.br passes %x of type f32 to %v of ^a, of type i32"},
	} {
		src := "kernel.def export(\"k\") @k() {\n  %c1 = index.constant 1 : index\n  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n} launch(%x: f32) {\n  " + c.body + "\n}\n"
		m, err := ParseFile("c.loom", []byte(src))
		if err != nil {
			t.Fatalf("parse:\n%s\n%v", src, err)
		}
		_, err = Lower([]*Module{m}, LowerOptions{})
		if err == nil || !strings.Contains(err.Error(), "c.loom:"+c.want) {
			t.Errorf("got %v, want c.loom:%s\n%s", err, c.want, src)
		}
	}
}

// TestLowerCFGShapes: a function with two returns gets one return block
// (its invocations reconverge before returning), and a kernel's early
// exit stays a return inside scf.if followed by the remaining work in place.
func TestLowerCFGShapes(t *testing.T) {
	src := `func.def @pick(%c: i1, %a: i32, %b: i32) -> (i32) {
  cfg.cond_br %c, ^x, ^y
^x:
  func.return %a : i32
^y:
  func.return %b : i32
}
kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%c: i1) {
  cfg.cond_br %c, ^out, ^work
^out:
  kernel.return
^work:
  kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}
  kernel.return
}
`
	m, err := ParseFile("s.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Lower([]*Module{m}, LowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := out[0].Funcs[0].Body.Ops
	if last := f[len(f)-1]; last.Name != "func.return" || strings.Count(Dump(out[0]), "func.return") != 1 {
		t.Errorf("function not given one return block:\n%s", Dump(out[0]))
	}
	k := out[0].Kernels[0].Body.Ops
	var names []string
	for _, op := range k {
		names = append(names, op.Name)
	}
	if got := strings.Join(names, " "); got != "scalar.constant scf.if kernel.barrier kernel.return" {
		t.Errorf("kernel body %q, want the exit in scf.if and the barrier after it at the top level", got)
	}
	if r := k[1].Regions; len(r) != 2 || r[0].Ops[0].Name != "kernel.return" {
		t.Errorf("early exit not a return inside the if:\n%s", Dump(out[0]))
	}
}
