package gen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// benchSources writes copies of the example model's kernels (five kernels
// a file) with renamed exports, symbols and config keys until there are n
// kernels, and returns the directory and the total size of Loom written.
func benchSources(b *testing.B, n, padLines int) (string, int) {
	b.Helper()
	src, err := os.ReadFile("../examples/gen/kernels/mlp.loom")
	if err != nil {
		b.Fatal(err)
	}
	exports := regexp.MustCompile(`export\("([a-z_]+)"\) @([a-z_]+)`)
	per := len(exports.FindAll(src, -1))
	dir := b.TempDir()
	total := 0
	for i := 0; i*per < n; i++ {
		text := exports.ReplaceAll(src, []byte(fmt.Sprintf(`export("${1}_%d") @${2}_%d`, i, i)))
		// The files form one package: each copy gets its own config keys.
		text = bytes.ReplaceAll(text, []byte("@mlp."), []byte(fmt.Sprintf("@mlp%d.", i)))
		if padLines > 0 {
			text = bytes.ReplaceAll(text, []byte("  kernel.return\n"), padding(padLines))
		}
		name := filepath.Join(dir, "kernels", fmt.Sprintf("mlp_%03d.loom", i))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(name, text, 0o644); err != nil {
			b.Fatal(err)
		}
		total += len(text)
	}
	return dir, total
}

// padding is a block of index arithmetic inserted before kernel.return to
// grow kernel bodies to the size of large production kernels; the parser
// and the analyses process it like any other code.
func padding(lines int) []byte {
	var buf bytes.Buffer
	buf.WriteString("  %pad_0 = index.constant 3 : index\n")
	for i := 1; i < lines; i++ {
		fmt.Fprintf(&buf, "  %%pad_%d = index.add %%pad_%d, %%pad_0 : index\n", i, i-1)
	}
	buf.WriteString("  kernel.return\n")
	return buf.Bytes()
}

// BenchmarkGenerate400 generates the bindings of 400 kernels of the example
// model's size (about 1 MB of Loom), with the package name given as go
// generate gives it.
func BenchmarkGenerate400(b *testing.B) { benchGenerate(b, 0) }

// BenchmarkGenerate400x5MB does the same with kernel bodies grown to about
// 5 MB of Loom in all (target: under a second per run).
func BenchmarkGenerate400x5MB(b *testing.B) { benchGenerate(b, 270) }

func benchGenerate(b *testing.B, pad int) {
	dir, size := benchSources(b, 400, pad)
	b.ReportMetric(float64(size)/1e6, "MB-loom")
	b.SetBytes(int64(size))
	for b.Loop() {
		res, err := Generate(Options{Inputs: []string{"kernels"}, Dir: dir, Package: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Model.Kernels) != 400 {
			b.Fatalf("%d kernels", len(res.Model.Kernels))
		}
	}
}

// BenchmarkPackageDiscovery is the go/packages lookup of the package name
// and import path, taken when neither -pkg nor $GOPACKAGE names it.
func BenchmarkPackageDiscovery(b *testing.B) {
	dir, err := filepath.Abs(".")
	if err != nil {
		b.Fatal(err)
	}
	none := func(string) string { return "" }
	for b.Loop() {
		p, err := LoadPackage(PackageOptions{Dir: dir, Getenv: none, Workdir: "/"})
		if err != nil || p.ImportPath != "github.com/loomgen/loomgen/gen" {
			b.Fatalf("%+v %v", p, err)
		}
	}
}
