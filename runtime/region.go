package runtime

import (
	"fmt"

	"github.com/loomgen/loomgen/loom"
)

// Access is how a dispatch may use a buffer it binds: the same modes as
// the kernel bodies' inferred access (loom.Access), spelled as Loom does.
type Access = loom.Access

// Access modes.
const (
	AccessNone      = loom.AccessNone
	AccessRead      = loom.AccessRead
	AccessWrite     = loom.AccessWrite
	AccessReadWrite = loom.AccessReadWrite
)

// Region is a checked byte range of one allocation of one session. The zero
// Region belongs to no session and is rejected everywhere. Regions are small
// values: slicing makes a new one and never allocates.
type Region struct {
	sess  uint64 // owning session id; 0 for the zero Region
	alloc uint32 // allocation index within the session
	off   int    // byte offset from the allocation's start
	n     int    // byte length
}

// Len is the region's length in bytes.
func (r Region) Len() int { return r.n }

// Offset is the region's byte offset within its allocation.
func (r Region) Offset() int { return r.off }

// IsZero reports whether r is the zero Region (belongs to no session).
func (r Region) IsZero() bool { return r.sess == 0 }

// Slice returns the n bytes starting offset bytes into r. A zero-length slice
// at the very end is allowed; anything else outside r is ErrBounds.
func (r Region) Slice(offset, n int) (Region, error) {
	if r.sess == 0 {
		return Region{}, fmt.Errorf("%w: slice of the zero region", ErrArgument)
	}
	// Compare without computing offset+n, which could overflow.
	if offset < 0 || n < 0 || offset > r.n || n > r.n-offset {
		return Region{}, fmt.Errorf("%w: slice [%d, +%d) of a %d-byte region", ErrBounds, offset, n, r.n)
	}
	return Region{sess: r.sess, alloc: r.alloc, off: r.off + offset, n: n}, nil
}

// String describes the region for messages.
func (r Region) String() string {
	if r.sess == 0 {
		return "region(zero)"
	}
	return fmt.Sprintf("region(alloc %d, [%d, %d))", r.alloc, r.off, r.off+r.n)
}

// Read binds r as read-only.
func (r Region) Read() Binding { return Binding{Region: r, Access: AccessRead} }

// Write binds r as write-only.
func (r Region) Write() Binding { return Binding{Region: r, Access: AccessWrite} }

// ReadWrite binds r as read and written.
func (r Region) ReadWrite() Binding { return Binding{Region: r, Access: AccessReadWrite} }

// Bind binds r with access a.
func (r Region) Bind(a Access) Binding { return Binding{Region: r, Access: a} }

// Binding is a region together with how a command uses it. Generated Dispatch
// constructors make bindings from the access inferred from the kernel body;
// hand-built dispatches use Region.Read/Write/ReadWrite.
type Binding struct {
	Region Region
	Access Access
}
