package checkrun

import (
	"fmt"
	"testing"

	loomrt "github.com/loomgen/loomgen/runtime"
)

// BenchResult is the timing of one benchmark sub-case.
type BenchResult struct {
	Bench   string `json:"benchmark"`
	Case    string `json:"case"`
	Params  string `json:"params"`
	Backend string `json:"backend"`
	Status  Status `json:"status"`
	Reason  string `json:"reason,omitempty"`
	// NsPerOp is the time of one run of the case's kernel calls; BytesPerOp
	// the bytes of the buffers they bind (each counted once per call).
	NsPerOp    float64 `json:"ns_per_op"`
	BytesPerOp int64   `json:"bytes_per_op"`
	Iterations int     `json:"iterations"`
}

// BytesPerSecond is BytesPerOp over the time of one op.
func (b BenchResult) BytesPerSecond() float64 {
	if b.NsPerOp <= 0 {
		return 0
	}
	return float64(b.BytesPerOp) / (b.NsPerOp * 1e-9)
}

// prepareBench evaluates the sub-case once (it must pass: a benchmark of a
// wrong result measures nothing) and returns the kernel dispatches to
// time and the bytes they bind.
func (r *Runner) prepareBench(in *Instance) (*eval, Status, string) {
	ev := r.newEval(in)
	st, reason := ev.run()
	if st != Pass {
		return nil, st, reason
	}
	if ev.sanitized {
		return nil, Skip, "benchmarks do not run in the sanitizer's checked mode"
	}
	if len(ev.calls) == 0 {
		return nil, Skip, "the case calls no kernel: nothing to time"
	}
	return ev, Pass, ""
}

// timeCalls replays the case's dispatches b.N times and waits for them.
func timeCalls(b *testing.B, ev *eval) {
	cmds := make([]loomrt.Command, len(ev.calls))
	for i, d := range ev.calls {
		cmds[i] = d
	}
	s := ev.sess.s
	b.SetBytes(ev.bytes)
	b.ResetTimer()
	for range b.N {
		if err := s.Run(cmds); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		b.Fatal(err)
	}
}

// Bench times every sub-case of a check.benchmark with testing.Benchmark.
func (r *Runner) Bench(bm *Bench) []BenchResult {
	var out []BenchResult
	for _, in := range bm.Instances() {
		res := BenchResult{Bench: bm.Name, Case: in.Case.Name, Params: in.ParamString(), Backend: r.backend}
		if r.opts.Run != nil && !r.opts.Run.MatchString(bm.Name) && !r.opts.Run.MatchString(in.Name()) {
			continue
		}
		ev, st, reason := r.prepareBench(in)
		res.Status, res.Reason = st, reason
		if ev != nil {
			var failure string
			tr := testing.Benchmark(func(b *testing.B) {
				defer func() {
					if b.Failed() {
						failure = "the kernel calls failed while timed"
					}
				}()
				timeCalls(b, ev)
			})
			if failure != "" || tr.N == 0 {
				res.Status, res.Reason = Fail, fmt.Sprintf("%s (%d iterations)", failure, tr.N)
			} else {
				res.NsPerOp = float64(tr.T.Nanoseconds()) / float64(tr.N)
				res.BytesPerOp, res.Iterations = tr.Bytes, tr.N
			}
		}
		out = append(out, res)
	}
	return out
}
