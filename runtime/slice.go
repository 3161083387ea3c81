package runtime

import (
	"fmt"
	"unsafe"
)

// Elem is the set of element types a typed slice may hold. F16 and BF16
// satisfy it through ~uint16.
type Elem interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Slice is a region viewed as elements of T. Generated Dispatch constructors
// take Slice[T] for buffers whose views all have one element type, so passing
// an f16 buffer where an f32 one belongs does not compile.
type Slice[T Elem] struct {
	r Region
}

func elemSize[T Elem]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// SliceOf views r as elements of T; r's length must be a multiple of the
// element size and its offset aligned to it.
func SliceOf[T Elem](r Region) (Slice[T], error) {
	if r.sess == 0 {
		return Slice[T]{}, fmt.Errorf("%w: typed view of the zero region", ErrArgument)
	}
	sz := elemSize[T]()
	if r.n%sz != 0 {
		return Slice[T]{}, fmt.Errorf("%w: %d-byte region is not a whole number of %d-byte %T elements", ErrArgument, r.n, sz, *new(T))
	}
	if r.off%sz != 0 {
		return Slice[T]{}, fmt.Errorf("%w: region offset %d is not aligned to %d-byte %T elements", ErrArgument, r.off, sz, *new(T))
	}
	return Slice[T]{r: r}, nil
}

// Region is the slice's underlying byte region.
func (s Slice[T]) Region() Region { return s.r }

// Len is the number of elements.
func (s Slice[T]) Len() int { return s.r.n / elemSize[T]() }

// Sub returns elements [i, i+n) as a slice over the same storage.
func (s Slice[T]) Sub(i, n int) (Slice[T], error) {
	sz := elemSize[T]()
	if i < 0 || n < 0 || i > s.Len() || n > s.Len()-i {
		return Slice[T]{}, fmt.Errorf("%w: elements [%d, +%d) of a %d-element slice", ErrBounds, i, n, s.Len())
	}
	r, err := s.r.Slice(i*sz, n*sz)
	return Slice[T]{r: r}, err
}

// Read binds the slice as read-only.
func (s Slice[T]) Read() Binding { return s.r.Read() }

// Write binds the slice as write-only.
func (s Slice[T]) Write() Binding { return s.r.Write() }

// ReadWrite binds the slice as read and written.
func (s Slice[T]) ReadWrite() Binding { return s.r.ReadWrite() }

// Bind binds the slice with access a.
func (s Slice[T]) Bind(a Access) Binding { return s.r.Bind(a) }

// Alloc allocates device storage for n elements of T.
func Alloc[T Elem](s *Session, n int) (Slice[T], error) {
	sz := elemSize[T]()
	if n < 0 || n > maxAlloc/sz {
		return Slice[T]{}, fmt.Errorf("%w: allocation of %d %T elements", ErrArgument, n, *new(T))
	}
	r, err := s.Allocate(n * sz)
	if err != nil {
		return Slice[T]{}, err
	}
	return Slice[T]{r: r}, nil
}

// Weights stores data as an immutable weight: no command may write it.
func Weights[T Elem](s *Session, data []T) (Slice[T], error) {
	r, err := s.Weight(bytesOf(data))
	if err != nil {
		return Slice[T]{}, err
	}
	return Slice[T]{r: r}, nil
}

// Upload copies data into dst, which must have exactly len(data) elements.
func Upload[T Elem](s *Session, dst Slice[T], data []T) error {
	if len(data) != dst.Len() {
		return fmt.Errorf("%w: upload of %d elements into a %d-element slice", ErrArgument, len(data), dst.Len())
	}
	return s.Upload(dst.r, bytesOf(data))
}

// ReadSlice copies src back to the host.
func ReadSlice[T Elem](s *Session, src Slice[T]) ([]T, error) {
	b, err := s.Read(src.r)
	if err != nil {
		return nil, err
	}
	return elemsOf[T](b), nil
}

// bytesOf reinterprets data as bytes in host (little-endian) order, which is
// the device order on every supported target.
func bytesOf[T Elem](data []T) []byte {
	if len(data) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*elemSize[T]())
}

// elemsOf copies b into a fresh, properly aligned []T.
func elemsOf[T Elem](b []byte) []T {
	out := make([]T, len(b)/elemSize[T]())
	copy(bytesOf(out), b)
	return out
}
