package runtime

import (
	"errors"
	"testing"

	"github.com/loomgen/loomgen/loom/interp"
)

const racySource = `
kernel.def export("racy") @racy() {
  %one = index.constant 1 : index
  %four = index.constant 4 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%four, %one, %one) : index
} launch(%out: buffer) {
  %c0 = index.constant 0 : index
  %zo = index.constant 0 : offset
  %bytes = index.constant 16 : offset
  %lane = kernel.workitem.id<x> : index
  %tile = buffer.alloca<workgroup> %bytes : buffer
  %tv = buffer.view %tile[%zo] : buffer -> view<4xi32>
  %ov = buffer.view %out[%zo] : buffer -> view<4xi32>
  %v = index.cast %lane : index to i32
  view.store %v, %ov[%lane] : i32, view<4xi32>
  view.store %v, %tv[%c0] : i32, view<4xi32>
  kernel.return
}
`

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
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "racy.loom", Text: []byte(racySource)}}, Export: "racy"}})
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
