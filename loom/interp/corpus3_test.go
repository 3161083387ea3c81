package interp

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

func TestMoreElementwiseCorpus(t *testing.T) {
	const n = 129
	x, y := ramp(n, 21, 2), ramp(n, 22, 2)
	t.Run("add", func(t *testing.T) {
		r := compileRun(t, corpus(t, "add.loom"), "add_f32", Options{})
		c := make([]byte, 4*n)
		r.run(wl(n), idx(n), buf(f32bytes(x)), buf(f32bytes(y)), buf(c))
		want := make([]float32, n)
		for i := range want {
			want[i] = x[i] + y[i]
		}
		exactF32(t, "c", bytesF32(c), want)
	})
	t.Run("double_inplace", func(t *testing.T) {
		r := compileRun(t, corpus(t, "command_program.loom"), "double_inplace", Options{})
		b := f32bytes(x)
		r.run(wl(n), idx(n), buf(b))
		r.run(wl(n), idx(n), buf(b))
		want := make([]float32, n)
		for i := range want {
			want[i] = 4 * x[i]
		}
		exactF32(t, "buf", bytesF32(b), want)
	})
	t.Run("axpy_multiline", func(t *testing.T) {
		r := compileRun(t, corpus(t, "multiline_header.loom"), "axpy_multiline", Options{})
		yb := f32bytes(y)
		r.run(wl(n), idx(n), f32a(-0.5), buf(f32bytes(x)), buf(yb))
		want := make([]float32, n)
		for i := range want {
			want[i] = float32(math.FMA(-0.5, float64(x[i]), float64(y[i])))
		}
		exactF32(t, "y", bytesF32(yb), want)
	})
}

// The corpus kernels the CPU executor refuses, each at Compile with the
// position of the op that cannot run.
func TestCorpusRefusals(t *testing.T) {
	cases := []struct{ file, export, pos, msg string }{
		{"unknown_op.loom", "inc_with_vendor_op", "unknown_op.loom:25:3", "vendor.cache.writeback is not supported"},
		{"helper_recursive.loom", "window4_scaled", "helper_recursive.loom:25:7", "recursion"},
		{"decls_opaque.loom", "axpy_delegate", "decls_opaque.loom:17:3", "only declared"},
		{"func_template.loom", "bump_keyed", "func_template.loom:41:5", "tie at priority 0"},
	}
	for _, tc := range cases {
		t.Run(tc.export, func(t *testing.T) {
			_, err := Compile([]*loom.Module{corpus(t, tc.file)}, tc.export, Options{})
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v, want ErrUnsupported", err)
			}
			if !strings.Contains(err.Error(), tc.pos) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want position %s and %q", err, tc.pos, tc.msg)
			}
		})
	}
	if _, err := Compile([]*loom.Module{corpus(t, "add.loom")}, "nope", Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing export: %v", err)
	}
}

// One compiled kernel serves concurrent Runs with separate buffers.
func TestConcurrentRuns(t *testing.T) {
	r := compileRun(t, corpus(t, "reduce_sum_workgroup.loom"), "reduce_sum_f32", Options{Workers: 2})
	const n = 700
	done := make(chan error, 4)
	for w := 0; w < 4; w++ {
		go func() {
			src := ramp(n, uint32(w+1), 1)
			part := make([]byte, 4*3)
			if err := r.k.Run(r.launch(n), []Arg{idx(n), buf(f32bytes(src)), buf(part)}); err != nil {
				done <- err
				return
			}
			var want [3]float64
			for i, x := range src {
				want[i/256] += float64(x)
			}
			for g, got := range bytesF32(part) {
				if math.Abs(float64(got)-want[g]) > 1e-3 {
					done <- fmt.Errorf("run %d: partial[%d] = %v, want %v", w, g, got, want[g])
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
