package runtime

import (
	"errors"
	"strings"
	"testing"
)

// TestDispatchRefusesMisalignedBinding: a buffer whose views are f32 must be
// bound at a multiple of 4 bytes (ParamInfo.Align); Dispatch refuses any
// other offset before anything runs, on every backend.
func TestDispatchRefusesMisalignedBinding(t *testing.T) {
	s := testSession(t)
	ks, err := s.Compile(pipelineSpecs(t))
	if err != nil {
		t.Fatal(err)
	}
	r := must(s.Allocate(1024))
	x, y := must(r.Slice(2, 256)), must(r.Slice(512, 256))
	args := []Arg{Index(64), F32(2), Buffer(x.Read()), Buffer(y.ReadWrite())}
	_, err = s.NewDispatch(ks[0], []Arg{Index(64)}, args)
	if !errors.Is(err, ErrArgument) || !strings.Contains(err.Error(), "region offset 2 is not a multiple of 4") {
		t.Fatalf("misaligned binding: %v", err)
	}
	args[2] = Buffer(must(r.Slice(4, 256)).Read())
	d := newDispatch(t, s, ks[0], []Arg{Index(64)}, args...)
	if err := s.Run([]Command{d}); err != nil {
		t.Fatalf("aligned binding: %v", err)
	}
}
