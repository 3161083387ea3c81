package runtime

import (
	"errors"
	"strings"
	"testing"
)

// withGPUBackends replaces the registered GPU constructors for one test.
func withGPUBackends(t *testing.T, ctors ...gpuBackendCtor) {
	saved := gpuBackends
	gpuBackends = ctors
	t.Cleanup(func() { gpuBackends = saved })
}

type namedCPU struct{ *cpuBackend }

func (namedCPU) name() string { return "cuda" }

func TestOpenBackendSelection(t *testing.T) {
	t.Setenv("LOOM_BACKEND", "")
	noDevice := gpuBackendCtor{Kind: "cuda", Open: func(Options) (backend, error) {
		return nil, errors.New("libcuda.so.1 not found")
	}}
	withGPUBackends(t, noDevice)

	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != "cpu" || !strings.Contains(s.BackendReason(), "libcuda.so.1 not found") {
		t.Errorf("auto without device: %s (%s)", s.Backend(), s.BackendReason())
	}
	s.Close()

	if _, err := Open(Options{Backend: "cuda"}); !errors.Is(err, ErrBackend) || !strings.Contains(err.Error(), "libcuda") {
		t.Errorf("cuda without device: %v", err)
	}
	if _, err := Open(Options{Backend: "hip"}); !errors.Is(err, ErrBackend) {
		t.Errorf("hip with no hip backend: %v", err)
	}
	if _, err := Open(Options{Backend: "tpu"}); !errors.Is(err, ErrBackend) {
		t.Errorf("unknown backend: %v", err)
	}

	t.Setenv("LOOM_BACKEND", "cpu")
	s, err = Open(Options{Backend: "cuda"})
	if err != nil || s.Backend() != "cpu" {
		t.Fatalf("LOOM_BACKEND=cpu overriding cuda: %v", err)
	}
	s.Close()

	t.Setenv("LOOM_BACKEND", "")
	withGPUBackends(t, gpuBackendCtor{Kind: "cuda", Open: func(o Options) (backend, error) {
		return namedCPU{newCPUBackend(o)}, nil
	}})
	s, err = Open(Options{Backend: "auto"})
	if err != nil || s.Backend() != "cuda" {
		t.Fatalf("auto with a device: %v, %s", err, s.Backend())
	}
	s.Close()
}

// TestCacheKey: the compile cache key changes with every input it covers
// and not with config order.
func TestCacheKey(t *testing.T) {
	s := testSession(t)
	base := KernelSpec{
		Sources: []Source{{Name: "a.loom", Text: []byte("x")}, {Name: "b.loom", Text: []byte("y")}},
		Export:  "k",
		Config:  []ConfigValue{{"m", "1"}, {"n", "2"}},
	}
	k0 := s.keyOf(&base)
	variants := map[string]func(*KernelSpec){
		"source text":  func(k *KernelSpec) { k.Sources[1].Text = []byte("z") },
		"source name":  func(k *KernelSpec) { k.Sources[0].Name = "c.loom" },
		"source split": func(k *KernelSpec) { k.Sources[0].Text, k.Sources[1].Text = []byte("xy"), nil },
		"export":       func(k *KernelSpec) { k.Export = "k2" },
		"config value": func(k *KernelSpec) { k.Config[0].Value = "3" },
		"config key":   func(k *KernelSpec) { k.Config[0].Key = "o" },
		"config added": func(k *KernelSpec) { k.Config = append(k.Config, ConfigValue{"p", "1"}) },
	}
	for name, f := range variants {
		v := base
		v.Sources = append([]Source(nil), base.Sources...)
		v.Config = append([]ConfigValue(nil), base.Config...)
		f(&v)
		if s.keyOf(&v) == k0 {
			t.Errorf("%s: same cache key", name)
		}
	}
	swapped := base
	swapped.Config = []ConfigValue{base.Config[1], base.Config[0]}
	if s.keyOf(&swapped) != k0 {
		t.Errorf("config order changed the key")
	}
	other := newSession(namedCPU{newCPUBackend(Options{})}, "", Options{})
	if other.keyOf(&base) == k0 {
		t.Errorf("backend not in the key")
	}
}
