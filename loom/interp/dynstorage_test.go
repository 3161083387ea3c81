package interp

import (
	"errors"
	"strings"
	"testing"
)

// reverse_tiles reverses each workgroup's tile through the dynamic
// workgroup storage its launch config asks for.
func TestDynamicWorkgroupStorage(t *testing.T) {
	for _, workers := range []int{1, 4} {
		r := compileRun(t, corpus(t, "dynamic_storage.loom"), "reverse_tiles", Options{Workers: workers})
		const n, tile = 1000, 64
		src := ramp(n, 7, 10)
		dst := make([]byte, 4*n)
		l := r.launch(n, tile)
		if l.WorkgroupStorage != 4*tile {
			t.Fatalf("launch config gives %d bytes of dynamic workgroup storage, want %d", l.WorkgroupStorage, 4*tile)
		}
		if err := r.k.Run(l, []Arg{idx(n), idx(tile), buf(f32bytes(src)), buf(dst)}); err != nil {
			t.Fatal(err)
		}
		got := bytesF32(dst)
		for i := range got {
			g, lane := i/tile, i%tile
			j := g*tile + tile - 1 - lane
			want := float32(0)
			if j < n {
				want = src[j]
			}
			if got[i] != want {
				t.Fatalf("workers %d: dst[%d] = %v, want %v", workers, i, got[i], want)
			}
		}

		// A launch that provides less than the kernel takes traps at the
		// kernel.workgroup.storage op, naming both sizes.
		l.WorkgroupStorage = 4*tile - 4
		err := r.k.Run(l, []Arg{idx(n), idx(tile), buf(f32bytes(src)), buf(dst)})
		if !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "dynamic_storage.loom:25:") ||
			!strings.Contains(err.Error(), "kernel.workgroup.storage of 256 bytes; the launch provides 252 bytes") {
			t.Errorf("short storage: %v", err)
		}
	}
}

// A view past the bytes kernel.workgroup.storage took traps like any view
// past its buffer, even where the launch provides more.
func TestDynamicWorkgroupStorageViewBounds(t *testing.T) {
	const src = `kernel.def export("over") @over() {
  %one = index.constant 1 : index
  %bytes = index.constant 1024 : offset
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) dynamic_workgroup_storage(%bytes) : index
} launch() {
  %z = index.constant 0 : offset
  %n = index.constant 16 : offset
  %wg = kernel.workgroup.storage %n : buffer
  %v = buffer.view %wg[%z] : buffer -> view<32xf32>
  %i = index.constant 20 : index
  %x = scalar.constant 1.0 : f32
  view.store %x, %v[%i] : f32, view<32xf32>
  kernel.return
}

// Without a byte count the buffer is all the launch provides.
kernel.def export("whole") @whole(%bytes: offset) {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) dynamic_workgroup_storage(%bytes) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %wg = kernel.workgroup.storage : buffer
  %len = buffer.length %wg : buffer -> offset
  %ov = buffer.view %out[%z] : buffer -> view<1xi64>
  %c0 = index.constant 0 : index
  %l = index.cast %len : offset to i64
  view.store %l, %ov[%c0] : i64, view<1xi64>
  kernel.return
}
`
	m := parseSrc(t, src)
	r := compileRun(t, m, "over", Options{})
	err := r.k.Run(r.launch(), nil)
	if !errors.Is(err, ErrOutOfBounds) || !strings.Contains(err.Error(), "inline.loom:12:") {
		t.Errorf("store past the storage's 16 bytes: %v", err)
	}
	w := compileRun(t, m, "whole", Options{})
	out := make([]byte, 8)
	w.run(wl(640), buf(out))
	if got := int64(out[0]) | int64(out[1])<<8; got != 640 {
		t.Errorf("buffer.length of the whole storage = %d, want 640", got)
	}
}
