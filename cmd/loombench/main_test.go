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
