package runtime

import (
	"errors"
	"fmt"
	"os"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/internal/sidebyside"
)

// emptyKernel is a kernel without parameters that does nothing: a launch of
// it costs only the launch.
var emptyKernel = []byte(`kernel.def export("empty") @empty() {
  %one = index.constant 1 : index
  %wg = index.constant 32 : index
  kernel.launch.config workgroups(%one, %one, %one) workgroup_size(%wg, %one, %one) : index
} launch() {
  kernel.return
}
`)

// BenchmarkSessionVersusNative compares direct dispatch through the session
// (Run of one command: checks, argument packing, the launch) with a native C
// loop of cuLaunchKernel over the same compiled kernel on the same stream,
// in one process, alternating chunks of b.N launches (41 each, order swapped
// every round); it reports per-launch medians and the median ratio. It needs
// a CUDA device and LOOM_NATIVE_LOOP, hip/testdata/native_loop.c built as a
// shared library (hip/testdata/benchcmp.sh builds it).
func BenchmarkSessionVersusNative(b *testing.B) {
	so := os.Getenv("LOOM_NATIVE_LOOP")
	if so == "" {
		b.Skip("LOOM_NATIVE_LOOP is not set")
	}
	s, err := Open(Options{Backend: "cuda"})
	if errors.Is(err, hip.ErrNoLibrary) || errors.Is(err, hip.ErrNoDevice) {
		b.Skipf("no GPU: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ks, err := s.Compile([]KernelSpec{{Sources: []Source{{Name: "empty.loom", Text: emptyKernel}}, Export: "empty"}})
	if err != nil {
		b.Fatal(err)
	}
	ck, err := s.kernel(ks[0])
	if err != nil {
		b.Fatal(err)
	}
	be := s.be.(*gpuBackend)
	fn, stream := ck.dev.(*gpuKernel).fn.Handle(), be.stream.Handle()
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		b.Fatal(err)
	}
	loop, err := purego.Dlsym(h, "native_launch_loop")
	if err != nil {
		b.Fatal(err)
	}
	cmd := []Command{Dispatch{Kernel: ks[0], Workgroups: [3]int{1, 1, 1}, WorkgroupSize: [3]int{32, 1, 1}}}
	// The native loop runs with the context current on its thread, as in
	// a C program: lock the thread and let a context call make it current.
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := be.ctx.Synchronize(); err != nil {
		b.Fatal(err)
	}
	n := b.N
	native := func() error {
		if r, _, _ := purego.SyscallN(loop, fn, stream, uintptr(n)); r != 0 {
			return fmt.Errorf("native loop: CUDA error %d", r)
		}
		return nil
	}
	ours := func() error {
		for range n {
			if err := s.Run(cmd); err != nil {
				return err
			}
		}
		return s.Synchronize()
	}
	timed := func(f func() error) func() (float64, error) {
		return func() (float64, error) {
			start := time.Now()
			err := f()
			return float64(time.Since(start).Nanoseconds()) / float64(n), err
		}
	}
	if err := errors.Join(ours(), native()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	r, err := sidebyside.Run(41, timed(native), timed(ours))
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	r.Report(b, "ns/launch", "native", "session")
}
