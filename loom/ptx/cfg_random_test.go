package ptx

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// randCFG is a random control-flow graph for TestCFGRandomGraphs: block
// b computes y = x·mul[b] + add[b] from its argument x, spends one unit of
// fuel (leaving with y when it runs out), then returns y + 1000·(b+1),
// branches to block to[b][0] with y, or branches on bit bit[b] of y to
// to[b][0] or to[b][1].
type randCFG struct {
	mul, add []int32
	kind     []int // 0 return, 1 br, 2 cond_br
	to       [][2]int
	bit      []int
}

func newRandCFG(r *rand.Rand) *randCFG {
	n := 2 + r.IntN(8)
	g := &randCFG{}
	for b := range n {
		g.mul = append(g.mul, int32(r.IntN(7))-3)
		g.add = append(g.add, int32(r.IntN(21))-10)
		k := r.IntN(5) // returns are rarer than branches
		switch {
		case k == 0:
			k = 0
		case k < 3:
			k = 1
		default:
			k = 2
		}
		if b == 0 && k == 0 {
			k = 1
		}
		g.kind = append(g.kind, k)
		g.to = append(g.to, [2]int{r.IntN(n), r.IntN(n)})
		g.bit = append(g.bit, r.IntN(4))
	}
	return g
}

// run is the graph's meaning, for one invocation.
func (g *randCFG) run(x, fuel int32) int32 {
	for b := 0; ; {
		y := x*g.mul[b] + g.add[b]
		if fuel--; fuel <= 0 {
			return y
		}
		switch g.kind[b] {
		case 0:
			return y + 1000*int32(b+1)
		case 1:
			b = g.to[b][0]
		default:
			b = g.to[b][(y>>g.bit[b])&1^1] // bit set: the true arm, to[b][0]
		}
		x = y
	}
}

// source writes the graph as a kernel: invocation i starts block 0 with
// src[i] and 12 + i%5 units of fuel and stores what it leaves with.
func (g *randCFG) source() string {
	var s strings.Builder
	s.WriteString(`kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  %wgm1 = index.constant 63 : index
  %padded = index.add %n, %wgm1 : index
  %groups = index.div %padded, %wg : index
  kernel.launch.config workgroups(%groups, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %sv = buffer.view %src[%z] : buffer -> view<[%n]xi32>
  %dv = buffer.view %dst[%z] : buffer -> view<[%n]xi32>
  %zero = scalar.constant 0 : i32
  %one = scalar.constant 1 : i32
  %ok = index.cmp ult, %i, %n : index
  cfg.cond_br %ok, ^go, ^done
^done:
  kernel.return
^go:
  %xs = view.load %sv[%i] : view<[%n]xi32> -> i32
  %five = index.constant 5 : index
  %rem5 = index.rem %i, %five : index
  %rem5i = index.cast %rem5 : index to i32
  %twelve = scalar.constant 12 : i32
  %fs = scalar.addi %rem5i, %twelve : i32
  cfg.br ^a0(%xs: i32, %fs: i32)
`)
	w := func(format string, args ...any) { fmt.Fprintf(&s, format+"\n", args...) }
	for b := range g.mul {
		w("^a%d(%%x%d: i32, %%f%d_in: i32):", b, b, b)
		w("  %%m%d = scalar.constant %d : i32", b, g.mul[b])
		w("  %%k%d = scalar.constant %d : i32", b, g.add[b])
		w("  %%p%d = scalar.muli %%x%d, %%m%d : i32", b, b, b)
		w("  %%y%d = scalar.addi %%p%d, %%k%d : i32", b, b, b)
		w("  %%g%d = scalar.subi %%f%d_in, %%one : i32", b, b)
		w("  %%e%d = scalar.cmpi sle, %%g%d, %%zero : i32", b, b)
		w("  cfg.cond_br %%e%d, ^out%d, ^on%d", b, b, b)
		w("^out%d:", b)
		w("  view.store %%y%d, %%dv[%%i] : i32, view<[%%n]xi32>", b)
		w("  kernel.return")
		w("^on%d:", b)
		switch g.kind[b] {
		case 0:
			w("  %%h%d = scalar.constant %d : i32", b, 1000*(b+1))
			w("  %%r%d = scalar.addi %%y%d, %%h%d : i32", b, b, b)
			w("  view.store %%r%d, %%dv[%%i] : i32, view<[%%n]xi32>", b)
			w("  kernel.return")
		case 1:
			w("  cfg.br ^a%d(%%y%d: i32, %%g%d: i32)", g.to[b][0], b, b)
		default:
			w("  %%s%d = scalar.constant %d : i32", b, g.bit[b])
			w("  %%t%d = scalar.shrsi %%y%d, %%s%d : i32", b, b, b)
			w("  %%u%d = scalar.andi %%t%d, %%one : i32", b, b)
			w("  %%c%d = scalar.cmpi ne, %%u%d, %%zero : i32", b, b)
			w("  cfg.cond_br %%c%d, ^tt%d, ^tf%d", b, b, b)
			w("^tt%d:", b)
			w("  cfg.br ^a%d(%%y%d: i32, %%g%d: i32)", g.to[b][0], b, b)
			w("^tf%d:", b)
			w("  cfg.br ^a%d(%%y%d: i32, %%g%d: i32)", g.to[b][1], b, b)
		}
	}
	s.WriteString("}\n")
	return s.String()
}

// TestCFGRandomGraphs structures random control-flow graphs (loops with
// many exits, early returns, nested and irreducible cycles), runs them on
// the CPU executor against their meaning and compiles them to PTX: every
// reducible graph must give the reference's results exactly and compile;
// an irreducible one must be refused as such by both.
func TestCFGRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const n = 150
	src := make([]int32, n)
	in := make([]byte, 4*n)
	for i := range src {
		src[i] = int32(r.IntN(200)) - 100
		binary.LittleEndian.PutUint32(in[4*i:], uint32(src[i]))
	}
	ran, refused := 0, 0
	for trial := range 400 {
		g := newRandCFG(r)
		text := g.source()
		m := parseSrc(t, text)
		k, err := interp.Compile([]*loom.Module{m}, "k", interp.Options{})
		_, perr := Compile([]*loom.Module{m}, "k", Options{})
		if err != nil || perr != nil {
			irreducible := func(e error) bool { return e != nil && strings.Contains(e.Error(), "irreducible control flow") }
			if irreducible(err) && irreducible(perr) {
				refused++
				continue
			}
			t.Fatalf("graph %d: CPU: %v; PTX: %v\n%s", trial, err, perr, text)
		}
		dst := make([]byte, 4*n)
		l := interp.Launch{Workgroups: [3]int{(n + 63) / 64, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}}
		if err := k.Run(l, []interp.Arg{{Bits: n}, {Buffer: in}, {Buffer: dst}}); err != nil {
			t.Fatalf("graph %d: run: %v\n%s", trial, err, text)
		}
		for i := range n {
			got := int32(binary.LittleEndian.Uint32(dst[4*i:]))
			if want := g.run(src[i], 12+int32(i%5)); got != want {
				t.Fatalf("graph %d: invocation %d: got %d, want %d\n%s", trial, i, got, want, text)
			}
		}
		ran++
	}
	t.Logf("%d graphs ran equal to the reference, %d refused as irreducible", ran, refused)
	if ran < 200 || refused == 0 {
		t.Errorf("%d graphs ran, %d refused: the generator lost its mix", ran, refused)
	}
}
