package ptx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/loom"
)

var headerRE = regexp.MustCompile(`(?m)^\.version (\d+\.\d+)\n\.target (sm_\w+)\n`)

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
			if v, tg := headerOf(text); v != c.version || tg != c.target {
				t.Errorf("%s for sm_%d: .version %s .target %s, want %s %s", c.export, c.sm, v, tg, c.version, c.target)
			}
		}
	}
}

// ptxasPath is the ptxas to assemble with: $LOOM_PTXAS, else one on PATH;
// "" when there is none. A $LOOM_PTXAS that does not run fails the test:
// it was asked for.
func ptxasPath(t *testing.T) string {
	t.Helper()
	p := os.Getenv("LOOM_PTXAS")
	if p == "" {
		p, _ = exec.LookPath("ptxas")
		return p
	}
	if out, err := exec.Command(p, "--version").CombinedOutput(); err != nil {
		t.Fatalf("LOOM_PTXAS=%s does not run: %v %s", p, err, out)
	}
	return p
}

// errTooOld marks a module whose ISA version or target the ptxas at hand
// predates (CUDA 11.8's knows neither ISA 8.0 nor sm_90a).
var errTooOld = errors.New("ptxas predates the module's PTX ISA version")

// assemble runs ptxas on text for its own target, returning ptxas's
// messages on failure.
func assemble(ptxas, dir, text string) error {
	_, target := headerOf(text)
	f := filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		return err
	}
	var out bytes.Buffer
	cmd := exec.Command(ptxas, "-arch="+target, "-o", filepath.Join(dir, "k.cubin"), f)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if strings.Contains(msg, "Unsupported .version") || strings.Contains(msg, "is not defined for option 'gpu-name'") {
			return fmt.Errorf("%w: %s", errTooOld, msg)
		}
		return fmt.Errorf("%v: %s", err, msg)
	}
	return nil
}

// headerOf is the .version and .target of module text ("" without them).
func headerOf(text string) (version, target string) {
	if m := headerRE.FindStringSubmatch(text); m != nil {
		return m[1], m[2]
	}
	return "", ""
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
	ptxas := ptxasPath(t)
	if ptxas == "" {
		t.Skip("no ptxas ($LOOM_PTXAS or on PATH): the PTX is checked by wellFormed alone")
	}
	var builds []ptxBuild
	for _, path := range corpusFiles(t) {
		m := parse(t, path)
		for _, kd := range m.Kernels {
			if kd.Decl {
				continue
			}
			for _, sm := range []int{90, 89} {
				k, err := Compile([]*loom.Module{m}, kd.Export, Options{Config: testConfig(m), SM: sm})
				if err != nil {
					continue // TestCorpusCompilesOrRefuses checks the refusals
				}
				builds = append(builds, kernelBuilds(fmt.Sprintf("%s/%s sm_%d", filepath.Base(path), kd.Export, sm), k)...)
			}
		}
	}
	assembleAll(t, ptxas, builds)
}

// TestHrxSamplesAssemble gives the PTX of every self-checking function of
// Loom's own tests that compiles (TestHrxSamplesCompile) to ptxas: they
// exercise nearly every op, each alone. Skipped without ptxas or without
// the snapshot.
func TestHrxSamplesAssemble(t *testing.T) {
	ptxas := ptxasPath(t)
	if ptxas == "" {
		t.Skip("no ptxas ($LOOM_PTXAS or on PATH)")
	}
	checks, _, err := hrxsamples.Find(hrxsamples.Dir)
	if err != nil {
		t.Skipf("Loom's tests are not extracted under %s (%v): NOT COVERED", hrxsamples.Dir, err)
	}
	var builds []ptxBuild
	for _, c := range checks {
		if k, _, err := compileSample(c.File, c.Input, c.Name, c.Results); err == nil {
			builds = append(builds, kernelBuilds(c.Where+" @"+c.Name, k)...)
		}
	}
	assembleAll(t, ptxas, builds)
}

// ptxBuild is one module text to assemble, named for messages.
type ptxBuild struct{ name, text string }

// kernelBuilds lists k's builds: the versioned PTX, the aligned one and
// the register-capped ones, those it has.
func kernelBuilds(name string, k *Kernel) []ptxBuild {
	var out []ptxBuild
	for i, text := range []string{k.PTX, k.AlignedPTX, k.CappedPTX(), k.CappedAlignedPTX()} {
		if text != "" {
			out = append(out, ptxBuild{fmt.Sprintf("%s build %d", name, i), text})
		}
	}
	return out
}

// assembleAll runs ptxas on every build, one process a core (ptxas takes
// most of a second on the larger kernels), and fails the test for each
// it rejects; one too old for a build's ISA version or target only
// counts it.
func assembleAll(t *testing.T, ptxas string, builds []ptxBuild) {
	t.Helper()
	errs := make([]error, len(builds))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dir, err := os.MkdirTemp(t.TempDir(), "")
			for i := range next {
				if errs[i] = err; err == nil {
					errs[i] = assemble(ptxas, dir, builds[i].text)
				}
			}
		}()
	}
	for i := range builds {
		next <- i
	}
	close(next)
	wg.Wait()
	var assembled, tooOld int
	for i, err := range errs {
		switch {
		case errors.Is(err, errTooOld):
			tooOld++
		case err != nil:
			t.Errorf("%s: ptxas: %v", builds[i].name, err)
		default:
			assembled++
		}
	}
	t.Logf("%s assembled %d builds; %d need a newer ptxas (ISA version or target)", ptxas, assembled, tooOld)
	if assembled == 0 {
		t.Fatal("ptxas assembled nothing")
	}
}
