package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"path/filepath"

	"github.com/loomgen/loomgen/templates"
)

// CheckTestFile is the generated test file that runs the check.case and
// check.benchmark definitions of a package's sources (through checkrun),
// written beside the bindings.
const CheckTestFile = "loom_check_test.go"

// renderCheckTest renders the check test file of m, or nil when the
// sources hold no check.case.
func renderCheckTest(m *Model) ([]byte, error) {
	data := templates.CheckTestData{Package: m.Package}
	if m.Program != nil {
		for _, mod := range m.Program.Modules {
			for _, op := range mod.Ops {
				switch op.Name {
				case "check.case":
					data.Cases = append(data.Cases, op.Symbol)
				case "check.benchmark":
					data.Benchmarks = append(data.Benchmarks, op.Symbol)
				}
			}
		}
	}
	if len(data.Cases) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	if err := templates.CheckTest(&b, data); err != nil {
		return nil, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("gen: formatting %s: %w", CheckTestFile, err)
	}
	return src, nil
}

// checkTestPath is where the check test of bindings at out goes.
func checkTestPath(out string) string { return filepath.Join(filepath.Dir(out), CheckTestFile) }
