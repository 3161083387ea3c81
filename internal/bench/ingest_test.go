package bench

import (
	"math"
	"strings"
	"testing"
)

func TestIngest(t *testing.T) {
	text := `goos: linux
BenchmarkVersusNative/launch-16    	  200000	      2.5 ns/op	      2010 go-ns/launch	      1950 native-ns/launch	     1.031 go/native	     0.99 min-go/native	     1.08 max-go/native	     1.01 p10-go/native	     1.06 p90-go/native	     60.5 extra-ns
BenchmarkLaunchEmpty-16    	  200000	      2100 ns/op
BenchmarkTensorCoreVersusCublas/f16-16  20  5000 ns/op  400.0 ours-TFLOP/s  600.0 cublas-TFLOP/s  1.5 ours/cublas  0.65 ratio-of-cublas
BenchmarkTensorCoreVersusCublas/f16_4096-16  20  5000 ns/op  2.1 ours/cublas
BenchmarkSessionVersusNative/submit-16  2001  1836404 ns/op  1.050 session/native  1.112 p90-session/native
BenchmarkLayersVersusNative/session-16  801  1865998 ns/op  1.059 go/native
PASS
`
	rs, err := Ingest(strings.NewReader(text), "launch")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 5 {
		t.Fatalf("%d results, want 5 (lines without a ratio are skipped): %+v", len(rs), rs)
	}
	// Issue 15's targets: set by name, met or not by the median.
	for i, want := range []struct {
		target float64
		met    bool
	}{{0, false}, {0, false}, {0.5, false}, {1 / 1.05, true}, {1 / 1.05, false}} {
		q := rs[i].Ratios[0]
		if q.Target != want.target || (q.Met != nil) != (want.target > 0) || q.Met != nil && *q.Met != want.met {
			t.Errorf("%s: target %v met %v, want %v %v", rs[i].Name, q.Target, q.Met, want.target, want.met)
		}
	}
	if tc := rs[1]; len(tc.Ratios) != 1 || tc.Ratios[0].Versus != "cublas" || tc.Ratios[0].Median != 0.65 || len(tc.Sides) != 2 || tc.Sides[0].Unit != "TFLOP/s" {
		t.Errorf("tensor-core line read as %+v; want the ratio-of-cublas metric, 0.65, over the inverted time ratio", tc)
	}
	r := rs[0]
	if r.Name != "VersusNative/launch" || len(r.Sides) != 2 || r.Sides[0].Name != "go" || r.Sides[1].Median != 1950 {
		t.Errorf("sides of %+v", r)
	}
	if len(r.Ratios) != 1 || r.Ratios[0].Versus != "native" || math.Abs(r.Ratios[0].Median-1/1.031) > 1e-12 {
		t.Errorf("ratios %+v, want native at 1/1.031", r.Ratios)
	}
	if _, err := Ingest(strings.NewReader("BenchmarkX-2 10 abc go/native\n"), "x"); err == nil {
		t.Error("a malformed metric was accepted")
	}
}

func TestNearestRank(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct{ p, want float64 }{{50, 3}, {95, 5}, {5, 1}, {100, 5}, {0, 1}} {
		if got := NearestRank(v, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
}
