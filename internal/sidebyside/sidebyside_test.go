package sidebyside

import (
	"errors"
	"testing"
)

func TestRunAlternatesAndPairs(t *testing.T) {
	var order []string
	a := func() (float64, error) { order = append(order, "a"); return 2, nil }
	b := func() (float64, error) { order = append(order, "b"); return 3, nil }
	r, err := Run(4, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := string([]byte{order[0][0], order[1][0], order[2][0], order[3][0], order[4][0], order[5][0]}); got != "abbaab" {
		t.Fatalf("order %q, want abbaab...", got)
	}
	for i := range r.Ratio {
		if r.A[i] != 2 || r.B[i] != 3 || r.Ratio[i] != 1.5 {
			t.Fatalf("round %d: %v %v %v", i, r.A[i], r.B[i], r.Ratio[i])
		}
	}
}

func TestRunStopsAtError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	_, err := Run(5, func() (float64, error) { calls++; return 1, nil }, func() (float64, error) { return 0, boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err %v after %d calls of a", err, calls)
	}
	if _, err := Run(1, func() (float64, error) { return 0, nil }, func() (float64, error) { return 1, nil }); err == nil {
		t.Fatal("a zero cost for A gave no error")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 3}} {
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	for _, c := range []struct{ q, want float64 }{{0.1, 1}, {0.5, 5}, {0.9, 9}, {1, 10}, {0.01, 1}, {0.95, 10}} {
		if got := Quantile(v, c.q); got != c.want {
			t.Errorf("Quantile(1..10, %v) = %v, want %v", c.q, got, c.want)
		}
	}
	if got := Quantile(nil, 0.5); got != 0 {
		t.Errorf("Quantile(nil) = %v", got)
	}
}
