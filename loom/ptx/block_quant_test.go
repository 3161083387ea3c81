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
	m := parse(t, filepath.Join("..", "testdata", "refused", "encoding.loom"))
	if _, err := Compile([]*loom.Module{m}, "plain", Options{}); err != nil {
		t.Fatalf("plain: %v", err)
	}
	_, err := Compile([]*loom.Module{m}, "q6k", Options{})
	if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "encoding.loom:23:3:") || !strings.Contains(err.Error(), "schema #ggml_q6_k has no shared lowering") {
		t.Fatalf("q6k: got %v, want a positioned refusal of #ggml_q6_k", err)
	}
}
