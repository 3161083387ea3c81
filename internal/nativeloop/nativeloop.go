// Package nativeloop loads the C side of the benchmarks that compare
// loomgen's launch paths with C loops of driver calls in one process:
// hip/testdata/native_loop.c built as a shared library, named by the
// LOOM_NATIVE_LOOP environment variable (hip/testdata/benchcmp.sh and
// internal/bench/device.sh build it with nvcc). Both sides then run on one
// thread, context, stream and driver instance, alternating.
package nativeloop

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNotSet is Open's error when LOOM_NATIVE_LOOP is empty.
var ErrNotSet = errors.New("LOOM_NATIVE_LOOP is not set: build hip/testdata/native_loop.c as a shared library (see hip/testdata/benchcmp.sh)")

// Lib is the loaded library: the addresses of its loops.
type Lib struct {
	launch, submit, graph, nop, nopLoop uintptr
}

// Open loads the library LOOM_NATIVE_LOOP names.
func Open() (*Lib, error) {
	so := os.Getenv("LOOM_NATIVE_LOOP")
	if so == "" {
		return nil, ErrNotSet
	}
	h, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("nativeloop: %w", err)
	}
	l := &Lib{}
	for _, s := range []struct {
		name string
		p    *uintptr
	}{
		{"native_launch_loop", &l.launch}, {"native_launch_submit", &l.submit}, {"native_graph_loop", &l.graph},
		{"native_nop", &l.nop}, {"native_nop_loop", &l.nopLoop},
	} {
		if *s.p, err = purego.Dlsym(h, s.name); err != nil {
			return nil, fmt.Errorf("nativeloop: %s: %w", so, err)
		}
	}
	return l, nil
}

// status is a failing driver status of a loop as an error.
func status(loop string, r uintptr) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("native %s loop: CUDA error %d", loop, int32(r))
}

// Launch makes n launches of the parameterless kernel fn (one block of 32
// threads) on stream from C, then waits for the stream.
func (l *Lib) Launch(fn, stream uintptr, n int) error {
	r, _, _ := purego.SyscallN(l.launch, fn, stream, uintptr(n))
	return status("launch", r)
}

// Submit makes the same n launches without waiting for the stream and
// returns the nanoseconds C timed from before the first call until the last
// returned: the host's cost, without the call into C or the GPU's drain.
func (l *Lib) Submit(fn, stream uintptr, n int) (float64, error) {
	ns := new(int64)
	r, _, _ := purego.SyscallN(l.submit, fn, stream, uintptr(n), uintptr(unsafe.Pointer(ns)))
	return float64(*ns), status("launch", r)
}

// Graph replays the executable graph exec n times on stream from C, then
// waits for the stream.
func (l *Lib) Graph(exec, stream uintptr, n int) error {
	r, _, _ := purego.SyscallN(l.graph, exec, stream, uintptr(n))
	return status("graph", r)
}

// Nop is the address of an empty C function; NopLoop calls it n times from
// C, through a pointer C cannot see through.
func (l *Lib) Nop() uintptr { return l.nop }

// NopLoop calls Nop n times from C.
func (l *Lib) NopLoop(n int) { purego.SyscallN(l.nopLoop, uintptr(n)) }
