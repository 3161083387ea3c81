package ptx

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestAsyncPTX checks which PTX each kernel of ops_async.loom gets: cp.async
// for global→workgroup copies of whole words (the chunk the largest of 16,
// 8, 4 dividing the footprint), ld/st otherwise, a commit per group and a
// wait_group per wait with Loom's newer_groups, and a byte-wise fallback
// behind a run-time alignment test where the addresses are not provably
// aligned. (TestGPUCorpus runs them on the device against the CPU.)
// entryAlignPred matches a buffer's 16-byte alignment test (alignBufferParam).
var entryAlignPred = regexp.MustCompile(`and\.b64 %rd\d+, %rd\d+, 15;\n\tsetp\.eq\.b64 (%p\d+), %rd\d+, 0;`)

func TestAsyncPTX(t *testing.T) {
	m := parse(t, filepath.Join("..", "testdata", "ops_async.loom"))
	cases := []struct {
		export string
		want   []string // regexps that must match
		count  map[string]int
		none   []string
	}{
		{"async_stages", []string{`cp\.async\.ca\.shared\.global \[%r\d+\], \[%rd\d+\], 16;`, `cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16;`, `cp\.async\.wait_group 1;`, `cp\.async\.wait_group 0;`},
			map[string]int{"cp.async.commit_group;": 2, "cp.async.wait_group": 2, "cp.async.ca.shared.global": 9, "cp.async.cg.shared.global": 1}, nil},
		{"async_mask_tail", []string{`ld\.global\.u16`, `st\.shared\.u16`, `ld\.shared\.u16`, `st\.global\.u16`},
			map[string]int{"cp.async.commit_group;": 2, "cp.async.wait_group 0;": 2}, []string{"cp.async.ca", "cp.async.cg"}},
		{"async_gather_rows", []string{`%laneid`, `cp\.async\.ca\.shared\.global \[%r\d+(\+\d+)?\], \[%rd\d+(\+\d+)?\], 4;`},
			map[string]int{"cp.async.ca.shared.global": 3}, []string{"cp.async.cg"}},
		{"async_gather_mask", []string{`cp\.async\.ca\.shared\.global \[%r\d+\], \[%rd\d+\], 8;`, `cp\.async\.wait_group 1;`},
			map[string]int{"cp.async.commit_group;": 2}, nil},
		{"async_retype", []string{`cp\.async\.ca\.shared\.global \[%rd?\d+\], \[%rd\d+\], 8;`, `cp\.async\.ca\.shared\.global \[%rd?\d+\+4\], \[%rd\d+\+4\], 4;`},
			map[string]int{"cp.async.ca.shared.global": 3}, nil},
		{"async_pipeline", []string{`cp\.async\.ca\.shared\.global \[%rd?\d+\], \[%rd\d+\], 16;`},
			map[string]int{"cp.async.commit_group;": 3, "cp.async.wait_group 0;": 3}, nil},
		{"async_long_rows", []string{`cp\.async\.ca\.shared\.global \[%r\d+\+304\], \[%rd\d+\+304\], 16;`, `ld\.shared\.v4\.u32`, `st\.global\.v4\.u32`},
			map[string]int{"cp.async.ca.shared.global": 21}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.export, func(t *testing.T) {
			k, err := Compile([]*loom.Module{m}, tc.export, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if d := os.Getenv("PTX_DUMP"); d != "" {
				os.WriteFile(filepath.Join(d, tc.export+".ptx"), []byte(k.PTX), 0o644)
			}
			// The fallback version is the code these kernels always
			// had; the aligned one is TestVersionedOnAlignment's.
			ptx := fallbackVersion(k.PTX)
			for _, w := range tc.want {
				if !regexp.MustCompile(w).MatchString(ptx) {
					t.Errorf("no match for %s", w)
				}
			}
			for s, n := range tc.count {
				if got := strings.Count(ptx, s); got != n {
					t.Errorf("%q appears %d times, want %d", s, got, n)
				}
			}
			for _, s := range tc.none {
				if strings.Contains(ptx, s) {
					t.Errorf("unexpected %q", s)
				}
			}
			// The aligned version tests no entry alignment predicate.
			fast := alignedVersion(k.PTX)
			for _, p := range entryAlignPred.FindAllStringSubmatch(k.PTX, -1) {
				if strings.Contains(fast, "@!"+p[1]+" bra $L_async_bytes") {
					t.Errorf("the aligned version branches on %s to a fallback:\n%s", p[1], fast)
				}
			}
		})
	}
}
