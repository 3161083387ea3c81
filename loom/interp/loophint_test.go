package interp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/internal/loomcorpus"
	"github.com/loomgen/loomgen/loom"
)

// sameStartKernel is nestedKernel with every loop's carried value starting
// from the one uniform constant %a0: each loop's value turns varying in its
// first compile whatever the loops around it assume, the shape that cost
// 2^n compiles of the innermost body without the loop hints.
func sameStartKernel(n int) string {
	src := nestedKernel(n)
	for k := 1; k < n; k++ {
		src = strings.Replace(src, fmt.Sprintf("(%%a%d = %%a%d : f32)", k+1, k), fmt.Sprintf("(%%a%d = %%a0 : f32)", k+1), 1)
	}
	return src
}

// sameStartWhileKernel is sameStartKernel's shape in scf.while loops, each
// carrying a counter (uniform: one trip) and an f32 starting from %a0
// that turns varying in the innermost do region. It stores in[i] + 1.
func sameStartWhileKernel(n int) string {
	var b strings.Builder
	for k := range n {
		fmt.Fprintf(&b, "  %%w%d, %%v%d = scf.while(%%n%d = %%c0 : index, %%s%d = %%a0 : f32) -> (index, f32) {\n", k, k, k, k)
		fmt.Fprintf(&b, "    %%go%d = index.cmp ult, %%n%d, %%c1 : index\n    scf.condition %%go%d, %%n%d, %%s%d : i1, index, f32\n", k, k, k, k, k)
		fmt.Fprintf(&b, "  } do(%%d%d: index, %%b%d: f32) {\n", k, k)
	}
	fmt.Fprintf(&b, "  %%x = view.load %%in[%%i] : view<[%%len]xf32> -> f32\n  %%v%d = scalar.addf %%x, %%b%d : f32\n", n, n-1)
	for k := n - 1; k >= 0; k-- {
		fmt.Fprintf(&b, "  %%e%d = index.add %%d%d, %%c1 : index\n  scf.yield %%e%d, %%v%d : index, f32\n  }\n", k, k, k, k+1)
	}
	b.WriteString("  view.store %v0, %out[%i] : f32, view<[%len]xf32>\n")
	return oneGroupKernel("nested", b.String())
}

// mixedKernel is a loop carrying a value that turns varying around a loop
// carrying one value that stays uniform (a counter) and one that turns
// varying: the inner loop is compiled again in the outer one's second
// attempt, where its hint must keep the counter uniform.
var mixedKernel = oneGroupKernel("mixed", `  %c3 = index.constant 3 : index
  %f0 = scalar.constant 0.0 : f32
  %r = scf.for %k = [%c0 to %c3 step %c1] (%a = %f0 : f32) -> (f32) {
    %n, %v = scf.for %j = [%c0 to %c3 step %c1] (%cnt = %c0 : index, %acc = %f0 : f32) -> (index, f32) {
      %at = index.add %i, %cnt : index
      %x = view.load %in[%at] : view<[%len]xf32> -> f32
      %s = scalar.addf %acc, %x : f32
      %next = index.add %cnt, %c1 : index
      scf.yield %next, %s : index, f32
    }
    %b = scalar.addf %a, %v : f32
    scf.yield %b : f32
  }
  view.store %r, %out[%i] : f32, view<[%len]xf32>
`)

// twoSitesKernel inlines one function with a loop at two call sites of a
// loop body, once with uniform arguments and once with varying ones: two
// instances of the inner loop, whose hints must not mix.
var twoSitesKernel = `func.def @accum(%base: f32, %x: f32) -> (f32) {
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %r = scf.for %j = [%c0 to %c2 step %c1] (%s = %base : f32) -> (f32) {
    %t = scalar.addf %s, %x : f32
    scf.yield %t : f32
  }
  func.return %r : f32
}

` + oneGroupKernel("two_sites", `  %c2 = index.constant 2 : index
  %f0 = scalar.constant 0.0 : f32
  %x = view.load %in[%i] : view<[%len]xf32> -> f32
  %r = scf.for %k = [%c0 to %c2 step %c1] (%a = %f0 : f32) -> (f32) {
    %u = func.call @accum(%a0, %a0) : (f32, f32) -> (f32)
    %w = func.call @accum(%a, %x) : (f32, f32) -> (f32)
    %b = scalar.addf %w, %u : f32
    scf.yield %b : f32
  }
  view.store %r, %out[%i] : f32, view<[%len]xf32>
`)

// compiledShape is what a compile decided, register by register, for
// TestLoopHintsExact to compare.
func compiledShape(k *Kernel) string {
	var b strings.Builder
	for ; k != nil; k = k.batch {
		fmt.Fprintf(&b, "I%d F%d V%d batched=%v noBatch=%q wgFast=%v rerun=%v maxDepth=%d\n", k.nI, k.nF, k.nV, k.batched, k.noBatch, k.wgFast, k.rerunSafe, k.maxDepth)
		for _, s := range k.slots {
			fmt.Fprintf(&b, "%d:%d uni=%v comps=%d cst=%v/%d aff=%v lazy=%v lid=%d %v\n", s.kind, s.idx, s.uni, s.comps, s.cst, s.ci, s.aff, s.lazyAff, s.lid, s.shape)
		}
	}
	return b.String()
}

// TestLoopHintsExact compiles every kernel of a source with loops in our
// corpora, Loom's own (where extracted) and the nested-loop shapes with
// and without the loop hints (loophint.go): each must compile to the same
// registers with the same uniformity, or fail alike. The hints only skip
// compiles whose result would be thrown away.
func TestLoopHintsExact(t *testing.T) {
	dirs := []string{"../testdata", "testdata", "../ptx/testdata", "../../internal/bench/kernels", "../../examples/gen/kernels"}
	if _, err := os.Stat(filepath.Join(hrxsamples.Dir, "loom")); err == nil {
		dirs = append(dirs, filepath.Join(hrxsamples.Dir, "loom"))
	} else {
		t.Logf("Loom's corpus is not extracted under %s: only ours compared", hrxsamples.Dir)
	}
	paths, err := loomcorpus.Files(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var inputs [][]loom.File
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range loomcorpus.Sources(p, src) {
			if s.Excluded == "" {
				inputs = append(inputs, []loom.File{s.File})
			}
		}
	}
	inputs = append(inputs, []loom.File{{Name: "mixed.loom", Src: []byte(mixedKernel)}}, []loom.File{{Name: "two_sites.loom", Src: []byte(twoSitesKernel)}})
	for _, n := range []int{2, 3, 6} {
		inputs = append(inputs,
			[]loom.File{{Name: fmt.Sprintf("nested%d.loom", n), Src: []byte(nestedKernel(n))}},
			[]loom.File{{Name: fmt.Sprintf("samestart%d.loom", n), Src: []byte(sameStartKernel(n))}},
			[]loom.File{{Name: fmt.Sprintf("samestartwhile%d.loom", n), Src: []byte(sameStartWhileKernel(n))}})
	}
	compiled := 0
	defer func() { useLoopHints = true }()
	for _, files := range inputs {
		mods, err := loom.ParsePackage(files...)
		if err != nil {
			continue
		}
		// Without a loop the hints have nothing to change.
		if src := string(files[0].Src); !strings.Contains(src, "scf.for") && !strings.Contains(src, "scf.while") {
			continue
		}
		for _, m := range mods {
			for _, kd := range m.Kernels {
				if kd.Decl || kd.Export == "" {
					continue
				}
				var got [2]string
				for i, hints := range []bool{true, false} {
					useLoopHints = hints
					k, err := Compile(mods, kd.Export, Options{})
					if err != nil {
						got[i] = "error: " + err.Error()
					} else {
						got[i] = compiledShape(k)
					}
				}
				if got[0] != got[1] {
					t.Errorf("%s %s: with loop hints\n%s\nwithout\n%s", files[0].Name, kd.Export, got[0], got[1])
				}
				if !strings.HasPrefix(got[0], "error: ") {
					compiled++
				}
			}
		}
	}
	t.Logf("%d kernels from sources with loops compiled alike", compiled)
	if compiled < 100 { // ours alone hold 112
		t.Fatalf("only %d kernels from sources with loops compiled: the corpus did not load", compiled)
	}
}

// TestNestedLoopCompileGrowth: with the loop hints, compiling
// sameStartKernel (and its scf.while form) at depth 12 allocates at most
// four times what depth 6 does; without them it was 2^6 times as much.
// Allocations, not time, so the bound holds on any machine.
func TestNestedLoopCompileGrowth(t *testing.T) {
	for name, src := range map[string]func(int) string{"scf.for": sameStartKernel, "scf.while": sameStartWhileKernel} {
		allocs := func(n int) float64 {
			m := parseSrc(t, src(n))
			return testing.AllocsPerRun(1, func() {
				if _, err := Compile([]*loom.Module{m}, "nested", Options{}); err != nil {
					t.Fatal(err)
				}
			})
		}
		a6, a12 := allocs(6), allocs(12)
		t.Logf("%s allocations: depth 6 %.0f, depth 12 %.0f", name, a6, a12)
		if a12 > 4*a6 {
			t.Errorf("%s: depth 12 allocates %.0f, depth 6 %.0f: more than linear growth", name, a12, a6)
		}
	}
}

// TestNestedWhileLoops runs sameStartWhileKernel: out[i] = in[i] + 1.
func TestNestedWhileLoops(t *testing.T) {
	for _, n := range []int{1, 5} {
		checkPlusOne(t, sameStartWhileKernel(n), uint32(n))
	}
}

// TestMixedNestedLoops runs mixedKernel: out[i] is three times the sum of
// in[i..i+2].
func TestMixedNestedLoops(t *testing.T) {
	r := compileRun(t, parseSrc(t, mixedKernel), "mixed", Options{})
	in := ramp(1024, 7, 3)
	out := make([]byte, 4*1024)
	r.run(nil, buf(f32bytes(in)), buf(out))
	want := make([]float32, 1024)
	for i := range 64 {
		want[i] = 3 * ((in[i] + in[i+1]) + in[i+2])
	}
	exactF32(t, "out", bytesF32(out), want)
}

// TestTwoSitesNestedLoops runs twoSitesKernel: each of its two trips adds
// in[i] twice to the carried value, then 3 (the uniform call: 1 plus 1
// twice).
func TestTwoSitesNestedLoops(t *testing.T) {
	r := compileRun(t, parseSrc(t, twoSitesKernel), "two_sites", Options{})
	in := ramp(1024, 11, 3)
	out := make([]byte, 4*1024)
	r.run(nil, buf(f32bytes(in)), buf(out))
	want := make([]float32, 1024)
	for i := range 64 {
		a := float32(0)
		for range 2 {
			w := a
			for range 2 {
				w += in[i]
			}
			a = w + 3
		}
		want[i] = a
	}
	exactF32(t, "out", bytesF32(out), want)
}
