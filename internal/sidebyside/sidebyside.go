// Package sidebyside times two implementations of the same work in
// alternation, so that drift on a shared machine (clock changes, other
// tenants, a GPU's queue state) falls on both, and summarises the rounds as
// medians and a median ratio. The benchmarks that compare loomgen's paths
// with native baselines use it, so they all read their ratios the same way.
package sidebyside

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// Result is the per-round cost of A and B, in the unit their functions
// return, and B/A per round.
type Result struct {
	A, B, Ratio []float64
}

// Run calls a and b once each per round for rounds rounds, a first in even
// rounds and b first in odd ones. Each returns the cost of its round (for
// example nanoseconds per launch). The first error stops it.
func Run(rounds int, a, b func() (float64, error)) (Result, error) {
	var r Result
	for i := range rounds {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		x, err := first()
		if err != nil {
			return r, err
		}
		y, err := second()
		if err != nil {
			return r, err
		}
		if i%2 == 1 {
			x, y = y, x
		}
		if x <= 0 {
			return r, fmt.Errorf("sidebyside: round %d: A took %v", i, x)
		}
		r.A, r.B, r.Ratio = append(r.A, x), append(r.B, y), append(r.Ratio, y/x)
	}
	return r, nil
}

// Median is the middle value of v (the upper one of an even count); 0 for
// none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// Quantile is the nearest-rank q-quantile of v (0 < q ≤ 1): the smallest
// value with at least q·len(v) values at or below it; 0 for none.
func Quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// Report writes r as benchmark metrics: the medians as <a>-<unit> and
// <b>-<unit>, and the median, smallest and largest per-round ratio as
// <b>/<a>, min-<b>/<a> and max-<b>/<a>, and its nearest-rank 10th and 90th
// percentiles as p10-<b>/<a> and p90-<b>/<a> (the spread without the few
// rounds another tenant or a timer tick hit).
func (r Result) Report(tb *testing.B, unit, a, b string) {
	if len(r.Ratio) == 0 {
		return
	}
	tb.ReportMetric(Median(r.A), a+"-"+unit)
	tb.ReportMetric(Median(r.B), b+"-"+unit)
	tb.ReportMetric(Median(r.Ratio), b+"/"+a)
	tb.ReportMetric(slices.Min(r.Ratio), "min-"+b+"/"+a)
	tb.ReportMetric(slices.Max(r.Ratio), "max-"+b+"/"+a)
	tb.ReportMetric(Quantile(r.Ratio, 0.1), "p10-"+b+"/"+a)
	tb.ReportMetric(Quantile(r.Ratio, 0.9), "p90-"+b+"/"+a)
}

// ReportDifference writes the median per-round difference B − A as the
// metric unit (a name without "/", so readers of ratios pass it by).
func (r Result) ReportDifference(tb *testing.B, unit string) {
	d := make([]float64, len(r.A))
	for i := range d {
		d[i] = r.B[i] - r.A[i]
	}
	if len(d) > 0 {
		tb.ReportMetric(Median(d), unit)
	}
}

// Bench warms a and b with one call each, then runs rounds alternating
// rounds (Run) on tb's clock; an error fails tb.
func Bench(tb *testing.B, rounds int, a, b func() (float64, error)) Result {
	for _, f := range []func() (float64, error){a, b} {
		if _, err := f(); err != nil {
			tb.Fatal(err)
		}
	}
	tb.ResetTimer()
	r, err := Run(rounds, a, b)
	tb.StopTimer()
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// PerCall calls f n times and returns the nanoseconds a call took, from
// before the first until the last returned; the first error stops it.
func PerCall(n int, f func() error) (float64, error) {
	start := time.Now()
	for range n {
		if err := f(); err != nil {
			return 0, err
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n), nil
}
