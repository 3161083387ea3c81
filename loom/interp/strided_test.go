package interp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// ownKernel parses one of this package's own test kernels (testdata/).
func ownKernel(t testing.TB, name string) *loom.Module {
	t.Helper()
	p := filepath.Join("testdata", name)
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(p, src)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return m
}

// TestReduceSumStrided runs the block-strided reduction (the second
// reduction benchmark) against a Go reference. Inputs are small integers so
// every partial sum is exact in f32 whatever the summation order; sizes
// cover a partial last workgroup, a partial last stride and a single lane.
func TestReduceSumStrided(t *testing.T) {
	m := ownKernel(t, "reduce_sum_strided.loom")
	for _, n := range []int{1, 255, 16384, 16385, 3*16384 + 1000} {
		for _, w := range []int{1, 2} {
			r := compileRun(t, m, "reduce_sum_strided", Options{Workers: w})
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(int(uint32(i)*2654435761>>27) - 16)
			}
			groups := (n + 16383) / 16384
			part := make([]byte, 4*groups)
			r.run(wl(int64(n)), idx(int64(n)), buf(f32bytes(x)), buf(part))
			want := make([]float32, groups)
			for i, v := range x {
				want[i/16384] += v
			}
			exactF32(t, "partial", bytesF32(part), want)
		}
	}
}
