package ptx

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// compileTestdata compiles export from a file of testdata to PTX text.
func compileTestdata(t *testing.T, file, export string) string {
	t.Helper()
	return compileTestdataKernel(t, file, export).PTX
}

// compileTestdataKernel compiles export from a file of testdata.
func compileTestdataKernel(t *testing.T, file, export string) *Kernel {
	t.Helper()
	return compileTestdataFor(t, file, export, Options{})
}

// compileTestdataFor compiles export from a file of testdata with opts.
func compileTestdataFor(t *testing.T, file, export string, opts Options) *Kernel {
	t.Helper()
	path := filepath.Join("testdata", file)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(path, src)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, export, opts)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestPackedLoadsPTX checks that vector loads of 8- and 16-bit lanes take
// whole words where alignment allows (testdata/packed_loads.loom;
// TestGPUCorpus runs it against the CPU executor, aligned and misaligned):
// in the aligned body, 16-byte rows of i8, f16 and bf16 are one
// ld.v4.b32 each and four i16 lanes one ld.v2.b32; dp4a takes the loaded
// words without repacking bytes, and bf16 lanes widen to f32 from the
// word; rows that are only 2- or 1-byte aligned load lane by lane.
func TestPackedLoadsPTX(t *testing.T) {
	text := compileTestdata(t, "packed_loads.loom", "packed_loads")
	aligned, general, ok := strings.Cut(text, "\n$L_misaligned")
	if !ok {
		t.Fatal("no aligned version")
	}
	count := func(s, re string) int { return len(regexp.MustCompile(re).FindAllString(s, -1)) }
	for _, c := range []struct {
		re   string
		want int
	}{
		{`(?m)^\tld\.global\.v4\.b32 `, 4},
		{`(?m)^\tld\.global\.v2\.b32 `, 1},
		{`(?m)^\tld\.global\.b16 `, 8},
		{`(?m)^\tld\.global\.s8 `, 6},
		{`bfi\.b32`, 0},
		{`dp4a\.s32\.s32`, 4},
		// bf16 lanes widen from their word: a shift or a mask each.
		{`cvt\.f32\.bf16`, 0},
		{`shl\.b32 %r\d+, %r\d+, 16;`, 4},
		{`and\.b32 %r\d+, %r\d+, -65536;`, 4},
	} {
		if got := count(aligned, c.re); got != c.want {
			t.Errorf("aligned body: %d of %s, want %d", got, c.re, c.want)
		}
	}
	// dp4a reads registers the 16-byte loads wrote.
	loaded := map[string]bool{}
	for _, m := range regexp.MustCompile(`ld\.global\.v4\.b32 \{([^}]*)\}`).FindAllStringSubmatch(aligned, -1) {
		for _, r := range strings.Split(m[1], ", ") {
			loaded[r] = true
		}
	}
	for _, m := range regexp.MustCompile(`dp4a\.s32\.s32 %r\d+, (%r\d+), (%r\d+),`).FindAllStringSubmatch(aligned, -1) {
		if !loaded[m[1]] || !loaded[m[2]] {
			t.Errorf("dp4a of %s, %s: not the loaded words", m[1], m[2])
		}
	}
	// The general body loads under the entry predicate, with lane loads
	// where it fails.
	for _, re := range []string{`@%p\d+ ld\.global\.v4\.b32 `, `@!%p\d+ ld\.global\.s8 `, `@!%p\d+ ld\.global\.b16 `} {
		if count(general, re) == 0 {
			t.Errorf("general body: no %s", re)
		}
	}
}

// TestMixedViewsPTX checks testdata/mixed_views.loom: a buffer viewed
// with 2- and 1-byte elements, read by a called function under noalias.
// Its f16 load is plain in the body versioned on the buffer's entry
// alignment test (no address test, no byte-wise fallback), keeps both in
// the general body, and both bodies load through the non-coherent path.
func TestMixedViewsPTX(t *testing.T) {
	text := compileTestdata(t, "mixed_views.loom", "mixed_views")
	aligned, general, ok := strings.Cut(text, "\n$L_misaligned")
	if !ok {
		t.Fatal("the body is not versioned")
	}
	count := func(s, re string) int { return len(regexp.MustCompile(re).FindAllString(s, -1)) }
	if n := count(aligned, `(?m)^\tld\.global\.nc\.b16 `); n != 1 {
		t.Errorf("aligned body: %d plain f16 loads, want 1", n)
	}
	if n := count(aligned, `ld\.global[.a-z]*\.u8 `); n != 0 {
		t.Errorf("aligned body: %d byte-wise fallback loads, want 0", n)
	}
	if count(general, `@%p\d+ ld\.global\.nc\.b16 `) != 1 || count(general, `@%p\d+ ld\.global\.nc\.u8 `) != 2 {
		t.Errorf("general body: want the tested f16 load and its two-byte fallback:\n%s", general)
	}
	if n := count(text, `ld\.global\.(s8|b16|u8) `); n != 0 {
		t.Errorf("%d loads of the read-only noalias buffer skip the non-coherent path", n)
	}
}

// TestRegCap checks the register bound a static workgroup size gives
// (Kernel.MaxRegs): what the driver can still launch.
func TestRegCap(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{1024, 64}, {512, 128}, {592, 96}, {384, 168}, {256, 255}, {32, 255}, {1, 255}, {960, 64}, {640, 96},
	} {
		if got := regCap(c.n); got != c.want {
			t.Errorf("regCap(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

// TestCappedPTX checks that the register bound is offered, not imposed:
// the PTX has no .maxnreg, CappedPTX has it right after .reqntid, and a
// workgroup small enough for 255 registers has neither.
func TestCappedPTX(t *testing.T) {
	k := compileTestdataKernel(t, "odd_workgroup.loom", "odd_workgroup")
	if strings.Contains(k.PTX, ".maxnreg") {
		t.Error("the default PTX states .maxnreg")
	}
	if k.MaxRegs != 96 || !strings.Contains(k.CappedPTX(), "\n.reqntid 592, 1, 1\n.maxnreg 96\n{") {
		t.Errorf("MaxRegs %d, capped PTX:\n%.400s", k.MaxRegs, k.CappedPTX())
	}
	if strings.Replace(k.CappedPTX(), ".maxnreg 96\n", "", 1) != k.PTX {
		t.Error("CappedPTX differs from PTX by more than the directive")
	}
	sm := compileTestdataKernel(t, "mixed_views.loom", "mixed_views")
	if sm.MaxRegs != 0 || sm.CappedPTX() != "" {
		t.Errorf("32 invocations: MaxRegs %d, capped %q", sm.MaxRegs, sm.CappedPTX())
	}
}
