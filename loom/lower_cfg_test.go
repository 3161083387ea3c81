package loom

import (
	"fmt"
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

// cfgLoopsKernel is a kernel whose launch body is blocks, written after
// a branch to ^h0.
func cfgLoopsKernel(blocks string) string {
	return "kernel.def export(\"k\") @k() {\n  %c1 = index.constant 1 : index\n  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index\n} launch(%c: i1, %v: i32, %out: buffer) {\n  %z = index.constant 0 : offset\n  %ov = buffer.view %out[%z] : buffer -> view<4xi32>\n  %i = index.constant 0 : index\n  cfg.br ^h0\n" + blocks + "^out:\n  kernel.return\n}\n"
}

// TestLowerCFGManyLoops: structuring a region costs about linear time in
// its blocks. 2000 loops one after another, each with a value read after
// it, took seconds when every loop rescanned the whole region (its
// live-outs, forwarded values, post-dominators, innermost-loop sizes);
// now tens of milliseconds.
func TestLowerCFGManyLoops(t *testing.T) {
	const n = 2000
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			fmt.Fprintf(&b, "^h%d:\n  view.store %%a%d, %%ov[%%i] : i32, view<4xi32>\n", i, i-1)
		} else {
			b.WriteString("^h0:\n")
		}
		fmt.Fprintf(&b, "  %%a%d = scalar.addi %%v, %%v : i32\n  cfg.cond_br %%c, ^h%d, ^h%d\n", i, i, i+1)
	}
	fmt.Fprintf(&b, "^h%d:\n  view.store %%a%d, %%ov[%%i] : i32, view<4xi32>\n  cfg.br ^out\n", n, n-1)
	m, err := ParseFile("l.loom", []byte(cfgLoopsKernel(b.String())))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Lower([]*Module{m}, LowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whiles := 0
	for _, op := range out[0].Kernels[0].Body.Ops {
		if op.Name == "scf.while" {
			whiles++
			if len(op.Results) == 0 {
				t.Fatalf("loop %d does not carry out the value read after it", whiles)
			}
		}
	}
	if whiles != n {
		t.Errorf("%d scf.while at the top level, want %d", whiles, n)
	}
}

// TestLowerCFGDeepLoops: loops nested deeper than the parser's region
// limit are a positioned error, found without walking every loop's body
// (1000 nested loops took seconds to refuse that way).
func TestLowerCFGDeepLoops(t *testing.T) {
	const n = 1000
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "^h%d:\n  cfg.cond_br %%c, ^h%d, ^x%d\n", i, i+1, i)
	}
	fmt.Fprintf(&b, "^h%d:\n  cfg.br ^x%d\n", n, n-1)
	for i := n - 1; i > 0; i-- {
		fmt.Fprintf(&b, "^x%d:\n  cfg.cond_br %%c, ^h%d, ^x%d\n", i, i, i-1)
	}
	b.WriteString("^x0:\n  cfg.cond_br %c, ^h0, ^out\n")
	m, err := ParseFile("d.loom", []byte(cfgLoopsKernel(b.String())))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lower([]*Module{m}, LowerOptions{})
	if err == nil || !strings.Contains(err.Error(), "cfg: loops nested deeper than 200 levels in this region") || !strings.HasPrefix(err.Error(), "d.loom:") {
		t.Fatalf("got %v, want a positioned nesting error", err)
	}
}
