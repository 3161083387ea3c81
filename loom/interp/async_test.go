package interp

import (
	"encoding/binary"
	"errors"
	"testing"
)

// The kernels of loom/testdata/ops_async.loom against Go, each run plain
// and under the sanitizer (which must find no race: the waits and
// barriers order every copy before its readers).

// runAsync runs export of ops_async.loom with workload n over the input
// buffers and one output buffer of outLen bytes, plain and sanitized, and
// hands check each run's output.
func runAsync(t *testing.T, export string, n int, inputs [][]byte, outLen int, check func(mode string, out []byte)) {
	t.Helper()
	modes := []struct {
		name string
		opts Options
	}{
		{"plain", Options{}},
		{"sanitized", Options{Sanitize: Sanitize{Races: true, GlobalRaces: true}, Workers: 2}},
	}
	for _, m := range modes {
		r := compileRun(t, corpus(t, "ops_async.loom"), export, m.opts)
		out := make([]byte, outLen)
		args := []Arg{idx(int64(n))}
		for _, in := range inputs {
			args = append(args, buf(in))
		}
		r.run(wl(int64(n)), append(args, buf(out))...)
		check(m.name, out)
	}
}

func TestAsyncStages(t *testing.T) {
	const n = 256
	a, b := make([]float32, 4*n), make([]float32, 4*n)
	for i := range a {
		a[i], b[i] = float32(i)*0.5, float32(3*i+1)
	}
	runAsync(t, "async_stages", n, [][]byte{f32bytes(a), f32bytes(b)}, 16*n, func(mode string, out []byte) {
		got := bytesF32(out)
		for i := 0; i < n; i++ {
			g, tt := i/64*64, i%64
			mirror, next := g+63-tt, g+(tt+1)%64
			for j := 0; j < 4; j++ {
				if want := a[4*mirror+j] + b[4*next+j]; got[4*i+j] != want {
					t.Fatalf("%s row %d element %d: got %v, want %v", mode, i, j, got[4*i+j], want)
				}
			}
		}
	})
}

func TestAsyncMaskTail(t *testing.T) {
	for _, n := range []int{64, 45, 33} {
		src := make([]byte, 6*n)
		for i := 0; i < 3*n; i++ {
			binary.LittleEndian.PutUint16(src[2*i:], uint16(1000+i))
		}
		runAsync(t, "async_mask_tail", n, [][]byte{src}, 6*n, func(mode string, out []byte) {
			for i := 0; i < n; i++ {
				nb := i ^ 1
				for j := 0; j < 3; j++ {
					want := uint16(0xffff) // the neighbour copied nothing
					if nb < n {
						want = uint16(1000 + 3*nb + j)
					}
					if g := binary.LittleEndian.Uint16(out[6*i+2*j:]); g != want {
						t.Fatalf("%s n=%d row %d element %d: got %#x, want %#x", mode, n, i, j, g, want)
					}
				}
			}
		})
	}
}

// checkRows compares rows of w int32 from out with want(row, element).
func checkRows(t *testing.T, mode string, out []byte, rows, w int, want func(i, j int) int32) {
	t.Helper()
	got := bytesI32(out)
	for i := 0; i < rows; i++ {
		for j := 0; j < w; j++ {
			if g, x := got[w*i+j], want(i, j); g != x {
				t.Fatalf("%s row %d element %d: got %d, want %d", mode, i, j, g, x)
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
	runAsync(t, "async_gather_rows", n, [][]byte{i32bytes(src)}, 12*n, func(mode string, out []byte) {
		checkRows(t, mode, out, n, 3, func(i, j int) int32 {
			return src[3*(i/32*32+31-i%32)+j] // the mirrored lane of the same subgroup
		})
	})
}

func TestAsyncGatherMask(t *testing.T) {
	const n = 96
	src := make([]int32, 2*n)
	for i := range src {
		src[i] = int32(i + 500)
	}
	runAsync(t, "async_gather_mask", n, [][]byte{i32bytes(src)}, 8*n, func(mode string, out []byte) {
		checkRows(t, mode, out, n, 2, func(i, j int) int32 {
			if nb := i ^ 1; nb%32%3 != 0 {
				return src[2*nb+j]
			}
			return 7 // lane i^1 copied nothing
		})
	})
}

func TestAsyncLongRows(t *testing.T) {
	const n = 12
	src := make([]int32, 80*n)
	for i := range src {
		src[i] = int32(i*i + 3)
	}
	runAsync(t, "async_long_rows", n, [][]byte{i32bytes(src)}, 320*n, func(mode string, out []byte) {
		checkRows(t, mode, out, n, 80, func(i, j int) int32 { return src[80*(i/4*4+(i%4+1)%4)+j] })
	})
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

func TestAsyncRetype(t *testing.T) {
	const n = 64
	src := make([]float32, 2*n)
	for i := range src {
		src[i] = float32(i)*1.25 - 40
	}
	raw := f32bytes(src)
	runAsync(t, "async_retype", n, [][]byte{raw}, 16*n, func(mode string, out []byte) {
		checkRows(t, mode, out, n, 4, func(i, j int) int32 {
			return int32(int16(binary.LittleEndian.Uint16(raw[8*(i^1)+2*j:])))
		})
	})
}

func TestAsyncPipeline(t *testing.T) {
	const k = 6
	src := make([]float32, k*64*4)
	for i := range src {
		src[i] = float32(i%97) - 13.5
	}
	runAsync(t, "async_pipeline", k, [][]byte{f32bytes(src)}, 64*16, func(mode string, out []byte) {
		got := bytesF32(out)
		for row := 0; row < 64; row++ {
			for j := 0; j < 4; j++ {
				var want float32
				for tile := 0; tile < k; tile++ {
					want += src[(tile*64+63-row)*4+j]
				}
				if got[4*row+j] != want {
					t.Fatalf("%s row %d element %d: got %v, want %v", mode, row, j, got[4*row+j], want)
				}
			}
		}
	})
}
