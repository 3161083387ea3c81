package ptx

import (
	"regexp"
	"strings"
	"testing"
)

// touchesMemoryRE matches a PTX line that reads or writes memory other
// than a parameter, synchronizes, branches or labels a branch target:
// what must not come before the entry wait. It is written apart from
// beforeEntryWait's list on purpose, so the two check each other.
var touchesMemoryRE = regexp.MustCompile(`^\s*(?:@!?%p\d+\s+)?(?:ld\.(?:global|shared|local|const|volatile|acquire|relaxed)|ldu|ld\.[a-z0-9]*\s|ldmatrix|st\.|stmatrix|atom|red\.|cp\.|wgmma|mma|bar|fence|membar|bra|ret|exit|call|tex|suld|sust|\$?[A-Za-z_][A-Za-z0-9_$]*:)`)

// checkEntryWait: an sm_90 build holds entryWait once, and no line before
// it touches memory, synchronizes or branches; an older target holds
// none of it.
func checkEntryWait(t *testing.T, name, text string, sm int) {
	t.Helper()
	body := text[strings.Index(text, "{\n")+2:]
	n := strings.Count(body, "griddepcontrol")
	if sm < 90 {
		if n != 0 {
			t.Errorf("%s: sm_%d build has griddepcontrol", name, sm)
		}
		return
	}
	at := strings.Index(body, entryWait)
	if at < 0 || n != 2 {
		t.Errorf("%s: want the entry wait once, have %d griddepcontrol instructions", name, n)
		return
	}
	for _, line := range strings.Split(body[:at], "\n") {
		if touchesMemoryRE.MatchString(line) {
			t.Errorf("%s: %q comes before the entry wait", name, strings.TrimSpace(line))
		}
	}
}

// TestEntryWaitsForPredecessors: on sm_90 every build waits for its
// predecessors (griddepcontrol.wait, then launch_dependents) before any
// instruction that touches memory, so a programmatic dependency is safe
// (WaitsForPredecessors); sm_80, which has neither, emits neither.
// TestAlignedBuildIsAlignedVersion checks the placement in every kernel
// of the corpora.
func TestEntryWaitsForPredecessors(t *testing.T) {
	for _, sm := range []int{80, 90} {
		k := compileTestdataFor(t, "copy_bw.loom", "copy_v4_f32", Options{SM: sm})
		if k.AlignedPTX == "" {
			t.Fatal("copy_v4_f32 has no build for aligned buffers to check")
		}
		if k.WaitsForPredecessors != (sm >= 90) {
			t.Fatalf("sm_%d: WaitsForPredecessors = %v", sm, k.WaitsForPredecessors)
		}
		checkEntryWait(t, "copy_v4_f32 versioned", k.PTX, sm)
		checkEntryWait(t, "copy_v4_f32 aligned", k.AlignedPTX, sm)
	}
}

// TestEntryWaitPlacement: the wait comes after the address arithmetic
// and global prefetches the entry begins with, and before the first
// load, store, barrier or branch.
func TestEntryWaitPlacement(t *testing.T) {
	head := sweepKernelHead + `  %wv = buffer.view %a[%z] : buffer -> view<[%n]xf32>
  %ov = buffer.view %o[%z] : buffer -> view<[%n]xf32>
  %c32 = index.constant 32 : index
  %i = index.mul %tid, %c32 : index
`
	for _, c := range []struct {
		name, body string
		before     []string // instructions that stay ahead of the wait
		after      []string // instructions the wait precedes
	}{
		{"prefetch then load", `
  view.prefetch %wv[%i] {intent = read, locality = l2} : view<[%n]xf32>
  %v = view.load %wv[%tid] : view<[%n]xf32> -> f32
  view.store %v, %ov[%tid] : f32, view<[%n]xf32>
  kernel.return
}`, []string{"prefetch.global.L2", "ld.param.u64", "mov.u32 %r"}, []string{"ld.global", "st.global"}},
		{"barrier first", `
  kernel.barrier
  view.prefetch %wv[%i] {intent = read, locality = l2} : view<[%n]xf32>
  %v = view.load %wv[%tid] : view<[%n]xf32> -> f32
  view.store %v, %ov[%tid] : f32, view<[%n]xf32>
  kernel.return
}`, []string{"ld.param.u64"}, []string{"bar.sync", "prefetch.global.L2", "ld.global"}},
		{"loop first", `
  %c0 = index.constant 0 : index
  %step = index.constant 64 : index
  scf.for %j = [%c0 to %n step %step] {
    %k = index.add %j, %tid : index
    view.prefetch %wv[%k] {intent = read, locality = l2} : view<[%n]xf32>
    scf.yield
  }
  %v = view.load %wv[%tid] : view<[%n]xf32> -> f32
  view.store %v, %ov[%tid] : f32, view<[%n]xf32>
  kernel.return
}`, []string{"ld.param.u64"}, []string{"prefetch.global.L2", "ld.global", "bra"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := compileExport(t, head+c.body, "k")
			for name, text := range map[string]string{"versioned": k.PTX, "aligned": k.AlignedPTX} {
				if text == "" {
					continue
				}
				checkEntryWait(t, name, text, 90)
				at := strings.Index(text, entryWait)
				for _, w := range c.before {
					if i := strings.Index(text, w); i < 0 || i > at {
						t.Errorf("%s: %q is not ahead of the entry wait:\n%s", name, w, text)
					}
				}
				for _, w := range c.after {
					if i := strings.Index(text, w); i < at {
						t.Errorf("%s: %q is not after the entry wait:\n%s", name, w, text)
					}
				}
			}
		})
	}
}
