package hip

import (
	"unsafe"

	_ "github.com/ebitengine/purego" // provides the runtime's C-call support without cgo
)

// On amd64 the hot calls skip purego.SyscallN, which copies 32 arguments
// and 8 float registers into a pooled struct on every call and loads them
// all in its trampoline: callFrame's own trampoline (cframe_amd64.s)
// loads the eleven a launch needs. It enters C the same way purego does,
// through runtime.cgocall (the runtime keeps that name for such callers),
// so the goroutine is accounted as in a system call, runs on the thread's
// system stack, and is not preempted inside C. Measured on a 2-core EPYC:
// 33-40 ns per call against 90-115 ns through purego.SyscallN.
//
// cgocall returns what the C function left in AX, as an int32: the
// driver's status, so the trampoline stores nothing into the frame.

//go:linkname runtimeCgocall runtime.cgocall
//go:noescape
func runtimeCgocall(fn uintptr, arg unsafe.Pointer) int32

// callFrameABI0 is the address of the assembly trampoline, set in
// cframe_amd64.s.
var callFrameABI0 uintptr

// status calls f.fn(f.a[0], ..., f.a[10]) and returns its result as a
// driver status code (the low 32 bits of the C return value).
func (f *cframe) status() int32 {
	return runtimeCgocall(callFrameABI0, unsafe.Pointer(f))
}
