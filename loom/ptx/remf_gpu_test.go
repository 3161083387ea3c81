package ptx

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/internal/mathacc"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// TestGPURemfSpecial runs ops_misc.loom's remf on operands the corpus
// inputs never reach (signed zeros, subnormals, exponent gaps of up to 276
// binades, infinities, NaNs) and compares the GPU's words with the CPU
// executor's, which TestOpsRemf holds to Go's math.Mod bit for bit.
func TestGPURemfSpecial(t *testing.T) {
	ctx, s := gpuContext(t)
	sub, inf := math.Float32frombits(1), float32(math.Inf(1))
	vals := []float32{0, float32(math.Copysign(0, -1)), sub, 3 * sub, 1e-40, 1e-30, 0.1, 0.3, 1, 1.5, 3, 7,
		16777217, 1e30, 3e38, math.MaxFloat32, inf, float32(math.NaN())}
	var src []float32
	for _, x := range vals {
		for _, y := range vals {
			src = append(src, x, -y)
		}
	}
	n := len(src) / 2
	m := parse(t, filepath.Join("..", "testdata", "ops_misc.loom"))
	var kd *loom.Kernel
	for _, x := range m.Kernels {
		if x.Export == "remf" {
			kd = x
		}
	}
	k, err := Compile([]*loom.Module{m}, "remf", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCase([]*loom.Module{m}, kd, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Accuracy.Exact() {
		t.Fatal("remf counted as inexact: the comparison would allow a tolerance")
	}
	b := make([]byte, 4*len(src))
	for i, x := range src {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	c.Args = []interp.Arg{{Bits: uint64(n)}, {Buffer: b}, {Buffer: make([]byte, 4*6*n)}}
	c.Launch.Workgroups = [3]int{(n + 63) / 64, 1, 1}
	want, err := runCPU(c)
	if err != nil {
		t.Fatal(err)
	}
	got := runGPU(t, ctx, s, k, c, 0)
	if err := compare(c, 2, got[2], want[2]); err != nil {
		t.Error(err)
	}
}

// TestGPURemf64Special runs ops_misc.loom's remf64 (f64 fmod on the
// integer significands, mathfn.go) on mathacc.FmodPairs64 and compares
// the GPU's words with the CPU executor's, which TestOpsRemf64 holds to
// Go's math.Mod bit for bit.
func TestGPURemf64Special(t *testing.T) {
	ctx, s := gpuContext(t)
	pairs := mathacc.FmodPairs64()
	n := len(pairs)
	m := parse(t, filepath.Join("..", "testdata", "ops_misc.loom"))
	var kd *loom.Kernel
	for _, x := range m.Kernels {
		if x.Export == "remf64" {
			kd = x
		}
	}
	k, err := Compile([]*loom.Module{m}, "remf64", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCase([]*loom.Module{m}, kd, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Accuracy.Exact() {
		t.Fatal("remf64 counted as inexact: the comparison would allow a tolerance")
	}
	b := make([]byte, 16*n)
	for i, p := range pairs {
		binary.LittleEndian.PutUint64(b[16*i:], math.Float64bits(p[0]))
		binary.LittleEndian.PutUint64(b[16*i+8:], math.Float64bits(p[1]))
	}
	c.Args = []interp.Arg{{Bits: uint64(n)}, {Buffer: b}, {Buffer: make([]byte, 8*6*n)}}
	c.Launch.Workgroups = [3]int{(n + 63) / 64, 1, 1}
	want, err := runCPU(c)
	if err != nil {
		t.Fatal(err)
	}
	got := runGPU(t, ctx, s, k, c, 0)
	if err := compare(c, 2, got[2], want[2]); err != nil {
		t.Error(err)
	}
}
