package hip

import (
	"errors"
	"fmt"
)

// Sentinel errors name the classes of failure a caller tests for with
// errors.Is. Driver errors (*Error) match the class of their code too.
var (
	// ErrNoLibrary: no GPU driver library could be loaded.
	ErrNoLibrary = errors.New("hip: no GPU driver library found")
	// ErrMissingSymbol: the library lacks a function this package needs.
	ErrMissingSymbol = errors.New("hip: driver library lacks a required function")
	// ErrOldDriver: the driver reports a version below the supported minimum.
	ErrOldDriver = errors.New("hip: GPU driver too old")
	// ErrNoDevice: the library loaded but no device is usable.
	ErrNoDevice = errors.New("hip: no GPU device")
	// ErrClosed: the handle (or its context) was closed.
	ErrClosed = errors.New("hip: use of closed handle")
	// ErrDeviceFault: a kernel faulted (illegal address, failed launch,
	// trap...); the context is unusable from then on and must be closed.
	ErrDeviceFault = errors.New("hip: device fault, context unusable")
	// ErrOutOfMemory: an allocation failed.
	ErrOutOfMemory = errors.New("hip: out of memory")
	// ErrInvalidValue: the driver rejected an argument (a launch with too
	// many threads per block, a zero-sized copy past an allocation...).
	ErrInvalidValue = errors.New("hip: invalid value")
	// ErrInvalidHandle: a handle was not valid for the call.
	ErrInvalidHandle = errors.New("hip: invalid handle")
	// ErrInvalidImage: a module image (PTX, code object) did not load.
	ErrInvalidImage = errors.New("hip: invalid module image")
	// ErrNotFound: a named symbol (kernel function) is not in a module.
	ErrNotFound = errors.New("hip: not found")
	// ErrLaunchOutOfResources: the launch needs more registers or shared
	// memory than a block can have.
	ErrLaunchOutOfResources = errors.New("hip: launch out of resources")
	// ErrNotReady: asynchronous work has not completed yet.
	ErrNotReady = errors.New("hip: not ready")
	// ErrNotSupported: the operation is not supported by this device/driver.
	ErrNotSupported = errors.New("hip: not supported")
	// ErrBadArguments: kernel arguments do not match the function's
	// parameters; checked before the driver sees them.
	ErrBadArguments = errors.New("hip: kernel arguments do not match the function")
)

// Error is a failed driver call: the vendor's name for the code
// (CUDA_ERROR_ILLEGAL_ADDRESS, hipErrorOutOfMemory) and the call that
// returned it. errors.Is matches it against the sentinel class of its code.
type Error struct {
	Vendor Vendor // which driver returned it
	Call   string // the C function, e.g. "cuLaunchKernel"
	Code   int32  // the raw CUresult / hipError_t
	Name   string // the vendor's name for Code
	class  error  // sentinel class, nil when none applies
	fault  bool   // the code poisons the context
}

// Error formats as "hip: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)".
func (e *Error) Error() string {
	return fmt.Sprintf("hip: %s: %s (%d)", e.Call, e.Name, e.Code)
}

// Is reports whether target is the sentinel class of e's code, or
// ErrDeviceFault for codes that poison the context.
func (e *Error) Is(target error) bool {
	if target == ErrDeviceFault {
		return e.fault
	}
	return e.class != nil && target == e.class
}

// JITError is a module that failed to load, with the driver's JIT error log
// (for PTX: ptxas's messages with line numbers).
type JITError struct {
	Err error  // the driver error, an *Error
	Log string // the JIT error log, possibly empty
}

// Error includes the log so a failing PTX explains itself when printed.
func (e *JITError) Error() string {
	if e.Log == "" {
		return e.Err.Error() + " (the driver wrote no JIT log)"
	}
	return e.Err.Error() + "\nJIT log:\n" + e.Log
}

// Unwrap returns the driver error.
func (e *JITError) Unwrap() error { return e.Err }
