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
	sub, inf := math.Float32frombits(1), float32(math.Inf(1))
	vals := []float32{0, float32(math.Copysign(0, -1)), sub, 3 * sub, 1e-40, 1e-30, 0.1, 0.3, 1, 1.5, 3, 7,
		16777217, 1e30, 3e38, math.MaxFloat32, inf, float32(math.NaN())}
	var b []byte
	for _, x := range vals {
		for _, y := range vals {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(-y))
		}
	}
	remfOnDevice(t, "remf", b, len(vals)*len(vals), 4)
}

// TestGPURemf64Special runs ops_misc.loom's remf64 (f64 fmod on the
// integer significands, mathfn.go) on mathacc.FmodPairs64 and compares
// the GPU's words with the CPU executor's, which TestOpsRemf64 holds to
// Go's math.Mod bit for bit.
func TestGPURemf64Special(t *testing.T) {
	var b []byte
	pairs := mathacc.FmodPairs64()
	for _, p := range pairs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p[0]))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(p[1]))
	}
	remfOnDevice(t, "remf64", b, len(pairs), 8)
}

// remfOnDevice runs ops_misc.loom's kernel export over n operand pairs
// src (six results of size bytes each per pair) on the GPU and on the CPU
// executor and compares the results exactly.
func remfOnDevice(t *testing.T, export string, src []byte, n, size int) {
	ctx, s := gpuContext(t)
	m := parse(t, filepath.Join("..", "testdata", "ops_misc.loom"))
	var kd *loom.Kernel
	for _, x := range m.Kernels {
		if x.Export == export {
			kd = x
		}
	}
	k, err := Compile([]*loom.Module{m}, export, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCase([]*loom.Module{m}, kd, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Accuracy.Exact() {
		t.Fatalf("%s counted as inexact: the comparison would allow a tolerance", export)
	}
	c.Args = []interp.Arg{{Bits: uint64(n)}, {Buffer: src}, {Buffer: make([]byte, size*6*n)}}
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
