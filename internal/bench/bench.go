// Package bench is loomgen's performance suite, run by cmd/loombench: Loom
// kernels compiled by loom/ptx against the same algorithms in CUDA C built
// by nvcc, cuBLAS and the device's copy bandwidth on an NVIDIA GPU, and the
// CPU executor against Go loops by worker count anywhere. Every result is
// checked against a reference before it is timed; timings alternate the
// compared sides round by round (the order rotating every round) after
// untimed warm-up, and are summarised by the nearest-rank median and p95.
package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/loomgen/loomgen/internal/sidebyside"
)

// Report is one run of the suite, as written to JSON.
type Report struct {
	// Machine describes where it ran: host, CPU count, GPU, driver.
	Machine map[string]string `json:"machine"`
	Started time.Time         `json:"started"`
	// Method states the timing method in words.
	Method  string   `json:"method"`
	Results []Result `json:"results"`
}

// Result is one compared measurement: the times of each side, and the
// ratios the targets are read from.
type Result struct {
	// Group names the plot it belongs to: "gpu-compute", "gpu-memory",
	// "launch", "cpu".
	Group string `json:"group"`
	Name  string `json:"name"`
	// Shape is the workload in words (4096x4096x4096, 8192x4096, ...).
	Shape string `json:"shape,omitempty"`
	// Sides are the timed implementations, ours first.
	Sides []Side `json:"sides"`
	// Ratios are throughput ratios ours ÷ reference (higher is better),
	// each with its target where the issue sets one.
	Ratios []Ratio `json:"ratios"`
	// Check says what the results were checked against, and the error.
	Check string `json:"check,omitempty"`
}

// Side is one implementation's per-round cost.
type Side struct {
	Name   string  `json:"name"`
	Unit   string  `json:"unit"` // "us" per launch, "ms" per run
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	// Rate is the median throughput: TFLOP/s or GB/s, per RateUnit.
	Rate     float64 `json:"rate,omitempty"`
	RateUnit string  `json:"rate_unit,omitempty"`
}

// Ratio is ours ÷ a reference as a throughput ratio (median and p95 of the
// per-round values, p95 being the slow tail: the 5th percentile of the
// ratio), with the target it is held to.
type Ratio struct {
	Versus string  `json:"versus"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	// Target is the lowest acceptable median (0: none set); Met says
	// whether the median reaches it.
	Target float64 `json:"target,omitempty"`
	Met    *bool   `json:"met,omitempty"`
}

// NearestRank is the p-th percentile of v by the nearest-rank method: the
// ⌈p/100·n⌉-th smallest value (the median is the 50th).
func NearestRank(v []float64, p float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return sidebyside.Quantile(v, p/100)
}

// side summarises per-round costs.
func side(name, unit string, v []float64) Side {
	return Side{Name: name, Unit: unit, Median: NearestRank(v, 50), P95: NearestRank(v, 95)}
}

// ratio summarises per-round throughput ratios ref/ours of costs (so a
// value above 1 means ours is faster) against a target.
func ratio(versus string, ours, ref []float64, target float64) Ratio {
	r := make([]float64, len(ours))
	for i := range r {
		r[i] = ref[i] / ours[i]
	}
	out := Ratio{Versus: versus, Median: NearestRank(r, 50), P95: NearestRank(r, 5), Target: target}
	if target > 0 {
		met := out.Median >= target
		out.Met = &met
	}
	return out
}

// rounds calls each function once per round for n rounds, the order
// rotating by one every round, so drift falls on every side alike; each
// returns its round's cost. The first error stops it.
func rounds(n int, fs ...func() (float64, error)) ([][]float64, error) {
	out := make([][]float64, len(fs))
	for r := range n {
		for i := range fs {
			j := (i + r) % len(fs)
			if r%2 == 1 {
				j = (len(fs) - 1 - i + r) % len(fs)
			}
			x, err := fs[j]()
			if err != nil {
				return nil, err
			}
			if !(x > 0) {
				return nil, fmt.Errorf("round %d: side %d took %v", r, j, x)
			}
			out[j] = append(out[j], x)
		}
	}
	return out, nil
}

// WriteJSON writes the report, indented.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadJSON reads a report written by WriteJSON.
func ReadJSON(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	SetTargets(r.Results)
	return &r, nil
}
