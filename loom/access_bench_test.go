package loom

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseAnalyse measures parse + every analysis over the corpus,
// reported in MB/s of Loom source (target: > 10 MB/s, i.e. 5 MB of kernels
// in under 0.5 s on one core).
func BenchmarkParseAnalyse(b *testing.B) {
	files, _ := filepath.Glob("testdata/*.loom")
	type input struct {
		name string
		src  []byte
	}
	var ins []input
	total := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseFile(f, src); err != nil {
			continue
		}
		ins = append(ins, input{f, src})
		total += len(src)
	}
	if total == 0 {
		b.Skip("no corpus")
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		for _, in := range ins {
			m, err := ParseFile(in.name, in.src)
			if err != nil {
				b.Fatal(err)
			}
			p, err := NewProgram(m)
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range p.Kernels() {
				acc := p.Access(k)
				_ = acc
				_ = Fingerprint(p, k)
				_ = p.Extents(k)
				_ = p.ArgChecks(k)
				_, _ = p.LaunchExprs(k)
			}
		}
	}
}
