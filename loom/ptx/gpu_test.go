package ptx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/loom"
)

// gpuContext opens device 0 through the CUDA driver, or skips.
func gpuContext(tb testing.TB) (*hip.Context, *hip.Stream) {
	tb.Helper()
	s, err := hip.OpenStream(hip.CUDA, 0)
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		tb.Skipf("no NVIDIA GPU: %v", err)
	}
	if err != nil {
		tb.Fatalf("opening GPU 0 through the CUDA driver: %v", err)
	}
	tb.Cleanup(func() { s.Close(); s.Context().Close() })
	return s.Context(), s
}

// corpusCases compiles every corpus kernel and builds its inputs; kernels
// the backend refuses, or whose launch the analyses cannot size, are left
// out (the refusals are covered by TestCorpusCompilesOrRefuses).
func corpusCases(t *testing.T) ([]*crosscheck.Case, []*Kernel) {
	var cases []*crosscheck.Case
	var ks []*Kernel
	for _, path := range corpusFiles(t) {
		m := parse(t, path)
		for _, kd := range m.Kernels {
			if kd.Decl {
				continue
			}
			cfg := testConfig(m)
			k, err := Compile([]*loom.Module{m}, kd.Export, Options{Config: cfg})
			if err != nil {
				continue
			}
			c, err := newCase([]*loom.Module{m}, kd, cfg, 12345)
			if err != nil {
				t.Logf("%s: no inputs: %v", kd.Export, err)
				continue
			}
			c.Name = filepath.Base(path) + "/" + kd.Export
			cases = append(cases, c)
			ks = append(ks, k)
		}
	}
	return cases, ks
}

// runCPU runs a case on the CPU executor over copies of its buffers.
func runCPU(c *crosscheck.Case) ([][]byte, error) { return crosscheck.RunCPU(c, false) }

// TestHarnessCPU checks the inputs the GPU test uses are valid for the CPU
// executor, every one: TestGPUCorpus compares each kernel's buffers with
// the CPU's, so a case the CPU refuses (a launch past its buffers, say)
// would go unchecked on the GPU, and a GPU mismatch must be the backend's
// fault, not the harness's.
func TestHarnessCPU(t *testing.T) {
	cases, _ := corpusCases(t)
	for _, c := range cases {
		if _, err := runCPU(c); err != nil {
			t.Errorf("%s: CPU executor rejects the inputs: %v", c.Name, err)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no corpus cases")
	}
}

// TestGPUCorpus loads every compiled corpus kernel through the driver's
// JIT, runs it on the GPU and compares each buffer with the CPU executor.
func TestGPUCorpus(t *testing.T) {
	ctx, s := gpuContext(t)
	cases, ks := corpusCases(t)
	dump := os.Getenv("PTX_DUMP")
	for i, c := range cases {
		k := ks[i]
		t.Run(c.Name, func(t *testing.T) {
			if dump != "" {
				os.WriteFile(filepath.Join(dump, k.Entry+".ptx"), []byte(k.PTX), 0o644)
			}
			want, cpuErr := runCPU(c)
			got := runGPU(t, ctx, s, k, c, 0)
			if cpuErr != nil {
				t.Fatalf("GPU ran, but the CPU executor rejects the inputs, so nothing is compared (TestHarnessCPU): %v", cpuErr)
			}
			compareBuffers(t, c, got, want)
		})
	}
}

// TestGPUAlignedBuild runs the aligned build (Kernel.AlignedPTX) of every
// corpus kernel that has one on aligned buffers, as the runtime launches
// it: results must equal the CPU executor's.
func TestGPUAlignedBuild(t *testing.T) {
	ctx, s := gpuContext(t)
	cases, ks := corpusCases(t)
	ran := 0
	for i, c := range cases {
		if ks[i].AlignedPTX == "" {
			continue
		}
		ran++
		k := *ks[i]
		k.PTX = k.AlignedPTX
		t.Run(c.Name, func(t *testing.T) {
			want, err := runCPU(c)
			if err != nil {
				t.Fatalf("the CPU executor rejects the inputs, so nothing could be compared (TestHarnessCPU): %v", err)
			}
			got := runGPU(t, ctx, s, &k, c, 0)
			compareBuffers(t, c, got, want)
		})
	}
	if ran == 0 {
		t.Fatal("no corpus kernel has an aligned build")
	}
}

// TestGPUVectorMisaligned runs the vector corpus kernels, and every other
// kernel with an aligned body version (bodyVersions: its async copies),
// with every buffer starting misalignment(c) bytes into its allocation (as
// a runtime sub-region may), so the general version runs and the 16-byte
// accesses take their fallback; results must still equal the CPU
// executor's.
func TestGPUVectorMisaligned(t *testing.T) {
	ctx, s := gpuContext(t)
	cases, ks := corpusCases(t)
	ran := 0
	for i, c := range cases {
		k := ks[i]
		if !strings.Contains(k.PTX, ".v4.") && !strings.Contains(k.PTX, ".v2.") && alignedVersion(k.PTX) == "" {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			want, err := runCPU(c)
			if err != nil {
				t.Fatalf("the CPU executor rejects the inputs, so nothing could be compared (TestHarnessCPU): %v", err)
			}
			got := runGPU(t, ctx, s, k, c, misalignment(c))
			compareBuffers(t, c, got, want)
		})
	}
	if ran == 0 {
		t.Fatal("no kernel uses vector memory accesses")
	}
}

// misalignment is how many bytes off 16-byte alignment TestGPUVectorMisaligned
// binds c's buffers: 4, or the largest element size of their views where
// that is more (8 for f64/i64). A binding must be a multiple of its views'
// element size (Dispatch refuses another, LOOM.md 11.2), and PTX relies on
// it for scalar accesses: an f64 view 4 bytes off is not a legal input
// (it faulted the H200 with CUDA_ERROR_MISALIGNED_ADDRESS, remf64).
func misalignment(c *crosscheck.Case) int {
	off := 4
	for _, el := range c.Elems {
		if el != nil {
			off = max(off, el.ByteSize())
		}
	}
	return off
}

// runGPU launches compiled kernel k on case c, each buffer starting off
// bytes into its allocation, and returns the buffers after the run.
func runGPU(t *testing.T, ctx *hip.Context, s *hip.Stream, k *Kernel, c *crosscheck.Case, off int) [][]byte {
	t.Helper()
	out, err := crosscheck.RunPTX(ctx, s, entryOf(k), c.Args, c.Launch, off)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compareBuffers reports every buffer of got (the GPU's; nil where not
// compared) that differs from want (the CPU executor's) beyond c's bounds.
func compareBuffers(t *testing.T, c *crosscheck.Case, got, want [][]byte) {
	t.Helper()
	for j := range got {
		if got[j] == nil {
			continue
		}
		if err := compare(c, j, got[j], want[j]); err != nil {
			t.Error(err)
		}
	}
}

// entryOf is what crosscheck.RunPTX needs of k.
func entryOf(k *Kernel) crosscheck.Entry {
	e := crosscheck.Entry{PTX: k.PTX, Name: k.Entry}
	for _, p := range k.Params {
		e.ParamSizes = append(e.ParamSizes, p.Size)
		e.Buffers = append(e.Buffers, p.Buffer)
	}
	return e
}

// TestMisalignment: the offset TestGPUVectorMisaligned binds each corpus
// kernel's buffers at is legal for every buffer (a multiple of its views'
// element size) and still off 16-byte alignment; remf64's f64 views get 8.
func TestMisalignment(t *testing.T) {
	cases, _ := corpusCases(t)
	seen8 := false
	for _, c := range cases {
		off := misalignment(c)
		if off%16 == 0 {
			t.Errorf("%s: offset %d is 16-byte aligned", c.Name, off)
		}
		for j, el := range c.Elems {
			if el != nil && off%max(el.ByteSize(), 1) != 0 {
				t.Errorf("%s: buffer %d of %s bound %d bytes in", c.Name, j, el, off)
			}
		}
		if c.Name == "ops_misc.loom/remf64" {
			seen8 = off == 8
		}
	}
	if !seen8 {
		t.Error("remf64 is not bound 8 bytes off")
	}
}
