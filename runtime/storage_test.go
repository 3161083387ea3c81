package runtime

import (
	"errors"
	"os"
	"testing"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
)

// storageSessions are a CPU session and, where a GPU and its driver are
// present, a CUDA one.
func storageSessions(t *testing.T) []*Session {
	t.Helper()
	cpu, err := Open(Options{Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cpu.Close() })
	out := []*Session{cpu}
	gpu, err := Open(Options{Backend: "cuda"})
	switch {
	case errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) || errors.Is(err, ErrBackend):
		t.Logf("no GPU session: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		t.Cleanup(func() { gpu.Close() })
		out = append(out, gpu)
	}
	return out
}

// TestDynamicWorkgroupStorageBackends runs wide_storage of
// loom/testdata/dynamic_storage.loom with 200,000 bytes of dynamic
// workgroup storage (past CUDA's default 48 KiB, so the backend must opt
// the kernel in), directly and through a recorded graph, and compares with
// a Go reference; a dispatch asking for more than the backend gives is
// refused before launch.
func TestDynamicWorkgroupStorageBackends(t *testing.T) {
	const path = "../loom/testdata/dynamic_storage.loom"
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const words = 50000
	want := make([]int32, 256)
	for tid := range want {
		for w := tid; w < words; w += 256 {
			want[tid] += int32(3*(words-1-w) + 1)
		}
	}
	for _, s := range storageSessions(t) {
		t.Run(s.Backend(), func(t *testing.T) {
			ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "dynamic_storage.loom", Text: text}}, Export: "wide_storage"}})
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.KernelInfo(ks[0])
			if err != nil {
				t.Fatal(err)
			}
			if !info.DynamicWorkgroupStorage || info.MaxWorkgroupStorage < 4*words {
				t.Fatalf("kernel info: dynamic storage %v, at most %d bytes; want at least %d", info.DynamicWorkgroupStorage, info.MaxWorkgroupStorage, 4*words)
			}
			t.Logf("%s: at most %d bytes of dynamic workgroup storage", s.Backend(), info.MaxWorkgroupStorage)
			storage, err := s.LaunchStorage(ks[0], []loom.Const{{Type: &loom.Type{Kind: loom.TypeIndex, Name: "index"}, Int: words}})
			if err != nil || storage != 4*words {
				t.Fatalf("LaunchStorage = %d, %v; want %d", storage, err, 4*words)
			}
			out := must(Alloc[int32](s, 256))
			d := newDispatch(t, s, ks[0], []Arg{Index(words)}, Index(words), Buffer(out.Region().Write()))
			if d.WorkgroupStorage() != 4*words {
				t.Fatalf("dynamic workgroup storage %d, want %d from the launch config", d.WorkgroupStorage(), 4*words)
			}
			if err := s.Run([]Command{d}); err != nil {
				t.Fatal(err)
			}
			check := func(how string) {
				got := must(ReadSlice(s, out))
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s: out[%d] = %d, want %d", how, i, got[i], want[i])
					}
				}
			}
			check("direct")
			if err := s.Record("wide", []Command{Fill{Region: out.Region(), Value: 0}, d}); err != nil {
				t.Fatal(err)
			}
			if err := s.Replay("wide"); err != nil {
				t.Fatal(err)
			}
			check("graph")

			bigWords := info.MaxWorkgroupStorage/4 + 1
			if _, err := s.NewDispatch(ks[0], []Arg{Index(bigWords)}, []Arg{Index(bigWords), Buffer(out.Region().Write())}); !errors.Is(err, ErrArgument) {
				t.Errorf("%d bytes past the backend's limit: %v", 4*bigWords, err)
			}
		})
	}
}
