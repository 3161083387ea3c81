package ptx

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

var versionRE = regexp.MustCompile(`(?s)\n\t@!%p\d+ bra (\$L_misaligned_\d+);\n.*?\n\$L_misaligned_\d+:`)

// fallbackVersion is a versioned kernel's PTX without its aligned version
// (the branch to the fallback version, that version's body, and the
// label): the code the kernel had before versioning; unversioned PTX is
// returned as it is.
func fallbackVersion(ptx string) string { return versionRE.ReplaceAllString(ptx, "") }

// alignedVersion is the body a versioned kernel runs when every buffer is
// 16-byte aligned, or "" when the kernel is not versioned.
func alignedVersion(ptx string) string {
	m := versionRE.FindString(ptx)
	if m == "" {
		return ""
	}
	return m[:strings.LastIndex(m, "\n")]
}

// TestVersionedOnAlignment: a kernel whose vector accesses fall back under
// the buffers' alignment predicates gets an aligned version with plain
// 16-byte accesses and no fallback, entered by one uniform branch, and
// keeps the fallback version; workgroup allocations are declared once;
// a kernel without such accesses is not versioned.
func TestVersionedOnAlignment(t *testing.T) {
	m := parse(t, filepath.Join("..", "testdata", "ops_async.loom"))
	k, err := Compile([]*loom.Module{m}, "async_stages", Options{})
	if err != nil {
		t.Fatal(err)
	}
	fast := alignedVersion(k.PTX)
	if fast == "" {
		t.Fatalf("not versioned:\n%s", k.PTX)
	}
	if n := strings.Count(k.PTX, "$L_misaligned_"); n != 2 {
		t.Errorf("%d mentions of the fallback label, want the branch and the label", n)
	}
	if regexp.MustCompile(`@!?%p\d+ (ld|st)\.global`).MatchString(fast) {
		t.Errorf("the aligned version has guarded global accesses:\n%s", fast)
	}
	if !strings.Contains(fast, "st.global.v4.f32") {
		t.Errorf("the aligned version has no 16-byte store:\n%s", fast)
	}
	if slow := fallbackVersion(k.PTX); !regexp.MustCompile(`@%p\d+ st\.global\.v4\.f32`).MatchString(slow) || !regexp.MustCompile(`@!%p\d+ st\.global\.f32`).MatchString(slow) {
		t.Errorf("the fallback version lost its guarded store or its fallback:\n%s", slow)
	}
	if n := strings.Count(k.PTX, ".shared .align"); n != strings.Count(fallbackVersion(k.PTX), ".shared .align") || k.WorkgroupStorageBytes == 0 {
		t.Errorf("workgroup arrays declared per version")
	}
	// The aligned version alone: the same entry and parameters, the aligned
	// body's instructions, no branch to a fallback and no guarded access.
	al := k.AlignedPTX
	if al == "" || len(k.AlignedParams) == 0 {
		t.Fatalf("no aligned build (params %v)", k.AlignedParams)
	}
	if strings.Contains(al, "misaligned") || regexp.MustCompile(`@!?%p\d+ (ld|st)\.global`).MatchString(al) {
		t.Errorf("the aligned build has a fallback:\n%s", al)
	}
	if head := k.PTX[:strings.Index(k.PTX, "{")]; !strings.HasPrefix(al, head) {
		t.Errorf("the aligned build's entry differs:\n%s", al[:strings.Index(al, "{")])
	}
	if _, body, _ := strings.Cut(strings.TrimPrefix(fast, "\n"), "\n"); !strings.Contains(al, body) { // past the branch
		t.Errorf("the aligned build is not the aligned version:\n%s", al)
	}
	for _, i := range k.AlignedParams {
		if i >= len(k.Params) || !k.Params[i].Buffer {
			t.Errorf("aligned parameter %d is not a buffer (%v)", i, k.Params)
		}
	}
	k, err = Compile([]*loom.Module{parseSrc(t, kernelWith("%a = view.load %v[%i] : view<[%n]xf32> -> f32\n  view.store %a, %v[%i] : f32, view<[%n]xf32>"))}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(k.PTX, "misaligned") || k.AlignedPTX != "" || k.AlignedParams != nil {
		t.Errorf("a kernel without vector accesses is versioned:\n%s", k.PTX)
	}
}
