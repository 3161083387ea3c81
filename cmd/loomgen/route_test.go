package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scaleCheck is a check case for the scaffold's scale kernel.
const scaleCheck = `
check.case @scale_doubles {
  %n = check.param.choice values([1, 300]) name("n") : index
  %factor = check.literal value(2.0) : f32
  %src = check.generate.iota offset(0.0) step(1.0) : tensor<[%n]xf32>
  %dst = check.generate.fill value(0.0) : tensor<[%n]xf32>
  func.call @scale(%n, %factor, %src, %dst) : (index, f32, tensor<[%n]xf32>, tensor<[%n]xf32>)
  %want = check.generate.iota offset(0.0) step(2.0) : tensor<[%n]xf32>
  check.expect.equal actual(%dst) expected(%want) : tensor<[%n]xf32>
  check.return
}
`

// TestReadmeRoute runs the README's "Using it in your repository" route
// from a clone, with the go command, in a new module: go mod edit with a
// replace directive to the clone, a require of v0.0.0 and the tool line
// (go get -tool would ask the module proxy for the unpublished path),
// go mod tidy, go tool loomgen init, then a check case in
// the scaffold's kernels, go mod tidy, go generate (which writes
// loom_check_test.go) and go test, whose subtests run the case; then a
// wrong expectation, which fails go test with the differing elements.
func TestReadmeRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("builds loomgen and a model module with the go command")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("the route needs the go command: %v", err)
	}
	clone, _ := filepath.Abs("../..")
	mod := t.TempDir()
	// The clone's go.sum lets go get verify loomgen's dependencies without
	// the checksum database (this machine may be offline).
	sum, err := os.ReadFile(filepath.Join(clone, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "LOOM_BACKEND=cpu")
	gocmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd("mod", "init", "example.com/model")
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	gocmd("mod", "edit", "-replace", "github.com/loomgen/loomgen="+clone,
		"-require", "github.com/loomgen/loomgen@v0.0.0", "-tool", "github.com/loomgen/loomgen/cmd/loomgen")
	gocmd("mod", "tidy")
	gocmd("tool", "loomgen", "init", "./model")
	kernel := filepath.Join(mod, "model", "kernels", "scale.loom")
	src, err := os.ReadFile(kernel)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kernel, append(src, scaleCheck...), 0o644); err != nil {
		t.Fatal(err)
	}
	gocmd("mod", "tidy")
	gocmd("generate", "./...")
	if _, err := os.Stat(filepath.Join(mod, "model", "loom_check_test.go")); err != nil {
		t.Fatalf("go generate wrote no check test: %v", err)
	}
	out := gocmd("test", "-count=1", "-v", "-run", "TestLoomChecks", "./...")
	for _, want := range []string{"--- PASS: TestLoomChecks/cpu/scale_doubles[n=1]", "--- PASS: TestLoomChecks/cpu/scale_doubles[n=300]"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test output lacks %q:\n%s", want, out)
		}
	}
	gocmd("tool", "loomgen", "-check", "-o", "model", "model/kernels")

	// A wrong expectation fails go test, with the differing elements.
	if err := os.WriteFile(kernel, append(append(src, scaleCheck...), scaleWrong...), 0o644); err != nil {
		t.Fatal(err)
	}
	gocmd("generate", "./...")
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestLoomChecks", "./...")
	cmd.Dir, cmd.Env = mod, env
	failed, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go test passed with a wrong expectation:\n%s", failed)
	}
	for _, want := range []string{"--- FAIL: TestLoomChecks/cpu/scale_wrong", "FAIL scale_wrong on cpu", "element 1: got 2, want 3"} {
		if !strings.Contains(string(failed), want) {
			t.Errorf("failing go test output lacks %q:\n%s", want, failed)
		}
	}
}

// scaleWrong expects 3·i where the kernel computes 2·i.
const scaleWrong = `
check.case @scale_wrong {
  %n = check.literal value(4) : index
  %factor = check.literal value(2.0) : f32
  %src = check.generate.iota offset(0.0) step(1.0) : tensor<4xf32>
  %dst = check.generate.fill value(0.0) : tensor<4xf32>
  func.call @scale(%n, %factor, %src, %dst) : (index, f32, tensor<4xf32>, tensor<4xf32>)
  %want = check.generate.iota offset(0.0) step(3.0) : tensor<4xf32>
  check.expect.equal actual(%dst) expected(%want) : tensor<4xf32>
  check.return
}
`
