package loom

import (
	"slices"
	"strings"
	"testing"
)

// fpBase has one fact of every kind the fingerprint covers: signatures,
// access, element types, extents, launch-config formulas, where and assume
// predicates, and a config declaration with predicates and a default.
const fpBase = `
config.decl @fp.block : %b: index where [range(%b, 32, 1024), pow2(%b)]
config.def @fp.block = 64 : index

// a kernel
kernel.def export("fp") @fp(%n: index) where [range(%n, 1, 4096)] {
  %c1 = index.constant 1 : index
  %wg = config.get @fp.block : index
  %wgm1 = index.sub %wg, %c1 : index
  %padded = index.add %n, %wgm1 : index
  %groups = index.div %padded, %wg : index
  kernel.launch.config workgroups(%groups, %c1, %c1) workgroup_size(%wg, %c1, %c1) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.dispatch.id<x> : index
  %a = buffer.view %src[%z] : buffer -> view<[%n]xi32>
  %b = buffer.view %dst[%z] : buffer -> view<[%n]xi32>
  %ok = index.cmp ult, %i, %n : index
  scf.if %ok {
    %x = view.load %a[%i] : view<[%n]xi32> -> i32
    view.store %x, %b[%i] : i32, view<[%n]xi32>
  }
  kernel.return
}`

func fingerprintOf(t *testing.T, src, export string) string {
	t.Helper()
	p := parseProgram(t, src)
	return Fingerprint(p, mustKernel(t, p, export))
}

// TestFingerprintEdits is the table of kernel edits: each either makes
// generated bindings stale (and names the facts that changed) or keeps
// them valid.
func TestFingerprintEdits(t *testing.T) {
	base := fingerprintOf(t, fpBase, "fp")
	if parts := strings.Split(base, "-"); len(parts) != len(FingerprintParts)+1 || parts[0] != "v2" {
		t.Fatalf("fingerprint %q is not v2 and a hash per section", base)
	}
	edits := []struct {
		name     string
		old, new string // "" old: new is the whole source
		all      bool   // replace every occurrence
		export   string
		stale    []string // sections expected to change; nil: not stale
	}{
		{name: "whitespace and comments", new: strings.NewReplacer("\n  ", "\n      ", "// a kernel", "// another comment\n\n", ", %dst: buffer", ",\n    %dst: buffer").Replace(fpBase)},
		{name: "body value renamed", old: "%x", new: "%value", all: true},
		{name: "body op added that keeps every fact", old: "view.store %x, %b[%i] : i32", new: "%y = scalar.addi %x, %x : i32\n    view.store %y, %b[%i] : i32"},
		{name: "launch-config value renamed", old: "%padded", new: "%rounded", all: true},
		{name: "doc comment of the config", old: "config.decl", new: "// the block size\nconfig.decl"},

		{name: "export name", old: `export("fp")`, new: `export("fp2")`, export: "fp2", stale: []string{"signature"}},
		{name: "param order", old: "%src: buffer, %dst: buffer", new: "%dst: buffer, %src: buffer", stale: []string{"signature", "access", "elements", "extents"}},
		{name: "scalar param renamed", old: "%n", new: "%count", all: true, stale: []string{"signature"}},
		{name: "buffer param renamed", old: "%dst", new: "%out", all: true, stale: []string{"signature", "access", "elements", "extents"}},
		{name: "extra workload param", old: "@fp(%n: index)", new: "@fp(%n: index, %extra: i32)", stale: []string{"signature"}},
		{name: "extra launch param", old: "%dst: buffer)", new: "%dst: buffer, %k: f32)", stale: []string{"signature"}},
		{name: "access", old: "view.store %x, %b[%i]", new: "view.store %x, %a[%i]", stale: []string{"access"}},
		{name: "element type i32 to f32", old: "i32", new: "f32", all: true, stale: []string{"elements"}},
		{name: "view starts 64 bytes in", old: "%b = buffer.view %dst[%z]", new: "%o = index.constant 64 : offset\n  %b = buffer.view %dst[%o]", stale: []string{"extents"}},
		{name: "view twice as long", old: "%b = buffer.view %dst[%z] : buffer -> view<[%n]xi32>", new: "%n2 = index.add %n, %n : index\n  %b = buffer.view %dst[%z] : buffer -> view<[%n2]xi32>", stale: []string{"extents"}},
		{name: "grid formula", old: "workgroups(%groups, %c1, %c1)", new: "workgroups(%n, %c1, %c1)", stale: []string{"launch"}},
		{name: "workgroup size formula", old: "workgroup_size(%wg, %c1, %c1)", new: "workgroup_size(%wgm1, %c1, %c1)", stale: []string{"launch"}},
		{name: "dynamic workgroup storage clause", old: "workgroup_size(%wg, %c1, %c1) : index", new: "workgroup_size(%wg, %c1, %c1) dynamic_workgroup_storage(%n) : index", stale: []string{"launch"}},
		{name: "where predicate", old: "range(%n, 1, 4096)", new: "range(%n, 1, 8192)", stale: []string{"checks"}},
		{name: "assume added", old: "%ok = index.cmp", new: "%n1 = index.assume %n [range(%n, 1, 1024)] : index\n  %ok = index.cmp", stale: []string{"checks"}},
		{name: "config predicate", old: "range(%b, 32, 1024)", new: "range(%b, 32, 512)", stale: []string{"config"}},
		{name: "config predicate added", old: "pow2(%b)]", new: "pow2(%b), mul(%b, 32)]", stale: []string{"config"}},
		{name: "config default", old: "= 64 : index", new: "= 128 : index", stale: []string{"config"}},
		{name: "config declared elsewhere too", old: "config.def @fp.block", new: "config.decl @fp.extra : i1\nconfig.def @fp.block", stale: []string{"config"}},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			src := e.new
			switch {
			case e.old == "":
			case e.all:
				src = replaceAll(fpBase, e.old, e.new)
			default:
				src = replaceOnce(t, fpBase, e.old, e.new)
			}
			export := e.export
			if export == "" {
				export = "fp"
			}
			got := FingerprintDiff(base, fingerprintOf(t, src, export))
			if !slices.Equal(got, e.stale) {
				t.Errorf("changed sections %v, want %v", got, e.stale)
			}
		})
	}
}

func TestFingerprintDiffOtherFormat(t *testing.T) {
	base := fingerprintOf(t, fpBase, "fp")
	if got := FingerprintDiff("c985e53f2208ad6f93a3029c9d9a2de7", base); !slices.Equal(got, []string{"format"}) {
		t.Errorf("a v1 fingerprint differs in %v, want [format]", got)
	}
	if got := FingerprintDiff(base, base); got != nil {
		t.Errorf("equal fingerprints differ in %v", got)
	}
}
