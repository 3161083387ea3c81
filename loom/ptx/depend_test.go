package ptx

import (
	"strings"
	"testing"
)

// TestEntryWaitsForPredecessors: on sm_90 every build's body begins with
// griddepcontrol.wait and then griddepcontrol.launch_dependents, before any
// instruction that touches memory, so a programmatic dependency is safe
// (WaitsForPredecessors); sm_80, which has neither, emits neither.
func TestEntryWaitsForPredecessors(t *testing.T) {
	for _, sm := range []int{80, 90} {
		k := compileTestdataFor(t, "copy_bw.loom", "copy_v4_f32", Options{SM: sm})
		if k.AlignedPTX == "" {
			t.Fatal("copy_v4_f32 has no build for aligned buffers to check")
		}
		if k.WaitsForPredecessors != (sm >= 90) {
			t.Fatalf("sm_%d: WaitsForPredecessors = %v", sm, k.WaitsForPredecessors)
		}
		for name, text := range map[string]string{"versioned": k.PTX, "aligned": k.AlignedPTX} {
			body := text[strings.Index(text, "{\n"):]
			var first []string // the body's instructions, declarations left out
			for _, line := range strings.Split(body, "\n")[1:] {
				line = strings.TrimSpace(line)
				if line != "" && !strings.HasPrefix(line, ".") {
					first = append(first, line)
				}
			}
			waits := len(first) > 1 && first[0] == "griddepcontrol.wait;" && first[1] == "griddepcontrol.launch_dependents;"
			if waits != (sm >= 90) || strings.Count(body, "griddepcontrol") != 2*btoi(sm >= 90) {
				t.Fatalf("sm_%d %s build begins %q", sm, name, first[:min(3, len(first))])
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
