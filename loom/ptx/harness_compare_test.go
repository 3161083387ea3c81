package ptx

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom"
)

// TestHarnessCompare checks the GPU tests' comparison is loomdiff's: the
// accuracy a case gets is crosscheck.Classify's, and compare passes and
// fails exactly what crosscheck.Compare does, with its message. Crafted
// buffers, no GPU.
func TestHarnessCompare(t *testing.T) {
	src := `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %x: buffer) {
  %i = kernel.workgroup.id<x> : index
  %z = index.constant 0 : offset
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xf32>
  %v = view.load %xv[%i] : view<[%n]xf32> -> f32
  %r = OP
  view.store %r, %xv[%i] : f32, view<[%n]xf32>
  kernel.return
}
`
	f32 := func(vs ...float32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b
	}
	ulp := math.Nextafter32(2, 4) - 2 // at 3
	negZero := float32(math.Copysign(0, -1))
	nan1, nan2 := math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00000)
	for _, c := range []struct {
		op        string
		got, want []byte
		ok        bool
	}{
		{"scalar.addf %v, %v : f32", f32(3, 3+ulp), f32(3, 3), false},
		{"scalar.addf %v, %v : f32", f32(negZero), f32(0), false},
		{"scalar.addf %v, %v : f32", f32(nan1), f32(nan2), true},
		// expf: 4 × 3 ulp, counted at max(|cpu|, 1).
		{"scalar.expf %v : f32", f32(3 + 12*ulp), f32(3), true},
		{"scalar.expf %v : f32", f32(3 + 13*ulp), f32(3), false},
		// 1e-5 relative, the old GPU-test tolerance, is 84 ulp at 3:
		// too loose for expf.
		{"scalar.expf %v : f32", f32(3 * (1 + 9e-6)), f32(3), false},
		{"kernel.subgroup.reduce<addf> %v : f32", f32(3 + 128*ulp), f32(3), true},
		{"kernel.subgroup.reduce<addf> %v : f32", f32(3 + 129*ulp), f32(3), false},
	} {
		m, err := loom.ParseFile("k.loom", []byte(strings.Replace(src, "OP", c.op, 1)))
		if err != nil {
			t.Fatal(err)
		}
		prog, err := loom.NewProgram(m)
		if err != nil {
			t.Fatal(err)
		}
		kd, _ := prog.Kernel("k")
		kc, err := newCase([]*loom.Module{m}, kd, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := crosscheck.Classify(prog, kd.Body); kc.acc.ULPs != want.ULPs || kc.acc.HalfULPs != want.HalfULPs {
			t.Errorf("%s: case accuracy %+v, crosscheck %+v", c.op, kc.acc, want)
		}
		err = compare(kc, 1, c.got, c.want)
		d := crosscheck.Compare(&crosscheck.Case{Kernel: kd, Elems: kc.elems, Accuracy: crosscheck.Classify(prog, kd.Body)}, 1, c.got, c.want)
		switch {
		case (err == nil) != c.ok:
			t.Errorf("%s: compare %x with %x: %v, want agreement %v", c.op, c.got, c.want, err, c.ok)
		case (d == nil) != (err == nil):
			t.Errorf("%s: compare says %v, crosscheck %v", c.op, err, d)
		case d != nil && err.Error() != d.Describe("gpu"):
			t.Errorf("%s: compare says %q, crosscheck %q", c.op, err, d.Describe("gpu"))
		}
	}
}
