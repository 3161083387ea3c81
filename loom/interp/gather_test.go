package interp

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// gatherKernel reads a 4x8 f32 matrix through a 2-D view at [tid/8 + dr,
// tid%8 + dc] and at [dr, tid%8] (dr, dc launch arguments, so indices past
// their extent can be provoked on either axis, varying or uniform) and
// writes 2*first + second to [tid%8, tid/8 + dr] of an 8x4 view.
const gatherKernel = `
kernel.def export("gather2d") @gather2d() {
  %c1 = index.constant 1 : index
  %c32 = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c32, %c1, %c1) : index
} launch(%dr: index, %dc: index, %src: buffer, %dst: buffer) {
  %tid = kernel.workitem.id<x> : index
  %c8 = index.constant 8 : index
  %z = index.constant 0 : offset
  %in = buffer.view %src[%z] : buffer -> view<4x8xf32>
  %out = buffer.view %dst[%z] : buffer -> view<8x4xf32>
  %r = index.div %tid, %c8 : index
  %c = index.rem %tid, %c8 : index
  %rr = index.add %r, %dr : index
  %cc = index.add %c, %dc : index
  %x = view.load %in[%rr, %cc] : view<4x8xf32> -> f32
  %two = scalar.constant 2.0 : f32
  %y0 = scalar.mulf %x, %two : f32
  %u = view.load %in[%dr, %c] : view<4x8xf32> -> f32
  %y = scalar.addf %y0, %u : f32
  view.store %y, %out[%c, %rr] : f32, view<8x4xf32>
  kernel.return
}
`

// TestGatherScatter: loads and stores through rank-2 views give the same
// bytes and the same errors with the inline offset form as with the
// generic one, and the inline form is what runs.
func TestGatherScatter(t *testing.T) {
	m := parseSrc(t, gatherKernel)
	src := ramp(32, 9, 1)
	cases := []struct {
		name   string
		dr, dc int64
		bad    bool
	}{
		{"in range", 0, 0, false},
		{"varying column past its extent", 0, 1, true},
		{"uniform and varying rows past their extent", 4, 0, true},
		{"varying row past its extent", 3, 0, true},
		{"negative row", -1, 0, true},
	}
	for _, shift := range []int{0, 1} { // aligned source, and one off alignment
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/shift %d", tc.name, shift), func(t *testing.T) {
				var outs [2][]byte
				var errs [2]error
				countFused = true
				defer func() { countFused = false }()
				for i, generic := range []bool{false, true} {
					noFuse = generic
					r := compileRun(t, m, "gather2d", Options{Workers: 1})
					noFuse = false
					outs[i] = make([]byte, 4*32)
					before := gatherRuns.Load()
					in := make([]byte, 4*32+1)[shift:]
					copy(in, f32bytes(src))
					errs[i] = r.k.Run(r.launch(), []Arg{idx(tc.dr), idx(tc.dc), buf(in), buf(outs[i])})
					if ran := gatherRuns.Load() - before; !generic && !tc.bad && ran != 3 || generic && ran != 0 {
						t.Fatalf("generic=%v: %d inline loads and stores completed", generic, ran)
					}
				}
				if tc.bad != (errs[0] != nil) || !errors.Is(errs[0], ErrOutOfBounds) && tc.bad {
					t.Fatalf("error %v, want out of bounds: %v", errs[0], tc.bad)
				}
				if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && errs[0].Error() != errs[1].Error() {
					t.Fatalf("inline form: %v\ngeneric form: %v", errs[0], errs[1])
				}
				if !bytes.Equal(outs[0], outs[1]) {
					t.Fatal("inline and generic forms wrote different bytes")
				}
				if !tc.bad {
					got := bytesF32(outs[0])
					for tid := range 32 {
						if want := 2*src[tid] + src[tid%8]; got[(tid%8)*4+tid/8] != want {
							t.Fatalf("out[%d][%d] = %v, want %v", tid%8, tid/8, got[(tid%8)*4+tid/8], want)
						}
					}
				}
			})
		}
	}
}
