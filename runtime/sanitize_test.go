package runtime

import (
	"errors"
	"os"
	"testing"

	"github.com/loomgen/loomgen/loom/interp"
)

// sanitizerKernels is loom/interp's own sanitizer kernels; the session
// test runs wg_race_after_output, whose lanes store their ids to %out
// before they race on one workgroup slot.
const sanitizerKernels = "../loom/interp/testdata/sanitize.loom"

// TestSanitizeSession: a sanitized session runs on the cpu backend, refuses
// a GPU one, reports a race as an interp.RunError with its event, and stays
// usable so what the kernel wrote before the report can be read.
func TestSanitizeSession(t *testing.T) {
	t.Setenv("LOOM_BACKEND", "")
	san := interp.Sanitize{Races: true}
	if _, err := Open(Options{Backend: "cuda", Sanitize: san}); !errors.Is(err, ErrBackend) {
		t.Fatalf("cuda with the sanitizer: err = %v, want ErrBackend", err)
	}
	s, err := Open(Options{Backend: "auto", Sanitize: san})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Backend() != "cpu" {
		t.Fatalf("backend %s, want cpu", s.Backend())
	}
	src, err := os.ReadFile(sanitizerKernels)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "sanitize.loom", Text: src}}, Export: "wg_race_after_output"}})
	if err != nil {
		t.Fatal(err)
	}
	out := must(s.Allocate(16))
	err = s.Run([]Command{newDispatch(t, s, ks[0], nil, Buffer(out.Write()))})
	var re *interp.RunError
	if !errors.As(err, &re) || re.Event == nil || re.Event.Type != "tsan_report" || re.Event.Memory != "workgroup" {
		t.Fatalf("err = %v, want a tsan report", err)
	}
	b, err := s.Read(out)
	if err != nil {
		t.Fatalf("read after the report: %v", err)
	}
	if b[0] != 0 || b[4] != 1 || b[8] != 2 || b[12] != 3 {
		t.Fatalf("out = %v, want the lane ids stored before the race", b)
	}
}
