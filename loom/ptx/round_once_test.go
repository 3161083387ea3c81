package ptx

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestRoundOnceForms: the conversions of round_once.loom take one rounding
// straight to the half where the target has the instruction (sm_90: every
// integer and f64 to bf16), and before sm_90 convert f64 to bf16 through
// f32 rounded to odd, integers to f16 directly and to bf16 through f32.
// The GPU corpus test runs the sm_90 forms against the CPU executor.
func TestRoundOnceForms(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "round_once.loom"))
	for _, c := range []struct {
		export   string
		sm       int
		has, not []string
	}{
		{"int_to_half", 90, []string{"cvt.rn.bf16.s32", "cvt.rn.bf16.u32", "cvt.rn.bf16.s64", "cvt.rn.bf16.u64", "cvt.rn.f16.s32", "cvt.rn.f16.s64"}, []string{"cvt.rn.f32.s64", "cvt.rn.bf16.f32"}},
		{"int_to_half", 80, []string{"cvt.rn.f32.s64", "cvt.rn.bf16.f32", "cvt.rn.f16.s32", "cvt.rn.f16.s64"}, []string{"cvt.rn.bf16.s"}},
		{"f64_to_half", 90, []string{"cvt.rn.bf16.f64", "cvt.rn.f32.f64", "cvt.rn.f16.f64"}, []string{"cvt.rz.f32.f64"}},
		{"f64_to_half", 80, []string{"cvt.rz.f32.f64", "setp.neu.f64", "or.b32", "selp.b32", "cvt.rn.bf16.f32", "cvt.rn.f16.f64"}, []string{"cvt.rn.bf16.f64"}},
	} {
		k, err := Compile([]*loom.Module{m}, c.export, Options{SM: c.sm})
		if err != nil {
			t.Fatalf("%s on sm_%d: %v", c.export, c.sm, err)
		}
		for _, s := range c.has {
			if !strings.Contains(k.PTX, s) {
				t.Errorf("%s on sm_%d: no %s", c.export, c.sm, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(k.PTX, s) {
				t.Errorf("%s on sm_%d: has %s", c.export, c.sm, s)
			}
		}
	}
}
