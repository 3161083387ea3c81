package bench

import (
	"errors"
	"strings"
	"testing"
)

// TestNvccFunctionNamesLoadErrors: with no module holding the entry, the
// error says so and names every nvcc module the driver did not load, on
// one line (it goes into the report's check column).
func TestNvccFunctionNamesLoadErrors(t *testing.T) {
	g := &gpu{nvErrs: []error{errors.New("JIT of nvcc's PTX attention_nvcc.ptx: bad PTX"), errors.New("JIT of nvcc's PTX x_nvcc.ptx: worse")}}
	_, err := g.nvccFunction("attn_decode_f16")
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"no nvcc module holds attn_decode_f16", "attention_nvcc.ptx: bad PTX", "x_nvcc.ptx: worse"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("%q spans lines", msg)
	}
}
