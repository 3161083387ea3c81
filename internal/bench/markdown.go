package bench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// Markdown writes the report's machine and every result as Markdown
// tables: one row per result with each side's median (and p95) and each
// ratio with its target, for BENCHMARKS.md.
func Markdown(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "Run started %s.\n\n| machine | |\n| --- | --- |\n", rep.Started.Format("2006-01-02 15:04 UTC"))
	for _, k := range slices.Sorted(maps.Keys(rep.Machine)) {
		fmt.Fprintf(w, "| %s | %s |\n", k, rep.Machine[k])
	}
	var groups []string
	for _, r := range rep.Results {
		if !slices.Contains(groups, r.Group) {
			groups = append(groups, r.Group)
		}
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n**%s**\n\n| kernel | shape | sides: median (p95) | ratios: median (p95), target |\n| --- | --- | --- | --- |\n", g)
		for _, r := range rep.Results {
			if r.Group != g {
				continue
			}
			var sides, ratios []string
			for _, s := range r.Sides {
				t := fmt.Sprintf("%s %.4g %s", s.Name, s.Median, s.Unit)
				if s.P95 > 0 {
					t += fmt.Sprintf(" (%.4g)", s.P95)
				}
				if s.Rate > 0 {
					t += fmt.Sprintf(", %.4g %s", s.Rate, s.RateUnit)
				}
				sides = append(sides, t)
			}
			for _, q := range r.Ratios {
				t := fmt.Sprintf("vs %s **%s**", q.Versus, ratio3(q.Median))
				if q.P95 > 0 {
					t += fmt.Sprintf(" (%s)", ratio3(q.P95))
				}
				if q.Met != nil {
					verdict := "not met"
					if *q.Met {
						verdict = "met"
					}
					t += fmt.Sprintf(", target ≥ %.3g: %s", q.Target, verdict)
				}
				ratios = append(ratios, t)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.Name, r.Shape, strings.Join(sides, "; "), strings.Join(ratios, "; "))
		}
	}
}

// ratio3 writes a ratio with three decimals, truncated: a ratio is never
// shown rounded up (0.4999 is 0.499, not 0.500).
func ratio3(v float64) string {
	return fmt.Sprintf("%.3f", math.Floor(v*1000)/1000)
}
