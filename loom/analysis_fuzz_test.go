package loom

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzAccess parses arbitrary input and, when the parser accepts it, runs
// every analysis on every kernel: none may panic or hang.
func FuzzAccess(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.loom")
	frontend, _ := filepath.Glob("testdata/frontend/*.loom")
	for _, path := range append(files, frontend...) {
		if src, err := os.ReadFile(path); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte(`kernel.def @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%b: buffer) {
  %r = scf.for %i = [%c1 to %c1 step %c1] (%v = %b : buffer) -> (buffer) {
    func.call @k2(%v) : (buffer)
    scf.yield %v : buffer
  }
  kernel.return
}
func.def @k2(%x: buffer) {
  func.call @k2(%x) : (buffer)
  func.return
}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := ParseFile("fuzz.loom", src)
		if err != nil || m == nil {
			return
		}
		p, _ := NewProgram(m)
		if p == nil {
			return
		}
		for _, k := range p.Kernels() {
			_ = p.Access(k)
			_ = Fingerprint(p, k)
			for _, e := range p.Extents(k) {
				if e.Bytes != nil {
					_, _ = e.Bytes.Eval(&Env{})
				}
			}
			for _, c := range p.ArgChecks(k) {
				_, _ = c.Eval(&Env{})
			}
			if l, err := p.LaunchExprs(k); err == nil {
				_, _ = l.Eval(&Env{})
				_, _ = p.LaunchConfig(k, nil)
			}
		}
	})
}
