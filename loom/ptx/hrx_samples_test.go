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
	gpu := openSampleGPU(t)
	var compiled, refused, agree, agreeForm, disagree, weaker, cannot int
	for _, c := range checks {
		k, sizes, err := compileSample(c.File, c.Input, c.Name, c.Results)
		switch {
		case err == nil:
			compiled++
		case errors.Is(err, ErrUnsupported) || errors.Is(err, hrxsamples.ErrType):
			t.Logf("refused %s @%s: %v", c.Where, c.Name, err)
			refused++
			continue
		case strings.Contains(err.Error(), "no value supplied"):
			t.Logf("needs a run-time config value %s @%s: %v", c.Where, c.Name, err)
			refused++
			continue
		default:
			t.Errorf("%s @%s: %v", c.Where, c.Name, err)
			continue
		}
		if gpu == nil {
			continue
		}
		got, err := gpu.run(k, sizes)
		if err != nil {
			t.Errorf("%s @%s: on the GPU: %v", c.Where, c.Name, err)
			disagree++
			continue
		}
		var want [][]byte
		if c.Want == "" {
			want = [][]byte{{1, 0, 0, 0}} // an i1 sample must be true
		} else {
			wk, wsizes, err := compileSample(c.File, c.Want, c.Name, c.Results)
			if err != nil {
				// Our reading of the stated value must compile where
				// the input did; say so rather than count it.
				t.Logf("cannot compile the expected form of %s @%s: %v", c.Where, c.Name, err)
				cannot++
				continue
			}
			if want, err = gpu.run(wk, wsizes); err != nil {
				t.Errorf("%s @%s: expected form on the GPU: %v", c.Where, c.Name, err)
				disagree++
				continue
			}
		}
		if why := hrxsamples.Mismatch(c.Results, got, want); why != "" {
			if hrxsamples.Probe(c.Input, c.Name) {
				t.Logf("probe precision %s @%s: %s", c.Where, c.Name, why)
				weaker++
				continue
			}
			t.Errorf("%s @%s: on the GPU: %s", c.Where, c.Name, why)
			disagree++
			continue
		}
		if c.Rewritten {
			agreeForm++
		} else {
			agree++
		}
	}
	t.Logf("%d self-checking functions: %d compile to PTX, %d refused as unsupported or needing a config value", len(checks), compiled, refused)
	if gpu != nil {
		t.Logf("on the GPU: %d agree with the stated value, %d with their (non-constant) canonical form, %d disagree, %d probe answers less precise than Loom's, %d expected forms do not compile",
			agree, agreeForm, disagree, weaker, cannot)
	} else {
		t.Log("no NVIDIA GPU: values not checked")
	}
	if len(checks) == 0 {
		t.Fatal("no self-checking functions found")
	}
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
