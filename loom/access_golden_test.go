package loom

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The -update flag may also be defined by other test files of the package
// (as a package-level var, which initializes before any init function);
// define it only when nobody has.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// analysisDump prints everything the analyses say about the kernels of p,
// deterministically, for golden files.
func analysisDump(p *Program) string {
	var b strings.Builder
	for _, k := range p.Kernels() {
		fmt.Fprintf(&b, "kernel %q @%s %s\n", k.Export, k.Symbol, k.Op.Pos)
		acc := p.Access(k)
		for _, a := range acc {
			elem := "-"
			if a.Elem != nil {
				elem = a.Elem.String()
			}
			fmt.Fprintf(&b, "  access %%%s %s %s elem=%s\n", a.Param.Name, a.Access, a.Basis, elem)
			for _, e := range a.Evidence {
				fmt.Fprintf(&b, "    %d:%d %s %s %s", e.Pos.Line, e.Pos.Col, e.Op, e.Effect, e.Basis)
				if e.Reason != "" {
					fmt.Fprintf(&b, " (%s)", e.Reason)
				}
				b.WriteByte('\n')
			}
		}
		if l, err := p.LaunchExprs(k); err != nil {
			fmt.Fprintf(&b, "  launch error: %v\n", err)
		} else {
			fmt.Fprintf(&b, "  workgroups %v %v %v\n", l.Workgroups[0], l.Workgroups[1], l.Workgroups[2])
			fmt.Fprintf(&b, "  workgroup_size %v %v %v\n", l.WorkgroupSize[0], l.WorkgroupSize[1], l.WorkgroupSize[2])
			fmt.Fprintf(&b, "  cluster_size %v %v %v\n", l.ClusterSize[0], l.ClusterSize[1], l.ClusterSize[2])
			if g, ok := l.StaticGeometry(); ok {
				fmt.Fprintf(&b, "  static %v %v %v\n", g.Workgroups, g.WorkgroupSize, g.ClusterSize)
			}
		}
		for _, e := range p.Extents(k) {
			if e.Bytes != nil {
				fmt.Fprintf(&b, "  extent %%%s %v\n", e.Param.Name, e.Bytes)
			} else {
				fmt.Fprintf(&b, "  extent %%%s unknown: %s\n", e.Param.Name, e.Reason)
			}
		}
		for _, c := range p.ArgChecks(k) {
			fmt.Fprintf(&b, "  check %s %d:%d\n", c.Text, c.Pos.Line, c.Pos.Col)
		}
		fmt.Fprintf(&b, "  fingerprint %s\n", Fingerprint(p, k))
	}
	return b.String()
}

// TestAnalysisGoldens checks access modes with evidence, launch geometry,
// extents, checks and fingerprints of every corpus kernel against
// testdata/analysis/<name>.golden (go test -run TestAnalysisGoldens -update).
func TestAnalysisGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.loom")
	if len(files) == 0 {
		t.Skip("no corpus")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".loom")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseFile(filepath.Base(f), src)
			if err != nil {
				t.Skipf("corpus file does not parse (the parser's tests cover it): %v", err)
			}
			p, err := NewProgram(m)
			if err != nil {
				t.Fatal(err)
			}
			got := analysisDump(p)
			golden := filepath.Join("testdata", "analysis", name+".golden")
			if updating() {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if got != string(want) {
				t.Errorf("analysis of %s differs from %s (run with -update after checking):\n%s", f, golden, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines that differ, for failure messages.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, a, c)
		}
	}
	return b.String()
}
