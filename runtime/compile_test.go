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
		{Name: "n", Type: "index", Bytes: 4},
		{Name: "a", Type: "f32", Bytes: 4},
		{Name: "x", Type: "buffer", Buffer: true, Access: AccessRead},
		{Name: "y", Type: "buffer", Buffer: true, Access: AccessReadWrite},
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
