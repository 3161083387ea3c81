package interp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// The kernels of loom/testdata/cfg_flow.loom (unstructured control flow,
// structured by the shared lowering) against Go references, exactly.

const cfgN = 150 // two full workgroups of 64 and a partial one

func cfgRun(t *testing.T, export string, scalars []Arg, src []int32, outLen int) []int32 {
	t.Helper()
	r := compileRun(t, corpus(t, "cfg_flow.loom"), export, Options{})
	dst := make([]byte, 4*outLen)
	args := append([]Arg{idx(cfgN)}, scalars...)
	args = append(args, buf(i32bytes(src)), buf(dst))
	r.run(wl(cfgN), args...)
	return bytesI32(dst)
}

func TestCFGCollatz(t *testing.T) {
	src := opsWords(cfgN)
	want := make([]int32, cfgN)
	for i, w := range src {
		x, steps := (w&1023)+1, int32(0)
		for x != 1 && steps < 60 {
			if x&1 != 0 {
				x = 3*x + 1
			} else {
				x >>= 1
			}
			steps++
		}
		if x != 1 {
			steps = -steps
		}
		want[i] = steps
	}
	exactI32(t, "cfg_collatz", cfgRun(t, "cfg_collatz", nil, src, cfgN), want)
}

func TestCFGDiamond(t *testing.T) {
	src := opsWords(cfgN)
	want := make([]int32, cfgN)
	for i, v := range src {
		if v < 0 {
			want[i] = -v + 1
		} else {
			want[i] = v * 2
		}
	}
	exactI32(t, "cfg_diamond", cfgRun(t, "cfg_diamond", nil, src, cfgN), want)
}

func TestCFGNested(t *testing.T) {
	src := opsWords(cfgN)
	want := make([]int32, cfgN)
	for i, w := range src {
		want[i] = func() int32 {
			m, acc := w&7, int32(0)
			for a := int32(0); a < m; a++ {
				for b := int32(0); b <= a; b++ {
					q := acc + a*b + 1
					if q > 40 {
						return q + 1000
					}
					acc = q
				}
			}
			return acc
		}()
	}
	got := cfgRun(t, "cfg_nested", nil, src, cfgN)
	exactI32(t, "cfg_nested", got, want)
	early := 0
	for _, v := range want {
		if v > 1000 {
			early++
		}
	}
	if early == 0 || early == cfgN {
		t.Fatalf("inputs leave both loops early in %d of %d invocations; want some of each", early, cfgN)
	}
}

func TestCFGBarrier(t *testing.T) {
	src := opsWords(cfgN)
	want := make([]int32, cfgN)
	for i, v := range src {
		base, lid := i/64*64, i%64
		m := base + 63 - lid
		w := v
		if m < cfgN {
			w = src[m]
		}
		want[i] = v + w
	}
	exactI32(t, "cfg_barrier", cfgRun(t, "cfg_barrier", nil, src, cfgN), want)
}

func TestCFGUniform(t *testing.T) {
	src := opsWords(cfgN)
	for _, mode := range []int32{0, 1} {
		want := make([]int32, cfgN)
		for i := range want {
			// Subgroups of 32 lanes; lanes past the end read the last word.
			s0 := i / 32 * 32
			r := int32(0)
			if mode == 1 {
				r = -1 << 31
			}
			for l := s0; l < s0+32; l++ {
				v := src[min(l, cfgN-1)]
				if mode == 0 {
					r += v
				} else {
					r = max(r, v)
				}
			}
			want[i] = r - src[i]
		}
		got := cfgRun(t, "cfg_uniform", []Arg{{Bits: uint64(uint32(mode))}}, src, cfgN)
		exactI32(t, "cfg_uniform", got, want)
	}
}

func TestCFGSearch(t *testing.T) {
	src := opsWords(8 * cfgN)
	for i := range src {
		src[i] &= 7
	}
	for _, key := range []int32{2, 7} {
		want := make([]int32, cfgN)
		for i := range want {
			want[i] = -1
			for j := 0; j < 8; j++ {
				if src[8*i+j] == key&3 {
					want[i] = int32(j)
					break
				}
			}
		}
		got := cfgRun(t, "cfg_search", []Arg{{Bits: uint64(uint32(key))}}, src, cfgN)
		exactI32(t, "cfg_search", got, want)
	}
}

// TestCFGStructured checks the lowering leaves no cfg op for the executor
// and reconverges the diamond with an scf.if whose results are the join's
// block arguments.
func TestCFGStructured(t *testing.T) {
	m := corpus(t, "cfg_flow.loom")
	out, err := loom.Lower([]*loom.Module{m}, loom.LowerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := loom.Dump(out[0])
	if strings.Contains(d, "cfg.") || strings.Contains(d, "^") {
		t.Fatalf("cfg ops left after lowering:\n%s", d)
	}
	for _, want := range []string{"scf.while", "scf.condition", "scf.if"} {
		if !strings.Contains(d, want) {
			t.Errorf("lowered corpus lacks %s", want)
		}
	}
	// Loops left through one branch that every trip passes are plain
	// scf.while loops, the body in the second region; a loop with two
	// exits runs its body in the first region and ends in a tuple.
	for _, k := range out[0].Kernels {
		var w *loom.Op
		var find func(ops []*loom.Op)
		find = func(ops []*loom.Op) {
			for _, op := range ops {
				if op.Name == "scf.while" && w == nil {
					w = op
				}
				for _, r := range op.Regions {
					find(r.Ops)
				}
			}
		}
		find(k.Body.Ops)
		plain := map[string]bool{"cfg_stride": true, "cfg_dowhile": true, "cfg_collatz": false, "cfg_nested": false}
		if want, ok := plain[k.Export]; ok && (w == nil || (len(w.Regions[1].Ops) > 1) != want) {
			t.Errorf("%s: plain scf.while = %v, want %v", k.Export, !want, want)
		}
	}
}

func TestCFGStride(t *testing.T) {
	src := opsWords(cfgN)
	want, wantTrips := make([]int32, cfgN), make([]int32, 128)
	for i := range 128 {
		j, count := i, int32(0)
		for ; j < cfgN; j += 128 {
			if v := src[j]; v&1 != 0 {
				want[j] = v + int32(j)
			} else {
				want[j] = v - int32(j)
			}
			count++
		}
		wantTrips[i] = count<<16 + int32(j)
	}
	r := compileRun(t, corpus(t, "cfg_flow.loom"), "cfg_stride", Options{})
	dst, trips := make([]byte, 4*cfgN), make([]byte, 4*128)
	r.run(wl(cfgN), idx(cfgN), buf(i32bytes(src)), buf(dst), buf(trips))
	exactI32(t, "cfg_stride dst", bytesI32(dst), want)
	exactI32(t, "cfg_stride trips", bytesI32(trips), wantTrips)
}

func TestCFGDoWhile(t *testing.T) {
	src := opsWords(cfgN)
	want := make([]int32, cfgN)
	for i, v := range src {
		k, tt, acc := v&15, int32(0), v
		for {
			var m int32
			if tt&1 != 0 {
				m = acc * 3
			} else {
				m = acc + tt
			}
			t1 := tt + 1
			if tt >= k {
				want[i] = m + t1
				break
			}
			acc, tt = m^t1, t1
		}
	}
	exactI32(t, "cfg_dowhile", cfgRun(t, "cfg_dowhile", nil, src, cfgN), want)
}

// cfgBenchLoops are one loop three ways: written with cfg blocks and left
// at its header (lowered to a plain scf.while), written with cfg blocks
// and also left from its body (the general form: a tuple per trip), and
// written as scf.while.
var cfgBenchLoops = map[string]string{
	"cfg_plain": `  cfg.br ^h(%x0: i32, %zero: i32)
^h(%v: i32, %s: i32):
  %go = scalar.cmpi slt, %s, %cap : i32
  cfg.cond_br %go, ^b, ^x
^b:
  %t = scalar.muli %v, %v : i32
  %nv = scalar.addi %t, %one : i32
  %ns = scalar.addi %s, %one : i32
  cfg.br ^h(%nv: i32, %ns: i32)
^x:
  view.store %v, %dv[%i] : i32, view<[%n]xi32>
  kernel.return`,
	"cfg_two_exits": `  cfg.br ^h(%x0: i32, %zero: i32)
^h(%v: i32, %s: i32):
  %go = scalar.cmpi slt, %s, %cap : i32
  cfg.cond_br %go, ^b, ^x
^b:
  %t = scalar.muli %v, %v : i32
  %nv = scalar.addi %t, %one : i32
  %ns = scalar.addi %s, %one : i32
  %zr = scalar.cmpi eq, %nv, %zero : i32
  cfg.cond_br %zr, ^y, ^c
^c:
  cfg.br ^h(%nv: i32, %ns: i32)
^y:
  cfg.br ^x
^x:
  view.store %v, %dv[%i] : i32, view<[%n]xi32>
  kernel.return`,
	"scf_while": `  %fv, %fs = scf.while(%v = %x0 : i32, %s = %zero : i32) -> (i32, i32) {
    %go = scalar.cmpi slt, %s, %cap : i32
    scf.condition %go, %v, %s : i1, i32, i32
  } do(%v2: i32, %s2: i32) {
    %t = scalar.muli %v2, %v2 : i32
    %nv = scalar.addi %t, %one : i32
    %ns = scalar.addi %s2, %one : i32
    scf.yield %nv, %ns : i32, i32
  }
  view.store %fv, %dv[%i] : i32, view<[%n]xi32>
  kernel.return`,
}

// BenchmarkCFGLoop runs the three forms of cfgBenchLoops side by side
// (4096 invocations, 200 trips each): the cost of structured cfg loops
// against the loop written structured.
func BenchmarkCFGLoop(b *testing.B) {
	for _, name := range []string{"scf_while", "cfg_plain", "cfg_two_exits"} {
		k, err := Compile([]*loom.Module{parseSrc(b, cfgLoopKernel(cfgBenchLoops[name], 200))}, "k", Options{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		const n = 4096
		in := i32bytes(opsWords(n))
		dst := make([]byte, 4*n)
		b.Run(name, func(b *testing.B) {
			for range b.N {
				if err := k.Run(Launch{Workgroups: [3]int{n / 64, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}}, []Arg{idx(n), buf(in), buf(dst)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cfgLoopKernel is a kernel of n invocations in workgroups of 64 running
// body on its invocation's word %x0 of %sv, with %zero, %one and %cap (the
// trip cap) in scope; body stores to %dv.
func cfgLoopKernel(body string, cap int) string {
	return `kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %wg = index.constant 64 : index
  %g = index.div %n, %wg : index
  kernel.launch.config workgroups(%g, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %i = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %sv = buffer.view %src[%z] : buffer -> view<[%n]xi32>
  %dv = buffer.view %dst[%z] : buffer -> view<[%n]xi32>
  %x0 = view.load %sv[%i] : view<[%n]xi32> -> i32
  %zero = scalar.constant 0 : i32
  %one = scalar.constant 1 : i32
  %cap = scalar.constant ` + strconv.Itoa(cap) + ` : i32
` + body + "\n}\n"
}

// TestCFGLoopExitTrips: invocations leave a loop on different trips, so
// the loop counter, the same on every invocation still running, differs
// between the invocations after it (the CPU executor keeps it uniform in
// the body and writes each invocation's value as it leaves). Written with
// cfg blocks left from the header and from the body (the general form),
// and as scf.while with a per-invocation condition.
func TestCFGLoopExitTrips(t *testing.T) {
	const n, cap = 256, 40
	kernels := map[string]string{
		"cfg_two_exits": `  cfg.br ^h(%x0: i32, %zero: i32)
^h(%v: i32, %s: i32):
  %go = scalar.cmpi slt, %s, %cap : i32
  cfg.cond_br %go, ^b, ^q
^b:
  %t = scalar.muli %v, %three : i32
  %nv = scalar.addi %t, %one : i32
  %ns = scalar.addi %s, %one : i32
  %low = scalar.andi %nv, %seven : i32
  %zr = scalar.cmpi eq, %low, %zero : i32
  cfg.cond_br %zr, ^y, ^c
^c:
  cfg.br ^h(%nv: i32, %ns: i32)
^y:
  cfg.br ^x(%ns: i32)
^q:
  cfg.br ^x(%s: i32)
^x(%r: i32):
  %hi = scalar.shli %r, %sixteen : i32
  %lo = scalar.andi %v, %mask : i32
  %o = scalar.addi %hi, %lo : i32
  view.store %o, %dv[%i] : i32, view<[%n]xi32>
  kernel.return`,
		"scf_while": `  %fv, %fs = scf.while(%v = %x0 : i32, %s = %zero : i32) -> (i32, i32) {
    %low = scalar.andi %v, %seven : i32
    %more = scalar.cmpi ne, %low, %zero : i32
    %go = scalar.cmpi slt, %s, %cap : i32
    %k = scalar.andi %go, %more : i1
    scf.condition %k, %v, %s : i1, i32, i32
  } do(%v2: i32, %s2: i32) {
    %t = scalar.muli %v2, %three : i32
    %nv = scalar.addi %t, %one : i32
    %ns = scalar.addi %s2, %one : i32
    scf.yield %nv, %ns : i32, i32
  }
  %hi = scalar.shli %fs, %sixteen : i32
  %lo = scalar.andi %fv, %mask : i32
  %o = scalar.addi %hi, %lo : i32
  view.store %o, %dv[%i] : i32, view<[%n]xi32>
  kernel.return`,
	}
	consts := `  %three = scalar.constant 3 : i32
  %seven = scalar.constant 7 : i32
  %sixteen = scalar.constant 16 : i32
  %mask = scalar.constant 65535 : i32
`
	src := opsWords(n)
	for name, body := range kernels {
		want := make([]int32, n)
		for i, v := range src {
			s, r := int32(0), int32(0)
			if name == "scf_while" {
				for s < cap && v&7 != 0 {
					v, s = v*3+1, s+1
				}
				r = s
			} else {
				for {
					if s >= cap {
						r = s
						break
					}
					nv, ns := v*3+1, s+1
					if nv&7 == 0 {
						r = ns
						break
					}
					v, s = nv, ns
				}
			}
			want[i] = r<<16 + v&65535
		}
		k, err := Compile([]*loom.Module{parseSrc(t, cfgLoopKernel(consts+body, cap))}, "k", Options{})
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 4*n)
		if err := k.Run(Launch{Workgroups: [3]int{n / 64, 1, 1}, WorkgroupSize: [3]int{64, 1, 1}}, []Arg{idx(n), buf(i32bytes(src)), buf(dst)}); err != nil {
			t.Fatal(err)
		}
		exactI32(t, name, bytesI32(dst), want)
	}
}
