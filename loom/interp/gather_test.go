package interp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
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
	vec := hasAVX2
	defer func() { hasAVX2 = vec }()
	for _, hasAVX2 = range []bool{vec, false} {
		for _, shift := range []int{0, 1} { // aligned source, and one off alignment
			for _, tc := range cases {
				t.Run(fmt.Sprintf("%s/shift %d/avx2 %v", tc.name, shift, hasAVX2), func(t *testing.T) {
					in := make([]byte, 4*32+1)[shift:]
					copy(in, f32bytes(src))
					out, err, inline, _ := inlineAndGeneric(t, m, "gather2d", 4*32, func(out []byte) []Arg {
						return []Arg{idx(tc.dr), idx(tc.dc), buf(in), buf(out)}
					})
					if !tc.bad && inline != 3 {
						t.Fatalf("%d inline loads and stores completed, want 3", inline)
					}
					if tc.bad != (err != nil) || tc.bad && !errors.Is(err, ErrOutOfBounds) {
						t.Fatalf("error %v, want out of bounds: %v", err, tc.bad)
					}
					if !tc.bad {
						got := bytesF32(out)
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
}

// TestGatherF32Vector: the AVX2 loops of the f32 tile loads and stores
// read and write what the scalar formula does, with one or two indices,
// and stop at the group of a lane outside its extent or outside the
// source, in every lane position, having done exactly the groups before
// it.
func TestGatherF32Vector(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 on this CPU: the portable loop is all there is")
	}
	// Room before and after the 8×12 block, so that an index outside its
	// extent can still land inside the source and only its own test fails.
	src := ramp(200, 5, 1)
	f32 := make([]float32, len(src))
	for i, v := range src {
		f32[i] = float32(v)
	}
	const lanes = 16
	for _, two := range []bool{false, true} {
		d := gatherDims{st0: 12, dim0: 8, dim1: 8, n: int64(len(f32))}
		if two {
			d.st1, d.dim1 = 1, 12
		}
		b := int64(24)
		i0, i1 := make([]int64, lanes), make([]int64, lanes)
		for l := range lanes {
			i0[l], i1[l] = int64(l*5%8), int64(l*7%12)
			if !two {
				i1[l] = i0[l]
			}
		}
		want := func(l int) float64 { return float64(f32[b+i0[l]*d.st0+i1[l]*d.st1]) }
		out := make([]float64, lanes)
		if !gatherF32AVX(out, i0, i1, &f32[0], b, &d) {
			t.Fatalf("two=%v: in-range lanes refused", two)
		}
		for l := range lanes {
			if out[l] != want(l) {
				t.Fatalf("two=%v lane %d: %v, want %v", two, l, out[l], want(l))
			}
		}
		// The store: in lane order, so the last of lanes sharing an
		// element (one index: lanes l and l+8) leaves its value.
		vals := make([]float64, lanes)
		for l := range vals {
			vals[l] = float64(l) + 0.1 // rounds to f32 as the store must
		}
		dst, ref := make([]float32, len(f32)), make([]float32, len(f32))
		if !scatterF32AVX(vals, i0, i1, &dst[0], b, &d) {
			t.Fatalf("two=%v: in-range lanes refused by the store", two)
		}
		for l := range lanes {
			ref[b+i0[l]*d.st0+i1[l]*d.st1] = float32(vals[l])
		}
		if fmt.Sprint(dst) != fmt.Sprint(ref) {
			t.Fatalf("two=%v: stored %v\nwant %v", two, dst, ref)
		}
		same := make([]int64, lanes) // every lane on element b
		if !scatterF32AVX(vals[:4], same, same, &dst[0], b, &d) || dst[b] != float32(vals[3]) {
			t.Fatalf("two=%v: four lanes on one element left %v, want lane 3's %v", two, dst[b], float32(vals[3]))
		}
		type bad struct {
			name string
			set  func(l int)
		}
		bads := []bad{
			{"first index -1", func(l int) { i0[l] = -1 }},
			{"first index = dim", func(l int) { i0[l] = d.dim0 }},
			{"first index 2^32", func(l int) { i0[l] = 1 << 32 }},
		}
		if two {
			bads = append(bads,
				bad{"second index -1", func(l int) { i1[l] = -1 }},
				bad{"second index = dim", func(l int) { i1[l] = d.dim1 }},
				bad{"second index -2^32", func(l int) { i1[l] = -1 << 32 }})
		}
		for _, bd := range bads {
			for at := range lanes {
				s0, s1 := i0[at], i1[at]
				bd.set(at)
				if !two {
					i1[at] = i0[at]
				}
				out := make([]float64, lanes)
				for l := range out {
					out[l] = 99 // outside ramp's values
				}
				if gatherF32AVX(out, i0, i1, &f32[0], b, &d) {
					t.Fatalf("two=%v %s at lane %d: accepted", two, bd.name, at)
				}
				for l := range lanes {
					if wrote := out[l] != 99; wrote != (l < at&^3) {
						t.Fatalf("two=%v %s at lane %d: lane %d written %v", two, bd.name, at, l, wrote)
					}
				}
				clear(dst)
				clear(ref)
				if scatterF32AVX(vals, i0, i1, &dst[0], b, &d) {
					t.Fatalf("two=%v %s at lane %d: stored", two, bd.name, at)
				}
				for l := range at &^ 3 {
					ref[b+i0[l]*d.st0+i1[l]*d.st1] = float32(vals[l])
				}
				if fmt.Sprint(dst) != fmt.Sprint(ref) {
					t.Fatalf("two=%v %s at lane %d: stored %v\nwant %v", two, bd.name, at, dst, ref)
				}
				i0[at], i1[at] = s0, s1
			}
		}
		// Every index inside its extent, the element past the source.
		short := d
		short.n = b + 7*d.st0 + 11*d.st1
		for l := range lanes {
			i0[l], i1[l] = 7, 7
			if two {
				i1[l] = 11
			}
		}
		if gatherF32AVX(out, i0, i1, &f32[0], b, &short) {
			t.Fatalf("two=%v: element past the source accepted", two)
		}
		if scatterF32AVX(vals, i0, i1, &dst[0], b, &short) {
			t.Fatalf("two=%v: store past the destination accepted", two)
		}
		short.n++
		if !gatherF32AVX(out, i0, i1, &f32[0], b, &short) {
			t.Fatalf("two=%v: last element of the source refused", two)
		}
		// Every index inside its extent, a negative stride reaching below
		// the source's start.
		down := d
		down.st0 = -12
		if gatherF32AVX(out, i0, i1, &f32[0], 0, &down) {
			t.Fatalf("two=%v: element before the source accepted", two)
		}
		if scatterF32AVX(vals, i0, i1, &dst[0], 0, &down) {
			t.Fatalf("two=%v: store before the destination accepted", two)
		}
		if !gatherF32AVX(out, i0, i1, &f32[0], 84, &down) {
			t.Fatalf("two=%v: negative stride inside the source refused", two)
		}
	}
}

// tileIDKernel loads an [%rows]x8 f32 matrix at [ty, k], [k, tx] and
// [tz, k] (each index a work-item id of an 8×4×2 workgroup, the other a
// launch argument), at [ty, tx] (two ids) and, under %tx != %cut, at
// [tx, k]; it writes the five values of each work-item to its row of a
// 64×5 matrix.
const tileIDKernel = `
kernel.def export("tile_ids") @tile_ids() {
  %c1 = index.constant 1 : index
  %c2 = index.constant 2 : index
  %c4 = index.constant 4 : index
  %c8 = index.constant 8 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c8, %c4, %c2) : index
} launch(%rows: index, %k: index, %cut: index, %src: buffer, %dst: buffer) {
  %tx = kernel.workitem.id<x> : index
  %ty = kernel.workitem.id<y> : index
  %tz = kernel.workitem.id<z> : index
  %c8 = index.constant 8 : index
  %c32 = index.constant 32 : index
  %z = index.constant 0 : offset
  %in = buffer.view %src[%z] : buffer -> view<[%rows]x8xf32>
  %out = buffer.view %dst[%z] : buffer -> view<64x5xf32>
  %a = view.load %in[%ty, %k] : view<[%rows]x8xf32> -> f32
  %b = view.load %in[%k, %tx] : view<[%rows]x8xf32> -> f32
  %c = view.load %in[%tz, %k] : view<[%rows]x8xf32> -> f32
  %row0 = index.madd %ty, %c8, %tx : index
  %row = index.madd %tz, %c32, %row0 : index
  %i0 = index.constant 0 : index
  %i1 = index.constant 1 : index
  %i2 = index.constant 2 : index
  %i3 = index.constant 3 : index
  view.store %a, %out[%row, %i0] : f32, view<64x5xf32>
  view.store %b, %out[%row, %i1] : f32, view<64x5xf32>
  view.store %c, %out[%row, %i2] : f32, view<64x5xf32>
  %e = view.load %in[%ty, %tx] : view<[%rows]x8xf32> -> f32
  %i4 = index.constant 4 : index
  view.store %e, %out[%row, %i4] : f32, view<64x5xf32>
  %under = index.cmp ne, %tx, %cut : index
  scf.if %under {
    %d = view.load %in[%tx, %k] : view<[%rows]x8xf32> -> f32
    view.store %d, %out[%row, %i3] : f32, view<64x5xf32>
    scf.yield
  }
  kernel.return
}
`

// TestTileLoadsByID: loads whose one varying index is a work-item id read
// each element once and spread it over the lanes (tileByID) along every
// axis, giving the bytes and errors of the generic form: ids past the
// view's rows, a uniform index past its extent and a partly active mask
// (which keeps the lane loops) included.
func TestTileLoadsByID(t *testing.T) {
	m := parseSrc(t, tileIDKernel)
	src := ramp(64, 3, 1)
	cases := []struct {
		name          string
		rows, k, cut  int64
		bad           bool
		tiled, inline int64 // loads by tileByID, all inline loads and stores
	}{
		{"in range", 8, 5, 8, false, 4, 10},
		{"part of the lanes active", 8, 5, 5, false, 3, 10},
		{"y ids past the rows", 3, 1, 0, true, 0, 0},
		{"uniform index past its extent", 8, 8, 0, true, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err, inline, tiled := inlineAndGeneric(t, m, "tile_ids", 4*64*5, func(out []byte) []Arg {
				return []Arg{idx(tc.rows), idx(tc.k), idx(tc.cut), buf(f32bytes(src)), buf(out)}
			})
			if !tc.bad && (tiled != tc.tiled || inline != tc.inline) {
				t.Fatalf("%d loads by id, %d inline loads and stores; want %d, %d", tiled, inline, tc.tiled, tc.inline)
			}
			if tc.bad != (err != nil) || tc.bad && !errors.Is(err, ErrOutOfBounds) {
				t.Fatalf("error %v, want out of bounds: %v", err, tc.bad)
			}
			if tc.bad {
				return
			}
			got := bytesF32(out)
			for lane := range 64 {
				x, y, z := int64(lane%8), int64(lane/8%4), int64(lane/32)
				want := []float32{src[y*8+tc.k], src[tc.k*8+x], src[z*8+tc.k], 0, src[y*8+x]}
				if x != tc.cut {
					want[3] = src[x*8+tc.k]
				}
				for j, w := range want {
					if got[lane*5+j] != w {
						t.Fatalf("lane %d value %d: %v, want %v", lane, j, got[lane*5+j], w)
					}
				}
			}
		})
	}
	// The ids inside the extent but the last element past the source
	// (which the view's own test rules out first; tileByID holds anyway).
	g := gatherIdx{n: 1, dims: [maxRank]int64{8}, strd: [maxRank]int64{4 * 8}}
	out := make([]float64, 64)
	for _, n := range []int{25, 24} {
		ok := g.tileByID(out, make([]float32, n), [3]int{8, 4, 2}, 1)
		if ok != (n == 25) {
			t.Fatalf("y ids over rows of 8 in %d elements: accepted %v", n, ok)
		}
	}
}

// inlineAndGeneric runs export once with the inline forms of loads and stores and
// once with the generic ones (noFuse), on one worker, each into a fresh
// output of outBytes that args binds. It fails the test where the two
// write different bytes or report different errors, or where the generic
// run took an inline form; it returns the inline run's output and error,
// and the inline accesses and loads by id (tileByID) it completed.
func inlineAndGeneric(t *testing.T, m *loom.Module, export string, outBytes int, args func(out []byte) []Arg) (out []byte, err error, inline, tiled int64) {
	t.Helper()
	var outs [2][]byte
	var errs [2]error
	countFused = true
	defer func() { countFused = false }()
	for i, generic := range []bool{false, true} {
		noFuse = generic
		r := compileRun(t, m, export, Options{Workers: 1})
		noFuse = false
		outs[i] = make([]byte, outBytes)
		t0, g0 := tileRuns.Load(), gatherRuns.Load()
		errs[i] = r.k.Run(r.launch(), args(outs[i]))
		if i == 0 {
			inline, tiled = gatherRuns.Load()-g0, tileRuns.Load()-t0
		} else if gatherRuns.Load() != g0 || tileRuns.Load() != t0 {
			t.Fatal("the generic form took an inline form")
		}
	}
	if (errs[0] == nil) != (errs[1] == nil) || errs[0] != nil && errs[0].Error() != errs[1].Error() {
		t.Fatalf("inline forms: %v\ngeneric form: %v", errs[0], errs[1])
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("the inline and generic forms wrote different bytes")
	}
	return outs[0], errs[0], inline, tiled
}

// gather3Kernel reads a vector of four elements through a rank-3 view at
// [du, tid/8 + dr, (tid%2)·4 + dc] (du uniform, the others varying) and
// one element through another rank-3 view of the same bytes at
// [tid/8 + dr, du, (tid%2)·4 + dc], and writes both to row tid of a
// 32×5 view: the launch arguments du, dr and dc push each axis past its
// extent in turn.
const gather3Kernel = `
kernel.def export("gather3d") @gather3d() {
  %c1 = index.constant 1 : index
  %c32 = index.constant 32 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c32, %c1, %c1) : index
} launch(%du: index, %dr: index, %dc: index, %src: buffer, %dst: buffer) {
  %tid = kernel.workitem.id<x> : index
  %c0 = index.constant 0 : index
  %c2 = index.constant 2 : index
  %c4 = index.constant 4 : index
  %c8 = index.constant 8 : index
  %z = index.constant 0 : offset
  %in = buffer.view %src[%z] : buffer -> view<2x4x8xT>
  %in2 = buffer.view %src[%z] : buffer -> view<4x2x8xT>
  %out = buffer.view %dst[%z] : buffer -> view<32x5xT>
  %r = index.div %tid, %c8 : index
  %odd = index.rem %tid, %c2 : index
  %c = index.mul %odd, %c4 : index
  %rr = index.add %r, %dr : index
  %cc = index.add %c, %dc : index
  %v = vector.load %in[%du, %rr, %cc] : view<2x4x8xT> -> vector<4xT>
  vector.store %v, %out[%tid, %c0] : vector<4xT>, view<32x5xT>
  %s = view.load %in2[%rr, %du, %cc] : view<4x2x8xT> -> T
  view.store %s, %out[%tid, %c4] : T, view<32x5xT>
  kernel.return
}
`

// TestGatherRank3: vector and scalar loads through rank-3 views at a mix
// of uniform and varying indices take the inline form (vecGather), read
// the elements the views' strides name for every element type, and give
// the same bytes and the same errors as the generic form, with each axis
// past its extent.
func TestGatherRank3(t *testing.T) {
	cases := []struct {
		name       string
		du, dr, dc int64
		bad        bool
	}{
		{"in range", 0, 0, 0, false},
		{"in range, second block", 1, 0, 0, false},
		{"uniform index past its extent", 2, 0, 0, true},
		{"varying row past its extent", 0, 1, 0, true},
		{"vector past the last axis", 0, 0, 1, true},
		{"negative column", 0, 0, -1, true},
	}
	for _, typ := range []struct {
		name string
		size int
	}{{"i8", 1}, {"f16", 2}, {"bf16", 2}, {"i32", 4}, {"f64", 8}} {
		m := parseSrc(t, strings.ReplaceAll(gather3Kernel, "T", typ.name))
		n := typ.size
		src := make([]byte, 64*n)
		for i := range src {
			src[i] = byte(i*29 + 7)
		}
		if n >= 2 { // finite floats: clear each element's exponent's top bit
			for i := range 64 {
				src[(i+1)*n-1] &= 0x3f
			}
		}
		elem := func(i int) []byte { return src[i*n : (i+1)*n] }
		for _, tc := range cases {
			t.Run(typ.name+"/"+tc.name, func(t *testing.T) {
				out, err, inline, _ := inlineAndGeneric(t, m, "gather3d", 32*5*n, func(out []byte) []Arg {
					return []Arg{idx(tc.du), idx(tc.dr), idx(tc.dc), buf(src), buf(out)}
				})
				if tc.bad != (err != nil) || tc.bad && !errors.Is(err, ErrOutOfBounds) {
					t.Fatalf("error %v, want out of bounds: %v", err, tc.bad)
				}
				if tc.bad {
					return
				}
				if inline != 2 {
					t.Fatalf("%d inline loads completed, want 2", inline)
				}
				du := int(tc.du)
				for tid := range 32 {
					r, c := tid/8, tid%2*4
					row := out[tid*5*n:][:5*n]
					for j := range 4 {
						if got, want := row[j*n:(j+1)*n], elem((du*4+r)*8+c+j); !bytes.Equal(got, want) {
							t.Fatalf("lane %d vector element %d: % x, want % x", tid, j, got, want)
						}
					}
					if got, want := row[4*n:], elem((r*2+du)*8+c); !bytes.Equal(got, want) {
						t.Fatalf("lane %d scalar: % x, want % x", tid, got, want)
					}
				}
			})
		}
	}
}
