package hip

// cframe is one C call for the hot paths: the function, up to eleven
// integer or pointer arguments (unused ones are ignored by the callee, as
// the C calling conventions allow), and the result. It lives on the
// caller's stack: the call does not keep it, and the runtime neither moves
// nor shrinks a goroutine's stack while it is in C, so a call allocates
// nothing and shares nothing (no lock between goroutines launching on one
// stream).
type cframe struct {
	fn uintptr
	a  [11]uintptr
	r  uintptr
}

// status calls the frame's function and returns its result as a driver
// status code.
func (f *cframe) status() int32 {
	f.call()
	return int32(f.r)
}
