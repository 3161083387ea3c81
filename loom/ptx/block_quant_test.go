package ptx

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestBlockQuantCompiles compiles every kernel of block_quant.loom (lane
// moves, ggml q8_0/q4_0 decode and encode, table quantize; all rewritten by
// the shared lowering) to well-formed PTX with the instructions the
// rewrites call for. TestGPUCorpus runs them against the CPU executor.
func TestBlockQuantCompiles(t *testing.T) {
	m := parse(t, filepath.Join("..", "testdata", "block_quant.loom"))
	want := map[string][]string{
		"lane_moves":     {"st.global"},
		"decode":         {"cvt.rn.f32.s32", "mul.rn.f32", "cvt.rn.f16.f32"},
		"encode":         {"div.rn.f32", "cvt.rzi.s32.f32", "max.f32", "min.f32"},
		"table_quantize": {"setp."},
		"transform":      {"neg.f32", "add.rn.f32", "mul.rn.f32"},
		"ggml_blocks":    {"ld.global.s8", "cvt.f32.f16", "mul.rn.f32"},
		"roundtrip":      {"div.rn.f32", "cvt.rn.f32.s32"},
	}
	for _, kd := range m.Kernels {
		k, err := Compile([]*loom.Module{m}, kd.Export, Options{})
		if err != nil {
			t.Errorf("%s: %v", kd.Export, err)
			continue
		}
		if err := wellFormed(k.PTX); err != nil {
			t.Errorf("%s: malformed PTX: %v", kd.Export, err)
		}
		for _, w := range want[kd.Export] {
			if !strings.Contains(k.PTX, w) {
				t.Errorf("%s: PTX lacks %q", kd.Export, w)
			}
		}
		delete(want, kd.Export)
	}
	for k := range want {
		t.Errorf("kernel %s missing from block_quant.loom", k)
	}
}

// TestRefusedEncodingWhereReached: a vector.decode of a schema the shared
// lowering has no rewrite for is refused, with its reason and position,
// when a kernel reaches it, and not otherwise.
func TestRefusedEncodingWhereReached(t *testing.T) {
	src := `
func.def @unused(%payload: vector<4xi32>, %schema: encoding<schema>) -> (vector<32xf16>) {
  %values = vector.decode %payload using %schema : vector<4xi32>, encoding<schema> -> vector<32xf16>
  func.return %values : vector<32xf16>
}
kernel.def export("q6k") @q6k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%x: i8, %dst: buffer) {
  %s = encoding.define #ggml_q6_k<block_elems=256, storage_bytes=210> : encoding<schema>
  %v = vector.splat %x : vector<4xi8>
  %c = vector.constant 0.5 : vector<1xf16>
  %d = vector.decode %v using %s {scale = %c : vector<1xf16>} : vector<4xi8>, encoding<schema> -> vector<4xf32>
  %z = index.constant 0 : offset
  %dv = buffer.view %dst[%z] : buffer -> view<4xf32>
  %c0 = index.constant 0 : index
  vector.store %d, %dv[%c0] : vector<4xf32>, view<4xf32>
  kernel.return
}
kernel.def export("plain") @plain() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%x: f32) {
  %y = scalar.addf %x, %x : f32
  kernel.return
}
`
	m, err := loom.ParseFile("r.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Compile([]*loom.Module{m}, "plain", Options{}); err != nil {
		t.Fatalf("plain: %v", err)
	}
	_, err = Compile([]*loom.Module{m}, "q6k", Options{})
	if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "r.loom:13:3:") || !strings.Contains(err.Error(), "schema #ggml_q6_k has no shared lowering") {
		t.Fatalf("q6k: got %v, want a positioned refusal of #ggml_q6_k", err)
	}
}
