package ptx

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/crosscheck"
	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// TestHrxSamplesCompile compiles every self-checking function of Loom's own
// tests (hrxsamples.Find, wrapped as in the CPU executor's
// TestHrxSelfCheckingSamples) to PTX: each compiles or is refused with
// ErrUnsupported (or needs a run-time config value), never another error.
// With an NVIDIA GPU it also runs each compiled sample there and compares
// with the value the test states, as the CPU executor's test does: true
// for a verify sample, else what the expected form (also compiled and run
// on the GPU) returns. Without a GPU only the compilation is checked; the
// test skips, uncounted, without the snapshot ($LOOM_HRX_DIR, else
// /tmp/hrx).
func TestHrxSamplesCompile(t *testing.T) {
	checks, _, err := hrxsamples.Find(hrxsamples.Dir)
	if err != nil {
		t.Skipf("Loom's tests are not extracted under %s (%v): NOT COVERED — these checks did not run", hrxsamples.Dir, err)
	}
	var compiled, refused int
	for _, c := range checks {
		_, _, err := compileSample(c.File, c.Input, c.Name, c.Results)
		switch why, cannot := sampleRefused(err); {
		case err == nil:
			compiled++
		case cannot:
			t.Logf("refused %s @%s: %s", c.Where, c.Name, why)
			refused++
		default:
			t.Errorf("%s @%s: %v", c.Where, c.Name, err)
		}
	}
	t.Logf("%d self-checking functions: %d compile to PTX, %d refused as unsupported or needing a config value", len(checks), compiled, refused)
	if len(checks) == 0 {
		t.Fatal("no self-checking functions found")
	}
	gpu := openSampleGPU(t)
	if gpu == nil {
		t.Log("no NVIDIA GPU: values not checked")
		return
	}
	n := hrxsamples.Compare(t, checks, func(c hrxsamples.Check, src string) ([][]byte, error) {
		k, sizes, err := compileSample(c.File, src, c.Name, c.Results)
		if err != nil {
			return nil, err
		}
		return gpu.run(k, sizes)
	}, sampleRefused)
	t.Logf("on the GPU: %v", n)
}

// sampleRefused says whether err means the PTX backend cannot compile the
// sample (an op it does not support, a result the wrapper cannot store, a
// run-time config value), and why.
func sampleRefused(err error) (string, bool) {
	switch {
	case err == nil:
		return "", false
	case errors.Is(err, ErrUnsupported) || errors.Is(err, hrxsamples.ErrType):
		return err.Error(), true
	case strings.Contains(err.Error(), "no value supplied"):
		return "needs a run-time config value: " + err.Error(), true
	}
	return "", false
}

// compileSample compiles func.def @name of src through hrxsamples.Wrap's
// kernel and returns it with its result buffers' byte sizes.
func compileSample(file, src, name string, results []string) (*Kernel, []int, error) {
	text, sizes, err := hrxsamples.Wrap(src, name, results)
	if err != nil {
		return nil, nil, err
	}
	m, err := loom.ParseFile(file, []byte(text))
	if err != nil {
		return nil, nil, err
	}
	k, err := Compile([]*loom.Module{m}, "sample", Options{})
	return k, sizes, err
}

// sampleGPU runs one-invocation samples on device 0; after a device fault
// it opens a fresh context, so one faulting sample does not fail the rest.
type sampleGPU struct {
	s *hip.Stream
}

// openSampleGPU opens device 0, or returns nil without an NVIDIA GPU.
func openSampleGPU(t *testing.T) *sampleGPU {
	s, err := hip.OpenStream(hip.CUDA, 0)
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		return nil
	}
	if err != nil {
		t.Fatalf("opening GPU 0 through the CUDA driver: %v", err)
	}
	g := &sampleGPU{s: s}
	t.Cleanup(g.close)
	return g
}

func (g *sampleGPU) close() {
	if g.s != nil {
		g.s.Close()
		g.s.Context().Close()
		g.s = nil
	}
}

func (g *sampleGPU) run(k *Kernel, sizes []int) ([][]byte, error) {
	if g.s == nil {
		s, err := hip.OpenStream(hip.CUDA, 0)
		if err != nil {
			return nil, err
		}
		g.s = s
	}
	args := make([]interp.Arg, len(sizes))
	for i, n := range sizes {
		args[i] = interp.Arg{Buffer: make([]byte, n)}
	}
	l := interp.Launch{Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{1, 1, 1}}
	out, err := crosscheck.RunPTX(g.s.Context(), g.s, entryOf(k), args, l, 0)
	if errors.Is(err, crosscheck.ErrDeviceFault) {
		g.close()
	}
	return out, err
}
