package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/loomgen/loomgen/hip"
)

func TestParseParam(t *testing.T) {
	for _, c := range []struct {
		spec      string
		size      int
		value     uint64
		bufBytes  int
		wantError string
	}{
		{"i32:592", 4, 592, 0, ""},
		{"i32:-1", 4, 0xffffffff, 0, ""},
		{"i32:0x3727c5ac", 4, 0x3727c5ac, 0, ""},
		{"i64:-2", 8, math.MaxUint64 - 1, 0, ""},
		{"buf:10", 8, 0, 10, ""},
		{"i32:4294967296", 0, 0, 0, "out of 32-bit range"},
		{"buf:0", 0, 0, 0, "positive byte count"},
		{"f32:1", 0, 0, 0, "unknown kind"},
		{"592", 0, 0, 0, "want i32:V"},
	} {
		p, err := parseParam(c.spec, 3)
		if c.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantError) {
				t.Errorf("%s: error %v, want one containing %q", c.spec, err, c.wantError)
			}
			continue
		}
		if err != nil || p.size != c.size || p.value != c.value || len(p.init) != c.bufBytes {
			t.Errorf("%s: %+v %v", c.spec, p, err)
		}
	}
}

// The buffers are f32 words in [-1, 1), the same for the same seed, and a
// partial trailing word stays zero.
func TestFill(t *testing.T) {
	a, b := fill(4003, 7), fill(4003, 7)
	if !bytes.Equal(a, b) {
		t.Fatal("fill is not deterministic")
	}
	for i := 0; i+4 <= len(a); i += 4 {
		f := math.Float32frombits(binary.LittleEndian.Uint32(a[i:]))
		if !(f >= -1 && f < 1) {
			t.Fatalf("word %d = %g", i/4, f)
		}
	}
	if a[4000] != 0 || a[4002] != 0 {
		t.Error("the partial word was written")
	}
	if bytes.Equal(fill(64, 7), fill(64, 8)) {
		t.Error("two seeds give the same buffer")
	}
}

func TestParseDim(t *testing.T) {
	d, err := parseDim("grid", "1792")
	if err != nil || d != (hip.Dim3{X: 1792, Y: 1, Z: 1}) {
		t.Errorf("1792: %v %v", d, err)
	}
	if d, err = parseDim("block", "32,32"); err != nil || d != (hip.Dim3{X: 32, Y: 32, Z: 1}) {
		t.Errorf("32,32: %v %v", d, err)
	}
	for _, bad := range []string{"0", "1,2,3,4", "x", "-4"} {
		if _, err := parseDim("grid", bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Arguments are checked first; then a missing driver or device, or (with
// one) the missing PTX file, is a clear error.
func TestRunErrors(t *testing.T) {
	var out bytes.Buffer
	if err := run(nil, &out); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("no arguments: %v", err)
	}
	if err := run([]string{"-entry", "k", "-p", "nope", "a.ptx"}, &out); err == nil || !strings.Contains(err.Error(), "parameter 0") {
		t.Errorf("bad parameter: %v", err)
	}
	err := run([]string{"-entry", "k", "-p", "i32:1", "no-such.ptx"}, &out)
	if !errors.Is(err, hip.ErrNoLibrary) && !errors.Is(err, hip.ErrNoDevice) && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v, want hip.ErrNoLibrary, hip.ErrNoDevice or a missing file", err)
	}
}

// TestSourcesFromLoom: a .loom source stands for its versioned build and
// its aligned build (the softmax has both), a .ptx file for itself; a
// missing export or file is an error naming it.
func TestSourcesFromLoom(t *testing.T) {
	loomPath := "../../internal/bench/kernels/softmax.loom"
	srcs, err := sources([]string{loomPath}, "softmax_f32")
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].name != loomPath+" (versioned)" || srcs[1].name != loomPath+" (aligned)" {
		t.Fatalf("builds %v", srcs)
	}
	if !strings.Contains(string(srcs[0].text), "$L_misaligned_") || strings.Contains(string(srcs[1].text), "$L_misaligned_") {
		t.Error("the versioned build has no fallback, or the aligned one has")
	}
	if _, err := sources([]string{loomPath}, "no_such_kernel"); err == nil || !strings.Contains(err.Error(), "softmax.loom") {
		t.Errorf("missing export: %v", err)
	}
	ptxPath := t.TempDir() + "/k.ptx"
	if err := os.WriteFile(ptxPath, []byte(".version 8.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srcs, err = sources([]string{ptxPath}, "k")
	if err != nil || len(srcs) != 1 || srcs[0].name != ptxPath || srcs[0].capped != nil {
		t.Errorf("a .ptx file: %v, %v", srcs, err)
	}
	if _, err := sources([]string{"missing.ptx"}, "k"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// PATH@BYTES: the same build, launched with unused workgroup memory.
	srcs, err = sources([]string{loomPath + "@46000", ptxPath + "@0"}, "softmax_f32")
	if err != nil || len(srcs) != 3 || srcs[0].shared != 46000 || srcs[1].shared != 46000 || srcs[2].shared != 0 ||
		srcs[0].name != loomPath+"@46000 (versioned)" || string(srcs[2].text) != ".version 8.0\n" {
		t.Errorf("@ suffixes: %+v, %v", srcs, err)
	}
	for _, bad := range []string{ptxPath + "@", ptxPath + "@x", ptxPath + "@49153"} {
		if _, err := sources([]string{bad}, "k"); err == nil || !strings.Contains(err.Error(), "byte count") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
