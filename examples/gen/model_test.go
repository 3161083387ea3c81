package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/loomgen/loomgen/gen"
	loomrt "github.com/loomgen/loomgen/runtime"
)

// testShape is small enough for a quick test yet exercises partial tiles
// (40 and 24 are not multiples of 16) and strided row loops (Dim > 64).
var testShape = Shape{Tokens: 40, Dim: 72, Hidden: 24, Classes: 10}

func TestModelMatchesReference(t *testing.T) {
	for _, tanh := range []bool{false, true} {
		s, err := loomrt.Open(loomrt.Options{Backend: "cpu"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.MlpGeluTanh = tanh
		cfg.MlpBlock = 64
		params := newParams(testShape, 7)
		m, err := newModel(s, cfg, testShape, params, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		for b := range 2 {
			x := newBatch(testShape, uint64(100+b))
			got, err := m.forward(x)
			if err != nil {
				t.Fatal(err)
			}
			want := reference(testShape, params, x, 1e-5, tanh)
			if d := maxAbsDiff(got, want); d > tolerance {
				t.Errorf("gelu tanh=%v batch %d: max abs diff %.3g > %.0e", tanh, b, d, tolerance)
			}
		}
		s.Close()
	}
}

// TestGeluConfig runs the GELU kernel alone under both settings of
// @mlp.gelu_tanh: each must match its own formula and not the other one,
// so the config value really reaches the kernel body.
func TestGeluConfig(t *testing.T) {
	x := make([]float32, 301)
	for i := range x {
		x[i] = float32(i-150) / 50 // -3 .. 3
	}
	for _, tanh := range []bool{false, true} {
		s, err := loomrt.Open(loomrt.Options{Backend: "cpu"})
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.MlpGeluTanh = tanh
		k, err := Load(s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		buf, err := loomrt.Alloc[float32](s, len(x))
		if err != nil {
			t.Fatal(err)
		}
		if err := loomrt.Upload(s, buf, x); err != nil {
			t.Fatal(err)
		}
		d, err := k.Gelu.Dispatch(len(x), buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run([]loomrt.Command{d}); err != nil {
			t.Fatal(err)
		}
		got, err := loomrt.ReadSlice(s, buf)
		if err != nil {
			t.Fatal(err)
		}
		var own, other float64
		for i, v := range x {
			v := float64(v)
			exact := 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
			approx := 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			want, alt := exact, approx
			if tanh {
				want, alt = approx, exact
			}
			own = math.Max(own, math.Abs(float64(got[i])-want))
			other = math.Max(other, math.Abs(float64(got[i])-alt))
		}
		if own > 1e-6 || other < 1e-4 {
			t.Errorf("gelu tanh=%v: max diff %.3g to its formula (want ≤ 1e-6), %.3g to the other (want ≥ 1e-4)", tanh, own, other)
		}
		s.Close()
	}
}

func TestRecordingHazards(t *testing.T) {
	s, err := loomrt.Open(loomrt.Options{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := newModel(s, DefaultConfig(), testShape, newParams(testShape, 1), 1e-5); err != nil {
		t.Fatal(err)
	}
	g, err := s.Graph(graphKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 7 {
		t.Fatalf("graph has %d nodes, want 7", len(g.Nodes))
	}
	// Each step reads what the one before wrote; the residual add also
	// reads the input, which nothing in the graph writes.
	for to := 1; to < 7; to++ {
		if !g.DependsOn(to, to-1) {
			t.Errorf("node %d does not depend on node %d", to, to-1)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	s, err := loomrt.Open(loomrt.Options{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := DefaultConfig()
	cfg.MlpBlock = 48 // in range, not a power of two
	if _, err := Load(s, cfg); !errors.Is(err, loomrt.ErrArgument) {
		t.Fatalf("Load with block 48: err = %v, want ErrArgument", err)
	}
}

func TestDispatchChecksLengths(t *testing.T) {
	s, err := loomrt.Open(loomrt.Options{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, err := Load(s, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	short, err := loomrt.Alloc[float32](s, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.Gelu.Dispatch(11, short); !errors.Is(err, loomrt.ErrArgument) {
		t.Fatalf("gelu over 11 elements of a 10-element buffer: err = %v, want ErrArgument", err)
	}
}

// TestBindingsUpToDate regenerates the bindings and the check test in
// memory and compares them with the checked-in loom_gen.go and
// loom_check_test.go. Generation asks the go command about the package, so
// the test skips where there is none (test binaries run on a GPU machine).
func TestBindingsUpToDate(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("regenerating the bindings needs the go command: %v", err)
	}
	res, err := gen.Generate(gen.Options{Inputs: []string{"kernels"}, Package: "main"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name string
		src  []byte
	}{{"loom_gen.go", res.Source}, {gen.CheckTestFile, res.Test}} {
		onDisk, err := os.ReadFile(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.src, onDisk) {
			t.Errorf("%s is stale; run go generate ./examples/gen/...\n%s",
				f.name, gen.UnifiedDiff(f.name, "regenerated", onDisk, f.src))
		}
	}
}

// BenchmarkForward times one forward pass of the main job's model (its
// default shape) through the recorded graph on the CPU backend.
func BenchmarkForward(b *testing.B) {
	s, err := loomrt.Open(loomrt.Options{Backend: "cpu"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	params := newParams(defaultShape, 1)
	m, err := newModel(s, DefaultConfig(), defaultShape, params, 1e-5)
	if err != nil {
		b.Fatal(err)
	}
	x := newBatch(defaultShape, 2)
	for b.Loop() {
		if _, err := m.forward(x); err != nil {
			b.Fatal(err)
		}
	}
}
