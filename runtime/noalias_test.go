package runtime

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// noaliasKernel adds a and b into o, all three under
// buffer.assume.noalias (C's restrict).
var noaliasKernel = []byte(`kernel.def export("add_restrict") @add_restrict(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %a: buffer, %b: buffer, %o: buffer) {
  %i = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %an, %bn, %on = buffer.assume.noalias %a, %b, %o : buffer, buffer, buffer
  %av = buffer.view %an[%z] : buffer -> view<[%n]xf32>
  %bv = buffer.view %bn[%z] : buffer -> view<[%n]xf32>
  %ov = buffer.view %on[%z] : buffer -> view<[%n]xf32>
  %x = view.load %av[%i] : view<[%n]xf32> -> f32
  %y = view.load %bv[%i] : view<[%n]xf32> -> f32
  %s = scalar.addf %x, %y : f32
  view.store %s, %ov[%i] : f32, view<[%n]xf32>
  kernel.return
}
`)

// TestNoaliasBindings checks NewDispatch refuses bindings that break a
// kernel's buffer.assume.noalias (a noalias buffer overlapping another
// binding, one of them written) and accepts the rest: disjoint bindings,
// and two read-only ones over the same bytes.
func TestNoaliasBindings(t *testing.T) {
	s := testSession(t)
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "restrict.loom", Text: noaliasKernel}}, Export: "add_restrict"}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	mem := must(s.Allocate(3 * 4 * n))
	in := make([]byte, 3*4*n)
	for i := range 2 * n {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(i)))
	}
	if err := s.Upload(mem, in); err != nil {
		t.Fatal(err)
	}
	part := func(k int) Region { return must(mem.Slice(4*n*k, 4*n)) }
	dispatch := func(a, b, o Region) error {
		_, err := s.NewDispatch(ks[0], []Arg{Index(n)}, []Arg{Index(n), Buffer(a.Read()), Buffer(b.Read()), Buffer(o.Write())})
		return err
	}
	if err := dispatch(part(0), part(1), part(2)); err != nil {
		t.Fatalf("disjoint bindings: %v", err)
	}
	if err := dispatch(part(0), part(0), part(2)); err != nil {
		t.Errorf("a and b over the same bytes, both read: %v", err)
	}
	overlap := must(mem.Slice(4*n+4, 4*n)) // one element into b's part, one past it
	for _, c := range []struct {
		name    string
		a, b, o Region
		msg     string
	}{
		{"o over a", part(0), part(1), part(0), "%a (bytes 0–32, read) is under buffer.assume.noalias but overlaps %o (bytes 0–32"},
		{"o partly over b", part(0), part(1), overlap, "%b (bytes 32–64, read) is under buffer.assume.noalias but overlaps %o (bytes 36–68"},
	} {
		err := dispatch(c.a, c.b, c.o)
		if !errors.Is(err, ErrAliasing) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want ErrAliasing containing %q", c.name, err, c.msg)
		}
	}
	// The accepted dispatch runs and computes a + b.
	d := must(s.NewDispatch(ks[0], []Arg{Index(n)}, []Arg{Index(n), Buffer(part(0).Read()), Buffer(part(1).Read()), Buffer(part(2).Write())}))
	if err := s.Run([]Command{d}); err != nil {
		t.Fatal(err)
	}
	out, err := s.Read(part(2))
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, want := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])), float32(i+i+n); got != want {
			t.Errorf("o[%d] = %v, want %v", i, got, want)
		}
	}
}
