package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/internal/bench"
)

// TestBuildNativeEachSource: with an nvcc that builds kernels.cu but not
// attention.cu, buildNative keeps kernels.cu's PTX, reports attention.cu's
// failure, and still builds the cuBLAS baseline; every source it needs
// (the shared header included) is written where nvcc runs.
func TestBuildNativeEachSource(t *testing.T) {
	dir := t.TempDir()
	nvcc := filepath.Join(dir, "nvcc")
	// A stand-in for nvcc: fail on attention.cu, else write the -o file.
	script := `#!/bin/sh
out=""; prev=""
for a in "$@"; do
	[ "$prev" = "-o" ] && out=$a
	[ "$a" = attention.cu ] && { echo "attention.cu(1): error: made up" >&2; exit 1; }
	prev=$a
done
for f in kernels.cu attention.cu entry.cuh cublas.c; do [ -f "$f" ] || { echo "missing $f" >&2; exit 2; }; done
echo built > "$out"
`
	if err := os.WriteFile(nvcc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	var opt bench.GPUOptions
	err := buildNative(nvcc, work, "", &opt, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "attention.cu") || !strings.Contains(err.Error(), "made up") {
		t.Fatalf("error %v, want attention.cu's", err)
	}
	if want := []string{filepath.Join(work, "kernels_nvcc.ptx")}; len(opt.NvccPTX) != 1 || opt.NvccPTX[0] != want[0] {
		t.Fatalf("NvccPTX %q, want %q", opt.NvccPTX, want)
	}
	if opt.CublasLib != filepath.Join(work, "libbench_cublas.so") {
		t.Fatalf("CublasLib %q", opt.CublasLib)
	}
}

// TestRunBadFlags checks that bad flags stop loombench with status 2 and
// a message, before anything is timed: a -run that is not a regexp (with
// the GPU suite off too), an unknown flag, a -table file that is not there.
func TestRunBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-gpu=false", "-cpu=false", "-run", "("}, 2, "missing closing )"},
		{[]string{"-run", "(", "-o", filepath.Join(t.TempDir(), "r.json")}, 2, "-run"},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined"},
		{[]string{"-table", filepath.Join(t.TempDir(), "missing.json")}, 1, "no such file"},
	} {
		var stdout, stderr strings.Builder
		if code := run(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("loombench %q: status %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.want)
		}
	}
	// -gpu=false with a valid -run says the filter selects nothing.
	var stdout, stderr strings.Builder
	out := filepath.Join(t.TempDir(), "r.json")
	if code := run([]string{"-gpu=false", "-cpu=false", "-run", "attn", "-o", out}, &stdout, &stderr); code != 0 || !strings.Contains(stderr.String(), "selects nothing") {
		t.Errorf("-gpu=false -run attn: status %d, stderr %q", code, stderr.String())
	}
}
