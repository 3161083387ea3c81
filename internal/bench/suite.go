package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/loomgen/loomgen/hip"
)

// The targets, as throughput ratios ours ÷ reference.
var (
	computeTargets = map[string]float64{"nvcc": 0.9, "cublas": 0.6}
	memoryTargets  = map[string]float64{"copy": 0.8}
)

// Method is the timing method, stated in every report.
const Method = "Each comparison first checks every side's output against a float64 reference, " +
	"then runs untimed warm-up rounds, then R timed rounds in which every side runs once " +
	"(GPU: a batch of launches between two events; CPU: one run), the order rotating every round; " +
	"per-round costs are summarised by the nearest-rank median and 95th percentile, and each " +
	"ratio is the nearest-rank median of the per-round throughput ratios ours ÷ reference " +
	"(above 1: ours faster), with its 5th percentile as the slow tail."

// Machine describes the host.
func Machine() map[string]string {
	m := map[string]string{
		"goos": runtime.GOOS, "goarch": runtime.GOARCH, "cpus": fmt.Sprint(runtime.NumCPU()),
		"go": runtime.Version(),
	}
	if h, err := os.Hostname(); err == nil {
		m["host"] = h
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				if _, v, ok := strings.Cut(name, ":"); ok {
					m["cpu"] = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	return m
}

// RunGPU runs the GPU suite into rep. It returns an error wrapping
// hip.ErrNoLibrary or hip.ErrNoDevice when there is no GPU.
func RunGPU(opt GPUOptions, rep *Report) error {
	g, err := OpenGPU(opt, rep.Machine)
	if err != nil {
		return err
	}
	defer g.Close()
	cp, gbs, err := g.CopyBandwidth()
	if err != nil {
		return fmt.Errorf("copy bandwidth: %w", err)
	}
	rep.Results = append(rep.Results, cp)
	g.logf("copy: %.1f GB/s", gbs)
	type job struct {
		export  string
		group   string
		inst    func() *Instance
		targets map[string]float64
	}
	jobs := []job{
		{"sgemm_f32", "gpu-compute", func() *Instance { return SGEMM(4096, 4096, 4096, 4099) }, computeTargets},
		{"rmsnorm_f32", "gpu-memory", func() *Instance { return RMSNorm(8192, 4096) }, memoryTargets},
		{"softmax_f32", "gpu-memory", func() *Instance { return Softmax("softmax_f32", 8192, 4096) }, memoryTargets},
		// Context, no target: longer rows (eight trips a sweep, where the
		// unrolled trips run), and both shapes with the sweeps as loops
		// and with the second sweep backwards.
		{"softmax_f32", "gpu-memory", func() *Instance { return Softmax("softmax_f32", 2048, 16384) }, nil},
		{"softmax_f32_loop", "gpu-memory", func() *Instance { return Softmax("softmax_f32_loop", 8192, 4096) }, nil},
		{"softmax_f32_loop", "gpu-memory", func() *Instance { return Softmax("softmax_f32_loop", 2048, 16384) }, nil},
		{"softmax_f32_back", "gpu-memory", func() *Instance { return Softmax("softmax_f32_back", 8192, 4096) }, nil},
		{"softmax_f32_back", "gpu-memory", func() *Instance { return Softmax("softmax_f32_back", 2048, 16384) }, nil},
		{"rope_f32", "gpu-memory", func() *Instance { return RoPE(8192, 32) }, memoryTargets},
		// Context, no target: decode attention over an f16 KV cache
		// (32 query heads on 8 kv heads), a short and a long context.
		{"attn_decode_f16", "gpu-memory", func() *Instance { return Attention(8, 4096) }, nil},
		{"attn_decode_f16", "gpu-memory", func() *Instance { return Attention(8, 32768) }, nil},
	}
	for _, export := range matvecExports {
		mk := Q8_0
		if strings.HasPrefix(export, "matvec_q4_k") {
			mk = Q4K
		}
		for _, cols := range []int{4096, 14336} {
			jobs = append(jobs, job{export, "gpu-memory", func() *Instance { return mk(export, 4096, cols) }, memoryTargets})
		}
	}
	var errs []error
	copied := map[string]bool{}
	for _, j := range jobs {
		if opt.Only != nil && !opt.Only.MatchString(j.export) {
			continue
		}
		inst := j.inst()
		rs, err := g.Kernel(j.group, inst, gbs, j.targets)
		if err != nil {
			// One kernel's failure is reported and the rest still run
			// (with what it measured before failing).
			errs = append(errs, fmt.Errorf("%s %s: %w", inst.Export, inst.Shape, err))
			g.logf("%s %s: %v", inst.Export, inst.Shape, err)
			for _, r := range rs {
				if len(r.Sides) > 0 {
					rep.Results = append(rep.Results, r)
				}
			}
			continue
		}
		rep.Results = append(rep.Results, rs...)
		if at := matvecKind(inst.Export); at != "" && !copied[at+inst.Shape] {
			// The yardstick at the mat-vec's own traffic, once per kind
			// and shape.
			copied[at+inst.Shape] = true
			cr, err := g.CopyAt(at, inst.Shape, inst.Bytes)
			if err != nil {
				errs = append(errs, fmt.Errorf("copy at %s %s: %w", at, inst.Shape, err))
				continue
			}
			rep.Results = append(rep.Results, cr)
		}
	}
	return errors.Join(errs...)
}

// matvecExports are the mat-vec kernels of matvec_q.loom the GPU suite
// measures, each at 4096×4096 and 4096×14336.
var matvecExports = []string{"matvec_q8_0", "matvec_q4_k"}

// matvecKind is "q8_0" or "q4_K" for a mat-vec export, else "".
func matvecKind(export string) string {
	switch {
	case strings.HasPrefix(export, "matvec_q8_0"):
		return "q8_0"
	case strings.HasPrefix(export, "matvec_q4_k"):
		return "q4_K"
	}
	return ""
}

// NoGPU reports whether err means there is no NVIDIA GPU to measure.
func NoGPU(err error) bool {
	return errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice)
}
