package interp

import "testing"

// handoffBody: y[i] = x[i]*2^k for x[i] > 0 (a uniform-bound loop under a
// data-dependent if, whose carried value and result are handed over by
// storage swap), -x[i] otherwise; a second uniform loop accumulates an
// if-with-results in its body (then region handed over, else region copied
// into the other lanes of the same result). Lanes take both branches in the
// same workgroup, so a swap that lost the other branch's lanes or a stale
// carried lane shows up against the reference.
const handoffBody = `  %g = kernel.workitem.dispatch.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %xv = buffer.view %x[%z] : buffer -> view<[%n]xf32>
  %yv = buffer.view %y[%z] : buffer -> view<[%n]xf32>
  %wv = buffer.view %w[%z] : buffer -> view<[%n]xf32>
  %two = scalar.constant 2.0 : f32
  %zero = scalar.constant 0.0 : f32
  %ok = index.cmp ult, %g, %n : index
  scf.if %ok {
    %x0 = view.load %xv[%g] : view<[%n]xf32> -> f32
    %p = scalar.cmpf ogt, %x0, %zero : f32
    %u = scf.if %p -> (f32) {
      %acc = scf.for %k = [%c0 to %k3 step %c1] (%s = %x0 : f32) -> (f32) {
        %s2 = scalar.mulf %s, %two : f32
        scf.yield %s2 : f32
      }
      scf.yield %acc : f32
    } else {
      %neg = scalar.negf %x0 : f32
      scf.yield %neg : f32
    }
    view.store %u, %yv[%g] : f32, view<[%n]xf32>
    %t = scf.for %k = [%c0 to %k3 step %c1] (%s = %zero : f32) -> (f32) {
      %kf = index.cast %k : index -> i32
      %kx = scalar.sitofp %kf : i32 -> f32
      %q = scalar.cmpf olt, %kx, %x0 : f32
      %v = scf.if %q -> (f32) {
        %m = scalar.mulf %kx, %x0 : f32
        scf.yield %m : f32
      } else {
        scf.yield %two : f32
      }
      %s2 = scalar.addf %s, %v : f32
      scf.yield %s2 : f32
    }
    view.store %t, %wv[%g] : f32, view<[%n]xf32>
  }`

func TestHandoffMatchesReference(t *testing.T) {
	const params = "%n: index, %k3: index, %x: buffer, %y: buffer, %w: buffer"
	for _, c := range []struct{ n, k, groups, size int }{
		{1000, 3, 8, 128}, {77, 0, 3, 32}, {300, 5, 2, 256}, {64, 2, 1, 64},
	} {
		x := ramp(c.n, 5, 4)
		y, w := make([]byte, 4*c.n), make([]byte, 4*c.n)
		if err := runInline(t, params, handoffBody, grid(c.groups, c.size), idx(int64(c.n)), idx(int64(c.k)), buf(f32bytes(x)), buf(y), buf(w)); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		wantY, wantW := make([]float32, c.n), make([]float32, c.n)
		for i, v := range x {
			if i >= c.groups*c.size {
				break
			}
			if v > 0 {
				s := v
				for k := 0; k < c.k; k++ {
					s *= 2
				}
				wantY[i] = s
			} else {
				wantY[i] = -v
			}
			var s float32
			for k := 0; k < c.k; k++ {
				if float32(k) < v {
					s += float32(k) * v
				} else {
					s += 2
				}
			}
			wantW[i] = s
		}
		exactF32(t, "y", bytesF32(y), wantY)
		exactF32(t, "w", bytesF32(w), wantW)
	}
}
