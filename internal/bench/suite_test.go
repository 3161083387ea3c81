package bench

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCPUSuiteReportAndPlots runs the CPU suite at a small size and takes
// its report through JSON, the Markdown tables and the plots, as
// loombench does on a machine without a GPU.
func TestCPUSuiteReportAndPlots(t *testing.T) {
	rep := &Report{Machine: Machine(), Method: Method}
	if err := RunCPU(CPUOptions{Rounds: 3, N: 1 << 16}, rep); err != nil {
		t.Fatal(err)
	}
	var tree *Result
	for i, r := range rep.Results {
		if r.Group != "cpu" || len(r.Sides) != 2 || len(r.Ratios) != 1 || !(r.Ratios[0].Median > 0) {
			t.Errorf("result %+v is not a timed CPU comparison", r)
		}
		if r.Name == "tree reduction/1" {
			tree = &rep.Results[i]
		}
	}
	if !slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Name == "attention/1" && r.Shape == "32x8x128" }) {
		t.Errorf("no one-worker attention over 128 positions in %+v", rep.Results)
	}
	if tree == nil || tree.Ratios[0].Target != 1.0/3 || tree.Ratios[0].Met == nil {
		t.Fatalf("no one-worker tree reduction held to its target in %+v", rep.Results)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != len(rep.Results) {
		t.Fatalf("JSON round trip kept %d of %d results", len(back.Results), len(rep.Results))
	}
	if err := Plot(back, dir); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "cpu.png")); err != nil || st.Size() == 0 {
		t.Errorf("cpu.png not drawn: %v", err)
	}
	var md strings.Builder
	Markdown(&md, back)
	if !strings.Contains(md.String(), "| tree reduction/1 |") || !strings.Contains(md.String(), "target ≥ 0.333") {
		t.Errorf("tables lack the tree reduction's row and target:\n%s", md.String())
	}
}
