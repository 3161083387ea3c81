package bench

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Ingest reads `go test -bench` output of the side-by-side benchmarks the
// suite does not run in process (hip's launch and graph replay against
// native C, the runtime session's dispatch, the tensor-core matmul) and
// turns every benchmark line into a result of group: metrics named
// "<side>-<unit>" become sides (medians), and a metric "<ours>/<ref>"
// (a per-round median time ratio, as internal/sidebyside reports it)
// becomes the throughput ratio ref ÷ ours, so that above 1 means ours is
// faster throughout the report; "ratio-of-<ref>" is taken as that ratio
// already and stands over a time ratio against the same reference. Lines
// without a ratio are skipped.
func Ingest(r io.Reader, group string) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		res := Result{Group: group, Name: strings.TrimPrefix(name, "Benchmark")}
		direct := map[string]bool{} // references with a ratio-of-<ref> metric
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: metric %q is not a number", f[0], f[i])
			}
			unit := f[i+1]
			if spread(unit) {
				continue
			}
			if ref, ok := strings.CutPrefix(unit, "ratio-of-"); ok {
				// Already a throughput ratio ours ÷ ref: the median of
				// the per-round throughput ratios, as the report defines
				// its ratios, where the inverted median time ratio is
				// only close to it. It stands before a time ratio.
				res.Ratios = slices.DeleteFunc(res.Ratios, func(q Ratio) bool { return q.Versus == ref })
				res.Ratios = append(res.Ratios, Ratio{Versus: ref, Median: v})
				direct[ref] = true
				continue
			}
			sideName, sideUnit, isSide := strings.Cut(unit, "-")
			ours, ref, isRatio := strings.Cut(unit, "/")
			switch {
			case isSide && strings.Contains(sideUnit, "/"):
				res.Sides = append(res.Sides, Side{Name: sideName, Unit: sideUnit, Median: v})
			case isRatio && !strings.ContainsAny(unit, "-") && ours != "ns" && ours != "B" && v > 0:
				if !direct[ref] {
					res.Ratios = append(res.Ratios, Ratio{Versus: ref, Median: 1 / v})
				}
			}
		}
		// Of two time ratios against one reference the first stands.
		res.Ratios = slices.CompactFunc(res.Ratios, func(a, b Ratio) bool { return a.Versus == b.Versus })
		if len(res.Ratios) > 0 {
			out = append(out, res)
		}
	}
	SetTargets(out)
	return out, sc.Err()
}

// ingestTargets are issue 15's targets for the comparisons that come in
// through Ingest, by result name and reference: the tensor-core matmuls at
// 4096³ (≥ 0.5 of cuBLAS; their padded and rasterized variants are
// context, held to nothing) and session direct dispatch (≤ 1.05× C's
// time, so ≥ 1/1.05 as the throughput ratio the report keeps).
var ingestTargets = map[string]map[string]float64{
	"TensorCoreVersusCublas/f16_4096":  {"cublas": 0.5},
	"TensorCoreVersusCublas/bf16_4096": {"cublas": 0.5},
	"SessionVersusNative":              {"native": 1 / 1.05},
	"SessionVersusNative/submit":       {"native": 1 / 1.05},
	"LayersVersusNative/session":       {"native": 1 / 1.05},
}

// SetTargets gives each ratio of rs that has no target the one
// ingestTargets names for it, and says whether its median meets it. Reports
// written before ingested results carried targets get them when read.
func SetTargets(rs []Result) {
	for i := range rs {
		for j := range rs[i].Ratios {
			q := &rs[i].Ratios[j]
			if t := ingestTargets[rs[i].Name][q.Versus]; t > 0 && q.Target == 0 {
				met := q.Median >= t
				q.Target, q.Met = t, &met
			}
		}
	}
}

// spread says whether unit is one of the spread metrics internal/sidebyside
// reports beside a median ratio (min-, max-, p10-, p90-<ours>/<ref>).
func spread(unit string) bool {
	for _, p := range []string{"min-", "max-", "p10-", "p90-"} {
		if strings.HasPrefix(unit, p) {
			return true
		}
	}
	return false
}
