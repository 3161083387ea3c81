package interp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
)

// Error classes; every error returned by Compile or Run matches exactly one
// of them with errors.Is.
var (
	// ErrUnsupported: the kernel uses an op, type or construct the CPU
	// executor does not implement (reported by Compile).
	ErrUnsupported = errors.New("interp: unsupported")
	// ErrInvalid: the kernel is malformed in a way the parser accepted
	// (unknown value, wrong operand count, missing config value).
	ErrInvalid = errors.New("interp: invalid kernel")
	// ErrNotFound: no kernel with the requested export name.
	ErrNotFound = errors.New("interp: kernel not found")
	// ErrArgs: the arguments or launch geometry given to Run do not fit the
	// kernel's launch signature.
	ErrArgs = errors.New("interp: bad arguments")
	// ErrOutOfBounds: a memory access outside its view or bound buffer.
	ErrOutOfBounds = errors.New("interp: out of bounds")
	// ErrMisaligned: an atomic access at an address that is not a multiple
	// of its size.
	ErrMisaligned = errors.New("interp: misaligned atomic")
	// ErrOverflow: an index or offset value outside the target's carrier.
	ErrOverflow = errors.New("interp: overflow")
	// ErrDivideByZero: integer division or remainder by zero.
	ErrDivideByZero = errors.New("interp: division by zero")
	// ErrShift: a shift count not smaller than the operand width.
	ErrShift = errors.New("interp: shift count out of range")
	// ErrDivergentBarrier: a barrier or workgroup collective reached by only
	// part of the workgroup.
	ErrDivergentBarrier = errors.New("interp: divergent barrier")
	// ErrAssert: a kernel.assert failed.
	ErrAssert = errors.New("interp: assertion failed")
	// ErrRace (sanitize.go): a data race found in the checked mode.
	// ErrInternal: a bug in the executor, recovered from a panic.
	ErrInternal = errors.New("interp: internal error")
)

// RunError describes a failure during Run: the kernel, the op and its
// position, and the coordinates of the first failing work-item.
type RunError struct {
	Kernel    string   // export name
	Pos       loom.Pos // position of the failing op
	Op        string   // op name
	Workgroup [3]int
	Workitem  [3]int
	HasItem   bool   // Workitem is meaningful (false for workgroup-wide failures)
	Msg       string // what went wrong, with the offending values
	Class     error  // one of the Err* sentinels
	// Event is the structured sanitizer report of a race (ErrRace) or of
	// a load, store or atomic outside its bounds (ErrOutOfBounds); nil for
	// every other failure.
	Event *Event
}

// Error formats kernel, position, op, message and coordinates on one line.
func (e *RunError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s: %s: %s: %s (workgroup (%d,%d,%d)", e.Kernel, e.Pos, e.Op, e.Msg,
		e.Workgroup[0], e.Workgroup[1], e.Workgroup[2])
	if e.HasItem {
		fmt.Fprintf(&b, ", workitem (%d,%d,%d)", e.Workitem[0], e.Workitem[1], e.Workitem[2])
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the error class.
func (e *RunError) Unwrap() error { return e.Class }

// compileErr builds a Compile error: position, message, class.
func compileErr(pos loom.Pos, class error, format string, args ...any) error {
	return fmt.Errorf("%s: %s: %w", pos, fmt.Sprintf(format, args...), class)
}

// trap is a run-time failure raised by an instruction before the frame adds
// kernel and coordinates; lane < 0 means the failure is not tied to a lane.
type trap struct {
	op    *loom.Op
	lane  int
	class error
	msg   string
	// event, for sanitizer reports; priorGroup (a linear workgroup index,
	// -1 for this one) and priorLane locate a race's earlier access.
	event                 *Event
	priorGroup, priorLane int
}

func (t *trap) Error() string { return t.msg }

func newTrap(op *loom.Op, lane int, class error, format string, args ...any) *trap {
	return &trap{op: op, lane: lane, class: class, msg: fmt.Sprintf(format, args...)}
}
