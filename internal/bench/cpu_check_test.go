package bench

import (
	"math"
	"testing"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// runOnCPU runs an instance on the CPU executor with its launch config and
// returns the output bytes.
func runOnCPU(t testing.TB, inst *Instance) []byte {
	t.Helper()
	m, err := parseKernel(inst.File)
	if err != nil {
		t.Fatal(err)
	}
	grid, block, err := Geometry(m, inst.Export, inst.Workload)
	if err != nil {
		t.Fatal(err)
	}
	k, err := interp.Compile([]*loom.Module{m}, inst.Export, interp.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	args := make([]interp.Arg, len(inst.Args))
	outAt := -1
	for i, a := range inst.Args {
		switch {
		case a.Scalar:
			args[i] = interp.Arg{Bits: a.Bits}
		case a.Out > 0:
			buf := make([]byte, a.Out)
			for j := 0; j+4 <= len(buf); j += 4 {
				copy(buf[j:], []byte{0, 0, 0xc0, 0x7f}) // NaN: unwritten elements fail
			}
			args[i], outAt = interp.Arg{Buffer: buf}, i
		default:
			args[i] = interp.Arg{Buffer: a.Buffer}
		}
	}
	l := interp.Launch{Workgroups: grid, WorkgroupSize: block}
	if err := k.Run(l, args); err != nil {
		t.Fatal(err)
	}
	return args[outAt].Buffer
}

// TestKernelsOnCPU runs every suite kernel at a small shape on the CPU
// executor and checks it against the suite's own reference, then checks
// that the reference rejects a corrupted output: the GPU suite relies on
// both before it times anything.
func TestKernelsOnCPU(t *testing.T) {
	cases := []struct {
		name string
		inst *Instance
	}{
		{"sgemm", SGEMM(256, 128, 24, 1)},
		{"rmsnorm", RMSNorm(3, 2048)},
		{"softmax", Softmax("softmax_f32", 3, 4096)},
		{"softmax/loop", Softmax("softmax_f32_loop", 3, 4096)},
		{"softmax/back", Softmax("softmax_f32_back", 3, 4096)},
		{"softmax/eight-trips", Softmax("softmax_f32", 2, 16384)},
		{"rope", RoPE(3, 16)},
		{"q8_0", Q8_0("matvec_q8_0", 13, 4096)},
		{"q4_K", Q4K("matvec_q4_k", 13, 4096)},
		// Beyond one 16384-column chunk of quantized activations.
		{"q8_0/two-chunks", Q8_0("matvec_q8_0", 5, 18432)},
		{"q4_K/two-chunks", Q4K("matvec_q4_k", 5, 18432)},
		// A one-step row (no next step to carry) and an odd step count
		// with a partial workgroup (14336 columns: x loaded in four parts
		// by some invocations, three by others).
		{"q8_0/one-step", Q8_0("matvec_q8_0", 3, 2048)},
		{"q8_0/odd-steps", Q8_0("matvec_q8_0", 37, 14336)},
		{"q4_K/one-step", Q4K("matvec_q4_k", 3, 2048)},
		{"q4_K/odd-steps", Q4K("matvec_q4_k", 37, 14336)},
		{"attention", Attention(2, 512)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := runOnCPU(t, c.inst)
			worst, err := c.inst.Check(o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("largest error %.3g of the tolerance", worst)
			v := f32s(o)
			v[len(v)/2] = v[len(v)/2]*1.01 + 0.01
			if _, err := c.inst.Check(f32le(v)); err == nil {
				t.Error("an output off by 1% passed the check")
			}
			v[len(v)/2] = float32(math.NaN())
			if _, err := c.inst.Check(f32le(v)); err == nil {
				t.Error("an unwritten (NaN) output passed the check")
			}
		})
	}
}

// BenchmarkCPUExecutor runs suite kernels shaped like a model's on the CPU
// executor (two workers, as TestKernelsOnCPU), for the executor's own
// work: the decode attention over 4096 positions of 8 kv heads, and a
// q4_K mat-vec.
func BenchmarkCPUExecutor(b *testing.B) {
	for _, c := range []struct {
		name string
		inst *Instance
	}{
		{"attention/8x4096", Attention(8, 4096)},
		{"q4_K/256x4096", Q4K("matvec_q4_k", 256, 4096)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				runOnCPU(b, c.inst)
			}
		})
	}
}
