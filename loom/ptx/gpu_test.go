package ptx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// gpuContext opens device 0 through the CUDA driver, or skips.
func gpuContext(tb testing.TB) (*hip.Context, *hip.Stream) {
	tb.Helper()
	lib, err := hip.OpenVendor(hip.CUDA)
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		tb.Skipf("no NVIDIA GPU: %v", err)
	}
	if err != nil {
		tb.Fatalf("opening the CUDA driver: %v", err)
	}
	ctx, err := lib.NewContext(0)
	if errors.Is(err, hip.ErrNoDevice) {
		tb.Skipf("no NVIDIA GPU: %v", err)
	}
	if err != nil {
		tb.Fatalf("context: %v", err)
	}
	s, err := ctx.NewStream()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(); ctx.Close() })
	return ctx, s
}

// corpusCases compiles every corpus kernel and builds its inputs; kernels
// the backend refuses, or whose launch the analyses cannot size, are left
// out (the refusals are covered by TestCorpusCompilesOrRefuses).
func corpusCases(t *testing.T) ([]*kcase, []*Kernel) {
	var cases []*kcase
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
			c.name = filepath.Base(path) + "/" + kd.Export
			cases = append(cases, c)
			ks = append(ks, k)
		}
	}
	return cases, ks
}

// runCPU runs a case on the CPU executor over copies of its buffers.
func runCPU(c *kcase) ([][]byte, error) {
	ik, err := interp.Compile(c.mods, c.kd.Export, interp.Options{Config: c.cfg, Workers: 2})
	if err != nil {
		return nil, err
	}
	args := make([]interp.Arg, len(c.args))
	out := make([][]byte, len(c.args))
	for i, a := range c.args {
		args[i] = a
		if a.Buffer != nil {
			out[i] = append([]byte(nil), a.Buffer...)
			args[i].Buffer = out[i]
		}
	}
	return out, ik.Run(c.launch, args)
}

// TestHarnessCPU checks the inputs the GPU test uses are valid for the CPU
// executor (so a GPU mismatch is the backend's fault, not the harness's).
func TestHarnessCPU(t *testing.T) {
	cases, _ := corpusCases(t)
	ran := 0
	for _, c := range cases {
		if _, err := runCPU(c); err != nil {
			t.Logf("%s: CPU executor rejects the inputs: %v", c.name, err)
			continue
		}
		ran++
	}
	if ran < len(cases)/2 {
		t.Errorf("only %d of %d cases run on the CPU executor", ran, len(cases))
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
		t.Run(c.name, func(t *testing.T) {
			if dump != "" {
				os.WriteFile(filepath.Join(dump, k.Entry+".ptx"), []byte(k.PTX), 0o644)
			}
			want, cpuErr := runCPU(c)
			got := runGPU(t, ctx, s, k, c, 0)
			if cpuErr != nil {
				t.Skipf("GPU ran; CPU executor rejects the inputs: %v", cpuErr)
			}
			for j := range got {
				if got[j] == nil {
					continue
				}
				if err := compare(c, j, got[j], want[j], 1e-5); err != nil {
					t.Errorf("buffer %%%s: %v", c.kd.Launch[j].Name, err)
				}
			}
		})
	}
}

// TestGPUVectorMisaligned runs the vector corpus kernels with every buffer
// starting 4 bytes into its allocation (as a runtime sub-region may), so
// the 16-byte accesses must take their scalar fallback; results must
// still equal the CPU executor's.
func TestGPUVectorMisaligned(t *testing.T) {
	ctx, s := gpuContext(t)
	cases, ks := corpusCases(t)
	ran := 0
	for i, c := range cases {
		k := ks[i]
		if !strings.Contains(k.PTX, ".v4.") && !strings.Contains(k.PTX, ".v2.") {
			continue
		}
		ran++
		t.Run(c.name, func(t *testing.T) {
			want, err := runCPU(c)
			if err != nil {
				t.Skipf("CPU executor rejects the inputs: %v", err)
			}
			got := runGPU(t, ctx, s, k, c, 4)
			for j := range got {
				if got[j] == nil {
					continue
				}
				if err := compare(c, j, got[j], want[j], 1e-5); err != nil {
					t.Errorf("buffer %%%s: %v", c.kd.Launch[j].Name, err)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no kernel uses vector memory accesses")
	}
}

// runGPU launches compiled kernel k on case c, each buffer starting off
// bytes into its allocation, and returns the buffers after the run.
func runGPU(t *testing.T, ctx *hip.Context, s *hip.Stream, k *Kernel, c *kcase, off int) [][]byte {
	t.Helper()
	mod, err := ctx.LoadModule([]byte(k.PTX))
	if err != nil {
		t.Fatalf("JIT: %v", err)
	}
	t.Cleanup(func() { mod.Close() })
	fn, err := mod.Function(k.Entry)
	if err != nil {
		t.Fatal(err)
	}
	sizes := make([]int, len(k.Params))
	for j, p := range k.Params {
		sizes[j] = p.Size
	}
	a := hip.NewArgs(sizes...)
	mems := make([]*hip.DeviceMemory, len(c.args))
	for j, arg := range c.args {
		switch p := k.Params[j]; {
		case p.Buffer:
			m, err := ctx.Alloc(max(len(arg.Buffer), 1) + off)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			if err := s.CopyHtoD(m.Ptr()+hip.DevicePtr(off), arg.Buffer); err != nil {
				t.Fatal(err)
			}
			mems[j] = m
			a.SetPtr(j, m.Ptr()+hip.DevicePtr(off))
		case arg.Buffer != nil: // a vector parameter's lanes
			a.SetBytes(j, arg.Buffer)
		case p.Size == 8:
			a.SetUint64(j, arg.Bits)
		case p.Size == 4:
			a.SetUint32(j, uint32(arg.Bits))
		default:
			b := make([]byte, p.Size)
			for q := range b {
				b[q] = byte(arg.Bits >> (8 * q))
			}
			a.SetBytes(j, b)
		}
	}
	if n := c.launch.WorkgroupStorage; n > 0 {
		// Past 48 KiB a kernel must opt in to its dynamic storage.
		if err := fn.SetMaxDynamicSharedBytes(n); err != nil {
			t.Fatal(err)
		}
	}
	dim := func(v [3]int) hip.Dim3 { return hip.Dim3{X: uint32(v[0]), Y: uint32(v[1]), Z: uint32(v[2])} }
	if err := s.Launch(fn, dim(c.launch.Workgroups), dim(c.launch.WorkgroupSize), uint32(c.launch.WorkgroupStorage), a); err != nil {
		t.Fatalf("launch: %v", err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("run: %v", err)
	}
	out := make([][]byte, len(c.args))
	for j, m := range mems {
		if m == nil {
			continue
		}
		out[j] = make([]byte, len(c.args[j].Buffer))
		if err := s.CopyDtoH(out[j], m.Ptr()+hip.DevicePtr(off)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
