package gen

import (
	"os"
	"strings"
	"testing"
)

// Dispatch checks, against the launch's dynamic workgroup storage, the
// byte count kernel.workgroup.storage takes and the span of the views
// over it; a span it cannot compute is listed among the skipped checks.
func TestDispatchChecksWorkgroupStorage(t *testing.T) {
	src, err := os.ReadFile("../loom/testdata/storage/views.loom")
	if err != nil {
		t.Fatal(err)
	}
	m, err := BuildModel("x", []Source{{Name: "views.loom", Text: src}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(m)
	if err != nil {
		t.Fatal(err)
	}
	code := string(out)
	for _, want := range []string{
		"storage := ",
		"kernel.workgroup.storage at views.loom:14:3 takes %d bytes; the launch config's dynamic_workgroup_storage gives %d",
		"the views over kernel.workgroup.storage at views.loom:14:3 span %d bytes",
		"the views over kernel.workgroup.storage at views.loom:18:3 fits the dynamic workgroup storage (views.loom:19:3: the buffer reaches func.call",
	} {
		if !strings.Contains(code, want) {
			t.Errorf("bindings lack %q:\n%s", want, code)
		}
	}
}
