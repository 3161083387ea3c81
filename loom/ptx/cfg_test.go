package ptx

import (
	"encoding/binary"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// TestCFGCompile compiles every kernel of cfg_flow.loom (unstructured
// control flow, structured by the shared lowering) and checks the shape of
// the PTX: loops branch back, divergent branches are predicated jumps, the
// barrier after the early exit is emitted once, and no kernel returns
// from inside a loop. TestGPUCorpus runs the same kernels on a GPU against
// the CPU executor.
func TestCFGCompile(t *testing.T) {
	m := parse(t, "../testdata/cfg_flow.loom")
	backward := regexp.MustCompile(`bra\.uni \$L_while_\d+;`)
	for _, c := range []struct {
		export string
		loops  int // scf.while loops the lowering forms
		bars   int
	}{
		{"cfg_collatz", 1, 0},
		{"cfg_diamond", 0, 0},
		{"cfg_nested", 2, 0},
		{"cfg_barrier", 0, 1},
		{"cfg_uniform", 0, 0},
		{"cfg_search", 1, 0},
		{"cfg_stride", 1, 0},
		{"cfg_dowhile", 1, 0},
	} {
		k, err := Compile([]*loom.Module{m}, c.export, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.export, err)
		}
		if got := len(backward.FindAllString(k.PTX, -1)); got != c.loops {
			t.Errorf("%s: %d backward branches, want %d:\n%s", c.export, got, c.loops, k.PTX)
		}
		if got := strings.Count(k.PTX, "bar.sync"); got != c.bars {
			t.Errorf("%s: %d barriers, want %d", c.export, got, c.bars)
		}
		if !strings.Contains(k.PTX, "@") {
			t.Errorf("%s: no predicated branch", c.export)
		}
	}
}

// TestCFGViewLeavesLoop: a view defined inside a loop of two exits is
// read after one of them; on the other exit a view of its type defined
// before the loop stands in. Both executors compile it; the CPU executor's
// result is checked.
func TestCFGViewLeavesLoop(t *testing.T) {
	src := `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %a: buffer, %b: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %one = index.constant 1 : index
  %four = index.constant 4 : offset
  %first = buffer.view %b[%z] : buffer -> view<1xi32>
  cfg.br ^scan(%c0: index)
^scan(%j: index):
  %more = index.cmp ult, %j, %n : index
  cfg.cond_br %more, ^probe, ^none
^probe:
  %jo = index.cast %j : index to offset
  %off = index.mul %jo, %four : offset
  %v = buffer.view %a[%off] : buffer -> view<1xi32>
  %x = view.load %v[%c0] : view<1xi32> -> i32
  %zero = scalar.constant 0 : i32
  %neg = scalar.cmpi slt, %x, %zero : i32
  cfg.cond_br %neg, ^found, ^next
^next:
  %j1 = index.add %j, %one : index
  cfg.br ^scan(%j1: index)
^found:
  %mark = scalar.constant -1 : i32
  view.store %mark, %v[%c0] : i32, view<1xi32>
  kernel.return
^none:
  %seven = scalar.constant 7 : i32
  view.store %seven, %first[%c0] : i32, view<1xi32>
  kernel.return
}
`
	k := compileBoth(t, src)
	for _, c := range []struct {
		a, wantA []int32
		wantB    int32
	}{
		{[]int32{5, -2, 3, -3}, []int32{5, -1, 3, -3}, 0},
		{[]int32{5, 2, 3, 3}, []int32{5, 2, 3, 3}, 7},
	} {
		a, b := make([]byte, 16), make([]byte, 4)
		for i, v := range c.a {
			binary.LittleEndian.PutUint32(a[4*i:], uint32(v))
		}
		l := interp.Launch{Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{1, 1, 1}}
		if err := k.Run(l, []interp.Arg{{Bits: 4}, {Buffer: a}, {Buffer: b}}); err != nil {
			t.Fatal(err)
		}
		for i, w := range c.wantA {
			if g := int32(binary.LittleEndian.Uint32(a[4*i:])); g != w {
				t.Errorf("%v: a[%d] = %d, want %d", c.a, i, g, w)
			}
		}
		if g := int32(binary.LittleEndian.Uint32(b)); g != c.wantB {
			t.Errorf("%v: b[0] = %d, want %d", c.a, g, c.wantB)
		}
	}
}

// TestCFGNestedRegion: cfg blocks inside an scf.for body, each ending in
// scf.yield (merged into one return block of the region): both executors
// compile it; the CPU executor sums |x|.
func TestCFGNestedRegion(t *testing.T) {
	src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%a: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %va = buffer.view %a[%z] : buffer -> view<4xi32>
  %one = index.constant 1 : index
  %four = index.constant 4 : index
  %s0 = scalar.constant 0 : i32
  %r = scf.for %j = [%c0 to %four step %one] (%acc = %s0 : i32) -> (i32) {
    %x = view.load %va[%j] : view<4xi32> -> i32
    %neg = scalar.cmpi slt, %x, %s0 : i32
    cfg.cond_br %neg, ^minus, ^plus
  ^minus:
    %d = scalar.subi %acc, %x : i32
    scf.yield %d : i32
  ^plus:
    %e = scalar.addi %acc, %x : i32
    scf.yield %e : i32
  }
  view.store %r, %va[%c0] : i32, view<4xi32>
  kernel.return
}
`
	k := compileBoth(t, src)
	a := make([]byte, 16)
	for i, v := range []int32{5, -2, 3, -3} {
		binary.LittleEndian.PutUint32(a[4*i:], uint32(v))
	}
	if err := k.Run(interp.Launch{Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{1, 1, 1}}, []interp.Arg{{Buffer: a}}); err != nil {
		t.Fatal(err)
	}
	if g := int32(binary.LittleEndian.Uint32(a)); g != 13 {
		t.Errorf("sum of |x| = %d, want 13", g)
	}
}

// compileBoth compiles kernel "k" of src to PTX (which must succeed) and
// for the CPU executor, which the test runs.
func compileBoth(t *testing.T, src string) *interp.Kernel {
	t.Helper()
	m := parseSrc(t, src)
	if _, err := Compile([]*loom.Module{m}, "k", Options{}); err != nil {
		t.Fatal(err)
	}
	k, err := interp.Compile([]*loom.Module{m}, "k", interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}
