package loom

import "testing"

const fpBase = `
// a kernel
kernel.def export("fp") @fp(%n: index) {
  %c1 = index.constant 1 : index
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index, %src: buffer, %dst: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %a = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %b = buffer.view %dst[%z] : buffer -> view<[%n]xf32>
  %x = view.load %a[%i] : view<[%n]xf32> -> f32
  view.store %x, %b[%i] : f32, view<[%n]xf32>
  kernel.return
}`

func fingerprintOf(t *testing.T, src string) string {
	t.Helper()
	p := parseProgram(t, src)
	k := mustKernel(t, p, "fp")
	return Fingerprint(k, p.Access(k))
}

func TestFingerprint(t *testing.T) {
	base := fingerprintOf(t, fpBase)
	if len(base) != 32 {
		t.Fatalf("fingerprint %q is not 32 hex digits", base)
	}
	same := map[string]string{
		"whitespace and comments": `
// other comment

kernel.def export("fp") @fp(%n:index) {
  %c1 = index.constant 1 : index   // trailing
  kernel.launch.config workgroups(%n, %c1, %c1) workgroup_size(%c1, %c1, %c1) : index
} launch(%n: index,
         %src: buffer,
         %dst: buffer) {
  %z = index.constant 0 : offset
  %i = kernel.workitem.id<x> : index
  %a = buffer.view %src[%z] : buffer -> view<[%n]xf32>
  %b = buffer.view %dst[%z] : buffer -> view<[%n]xf32>

  %x = view.load %a[%i] : view<[%n]xf32> -> f32
  view.store %x, %b[%i] : f32, view<[%n]xf32>
  kernel.return
}`,
	}
	for name, src := range same {
		if got := fingerprintOf(t, src); got != base {
			t.Errorf("%s changed the fingerprint", name)
		}
	}
	differ := []struct {
		name, old, new, export string
	}{
		{"export name", `export("fp") @fp`, `export("fp2") @fp`, "fp2"},
		{"param order", `%src: buffer, %dst: buffer`, `%dst: buffer, %src: buffer`, "fp"},
		{"workload signature", `@fp(%n: index)`, `@fp(%n: index, %extra: i32)`, "fp"},
		{"access", `view.store %x, %b[%i]`, `view.store %x, %a[%i]`, "fp"},
		{"extra launch arg", `%dst: buffer)`, `%dst: buffer, %k: f32)`, "fp"},
		{"param type", `%dst: buffer)`, `%dst: view<4xf32>)`, "fp"},
	}
	for _, d := range differ {
		p := parseProgram(t, replaceOnce(t, fpBase, d.old, d.new))
		k := mustKernel(t, p, d.export)
		if Fingerprint(k, p.Access(k)) == base {
			t.Errorf("changing the %s kept the fingerprint", d.name)
		}
	}
	// Renaming a parameter everywhere is a signature change too.
	if fingerprintOf(t, replaceAll(fpBase, "%n", "%count")) == base {
		t.Error("renaming a parameter kept the fingerprint")
	}
}
