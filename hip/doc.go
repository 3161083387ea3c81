// Package hip binds the GPU driver at run time, without cgo, through
// github.com/ebitengine/purego: one HIP-shaped API over the NVIDIA driver API
// (libcuda.so.1) and AMD HIP (libamdhip64.so).
//
// Open finds a library (LOOM_CUDA_LIB / LOOM_HIP_LIB name explicit paths),
// resolves every symbol the package uses into one table, initialises the
// driver and reports, as distinct errors, a missing library (ErrNoLibrary), a
// missing symbol (ErrMissingSymbol), a driver too old (ErrOldDriver) or a
// library with no device behind it (ErrNoDevice).
//
//	lib, err := hip.Open()
//	ctx, err := lib.NewContext(0)
//	defer ctx.Close()
//	mod, err := ctx.LoadModule(ptx) // a *JITError carries the driver's log
//	fn, err := mod.Function("saxpy")
//	s, err := ctx.NewStream()
//	args := hip.NewArgs(8, 8, 4, 4)
//	args.SetPtr(0, x.Ptr()); ...
//	err = s.Launch(fn, hip.Dim1(blocks), hip.Dim1(256), 0, args)
//
// Threads: the driver keeps the current context per OS thread and Go moves
// goroutines between threads, so every call that needs a context locks the
// calling goroutine to its thread and makes the context current for the
// duration of the call; any goroutine may use any handle. Stream-ordered
// calls (launches, graph launches, async copies and fills, event records,
// stream waits) are the exception on CUDA: the driver takes the context from
// the stream, so they make no extra call and lock no thread, which is what
// keeps a launch from Go as cheap as one from C. Should a driver refuse one
// for want of a current context, the call is retried with the context made
// current and the Context makes it current for every later call as well.
//
// Hot paths (Stream.Launch, PackedLaunch.Launch, GraphExec.Launch) pass
// their arguments through a call frame on the caller's stack and
// parameter storage preallocated in Args, so they allocate nothing. A
// launch repeated with the same values is cheapest packed once
// (Stream.Pack): its Launch checks the stream and context and calls the
// driver with the ready frame.
//
// Every handle has Close; finalizers release nothing. After a fault that
// poisons the context (an illegal address, a failed launch; see
// ErrDeviceFault) every later call on that Context returns the fault.
package hip
