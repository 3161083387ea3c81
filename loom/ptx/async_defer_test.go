package ptx

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// deferShape is what the PTX of a kernel's first dynamic loop shows of
// copy deferral (async_defer.go).
type deferShape struct {
	tripEnd    string // the last cp.async.wait_group before the back edge
	firstWait  bool   // a cp.async.wait_group leads up to the body's first bar.sync
	exitWaits  bool   // the exit waits for every group, then a guarded bar.sync
	loopFound  bool
	bodyBefore []string // the body's instructions up to its first bar.sync
}

func loopDeferShape(t *testing.T, src, export string, sm int) deferShape {
	t.Helper()
	m, err := loom.ParseFile(export+".loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, export, Options{SM: sm})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(launchedPTX(k), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	var d deferShape
	start := loopStart(lines)
	if start < 0 {
		return d
	}
	d.loopFound = true
	barrier := false
	for i := start; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "bar.sync") && !barrier:
			barrier = true
			for j := i - 1; j > start; j-- {
				p := lines[j]
				if strings.HasPrefix(p, "fence.") || strings.HasPrefix(p, "wgmma.") {
					continue
				}
				d.firstWait = strings.HasPrefix(p, "cp.async.wait_group")
				break
			}
		case !barrier:
			d.bodyBefore = append(d.bodyBefore, l)
		case strings.HasPrefix(l, "cp.async.wait_group"):
			d.tripEnd = l
		case strings.HasPrefix(l, "bra.uni $L_for_"):
			exit := lines[i+2:] // past the $L_endfor_ label
			d.exitWaits = len(exit) > 3 && exit[0] == "cp.async.wait_group 0;" &&
				strings.HasPrefix(exit[1], "fence.") == (sm == 90 && strings.Contains(export, "wg")) &&
				strings.Contains(strings.Join(exit[:4], "\n"), " bar.sync 0;")
			return d
		}
	}
	return d
}

// loopStart is the index of the first loop head label in PTX lines, or -1.
func loopStart(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "$L_for_") {
			return i
		}
	}
	return -1
}

// TestCopyDeferral checks the loop shapes copy deferral changes: the
// three-stage pipeline and the wgmma matmul leave the last group in
// flight at the trip's end and wait for it before the next trip's first
// barrier and at the loop's exit; a pipeline whose next trip reads the
// last group's stage first, or two-stage ping-pong, keep the plain wait.
func TestCopyDeferral(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	stages := read(filepath.Join("testdata", "async_defer.loom"))
	tc := read(filepath.Join("testdata", "matmul_tc.loom"))
	// Step 0 reading stage 1, the last group's destination, first.
	touched := strings.Replace(stages, "%a0 = vector.load %st0[", "%a0 = vector.load %st1[", 1)
	if touched == stages {
		t.Fatal("async_defer.loom changed: no step-0 read of stage 0 to redirect")
	}
	// Without step 0's barrier the first barrier follows step 1, which
	// reads stage 1 (the last group's) before it.
	step0 := "    %acc0 = vector.addf %acc, %a0 : vector<4xf32>\n    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}\n"
	late := strings.Replace(stages, step0, "    %acc0 = vector.addf %acc, %a0 : vector<4xf32>\n", 1)
	if late == stages {
		t.Fatal("async_defer.loom changed: no barrier after step 0 to drop")
	}
	// Step 0 hands stage 1 to a function, which reads it before the
	// first barrier: the wait stays.
	peek := "func.def @defer_peek(%t: view<64x4xf32>, %r: index) -> (vector<4xf32>) {\n" +
		"  %c0 = index.constant 0 : index\n" +
		"  %v = vector.load %t[%r, %c0] : view<64x4xf32> -> vector<4xf32>\n" +
		"  func.return %v : vector<4xf32>\n}\n\n"
	called := peek + strings.Replace(stages, step0, "    %acc0 = vector.addf %acc, %a0 : vector<4xf32>\n"+
		"    %peek = func.call @defer_peek(%st1, %mirror) : (view<64x4xf32>, index) -> (vector<4xf32>)\n"+
		"    kernel.barrier<workgroup> {ordering = acq_rel, scope = workgroup}\n", 1)
	for _, c := range []struct {
		name, src, export string
		sm                int
		deferred          bool
	}{
		{"three stages", stages, "defer_three_stages", 80, true},
		{"no trips", stages, "defer_no_trips", 80, true},
		{"wgmma 256x128", tc, "matmul_tc_f16_wg2_s4", 90, true},
		{"mma.sync", tc, "matmul_tc_bf16", 80, true},
		{"next trip reads the stage", touched, "defer_three_stages", 80, false},
		{"first barrier after a read of the stage", late, "defer_three_stages", 80, false},
		{"a call before the first barrier", called, "defer_three_stages", 80, false},
		{"ping-pong", read(filepath.Join("..", "testdata", "ops_async.loom")), "async_pipeline", 80, false},
	} {
		d := loopDeferShape(t, c.src, c.export, c.sm)
		if !d.loopFound {
			t.Fatalf("%s: no loop", c.name)
		}
		want := "cp.async.wait_group 0;"
		if c.deferred {
			want = "cp.async.wait_group 1;"
		}
		if d.tripEnd != want {
			t.Errorf("%s: the trip ends with %q, want %q", c.name, d.tripEnd, want)
		}
		if c.deferred && (!d.firstWait || !d.exitWaits) {
			t.Errorf("%s: deferred, but the wait before the first barrier (%v) or at the exit (%v) is missing; body up to it:\n%s",
				c.name, d.firstWait, d.exitWaits, strings.Join(d.bodyBefore, "\n"))
		}
		if !c.deferred && d.exitWaits {
			t.Errorf("%s: not deferred, yet the exit waits at a barrier", c.name)
		}
	}
}

// TestCopyDeferralKernels checks the CPU executor's results for the
// deferral kernels against their documented sums, at the inputs
// TestGPUCorpus runs them with (one with trips, one with none): the GPU's
// equality with the CPU then shows the deferred group completed and was
// published in time.
func TestCopyDeferralKernels(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "async_defer.loom"))
	for _, c := range []struct {
		export string
		trips  func(n int) int
	}{
		{"defer_three_stages", func(n int) int { return n / 3 }},
		{"defer_no_trips", func(n int) int { return n / 128 }},
	} {
		var kd *loom.Kernel
		for _, k := range m.Kernels {
			if k.Export == c.export {
				kd = k
			}
		}
		if kd == nil {
			t.Fatalf("no kernel %s", c.export)
		}
		cs, err := newCase([]*loom.Module{m}, kd, testConfig(m), 12345)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runCPU(cs)
		if err != nil {
			t.Fatal(err)
		}
		n := int(int32(cs.Args[0].Bits))
		trips := c.trips(n)
		if c.export == "defer_three_stages" && trips == 0 || c.export == "defer_no_trips" && trips != 0 {
			t.Fatalf("%s: size %d gives %d trips, not the case it covers", c.export, n, trips)
		}
		src := cs.Args[1].Buffer
		elem := func(tile, row, lane int) float32 {
			return math.Float32frombits(binary.LittleEndian.Uint32(src[((tile*64+row)*4+lane)*4:]))
		}
		for row := range 64 {
			for lane := range 4 {
				var want float32
				for j := range 3 * trips {
					want += elem(j, 63-row, lane)
				}
				want += elem(min(3*trips+1, n-1), 63-row, lane)
				g := math.Float32frombits(binary.LittleEndian.Uint32(got[2][(row*4+lane)*4:]))
				if g != want {
					t.Fatalf("%s: dst[%d][%d] = %v, want %v", c.export, row, lane, g, want)
				}
			}
		}
	}
}
