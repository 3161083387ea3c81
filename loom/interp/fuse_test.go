package interp

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// randF32 returns n float32 values from random bits (NaNs, infinities,
// subnormals and all).
func randF32(n int, seed uint64) []float32 {
	x := make([]float32, n)
	s := seed
	for i := range x {
		s = s*6364136223846793005 + 1442695040888963407
		x[i] = math.Float32frombits(uint32(s >> 32))
	}
	return x
}

// TestFusedOps runs the load-load-op-store shape against Go's float32
// arithmetic: in place (fused block loop), and with the store block
// shifted onto the read block (must fall back to the lockstep ops, which
// load every lane before storing any). Each case checks which path ran.
func TestFusedOps(t *testing.T) {
	m := ownKernel(t, "fused_ops.loom")
	countFused = true
	defer func() { countFused = false }()
	ops := map[string]func(x, y float32) float32{
		"fused_subf": func(x, y float32) float32 { return x - y },
		"fused_mulf": func(x, y float32) float32 { return x * y },
	}
	for export, f := range ops {
		for _, n := range []int{1, 63, 64, 200} {
			for _, shift := range []int{0, 1, -1} {
				if (shift < 0 && n < 2) || (shift != 0 && n > 64) {
					// A shifted store past one workgroup races with the
					// next workgroup's loads: only in-place is defined.
					continue
				}
				r := compileRun(t, m, export, Options{Workers: 1})
				a, c := randF32(n, 1), randF32(n+1, uint64(n))
				if shift < 0 {
					// Lane 0 would store at -1: shift the read side instead
					// by leaving lane 0's store in range through m.
					c = c[:n]
				}
				want := append([]float32(nil), c...)
				for i := 0; i < n; i++ {
					if j := i + shift; j >= 0 && j < len(want) {
						want[j] = f(a[i], c[i])
					}
				}
				cb := f32bytes(c)
				before := fusedRuns.Load()
				err := r.k.Run(r.launch(int64(n)), []Arg{idx(int64(n)), idx(int64(len(c))), idx(int64(shift)), buf(f32bytes(a)), buf(cb)})
				fused := fusedRuns.Load() - before
				if shift < 0 {
					// Lane 0 stores at index -1: an error naming it, and
					// nothing fused (the store block is not in bounds).
					var re *RunError
					if !errors.As(err, &re) || !errors.Is(err, ErrOutOfBounds) || !re.HasItem || re.Workitem[0] != 0 || re.Workgroup[0] != 0 {
						t.Fatalf("%s n=%d shift=%d: err = %v, want a bounds error at work-item 0 of workgroup 0", export, n, shift, err)
					}
					if fused != 0 {
						t.Fatalf("%s n=%d shift=%d: %d fused steps ran before the bounds error", export, n, shift, fused)
					}
					// The store index register was left unwritten by its
					// producer (lazyAff): the fallback must write it.
					if !strings.Contains(re.Msg, "index [-1] ") {
						t.Fatalf("%s n=%d shift=%d: error %q does not name index [-1]", export, n, shift, re.Msg)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s n=%d shift=%d: %v", export, n, shift, err)
				}
				exactF32(t, export, bytesF32(cb), want)
				if shift == 0 && fused == 0 {
					t.Fatalf("%s n=%d: in-place update did not take the fused loop", export, n)
				}
				if shift != 0 && n > 1 && fused != 0 {
					t.Fatalf("%s n=%d shift=%d: overlapping blocks took the fused loop %d times", export, n, shift, fused)
				}
			}
		}
	}
}

// TestFusedTree checks the workgroup tree reduction, whose steps fuse,
// against a Go reference with random inputs (the tree's own summation
// order), and that its steps took the fused loop.
func TestFusedTree(t *testing.T) {
	m := corpus(t, "reduce_sum_workgroup.loom")
	countFused = true
	defer func() { countFused = false }()
	for _, n := range []int{1, 256, 1000} {
		r := compileRun(t, m, "reduce_sum_f32", Options{Workers: 2})
		x := ramp(n, 7, 0.37)
		groups := (n + 255) / 256
		part := make([]byte, 4*groups)
		before := fusedRuns.Load()
		r.run(wl(int64(n)), idx(int64(n)), buf(f32bytes(x)), buf(part))
		if got := fusedRuns.Load() - before; got != int64(9*groups) {
			t.Fatalf("n=%d: %d fused steps, want %d", n, got, 9*groups)
		}
		want := make([]float32, groups)
		for g := range want {
			var tile [256]float32
			for i := range tile {
				if k := g*256 + i; k < n {
					tile[i] = x[k]
				}
			}
			for s := 128; s > 0; s /= 2 {
				for i := 0; i < s; i++ {
					tile[i] += tile[i+s]
				}
			}
			want[g] = tile[0]
		}
		exactF32(t, "partial", bytesF32(part), want)
	}
}

// TestGuardedCopy runs the guarded tile-load shape against a Go reference:
// a lane-range guard (fused block copy and fill), the same guard written
// so that it is no lane range (op by op), and a load past the end, whose
// error must name the lane's work-item and index either way.
func TestGuardedCopy(t *testing.T) {
	m := ownKernel(t, "fused_ops.loom")
	countFused = true
	defer func() { countFused = false }()
	for _, export := range []string{"guarded_copy", "guarded_copy_flip"} {
		for _, n := range []int{0, 1, 64, 100, 128} {
			for _, shift := range []int{0, 1} {
				p := 128
				r := compileRun(t, m, export, Options{Workers: 1})
				a := randF32(n, uint64(n+7))
				c := make([]byte, 4*p)
				before := fusedRuns.Load()
				err := r.k.Run(r.launch(int64(p)), []Arg{idx(int64(p)), idx(int64(n)), idx(int64(n)), idx(int64(shift)), buf(f32bytes(a)), buf(c)})
				fused := fusedRuns.Load() - before
				if shift == 1 && n > 0 {
					// Lane n-1 loads a[n]: workgroup (n-1)/64, item (n-1)%64.
					var re *RunError
					if !errors.As(err, &re) || !errors.Is(err, ErrOutOfBounds) || !re.HasItem || re.Workgroup[0] != (n-1)/64 || re.Workitem[0] != (n-1)%64 || !strings.Contains(re.Msg, "index ["+itoa(n)+"]") {
						t.Fatalf("%s n=%d shift=1: err = %v, want out of bounds at index [%d], workgroup %d item %d", export, n, err, n, (n-1)/64, (n-1)%64)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s n=%d shift=%d: %v", export, n, shift, err)
				}
				want := make([]float32, p)
				for i := range want {
					want[i] = -1.5
					if i < n {
						want[i] = a[i+shift]
					}
				}
				exactF32(t, export, bytesF32(c), want)
				if flip := export == "guarded_copy_flip"; flip != (fused == 0) {
					t.Fatalf("%s n=%d: %d fused copies", export, n, fused)
				}
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestBinBlock32 compares the block loop (vector and portable) with Go's
// float32 arithmetic on random bits, in place and out of place, with tails.
func TestBinBlock32(t *testing.T) {
	h := hasFMA
	defer func() { hasFMA = h }()
	for _, vec := range []bool{false, true} {
		hasFMA = vec && h
		for _, op := range []byte{'+', '-', '*', '/'} {
			for _, n := range []int{0, 1, 7, 8, 9, 16, 24, 31, 40, 64, 100, 1000} {
				a, b := randF32(n, uint64(n)+uint64(op)), randF32(n, uint64(n)*3+1)
				want := make([]float32, n)
				for i := range want {
					switch op {
					case '+':
						want[i] = a[i] + b[i]
					case '-':
						want[i] = a[i] - b[i]
					case '*':
						want[i] = a[i] * b[i]
					case '/':
						want[i] = a[i] / b[i]
					}
				}
				r := make([]float32, n)
				binBlock32(op, r, a, b)
				exactF32(t, "out of place "+string(op), r, want)
				b2 := slices.Clone(b)
				binBlock32(op, b2, a, b2)
				exactF32(t, "in place of b "+string(op), b2, want)
				binBlock32(op, a, a, b)
				exactF32(t, "in place "+string(op), a, want)
			}
		}
	}
}

// TestLazyLanes checks which affine registers are left unwritten: those
// whose every use reads only their affine facts (the tree's work-item id,
// dispatch id and tid+stride; the guarded copy's dispatch id and load
// index), and not a dispatch id that is also an ordinary comparison's
// second operand. The results of these kernels are checked against Go in
// TestFusedTree and TestGuardedCopy, their error messages (which need the
// lanes written on the fallback paths) in TestGuardedCopy, TestFusedOps and
// TestAffineAccessErrors.
func TestLazyLanes(t *testing.T) {
	own := ownKernel(t, "fused_ops.loom")
	for _, tc := range []struct {
		name   string
		export string
		want   int
	}{
		{"reduce_sum_workgroup.loom", "reduce_sum_f32", 3},
		{"", "guarded_copy", 2},
		{"", "guarded_copy_flip", 1},
	} {
		m := own
		if tc.name != "" {
			m = corpus(t, tc.name)
		}
		r := compileRun(t, m, tc.export, Options{Workers: 1})
		n := 0
		for _, s := range r.k.slots {
			if s.lazyAff {
				n++
			}
		}
		if n != tc.want {
			t.Errorf("%s: %d lazy registers, want %d", tc.export, n, tc.want)
		}
	}
}

// TestGuardedCopyAliased binds one buffer as both source and destination
// of the guarded copy: in place (fused), and shifted by one (the copy
// overlaps the fill, so the ops run one by one: every lane of a workgroup
// loads before any stores). Workgroups touch disjoint elements.
func TestGuardedCopyAliased(t *testing.T) {
	m := ownKernel(t, "fused_ops.loom")
	countFused = true
	defer func() { countFused = false }()
	for _, shift := range []int{0, 1} {
		for _, n := range []int{0, 10, 63, 100, 127} {
			p := 128
			r := compileRun(t, m, "guarded_copy", Options{Workers: 1})
			x := randF32(p, uint64(n+shift))
			want := make([]float32, p)
			for i := range want {
				want[i] = -1.5
				if i < n {
					want[i] = x[i+shift]
				}
			}
			xb := f32bytes(x)
			before := fusedRuns.Load()
			err := r.k.Run(r.launch(int64(p)), []Arg{idx(int64(p)), idx(int64(n)), idx(int64(p)), idx(int64(shift)), buf(xb), buf(xb)})
			if err != nil {
				t.Fatalf("shift=%d n=%d: %v", shift, n, err)
			}
			exactF32(t, "aliased copy", bytesF32(xb), want)
			fused := fusedRuns.Load() - before
			if shift == 0 && fused != 2 {
				t.Fatalf("in place n=%d: %d fused copies, want 2", n, fused)
			}
			if shift == 1 {
				// A group with then lanes reads across its own stores and
				// must not fuse; one with only else lanes is a fill.
				want := int64(0)
				for g := 0; g < p/64; g++ {
					if 64*g >= n {
						want++
					}
				}
				if fused != want {
					t.Fatalf("shift=1 n=%d: %d fused copies, want %d", n, fused, want)
				}
			}
		}
	}
}
