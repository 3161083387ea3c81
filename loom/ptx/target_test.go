package ptx

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/internal/ptxas"
	"github.com/loomgen/loomgen/internal/ptxas/ptxastest"
	"github.com/loomgen/loomgen/loom"
)

// TestTargetHeader checks the module header for each device: the newest
// target the generator knows at or below the device's, so a Blackwell
// gets sm_90 code its driver JIT-compiles (sm_100 would need PTX ISA 8.6),
// at ISA 7.8, and more only where an instruction needs it: sm_90a at 8.0
// for wgmma, 8.1 for f8 conversions on sm_89.
func TestTargetHeader(t *testing.T) {
	wg := parse(t, filepath.Join("testdata", "wgmma.loom"))
	f8 := parse(t, filepath.Join("..", "testdata", "ops_f8.loom"))
	for _, c := range []struct {
		m                       *loom.Module
		export, version, target string
		sm                      int
	}{
		{wg, "wg_tile_f16", "7.8", "sm_80", 80},
		{wg, "wg_tile_f16", "7.8", "sm_86", 86},
		{wg, "wg_tile_f16", "7.8", "sm_87", 87},
		{wg, "wg_tile_f16", "7.8", "sm_87", 88},
		{wg, "wg_tile_f16", "7.8", "sm_89", 89},
		{wg, "wg_tile_f16", "8.0", "sm_90a", 90},
		{wg, "wg_subgroup_row", "7.8", "sm_90", 90},
		{wg, "wg_tile_f16", "7.8", "sm_90", 100},
		{wg, "wg_tile_f16", "7.8", "sm_90", 120},
		// f8 pairs came to sm_89 in ISA 8.1.
		{f8, "f8_round_trip", "7.8", "sm_90", 90},
		{f8, "f8_round_trip", "8.1", "sm_89", 89},
	} {
		k, err := Compile([]*loom.Module{c.m}, c.export, Options{Config: testConfig(c.m), SM: c.sm})
		if err != nil {
			t.Fatalf("%s on sm_%d: %v", c.export, c.sm, err)
		}
		for _, text := range []string{k.PTX, k.AlignedPTX, k.CappedPTX()} {
			if text == "" {
				continue
			}
			if v, tg := ptxas.Header(text); v != c.version || tg != c.target {
				t.Errorf("%s for sm_%d: .version %s .target %s, want %s %s", c.export, c.sm, v, tg, c.version, c.target)
			}
		}
	}
}

// TestCorpusAssembles gives every build of every corpus kernel (the
// versioned PTX, the aligned one, the register-capped ones) to NVIDIA's
// assembler, for an sm_90 device and an sm_89 one: ptxas checks what
// wellFormed cannot (operand types, instruction forms, the ISA version
// each instruction needs) without a GPU. It needs a ptxas ($LOOM_PTXAS or
// on PATH; CUDA 11.8's is enough for all but the wgmma kernels, which
// need 12.0's) and is skipped, saying so, without one. The device
// machines have one; so may a workstation without a GPU (Debian's
// nvidia-cuda-toolkit).
func TestCorpusAssembles(t *testing.T) {
	path := ptxastest.ForTest(t)
	var builds []ptxas.Module
	for _, file := range corpusFiles(t) {
		m := parse(t, file)
		for _, kd := range m.Kernels {
			if kd.Decl {
				continue
			}
			for _, sm := range []int{90, 89} {
				k, err := Compile([]*loom.Module{m}, kd.Export, Options{Config: testConfig(m), SM: sm})
				if err != nil {
					continue // TestCorpusCompilesOrRefuses checks the refusals
				}
				builds = append(builds, kernelBuilds(fmt.Sprintf("%s/%s sm_%d", filepath.Base(file), kd.Export, sm), k)...)
			}
		}
	}
	ptxastest.Test(t, path, builds)
}

// TestHrxSamplesAssemble gives the PTX of every self-checking function of
// Loom's own tests that compiles (TestHrxSamplesCompile) to ptxas: they
// exercise nearly every op, each alone. Skipped without ptxas or without
// the snapshot.
func TestHrxSamplesAssemble(t *testing.T) {
	path := ptxastest.ForTest(t)
	checks, _, err := hrxsamples.Find(hrxsamples.Dir)
	if err != nil {
		t.Skipf("Loom's tests are not extracted under %s (%v): NOT COVERED", hrxsamples.Dir, err)
	}
	var builds []ptxas.Module
	for _, c := range checks {
		if k, _, err := compileSample(c.File, c.Input, c.Name, c.Results); err == nil {
			builds = append(builds, kernelBuilds(c.Where+" @"+c.Name, k)...)
		}
	}
	ptxastest.Test(t, path, builds)
}

// kernelBuilds lists k's builds as modules to assemble.
func kernelBuilds(name string, k *Kernel) []ptxas.Module {
	return ptxas.Builds(name, [4]string{k.PTX, k.AlignedPTX, k.CappedPTX(), k.CappedAlignedPTX()})
}
