package interp

import (
	"bytes"
	"errors"
	"math"
	"testing"
	"unsafe"
)

// view32Src is an in-place f32 step on a view that starts at a byte
// offset into its buffer: c[i] = c[i] + c[i+s] for the lanes i < n.
const view32Src = `
kernel.def export("k") @k(%n: index) {
  %c1 = index.constant 1 : index
  %c64 = index.constant 64 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c64, %c1, %c1) : index
} launch(%n: index, %m: index, %off: offset, %s: index, %cbuf: buffer) {
  %gid = kernel.workitem.dispatch.id<x> : index
  %c = buffer.view %cbuf[%off] : buffer -> view<[%m]xf32>
  %ok = index.cmp ult, %gid, %n : index
  scf.if %ok {
    %j = index.add %gid, %s : index
    %x = view.load %c[%gid] : view<[%m]xf32> -> f32
    %y = view.load %c[%j] : view<[%m]xf32> -> f32
    %r = scalar.addf %x, %y : f32
    view.store %r, %c[%gid] : f32, view<[%m]xf32>
  }
  kernel.return
}
`

// TestFusedViewOffset runs the fused step on views at aligned and
// unaligned byte offsets, with the read block inside and past the view's
// extent and the bound bytes: the fused and op-by-op forms must give the
// same bytes (or the same error), and in-range results match Go.
func TestFusedViewOffset(t *testing.T) {
	m := parseSrc(t, view32Src)
	countFused = true
	defer func() { countFused, noFuse = false, false }()
	for _, off := range []int{0, 4, 8, 2} {
		for _, c := range []struct{ n, m, s, floats int }{
			{64, 128, 64, 128}, // in range
			{40, 128, 64, 104}, // exactly to the end of the bound bytes
			{40, 100, 64, 200}, // the read block passes the view's extent
			{40, 128, 64, 103}, // the read block passes the bound bytes
			{64, 128, 1, 128},  // overlapping blocks: op by op
			{1, 2, 1, 2},       // one lane
		} {
			var res [2][]byte
			var errs [2]error
			fused := int64(0)
			for pass, off2 := range []bool{false, true} {
				noFuse = off2
				r := compileRun(t, m, "k", Options{Workers: 1})
				x := ramp(c.floats, uint32(c.n+off), 0.5)
				buf0 := make([]byte, off+4*c.floats)
				copy(buf0[off:], f32bytes(x))
				before := fusedRuns.Load()
				errs[pass] = r.k.Run(grid(1, 64), []Arg{idx(int64(c.n)), idx(int64(c.m)), {Bits: uint64(off)}, idx(int64(c.s)), buf(buf0)})
				if pass == 0 {
					fused = fusedRuns.Load() - before
				}
				res[pass] = buf0
				if errs[pass] == nil && pass == 0 {
					want := append([]float32(nil), x...)
					if c.s < c.n {
						// Lockstep: every lane loads before any stores.
						old := append([]float32(nil), x...)
						for i := 0; i < c.n; i++ {
							want[i] = old[i] + old[i+c.s]
						}
					} else {
						for i := 0; i < c.n; i++ {
							want[i] = x[i] + x[i+c.s]
						}
					}
					got := make([]float32, c.floats)
					for i := range got {
						got[i] = math.Float32frombits(le.Uint32(buf0[off+4*i:]))
					}
					exactF32(t, "view32", got, want)
				}
			}
			if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && errs[0].Error() != errs[1].Error() {
				t.Fatalf("off=%d %+v: fused err %v, unfused err %v", off, c, errs[0], errs[1])
			}
			if errs[0] != nil && !errors.Is(errs[0], ErrOutOfBounds) {
				t.Fatalf("off=%d %+v: %v, want a bounds error", off, c, errs[0])
			}
			if !bytes.Equal(res[0], res[1]) {
				t.Fatalf("off=%d %+v: fused and unfused bytes differ", off, c)
			}
			inRange := c.s >= c.n && c.n+c.s <= c.m && 4*(c.n+c.s) <= 4*c.floats
			// The allocator may place a small buffer off 4-byte alignment:
			// what counts is the address of the view's first byte.
			aligned := uintptr(unsafe.Pointer(&res[0][off]))%4 == 0
			if wantFused := inRange && aligned; (fused > 0) != wantFused {
				t.Fatalf("off=%d %+v: %d fused steps, want fused=%v", off, c, fused, wantFused)
			}
		}
	}
}
