package interp

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// maxRank bounds view rank so views are plain values without allocation.
const maxRank = 6

// view is a buffer or a typed view over one: the root bytes, the byte
// offset of element zero, the byte limit accesses may not pass, and a
// row-major shape with element strides. A buffer has rank 0.
type view struct {
	mem     []byte
	base    int64
	lim     int64
	root    int32 // launch parameter index; rootWorkgroup or rootPrivate for scratch
	rank    int32
	dims    [maxRank]int64
	strides [maxRank]int64
	// gstride is nonzero only for workgroup memory in a batched frame
	// (batchwg.go): the K groups' blocks lie gstride bytes apart in mem,
	// and base, lim and the shape describe each group's own block, so
	// every check stays per group; lane l's bytes are l/grp blocks on.
	gstride int64
}

const (
	rootWorkgroup = -1
	rootPrivate   = -2
)

// setDense gives v a dense row-major layout for dims.
func (v *view) setDense(dims []int64) {
	v.rank = int32(len(dims))
	st := int64(1)
	for k := len(dims) - 1; k >= 0; k-- {
		v.dims[k] = dims[k]
		v.strides[k] = st
		st *= dims[k]
	}
}

// offsetOf checks ix against the view and the bound region and returns the
// byte offset of the element; axis is the failing axis, or -1 when the
// element lies outside the bound bytes.
func (v *view) offsetOf(ix []int64, size int) (off int64, axis int, ok bool) {
	off = v.base
	for k, i := range ix {
		if i < 0 || i >= v.dims[k] {
			return 0, k, false
		}
		off += i * v.strides[k] * int64(size)
	}
	if off < 0 || off+int64(size) > v.lim {
		return off, -1, false
	}
	return off, 0, true
}

// fits reports whether every element of the view lies inside the bound
// bytes, so per-access checks may stop at the view's own extents.
func (v *view) fits(size int) bool {
	lo, hi := v.base, v.base
	for k := int32(0); k < v.rank; k++ {
		if v.dims[k] <= 0 {
			return true // empty: nothing to access
		}
		span := (v.dims[k] - 1) * v.strides[k] * int64(size)
		if span < 0 {
			lo += span
		} else {
			hi += span
		}
	}
	return lo >= 0 && hi+int64(size) <= v.lim
}

func (fr *frame) rootName(v *view) string {
	switch v.root {
	case rootWorkgroup:
		return "workgroup scratch"
	case rootPrivate:
		return "private scratch"
	}
	if int(v.root) < len(fr.k.kernel.Launch) && v.root >= 0 {
		return "%" + fr.k.kernel.Launch[v.root].Name
	}
	return "buffer"
}

// boundsMsg describes a failed access for an error message.
func (fr *frame) boundsMsg(v *view, ix []int64, axis int, off int64, size int) string {
	var b strings.Builder
	b.WriteString("index [")
	for k, i := range ix {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	b.WriteString("]")
	if axis >= 0 {
		fmt.Fprintf(&b, " out of bounds: axis %d has size %d", axis, v.dims[axis])
	} else {
		fmt.Fprintf(&b, " addresses bytes [%d, %d) of %s, outside its %d bound bytes", off, off+int64(size), fr.rootName(v), v.lim)
	}
	return b.String()
}

// stripes serialize atomics per address across workers; every atomic on the
// same bytes takes the same stripe, so read-modify-write is exact.
var stripes [1024]struct {
	sync.Mutex
	_ [56]byte
}

func stripeFor(mem []byte, off int64) *sync.Mutex {
	a := uintptr(unsafe.Pointer(unsafe.SliceData(mem))) + uintptr(off)
	return &stripes[(a>>3)%uintptr(len(stripes))].Mutex
}
