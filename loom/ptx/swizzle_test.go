package ptx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestSwizzledTilePTX checks when workgroup tiles are stored swizzled:
// fragment_swizzled_tile (16-byte chunk copies and ldmatrix only) is; the
// same kernel with one more access to a tile (a scalar load, a subview of
// 8 bytes, a column not provably a multiple of 16 bytes, a dense fragment
// load) is not, and compiles row-major. TestGPUFragments checks the swizzled kernel
// against the CPU executor.
func TestSwizzledTilePTX(t *testing.T) {
	path := filepath.Join("..", "testdata", "fragment_mma.loom")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	compile := func(t *testing.T, text string) string {
		t.Helper()
		m, err := loom.ParseFile(path, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		k, err := Compile([]*loom.Module{m}, "fragment_swizzled_tile", Options{})
		if err != nil {
			t.Fatal(err)
		}
		return k.PTX
	}
	// The swizzle's only xor: 16·(row mod 8) applied to a column.
	// Six fragment loads, in each version of the body (version.go).
	if p := compile(t, string(src)); strings.Count(p, "xor.b32") < 6 || strings.Count(p, "ldmatrix") == 0 || strings.Count(p, "ldmatrix")%6 != 0 {
		t.Errorf("fragment_swizzled_tile: want ldmatrix at swizzled (xor) addresses, have\n%s", p)
	}
	anchor := "  %w4 = index.mul %sg, %c4 : index\n"
	if !strings.Contains(string(src), anchor) {
		t.Fatalf("anchor %q not in %s", anchor, path)
	}
	for name, extra := range map[string]string{
		"load":       "  %peek = view.load %sa[%c0, %c0] : view<32x64xf16> -> f16\n",
		"narrow":     "  %half = view.subview %sb[%c0, %c0] : view<32x128xf16> -> view<1x4xf16>\n  %hl = view.load %half[%c0, %c0] : view<1x4xf16> -> f16\n",
		"odd-column": "  %cq = index.add %c8, %c4 : index\n  %oc = view.subview %sa[%c0, %cq] : view<32x64xf16> -> view<1x8xf16>\n  %ol = view.load %oc[%c0, %c0] : view<1x8xf16> -> f16\n",
		"unrelated":  "  %un = index.add %c4, %c8 : index\n",
		// A dense fragment (not the subgroup layout ldmatrix loads) keeps
		// the tile row-major instead of failing to compile.
		"dense": "  %dn = vector.fragment.load<lhs> %sa[%c0, %c0] shape [%c16, %c16] : view<32x64xf16> -> vector<256xf16>\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := compile(t, strings.Replace(string(src), anchor, extra+anchor, 1))
			if name == "unrelated" {
				// Not a use of a tile: still swizzled.
				if !strings.Contains(p, "xor.b32") {
					t.Errorf("an op not touching the tiles stopped the swizzle")
				}
				return
			}
			if strings.Contains(p, "xor.b32") {
				t.Errorf("swizzled although a tile has another access (%s)", name)
			}
		})
	}
}

// TestSwizzledMatmulPTX checks that the benchmark's tensor-core matmul
// (matmul_tc_f16/bf16, 128-byte and 256-byte tile rows) is stored swizzled
// and its padded form (rows of 144 and 272 bytes) is not.
func TestSwizzledMatmulPTX(t *testing.T) {
	m := parse(t, filepath.Join("testdata", "matmul_tc.loom"))
	for export, want := range map[string]bool{"matmul_tc_f16": true, "matmul_tc_bf16": true, "matmul_tc_f16_padded": false} {
		k, err := Compile([]*loom.Module{m}, export, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(k.PTX, "xor.b32"); got != want {
			t.Errorf("%s: swizzled %v, want %v", export, got, want)
		}
		if n := strings.Count(k.PTX, "ldmatrix"); n == 0 {
			t.Errorf("%s: no ldmatrix", export)
		}
	}
}
