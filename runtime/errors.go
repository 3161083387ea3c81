package runtime

import "errors"

// Sentinel errors. Every error the session returns wraps one of them (or a
// loom/interp error class) so callers can branch with errors.Is.
var (
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("loomrt: session closed")
	// ErrForeign: a region or kernel belongs to another session.
	ErrForeign = errors.New("loomrt: handle from another session")
	// ErrArgument: a dispatch argument, size or option is invalid.
	ErrArgument = errors.New("loomrt: invalid argument")
	// ErrBounds: a region slice or view falls outside its region.
	ErrBounds = errors.New("loomrt: out of bounds")
	// ErrWeightWrite: a dispatch, fill or upload would write an immutable weight.
	ErrWeightWrite = errors.New("loomrt: write to immutable weight")
	// ErrStaleBinding: the compiled kernel's fingerprint differs from the one
	// the bindings were generated for.
	ErrStaleBinding = errors.New("loomrt: stale generated binding")
	// ErrUnusable: an earlier device failure made the session refuse work.
	ErrUnusable = errors.New("loomrt: session unusable after device failure")
	// ErrNotRecorded: no recording under that key.
	ErrNotRecorded = errors.New("loomrt: graph not recorded")
	// ErrDuplicateKey: a recording under that key already exists.
	ErrDuplicateKey = errors.New("loomrt: duplicate graph key")
	// ErrEmptyGraph: a recording with no commands.
	ErrEmptyGraph = errors.New("loomrt: empty graph")
	// ErrCompile: a kernel source failed to parse, analyse or compile.
	ErrCompile = errors.New("loomrt: compile failed")
	// ErrBackend: the requested backend is unknown or could not start.
	ErrBackend = errors.New("loomrt: backend unavailable")
	// ErrDevice: the backend failed while running work; it is always
	// accompanied by ErrUnusable for later calls.
	ErrDevice = errors.New("loomrt: device failure")
	// ErrNotImplemented: a feature this build does not provide.
	ErrNotImplemented = errors.New("loomrt: not implemented")
	// ErrAliasing: a dispatch binds a buffer the kernel puts under
	// buffer.assume.noalias so that it overlaps another binding of the
	// same dispatch, one of the two written: the kernel's promise (on
	// which the PTX backend relies) would not hold.
	ErrAliasing = errors.New("loomrt: noalias buffer overlaps another binding")
)
