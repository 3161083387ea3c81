package interp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/loom"
)

// BenchmarkAuthoringKernels runs Loom's two model-shaped corpus kernels
// (hrx-system's corpus/authoring, from $LOOM_HRX_DIR) on one worker: the
// q6_K gate/up projection over 248 of its 36704 workgroups (31 rows, 8
// channel groups) and the bf16 down projection at 64 rows. It skips
// without the snapshot. DESIGN.md's CPU executor paragraph gives the
// speed-ups of the fast paths, read with it at two commits in turn:
//
//	go test ./loom/interp -run '^$' -bench AuthoringKernels -benchtime 5x
func BenchmarkAuthoringKernels(b *testing.B) {
	dir := filepath.Join(hrxsamples.Dir, "loom/src/loom/test/corpus/authoring")
	load := func(name, export string) *Kernel {
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			b.Skipf("no hrx-system snapshot: %v", err)
		}
		mods, err := loom.ParsePackage(loom.File{Name: path, Src: src})
		if err != nil {
			b.Fatal(err)
		}
		k, err := Compile(mods, export, Options{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		return k
	}
	run := func(b *testing.B, k *Kernel, l Launch, args []Arg, bytes int64) {
		b.SetBytes(bytes)
		for b.Loop() {
			if err := k.Run(l, args); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("ffn_gate_up_swiglu_q6q8", func(b *testing.B) {
		k := load("ffn_gate_up_swiglu_q6q8.loom", "ffn_gate_up_swiglu_q6q8")
		l := Launch{Workgroups: [3]int{31, 8, 1}, WorkgroupSize: [3]int{512, 1, 1}}
		// 8 channel groups of 16 channels: 128 weight rows of 2940 bytes.
		run(b, k, l, []Arg{buf(make([]byte, 124992)), buf(make([]byte, 55695360)), buf(make([]byte, 55695360)), buf(make([]byte, 2349056))}, 2*128*2940)
	})
	b.Run("mlp_down_projection_residual_bf16/rows=64", func(b *testing.B) {
		k := load("mlp_down_projection_residual_bf16.loom", "mlp_down_projection_residual_bf16")
		const rows = 64
		l := Launch{Workgroups: [3]int{rows / 2, 1, 1}, WorkgroupSize: [3]int{592, 1, 1}}
		run(b, k, l, []Arg{idx(rows), buf(make([]byte, 75776)), buf(make([]byte, rows*37888)), buf(make([]byte, rows*4)), buf(make([]byte, rows*4))}, rows*37888)
	})
}
