package hip

// cframe is one C call for the hot paths: the function and up to eleven
// integer or pointer arguments (unused ones are ignored by the callee, as
// the C calling conventions allow). A call only reads it and hands the
// callee's status back as its result, so a frame may live on the caller's
// stack (the runtime neither moves nor shrinks a goroutine's stack while it
// is in C) or be packed once and shared by any number of goroutines calling
// at once (PackedLaunch): a call allocates nothing, copies nothing and
// writes nothing another caller reads.
type cframe struct {
	fn uintptr
	a  [11]uintptr
}
