package ptx

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestWgmmaGroups checks which subgroup mmas become warpgroup wgmma
// (wgmma.go) and how they are fenced: on sm_90 the kernels whose four
// warps share each rhs slab take one wgmma per 16-deep step, read the
// tile through a descriptor instead of ldmatrix, wait for the wgmma ops
// before storing their results and fence the tile's writes before the
// barrier; near misses and older targets keep mma.sync. TestGPUFragments
// runs them all on the GPU against the CPU executor.
func TestWgmmaGroups(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "wgmma.loom"))
	for _, c := range []struct {
		export string
		sm     int
		wgmma  string // the wgmma shape and types, "" for mma.sync
		steps  int    // wgmma ops in each version of the body (PTX may hold two)
		lhs    string // the lhs: "regs" (registers) or "desc" (a descriptor)
	}{
		{"wg_tile_f16", 90, "m64n64k16.f32.f16.f16", 2, "regs"},
		{"wg_tile_bf16", 90, "m64n64k16.f32.bf16.bf16", 2, "regs"},
		{"wg_tile_n128", 90, "m64n128k16.f32.f16.f16", 2, "regs"},
		{"wg_lhs_tile", 90, "m64n64k16.f32.f16.f16", 4, "desc"},
		{"wg_lhs_alloca", 90, "m64n64k16.f32.f16.f16", 4, "desc"},
		{"wg_lhs_lanes", 90, "m64n64k16.f32.f16.f16", 4, "regs"},
		{"wg_loop_lhs", 90, "m64n64k16.f32.f16.f16", 1, "regs"},
		{"wg_tile_f16", 80, "", 0, ""},
		{"wg_tile_f16", 100, "", 0, ""}, // Blackwell has no wgmma
		{"wg_subgroup_row", 90, "", 0, ""},
		{"wg_partial_warpgroup", 90, "", 0, ""},
	} {
		k, err := Compile([]*loom.Module{m}, c.export, Options{SM: c.sm})
		if err != nil {
			t.Fatalf("%s on sm_%d: %v", c.export, c.sm, err)
		}
		name := fmt.Sprintf("%s/sm_%d", c.export, c.sm)
		for _, body := range []string{k.PTX, k.AlignedPTX} {
			if body == "" {
				continue
			}
			got := strings.Count(body, "wgmma.mma_async")
			if c.wgmma == "" {
				if got > 0 || !strings.Contains(body, "mma.sync") || strings.Contains(body, "fence.proxy.async") || strings.Contains(body, ".target sm_90a") {
					t.Errorf("%s: want mma.sync alone, got %d wgmma ops", name, got)
				}
				continue
			}
			// Each 16-deep step of the body is one wgmma.
			if n := strings.Count(body, "wgmma.mma_async.sync.aligned."+c.wgmma); n == 0 || n%c.steps != 0 || n != got {
				t.Errorf("%s: %d %s wgmma ops of %d, want %d", name, n, c.wgmma, got, c.steps)
			}
			no := []string{"mma.sync", "ldmatrix.sync.aligned.m8n8.x4.trans"}
			// The operand form: A in registers ({…}, then B's descriptor,
			// scale-d, scales and B's transpose) or both by descriptor
			// (A's transpose too), and then no ldmatrix at all.
			form := regexp.MustCompile(`wgmma\.mma_async[^}]*\}, \{[^}]*\}, %rd\d+, %p\d+, 1, 1, 1;`)
			if c.lhs == "desc" {
				form = regexp.MustCompile(`wgmma\.mma_async[^}]*\}, %rd\d+, %rd\d+, %p\d+, 1, 1, 0, 1;`)
				no = append(no, "ldmatrix")
			}
			if n := len(form.FindAllString(body, -1)); n != got {
				t.Errorf("%s: %d of %d wgmma ops take the lhs from %s", name, n, got, c.lhs)
			}
			for _, x := range no {
				if strings.Contains(body, x) {
					t.Errorf("%s: %s beside wgmma", name, x)
				}
			}
			if !strings.Contains(body, ".target sm_90a") || !strings.Contains(body, ".extern .shared .align 1024") {
				t.Errorf("%s: want .target sm_90a and 1024-byte aligned workgroup storage", name)
			}
			// In program text order: nothing stores, synchronizes or leaves
			// while wgmma ops are in flight, except a loop's back edge
			// once they are committed (the next trip waits for them).
			lines := strings.Split(body, "\n")
			pending, uncommitted := false, false
			for i, l := range lines {
				l = strings.TrimSpace(l)
				switch {
				case strings.HasPrefix(l, "wgmma.mma_async"):
					if strings.TrimSpace(lines[i-1]) != "wgmma.fence.sync.aligned;" {
						t.Errorf("%s: line %d: wgmma without a wgmma.fence before it", name, i+1)
					}
					pending, uncommitted = true, true
				case l == "wgmma.commit_group.sync.aligned;":
					uncommitted = false
				case strings.HasPrefix(l, "wgmma.wait_group.sync.aligned 0"):
					if uncommitted {
						t.Errorf("%s: line %d: wait without commit", name, i+1)
					}
					pending = false
				case strings.HasPrefix(l, "bra.uni $L_for_") && !uncommitted:
				case strings.HasPrefix(l, "st."), strings.HasPrefix(l, "bar."), strings.HasPrefix(l, "ret"), strings.HasPrefix(l, "bra"):
					if pending {
						t.Errorf("%s: line %d: %q while wgmma ops are in flight", name, i+1, l)
					}
				}
				if strings.HasPrefix(l, "bar.sync") && strings.TrimSpace(lines[i-1]) != "fence.proxy.async.shared::cta;" {
					t.Errorf("%s: line %d: barrier without fence.proxy.async", name, i+1)
				}
			}
		}
	}
}

// TestWgmmaPipeline checks how long wgmma ops stay in flight in the
// matmuls' main loops. With one warpgroup per workgroup they cross
// barriers and the loop's back edge, and a copy into a stage waits only
// for the groups reading it: in matmul_tc_f16_wg_late, which multiplies a
// stage before copying into the one its previous step read, each copy
// leaves the newest group running (wgmma.wait_group 1) and nothing in the
// loop waits for all. With two warpgroups another warpgroup may overwrite
// a stage once past a barrier, so each barrier first waits for the groups
// reading what the ops up to the next barrier write: in
// matmul_tc_f16_wg2 (three stages, each step copying into the stage the
// step before read) that is every group, and in matmul_tc_f16_wg2_s4 and
// _wg4_s4 (four stages, the copies two steps behind) all but the newest,
// at every barrier of the loop, the back edge included.
func TestWgmmaPipeline(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "matmul_tc.loom"))
	loop := func(export string) []string {
		k, err := Compile([]*loom.Module{m}, export, Options{SM: 90})
		if err != nil {
			t.Fatal(err)
		}
		body := strings.Split(launchedPTX(k), "\n")
		start, end := -1, -1
		for i, l := range body {
			if strings.HasPrefix(l, "$L_for_") && start < 0 {
				start = i
			}
			if start >= 0 && strings.Contains(l, "bra.uni $L_for_") {
				end = i
				break
			}
		}
		if start < 0 || end < 0 {
			t.Fatalf("%s: no main loop in\n%s", export, launchedPTX(k))
		}
		return body[start:end]
	}
	late := loop("matmul_tc_f16_wg_late")
	waits := map[string]int{}
	for _, l := range late {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "wgmma.wait_group") {
			waits[l]++
		}
	}
	if waits["wgmma.wait_group.sync.aligned 1;"] != 3 || len(waits) != 1 {
		t.Errorf("matmul_tc_f16_wg_late: loop waits %v, want wgmma.wait_group 1 before each of the 3 stages' copies alone", waits)
	}
	pending := false
	for i, l := range loop("matmul_tc_f16_wg2") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "wgmma.mma_async"):
			pending = true
		case l == "wgmma.wait_group.sync.aligned 0;":
			pending = false
		case strings.HasPrefix(l, "bar.sync") && pending:
			t.Errorf("matmul_tc_f16_wg2: loop line %d: a barrier with wgmma ops of one warpgroup in flight", i)
		}
	}
	for _, export := range []string{"matmul_tc_f16_wg2_s4", "matmul_tc_f16_wg4_s4"} {
		var s4 []string
		for _, l := range loop(export) {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "wgmma.wait_group") || strings.HasPrefix(l, "bar.sync") {
				s4 = append(s4, l)
			}
		}
		want := strings.Repeat("wgmma.wait_group.sync.aligned 1;|bar.sync 0;|", 4)
		if got := strings.Join(s4, "|") + "|"; got != want {
			t.Errorf("%s: loop waits and barriers %q, want %q", export, got, want)
		}
	}
}

// TestWgmmaCarriedRegisters checks that a loop's next trip does not
// overwrite the lhs registers a wgmma of the last trip may still read:
// in wg_loop_lhs the trips carry their accumulators in place, so the
// wgmma stays in flight over the back edge, and each trip's lhs load must
// first wait for it.
func TestWgmmaCarriedRegisters(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "wgmma.loom"))
	k, err := Compile([]*loom.Module{m}, "wg_loop_lhs", Options{SM: 90})
	if err != nil {
		t.Fatal(err)
	}
	loops := 0
	inLoop, waited := false, false
	for i, l := range strings.Split(k.PTX, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "$L_for_"):
			loops++
			inLoop, waited = true, false
		case !inLoop:
		case strings.HasPrefix(l, "wgmma.wait_group"):
			waited = true
		case strings.HasPrefix(l, "ld.global"):
			if !waited {
				t.Errorf("line %d: %q loads the lhs before waiting for the last trip's wgmma", i+1, l)
			}
			inLoop = false
		}
	}
	if loops == 0 {
		t.Fatalf("no loop in\n%s", k.PTX)
	}
}

// TestWgmmaFences checks where wgmma.fence goes: before a wgmma whose
// registers other instructions may have written since the last wgmma, and
// nowhere else. In matmul_tc_f16_wg4_s4's loop each step's four wgmma ops
// read both operands through descriptors and chain on one set of
// accumulators, so one fence leads each step, and between a wgmma and the
// unfenced one after it there is only descriptor arithmetic: no label,
// branch, barrier, wait or commit, and no write of an accumulator.
func TestWgmmaFences(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "matmul_tc.loom"))
	k, err := Compile([]*loom.Module{m}, "matmul_tc_f16_wg4_s4", Options{SM: 90})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Split(launchedPTX(k), "\n")
	start := loopStart(body)
	if start < 0 {
		t.Fatal("no main loop")
	}
	accs := regexp.MustCompile(`\{([^}]*)\}`)
	fences, mmas := 0, 0
	var since []string // lines since the last wgmma, when unfenced
	for i, l := range body[start+1:] {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "bra.uni $L_for_") {
			break
		}
		switch {
		case l == "wgmma.fence.sync.aligned;":
			fences++
			since = nil
		case strings.HasPrefix(l, "wgmma.mma_async"):
			mmas++
			if since != nil {
				written := map[string]bool{}
				for _, r := range strings.Split(accs.FindStringSubmatch(l)[1], ", ") {
					written[r] = true
				}
				for _, x := range since {
					f := strings.Fields(strings.TrimSuffix(x, ";"))
					if strings.HasSuffix(x, ":") || strings.HasPrefix(x, "bra") || strings.HasPrefix(x, "bar.") || strings.HasPrefix(x, "wgmma.") || strings.HasPrefix(x, "cp.async") ||
						len(f) > 1 && written[strings.TrimSuffix(f[1], ",")] {
						t.Errorf("loop line %d: a wgmma without a fence after %q", i, x)
					}
				}
			}
			since = []string{}
		case since != nil:
			since = append(since, l)
		}
	}
	if mmas != 16 || fences != 4 {
		t.Errorf("loop: %d wgmma ops and %d fences, want 16 and one a step (4)", mmas, fences)
	}
}

// TestWgmmaAllocaTiles checks that tiles in a workgroup allocation are
// known to wgmma and to its barrier rule in both spellings: wg_lhs_alloca
// (attributes, Loom's own form, base_alignment 16) and the same with
// `<workgroup> align(16)`. Each is declared on an atom boundary, and the
// trip-top barrier, after which the other warpgroup overwrites the tiles
// the last trip's wgmma read, waits for them. (Values point at the alloca
// as parsed, whose parameter the shared pass's rewrite does not fill in.)
func TestWgmmaAllocaTiles(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "wgmma.loom"))
	if err != nil {
		t.Fatal(err)
	}
	attrs := "%s = buffer.alloca %sbytes {base_alignment = 16, memory_space = workgroup} : buffer"
	param := strings.Replace(string(b), attrs, "%s = buffer.alloca<workgroup> align(16) %sbytes : buffer", 1)
	if param == string(b) {
		t.Fatal("wgmma.loom changed: wg_lhs_alloca has no attribute-form alloca")
	}
	// Another 23 KiB allocation: 47.5 KiB in all fits the static limit,
	// but not with each allocation on an atom boundary, so mma.sync.
	crowded := strings.Replace(string(b), attrs, attrs+"\n  %padbytes = index.constant 23552 : offset\n  %pad = buffer.alloca %padbytes {base_alignment = 16, memory_space = workgroup} : buffer", 1)
	if k := compileExport(t, crowded, "wg_lhs_alloca"); strings.Contains(launchedPTX(k), "wgmma") || k.WorkgroupStorageBytes > 48<<10 {
		t.Errorf("crowded: wgmma, or %d bytes of static workgroup memory", k.WorkgroupStorageBytes)
	}
	for name, src := range map[string]string{"attributes": string(b), "parameter": param} {
		k := compileExport(t, src, "wg_lhs_alloca")
		ptx := launchedPTX(k)
		if !strings.Contains(ptx, "wgmma.mma_async") || !strings.Contains(ptx, ".shared .align 1024 .b8 __loom_smem_") {
			t.Fatalf("%s: no wgmma, or the allocation is not atom-aligned", name)
		}
		lines := strings.Split(ptx, "\n")
		start := loopStart(lines)
		if start < 0 {
			t.Fatalf("%s: no loop", name)
		}
		waited := false
		for _, l := range lines[start:] {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "wgmma.wait_group") {
				waited = true
			}
			if strings.HasPrefix(l, "bar.sync") {
				break
			}
		}
		if !waited {
			t.Errorf("%s: the loop's first barrier does not wait for the last trip's wgmma", name)
		}
	}
}

// compileExport compiles export of Loom source src for sm_90.
func compileExport(t *testing.T, src, export string) *Kernel {
	t.Helper()
	m, err := loom.ParseFile(export+".loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, export, Options{SM: 90})
	if err != nil {
		t.Fatalf("%s: %v", export, err)
	}
	return k
}
