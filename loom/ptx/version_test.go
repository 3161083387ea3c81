package ptx

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/hrxsamples"
	"github.com/loomgen/loomgen/internal/loomcorpus"
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
	if _, body, _ := strings.Cut(strings.TrimPrefix(fast, "\n"), "\n"); !strings.Contains(strings.Replace(al, entryWait, "", 1), body) { // past the branch; each build places its own wait
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

// entryBranchRE is the versioned body's entry branch to its fallback.
var entryBranchRE = regexp.MustCompile(`\n\t@!(%p\d+) bra (\$L_misaligned_\d+);\n`)

// andPredRE is one step of the conjunction of the entry predicates.
var andPredRE = regexp.MustCompile(`\n\tand\.pred (%p\d+), (%p\d+), %p\d+;$`)

// alignedOf derives the aligned build from versioned PTX: without the
// conjunction feeding the entry branch, the branch, and everything from
// the fallback's label to the entry's closing brace.
func alignedOf(full string) (string, bool) {
	m := entryBranchRE.FindStringSubmatchIndex(full)
	if m == nil {
		return "", false
	}
	pred, label := full[m[2]:m[3]], full[m[4]:m[5]]
	head := full[:m[0]]
	for {
		a := andPredRE.FindStringSubmatchIndex(head)
		if a == nil || head[a[2]:a[3]] != pred {
			break
		}
		pred, head = head[a[4]:a[5]], head[:a[0]]
	}
	rest := full[m[1]-1:]
	i := strings.Index(rest, "\n"+label+":")
	j := strings.LastIndex(rest, "\n}")
	if i < 0 || j < i {
		return "", false
	}
	return head + rest[:i] + rest[j:], true
}

// TestAlignedBuildIsAlignedVersion: for every kernel of the GPU corpus
// (what TestGPUCorpus and TestGPUVectorMisaligned run), of the suite and of
// Loom's corpus where its snapshot is present, AlignedPTX is exactly the
// versioned PTX's aligned version alone, and a kernel has one exactly when
// its PTX is versioned: the runtime's aligned build runs no instruction
// the versioned kernel does not run on aligned buffers.
func TestAlignedBuildIsAlignedVersion(t *testing.T) {
	files := corpusFiles(t)
	bench, _ := filepath.Glob(filepath.Join("..", "..", "internal", "bench", "kernels", "*.loom"))
	files = append(files, bench...)
	if _, err := os.Stat(hrxsamples.Dir); err == nil {
		hrx, err := loomcorpus.Files([]string{hrxsamples.Dir})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, hrx...)
	}
	versioned := 0
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range loomcorpus.Sources(path, src) {
			if s.Excluded != "" {
				continue
			}
			mods, err := loom.ParsePackage(s.File)
			if err != nil {
				continue
			}
			for _, m := range mods {
				for _, kd := range m.Kernels {
					if kd.Decl {
						continue
					}
					k, err := Compile(mods, kd.Export, Options{Config: testConfig(m)})
					if err != nil {
						continue
					}
					checkEntryWait(t, s.Name+"/"+kd.Export, k.PTX, 90)
					if k.AlignedPTX != "" {
						checkEntryWait(t, s.Name+"/"+kd.Export+" aligned", k.AlignedPTX, 90)
					}
					// The wait sits after each build's own prologue: compare
					// the builds without it.
					want, ok := alignedOf(strings.Replace(k.PTX, entryWait, "", 1))
					if ok != (k.AlignedPTX != "") || ok != (len(k.AlignedParams) > 0) {
						t.Errorf("%s/%s: versioned %v, aligned build %v, aligned parameters %v", s.Name, kd.Export, ok, k.AlignedPTX != "", k.AlignedParams)
						continue
					}
					if !ok {
						continue
					}
					versioned++
					if strings.Replace(k.AlignedPTX, entryWait, "", 1) != want {
						t.Errorf("%s/%s: the aligned build is not the versioned kernel's aligned version", s.Name, kd.Export)
					}
				}
			}
		}
	}
	if versioned == 0 {
		t.Fatal("no versioned kernel")
	}
	t.Logf("%d versioned kernels, each with its aligned build", versioned)
}
