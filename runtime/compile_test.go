package runtime

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/loom"
)

// pipelineSources are the runtime's own test kernels.
func pipelineSources(t testing.TB) []Source {
	t.Helper()
	text, err := os.ReadFile("testdata/pipeline.loom")
	if err != nil {
		t.Fatal(err)
	}
	return []Source{{Name: "testdata/pipeline.loom", Text: text}}
}

func pipelineSpecs(t testing.TB, cfg ...ConfigValue) []KernelSpec {
	src := pipelineSources(t)
	var specs []KernelSpec
	for _, e := range []string{"axpy", "square", "offset_add", "nop"} {
		specs = append(specs, KernelSpec{Sources: src, Export: e, Config: cfg})
	}
	return specs
}

func TestCompileMetadata(t *testing.T) {
	s := testSession(t)
	ks, err := s.Compile(pipelineSpecs(t))
	if err != nil {
		t.Fatal(err)
	}
	axpy := must(s.KernelInfo(ks[0]))
	if axpy.Export != "axpy" || !axpy.Static || axpy.WorkgroupSize != [3]int{64, 1, 1} {
		t.Errorf("axpy info %+v", axpy)
	}
	wantParams := []ParamInfo{
		{Name: "n", Type: "index", Bytes: 4, Align: 1},
		{Name: "a", Type: "f32", Bytes: 4, Align: 1},
		{Name: "x", Type: "buffer", Buffer: true, Access: AccessRead, Align: 4},
		{Name: "y", Type: "buffer", Buffer: true, Access: AccessReadWrite, Align: 4},
	}
	for i, p := range wantParams {
		if i >= len(axpy.Params) || axpy.Params[i] != p {
			t.Errorf("axpy param %d = %+v, want %+v", i, axpy.Params, p)
		}
	}
	oa := must(s.KernelInfo(ks[2]))
	if oa.Params[1].Bytes != 4 || oa.Params[2].Bytes != 8 || oa.Params[3].Access != AccessRead || oa.Params[4].Access != AccessWrite {
		t.Errorf("offset_add params %+v", oa.Params)
	}
	if nop := must(s.KernelInfo(ks[3])); nop.Params[0].Access != AccessNone {
		t.Errorf("nop access %v", nop.Params[0].Access)
	}
	// Same request: cached handles.
	again := must(s.Compile(pipelineSpecs(t)))
	for i := range ks {
		if again[i] != ks[i] {
			t.Errorf("kernel %d compiled twice", i)
		}
	}
	// Different config: a different kernel with its own workgroup size.
	big := must(s.Compile(pipelineSpecs(t, ConfigValue{"pipe.block", "128"})[:1]))
	if big[0] == ks[0] || must(s.KernelInfo(big[0])).WorkgroupSize != [3]int{128, 1, 1} {
		t.Errorf("config change: %v, %+v", big[0], must(s.KernelInfo(big[0])))
	}
	g := must(s.LaunchConfig(ks[0], []loom.Const{{Type: &loom.Type{Kind: loom.TypeIndex, Name: "index"}, Int: 1000}}))
	if g.Workgroups != [3]int64{16, 1, 1} || g.WorkgroupSize != [3]int64{64, 1, 1} {
		t.Errorf("LaunchConfig(1000) = %+v", g)
	}
	if _, err := s.LaunchConfig(ks[0], nil); !errors.Is(err, ErrArgument) {
		t.Errorf("LaunchConfig without workload: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	s := testSession(t)
	src := pipelineSources(t)
	fp := must(s.KernelInfo(must(s.Compile([]KernelSpec{{Sources: src, Export: "square"}}))[0])).Fingerprint
	if fp == "" {
		t.Fatal("empty fingerprint")
	}
	cases := []struct {
		name string
		spec KernelSpec
		want error
		msg  string
	}{
		{"missing export", KernelSpec{Sources: src, Export: "cube"}, ErrCompile, "cube"},
		{"unknown config key", KernelSpec{Sources: src, Export: "axpy", Config: []ConfigValue{{"pipe.blok", "64"}}}, ErrCompile, "pipe.blok"},
		{"bad config value", KernelSpec{Sources: src, Export: "axpy", Config: []ConfigValue{{"pipe.block", "lots"}}}, ErrCompile, "pipe.block"},
		{"syntax error", KernelSpec{Sources: []Source{{Name: "bad.loom", Text: []byte("kernel.def @x(")}}, Export: "x"}, ErrCompile, "bad.loom:1:"},
		{"no sources", KernelSpec{Export: "x"}, ErrCompile, "no sources"},
		{"stale fingerprint", KernelSpec{Sources: src, Export: "square", Fingerprint: "0123"}, ErrStaleBinding, "square"},
	}
	for _, c := range cases {
		_, err := s.Compile([]KernelSpec{c.spec})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
	}
	// The right fingerprint passes, also from the cache.
	if _, err := s.Compile([]KernelSpec{{Sources: src, Export: "square", Fingerprint: fp}}); err != nil {
		t.Errorf("matching fingerprint: %v", err)
	}
	// A changed signature changes the fingerprint: old bindings fail loudly.
	changed := strings.Replace(string(src[0].Text), "launch(%n: index, %src: buffer, %dst: buffer)", "launch(%n: index, %dst: buffer, %src: buffer)", 1)
	_, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: src[0].Name, Text: []byte(changed)}}, Export: "square", Fingerprint: fp}})
	if !errors.Is(err, ErrStaleBinding) || !strings.Contains(err.Error(), "%dst: buffer (write), %src: buffer (read)") {
		t.Errorf("reordered buffers: %v", err)
	}
	if _, err := s.Allocate(1); err != nil {
		t.Errorf("compile errors made the session unusable: %v", err)
	}
}

// TestStaleBindingFacts: edits the old fingerprint (signatures and access
// only) missed make Compile refuse bindings generated before them, naming
// what changed.
func TestStaleBindingFacts(t *testing.T) {
	s := testSession(t)
	src := pipelineSources(t)
	fp := must(s.KernelInfo(must(s.Compile([]KernelSpec{{Sources: src, Export: "offset_add"}}))[0])).Fingerprint
	edits := []struct{ name, old, new, changed string }{
		{"view of i32 becomes f32", "%ov = buffer.view %out[%zero] : buffer -> view<[%n]xi32>\n  scf.if %inside {\n    %v = view.load %iv[%i] : view<[%n]xi32> -> i32\n    %r = scalar.addi %v, %k : i32\n    view.store %r, %ov[%i] : i32, view<[%n]xi32>",
			"%ov = buffer.view %out[%zero] : buffer -> view<[%n]xf32>\n  scf.if %inside {\n    %v = view.load %iv[%i] : view<[%n]xi32> -> i32\n    %r = scalar.addi %v, %k : i32\n    %f = scalar.bitcast %r : i32 -> f32\n    view.store %f, %ov[%i] : f32, view<[%n]xf32>", "elements"},
		{"view starts 64 bytes in", "%ov = buffer.view %out[%zero]", "%at = index.constant 64 : offset\n  %ov = buffer.view %out[%at]", "extents"},
		{"grid formula", "%wgm1 = index.constant 15 : index\n  %padded", "%wgm1 = index.constant 0 : index\n  %padded", "launch"},
	}
	for _, e := range edits {
		text := string(src[0].Text)
		if !strings.Contains(text, e.old) {
			t.Fatalf("%s: %q not in pipeline.loom", e.name, e.old)
		}
		text = strings.Replace(text, e.old, e.new, 1)
		_, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: src[0].Name, Text: []byte(text)}}, Export: "offset_add", Fingerprint: fp}})
		if !errors.Is(err, ErrStaleBinding) || !strings.Contains(err.Error(), "changed: "+e.changed) {
			t.Errorf("%s: %v, want ErrStaleBinding naming %s", e.name, err, e.changed)
		}
	}
}

// A kernel compiles with its package's other files (here a template
// provider in common.loom), and the cache key covers them: editing only
// common.loom gives a new kernel that runs the new provider.
func TestCompilePackageOfSeveralFiles(t *testing.T) {
	s := testSession(t)
	common := func(factor string) Source {
		return Source{Name: "kernels/common.loom", Text: []byte(`template.decl @pkg.scale(%x: f32) -> (f32)
template.def<@pkg.scale> @pkg.scale_by(%x: f32) -> (f32) {
  %f = scalar.constant ` + factor + ` : f32
  %y = scalar.mulf %x, %f : f32
  template.return %y : f32
}
`)}
	}
	kernel := Source{Name: "kernels/k.loom", Text: []byte(`kernel.def export("k") @k() {
  %one = index.constant 1 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%one, %one, %one) : index
} launch(%out: buffer) {
  %z = index.constant 0 : offset
  %c0 = index.constant 0 : index
  %v = buffer.view %out[%z] : buffer -> view<1xf32>
  %x = view.load %v[%c0] : view<1xf32> -> f32
  %y = template.apply<@pkg.scale>(%x) : (f32) -> (f32)
  view.store %y, %v[%c0] : f32, view<1xf32>
  kernel.return
}
`)}
	run := func(c Source) (Kernel, float32) {
		t.Helper()
		ks, err := s.Compile([]KernelSpec{{Sources: []Source{c, kernel}, Export: "k"}})
		if err != nil {
			t.Fatal(err)
		}
		out := must(Alloc[float32](s, 1))
		if err := Upload(s, out, []float32{1.5}); err != nil {
			t.Fatal(err)
		}
		if err := s.Run([]Command{newDispatch(t, s, ks[0], nil, Buffer(out.Region().ReadWrite()))}); err != nil {
			t.Fatal(err)
		}
		return ks[0], must(ReadSlice(s, out))[0]
	}
	k2, y2 := run(common("2.0"))
	k3, y3 := run(common("3.0"))
	if y2 != 3 || y3 != 4.5 {
		t.Errorf("results %v and %v, want 3 (×2) and 4.5 (×3)", y2, y3)
	}
	if k2 == k3 {
		t.Error("editing common.loom alone gave the cached kernel")
	}
	if again, _ := run(common("2.0")); again != k2 {
		t.Error("the same package compiled again is not the cached kernel")
	}
	// Alone, k.loom misses the template family.
	if _, err := s.Compile([]KernelSpec{{Sources: []Source{kernel}, Export: "k"}}); err == nil || !strings.Contains(err.Error(), "kernels/k.loom:9:") {
		t.Errorf("kernel file alone: %v", err)
	}
}

// TestCompileConfigPredicates: Compile enforces the config.decl predicates
// for any caller, not only through the generated Validate.
func TestCompileConfigPredicates(t *testing.T) {
	s := testSession(t)
	src := pipelineSources(t)
	for _, c := range []struct {
		value, broken string
	}{
		{"48", "pow2(%b)"},
		{"1024", "range(%b, 32, 512)"},
		{"16", "range(%b, 32, 512)"},
		{"128", ""},
	} {
		_, err := s.Compile([]KernelSpec{{Sources: src, Export: "axpy", Config: []ConfigValue{{"pipe.block", c.value}}}})
		if c.broken == "" {
			if err != nil {
				t.Errorf("pipe.block = %s: %v", c.value, err)
			}
			continue
		}
		if !errors.Is(err, ErrCompile) || !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), c.broken) ||
			!strings.Contains(err.Error(), "testdata/pipeline.loom:6:") {
			t.Errorf("pipe.block = %s: %v, want ErrCompile and ErrArgument naming %s at its position", c.value, err, c.broken)
		}
	}
}
