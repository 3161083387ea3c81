package ptx

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// TestCachePolicyPTX checks which PTX cache qualifier each Loom cache
// policy of testdata/cache_policy.loom becomes (TestGPUCorpus runs the
// same kernels against the CPU executor).
func TestCachePolicyPTX(t *testing.T) {
	path := filepath.Join("testdata", "cache_policy.loom")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loom.ParseFile(path, src)
	if err != nil {
		t.Fatal(err)
	}
	access := regexp.MustCompile(`(?m)^\t(?:@!?%p\d+ )?((?:ld|st)\.global[^ ]*)`)
	count := func(export string) map[string]int {
		k, err := Compile([]*loom.Module{m}, export, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, s := range access.FindAllStringSubmatch(k.PTX, -1) {
			got[s[1]]++
		}
		return got
	}
	for _, c := range []struct {
		export string
		want   map[string]int
	}{
		{"cache_hints_scalar", map[string]int{
			"ld.global.f32":                 2, // regular, regular_non_temporal
			"ld.global.L1::no_allocate.f32": 3, // non_temporal, non_temporal_regular, non_temporal_high_temporal
			"ld.global.L1::evict_last.f32":  1, // high_temporal
			"ld.global.lu.f32":              1, // last_use
			"ld.global.cv.f32":              1, // bypass (system)
			"st.global.cs.f32":              2, // non_temporal, regular_non_temporal
			"st.global.f32":                 3, // writeback, non_temporal_writeback, high_temporal
			"st.global.wt.f32":              1, // bypass (system)
		}},
		{"cache_hints_vector", map[string]int{
			// The aligned body's .v4, and the general body's .v4 with
			// its per-element fallback (version.go).
			"ld.global.L1::no_allocate.v4.f32": 2,
			"ld.global.L1::no_allocate.f32":    4,
			"st.global.cs.v4.f32":              2,
			"st.global.cs.f32":                 4,
		}},
	} {
		got := count(c.export)
		for k, n := range c.want {
			if got[k] != n {
				t.Errorf("%s: %d × %s, want %d (all: %v)", c.export, got[k], k, n, got)
			}
		}
		for k := range got {
			if _, ok := c.want[k]; !ok {
				t.Errorf("%s: unexpected %s (all: %v)", c.export, k, got)
			}
		}
	}
}

// TestCachePolicyVolatile checks a volatile access keeps no cache operator
// (PTX does not combine them) and workgroup memory takes none.
func TestCachePolicyVolatile(t *testing.T) {
	src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%a: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %av = buffer.view %a[%z] : buffer -> view<4xf32>
  %x = view.load volatile %av[%c0] {cache_scope = device, cache_temporal = non_temporal} : view<4xf32> -> f32
  %bytes = index.constant 16 : offset
  %w = buffer.alloca %bytes {base_alignment = 16, memory_space = workgroup} : buffer
  %wv = buffer.view %w[%z] : buffer -> view<4xf32>
  view.store %x, %wv[%c0] {cache_scope = cu, cache_temporal = non_temporal} : f32, view<4xf32>
  %y = view.load %wv[%c0] {cache_scope = cu, cache_temporal = last_use} : view<4xf32> -> f32
  view.store %y, %av[%c0] : f32, view<4xf32>
  kernel.return
}
`
	m, err := loom.ParseFile("volatile.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ld.volatile.global.f32", "st.shared.f32", "ld.shared.f32", "st.global.f32"} {
		if !strings.Contains(k.PTX, want) {
			t.Errorf("want %s in\n%s", want, k.PTX)
		}
	}
	for _, bad := range []string{"::", ".cs.", ".lu."} {
		if strings.Contains(k.PTX, bad) {
			t.Errorf("unexpected %q in\n%s", bad, k.PTX)
		}
	}
}

// TestNoaliasNonCoherentLoads checks that loads through
// buffer.assume.noalias of a parameter the kernel only reads take the
// non-coherent path, with an eviction priority but not a cache operator,
// and that nothing else does: a parameter also written, one without the
// assumption, a volatile load.
func TestNoaliasNonCoherentLoads(t *testing.T) {
	src := `kernel.def export("k") @k() {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%c1, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%a: buffer, %b: buffer, %c: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %an, %bn = buffer.assume.noalias %a, %b : buffer, buffer
  %av = buffer.view %an[%z] : buffer -> view<8xf32>
  %bv = buffer.view %bn[%z] : buffer -> view<8xf32>
  %cv = buffer.view %c[%z] : buffer -> view<8xf32>
  %sub = view.subview %av[%c0] : view<8xf32> -> view<4xf32>
  %x0 = view.load %sub[%c0] : view<4xf32> -> f32
  %x1 = view.load %av[%c0] {cache_scope = device, cache_temporal = non_temporal} : view<8xf32> -> f32
  %x2 = view.load %av[%c0] {cache_scope = device, cache_temporal = last_use} : view<8xf32> -> f32
  %x3 = view.load volatile %av[%c0] : view<8xf32> -> f32
  %y = view.load %bv[%c0] : view<8xf32> -> f32
  %z0 = view.load %cv[%c0] : view<8xf32> -> f32
  %s1 = scalar.addf %x0, %x1 : f32
  %s2 = scalar.addf %s1, %x2 : f32
  %s3 = scalar.addf %s2, %x3 : f32
  %s4 = scalar.addf %s3, %y : f32
  %s5 = scalar.addf %s4, %z0 : f32
  view.store %s5, %bv[%c0] : f32, view<8xf32>
  kernel.return
}
`
	m, err := loom.ParseFile("nc.loom", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile([]*loom.Module{m}, "k", Options{})
	if err != nil {
		t.Fatal(err)
	}
	access := regexp.MustCompile(`(?m)^\t((?:ld|st)[.a-z:_0-9]*global[^ ]*)`)
	got := map[string]int{}
	for _, s := range access.FindAllStringSubmatch(k.PTX, -1) {
		got[s[1]]++
	}
	want := map[string]int{
		"ld.global.nc.f32":                 1, // %a through a subview
		"ld.global.nc.L1::no_allocate.f32": 1, // non_temporal as well
		"ld.global.lu.f32":                 1, // a cache operator: no .nc
		"ld.volatile.global.f32":           1,
		"ld.global.f32":                    2, // %b is written; %c has no noalias
		"st.global.f32":                    1,
	}
	for key, n := range want {
		if got[key] != n {
			t.Errorf("%d × %s, want %d (all: %v)", got[key], key, n, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("accesses %v, want %v", got, want)
	}
}
