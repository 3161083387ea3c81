package interp

import (
	"encoding/binary"
	"errors"
	"testing"
)

// The kernels of loom/testdata/ops_async.loom against Go, each run plain
// and under the sanitizer (which must find no race: the waits and
// barriers order every copy before its readers).

func asyncModes() []struct {
	name string
	opts Options
} {
	return []struct {
		name string
		opts Options
	}{
		{"plain", Options{}},
		{"sanitized", Options{Sanitize: Sanitize{Races: true, GlobalRaces: true}, Workers: 2}},
	}
}

func TestAsyncStages(t *testing.T) {
	const n = 256
	a, b := make([]float32, 4*n), make([]float32, 4*n)
	for i := range a {
		a[i], b[i] = float32(i)*0.5, float32(3*i+1)
	}
	for _, m := range asyncModes() {
		t.Run(m.name, func(t *testing.T) {
			r := compileRun(t, corpus(t, "ops_async.loom"), "async_stages", m.opts)
			dst := make([]byte, 16*n)
			r.run(wl(n), idx(n), buf(f32bytes(a)), buf(f32bytes(b)), buf(dst))
			got := bytesF32(dst)
			for i := 0; i < n; i++ {
				g, tt := i/64*64, i%64
				mirror, next := g+63-tt, g+(tt+1)%64
				for j := 0; j < 4; j++ {
					if want := a[4*mirror+j] + b[4*next+j]; got[4*i+j] != want {
						t.Fatalf("row %d element %d: got %v, want %v", i, j, got[4*i+j], want)
					}
				}
			}
		})
	}
}

func TestAsyncMaskTail(t *testing.T) {
	for _, n := range []int{64, 45, 33} {
		src := make([]byte, 6*n)
		for i := 0; i < 3*n; i++ {
			binary.LittleEndian.PutUint16(src[2*i:], uint16(1000+i))
		}
		for _, m := range asyncModes() {
			r := compileRun(t, corpus(t, "ops_async.loom"), "async_mask_tail", m.opts)
			dst := make([]byte, 6*n)
			r.run(wl(int64(n)), idx(int64(n)), buf(src), buf(dst))
			for i := 0; i < n; i++ {
				nb := i ^ 1
				for j := 0; j < 3; j++ {
					want := uint16(0xffff) // the neighbour copied nothing
					if nb < n {
						want = uint16(1000 + 3*nb + j)
					}
					if g := binary.LittleEndian.Uint16(dst[6*i+2*j:]); g != want {
						t.Fatalf("%s n=%d row %d element %d: got %#x, want %#x", m.name, n, i, j, g, want)
					}
				}
			}
		}
	}
}

func TestAsyncGatherRows(t *testing.T) {
	const n = 128
	src := make([]int32, 3*n)
	for i := range src {
		src[i] = int32(i*7 - 100)
	}
	for _, m := range asyncModes() {
		r := compileRun(t, corpus(t, "ops_async.loom"), "async_gather_rows", m.opts)
		dst := make([]byte, 12*n)
		r.run(wl(n), idx(n), buf(i32bytes(src)), buf(dst))
		got := bytesI32(dst)
		for i := 0; i < n; i++ {
			from := i/32*32 + 31 - i%32 // the mirrored lane of the same subgroup
			for j := 0; j < 3; j++ {
				if got[3*i+j] != src[3*from+j] {
					t.Fatalf("%s row %d element %d: got %d, want %d", m.name, i, j, got[3*i+j], src[3*from+j])
				}
			}
		}
	}
}

func TestAsyncGatherMask(t *testing.T) {
	const n = 96
	src := make([]int32, 2*n)
	for i := range src {
		src[i] = int32(i + 500)
	}
	for _, m := range asyncModes() {
		r := compileRun(t, corpus(t, "ops_async.loom"), "async_gather_mask", m.opts)
		dst := make([]byte, 8*n)
		r.run(wl(n), idx(n), buf(i32bytes(src)), buf(dst))
		got := bytesI32(dst)
		for i := 0; i < n; i++ {
			nb := i ^ 1
			for j := 0; j < 2; j++ {
				want := int32(7) // lane nb copied nothing
				if nb%32%3 != 0 {
					want = src[2*nb+j]
				}
				if got[2*i+j] != want {
					t.Fatalf("%s row %d element %d: got %d, want %d", m.name, i, j, got[2*i+j], want)
				}
			}
		}
	}
}

func TestAsyncLongRows(t *testing.T) {
	const n = 12
	src := make([]int32, 80*n)
	for i := range src {
		src[i] = int32(i*i + 3)
	}
	for _, m := range asyncModes() {
		r := compileRun(t, corpus(t, "ops_async.loom"), "async_long_rows", m.opts)
		dst := make([]byte, 320*n)
		r.run(wl(n), idx(n), buf(i32bytes(src)), buf(dst))
		got := bytesI32(dst)
		for i := 0; i < n; i++ {
			from := i/4*4 + (i%4+1)%4
			for j := 0; j < 80; j++ {
				if got[80*i+j] != src[80*from+j] {
					t.Fatalf("%s row %d element %d: got %d, want %d", m.name, i, j, got[80*i+j], src[80*from+j])
				}
			}
		}
	}
}

// A wait is no barrier (Loom): reading another invocation's copied slot
// after the wait but without a barrier is a race the sanitizer reports,
// with the copy as the prior write.
func TestAsyncWaitIsNoBarrier(t *testing.T) {
	const src = `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  %c4 = index.constant 4 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c4, %c1, %c1) : index
} launch(%g: buffer, %out: buffer) {
  %t = kernel.workitem.id<x> : index
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %c1 = index.constant 1 : index
  %c3 = index.constant 3 : index
  %b = index.constant 16 : offset
  %gv = buffer.view %g[%z] : buffer -> view<4x1xi32>
  %ov = buffer.view %out[%z] : buffer -> view<4xi32>
  %w = buffer.alloca %b {base_alignment = 16, memory_space = workgroup} : buffer
  %tv = buffer.view %w[%z] : buffer -> view<4x1xi32>
  %from = view.subview %gv[%t, %c0] : view<4x1xi32> -> view<1x1xi32>
  %mine = view.subview %tv[%t, %c0] : view<4x1xi32> -> view<1x1xi32>
  %cp = kernel.async.copy %from to %mine {cache_scope = cu, cache_temporal = regular, direction = global_to_workgroup} : view<1x1xi32> to view<1x1xi32> -> kernel.async.token
  %grp = kernel.async.group %cp : kernel.async.token -> kernel.async.group
  kernel.async.wait %grp {newer_groups = 0} : kernel.async.group
  %t1 = index.add %t, %c1 : index
  %nb = index.andi %t1, %c3 : index
  %x = view.load %tv[%nb, %c0] : view<4x1xi32> -> i32
  view.store %x, %ov[%t] : i32, view<4xi32>
  kernel.return
}
`
	r := compileRun(t, parseSrc(t, src), "k", Options{Sanitize: Sanitize{Races: true}, Workers: 1})
	err := r.k.Run(r.launch(), []Arg{buf(i32bytes([]int32{1, 2, 3, 4})), buf(make([]byte, 16))})
	var re *RunError
	if !errors.As(err, &re) || !errors.Is(err, ErrRace) || re.Event == nil {
		t.Fatalf("want a race report, got %v", err)
	}
	if ev := re.Event; ev.Memory != "workgroup" || ev.Access != "read" || ev.PriorAccess != "write" {
		t.Fatalf("event %+v", ev)
	}
}

// TestIndexWide runs ops_index_wide.loom: index values past 2^31-1 held
// unsigned in the 32-bit carrier stay exact.
func TestIndexWide(t *testing.T) {
	const n = 200
	src := make([]int32, n+1)
	for i := range src {
		src[i] = int32(3*i - 7)
	}
	r := compileRun(t, corpus(t, "ops_index_wide.loom"), "index_wide", Options{})
	dst, wide := make([]byte, 12*n), make([]byte, 8*n)
	r.run(wl(n), idx(n), buf(i32bytes(src)), buf(dst), buf(wide))
	got := bytesI32(dst)
	for i := 0; i < n; i++ {
		w := int64(4294967000 + i)
		want := []int32{src[i+1], int32(uint32(w)), 1}
		for j := range want {
			if got[3*i+j] != want[j] {
				t.Fatalf("row %d element %d: got %d, want %d", i, j, got[3*i+j], want[j])
			}
		}
		if g := int64(binary.LittleEndian.Uint64(wide[8*i:])); g != w {
			t.Fatalf("row %d: w = %d, want %d", i, g, w)
		}
	}
}

func TestAsyncRetype(t *testing.T) {
	const n = 64
	src := make([]float32, 2*n)
	for i := range src {
		src[i] = float32(i)*1.25 - 40
	}
	raw := f32bytes(src)
	for _, m := range asyncModes() {
		r := compileRun(t, corpus(t, "ops_async.loom"), "async_retype", m.opts)
		dst := make([]byte, 16*n)
		r.run(wl(n), idx(n), buf(raw), buf(dst))
		got := bytesI32(dst)
		for i := 0; i < n; i++ {
			nb := i ^ 1
			for j := 0; j < 4; j++ {
				want := int32(int16(binary.LittleEndian.Uint16(raw[8*nb+2*j:])))
				if got[4*i+j] != want {
					t.Fatalf("%s row %d element %d: got %d, want %d", m.name, i, j, got[4*i+j], want)
				}
			}
		}
	}
}

func TestAsyncPipeline(t *testing.T) {
	const k = 6
	src := make([]float32, k*64*4)
	for i := range src {
		src[i] = float32(i%97) - 13.5
	}
	for _, m := range asyncModes() {
		r := compileRun(t, corpus(t, "ops_async.loom"), "async_pipeline", m.opts)
		dst := make([]byte, 64*16)
		r.run(wl(k), idx(k), buf(f32bytes(src)), buf(dst))
		got := bytesF32(dst)
		for row := 0; row < 64; row++ {
			for j := 0; j < 4; j++ {
				var want float32
				for tile := 0; tile < k; tile++ {
					want += src[(tile*64+63-row)*4+j]
				}
				if got[4*row+j] != want {
					t.Fatalf("%s row %d element %d: got %v, want %v", m.name, row, j, got[4*row+j], want)
				}
			}
		}
	}
}
