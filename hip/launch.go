package hip

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// Dim3 is a grid (in blocks) or block (in threads) size. Every component
// must be at least 1: Launch, Pack and Graph.AddKernel refuse a zero one
// with ErrInvalidValue naming it, before any driver call (a zero is
// never widened to 1, so a grid of no blocks cannot run one). Dim1 is
// the one-dimensional size.
type Dim3 struct{ X, Y, Z uint32 }

// Dim1 is the size of x along X and 1 along Y and Z.
func Dim1(x uint32) Dim3 { return Dim3{x, 1, 1} }

// Dim3Of converts sizes held as ints (a launch config's); a size outside
// [1, 2^32) is an ErrInvalidValue naming what and the axis.
func Dim3Of(what string, v [3]int) (Dim3, error) {
	for i, n := range v {
		if n < 1 || n > math.MaxUint32 {
			return Dim3{}, fmt.Errorf("%w: %s %s is %d, want 1 to 2^32-1", ErrInvalidValue, what, axisNames[i], n)
		}
	}
	return Dim3{uint32(v[0]), uint32(v[1]), uint32(v[2])}, nil
}

var axisNames = [3]string{"X", "Y", "Z"}

// Count is X*Y*Z.
func (d Dim3) Count() uint64 { return uint64(d.X) * uint64(d.Y) * uint64(d.Z) }

// checkDims refuses a launch of f with a zero grid or block component.
// The comparisons are inline; the error is built out of line.
func checkDims(f *Function, grid, block Dim3) error {
	if grid.X == 0 || grid.Y == 0 || grid.Z == 0 || block.X == 0 || block.Y == 0 || block.Z == 0 {
		return zeroDim(f, grid, block)
	}
	return nil
}

//go:noinline
func zeroDim(f *Function, grid, block Dim3) error {
	what, d := "grid", grid
	if grid.X != 0 && grid.Y != 0 && grid.Z != 0 {
		what, d = "block", block
	}
	axis := "Z"
	switch {
	case d.X == 0:
		axis = "X"
	case d.Y == 0:
		axis = "Y"
	}
	return fmt.Errorf("%w: launching %s (grid %v, block %v): %s %s is 0 (every size must be at least 1)", ErrInvalidValue, f.name, grid, block, what, axis)
}

// Args is reusable storage for a kernel's parameters: the driver reads an
// array of pointers, one per parameter, each to the parameter's bytes. Both
// live here, allocated once, so launches allocate nothing. Setters record
// the first misuse (index or size) and the launch reports it as
// ErrBadArguments. An Args may be shared by launches on one goroutine at a
// time; the driver copies the values at launch, so it may be changed right
// after Launch or Graph.AddKernel returns.
type Args struct {
	words []uint64 // backing store, 8-byte aligned
	ptrs  []uintptr
	sizes []int
	offs  []int
	err   error
}

// NewArgs makes storage for parameters of the given byte sizes, in order
// (8 for a pointer or 64-bit value, 4 for a 32-bit one).
func NewArgs(sizes ...int) *Args {
	a := &Args{sizes: append([]int(nil), sizes...), offs: make([]int, len(sizes)), ptrs: make([]uintptr, len(sizes))}
	total := 0
	for i, n := range sizes {
		if n <= 0 && a.err == nil {
			a.err = fmt.Errorf("%w: parameter %d has size %d", ErrBadArguments, i, n)
		}
		a.offs[i] = total
		total += (max(n, 0) + 7) &^ 7
	}
	a.words = make([]uint64, max(total/8, 1))
	base := uintptr(unsafe.Pointer(&a.words[0]))
	for i := range sizes {
		a.ptrs[i] = base + uintptr(a.offs[i])
	}
	return a
}

// Len is the number of parameters.
func (a *Args) Len() int { return len(a.sizes) }

// Sizes are the parameter sizes.
func (a *Args) Sizes() []int { return a.sizes }

// Err is the first setter misuse, or nil.
func (a *Args) Err() error { return a.err }

func (a *Args) slot(i, n int) []byte {
	if i < 0 || i >= len(a.sizes) {
		if a.err == nil {
			a.err = fmt.Errorf("%w: parameter %d of %d set", ErrBadArguments, i, len(a.sizes))
		}
		return nil
	}
	if a.sizes[i] != n {
		if a.err == nil {
			a.err = fmt.Errorf("%w: parameter %d has size %d, set with a %d-byte value", ErrBadArguments, i, a.sizes[i], n)
		}
		return nil
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&a.words[0])), len(a.words)*8)
	return b[a.offs[i] : a.offs[i]+n]
}

// SetPtr sets parameter i, of size 8, to a device address.
func (a *Args) SetPtr(i int, p DevicePtr) { a.SetUint64(i, uint64(p)) }

// SetUint64 sets parameter i, of size 8.
func (a *Args) SetUint64(i int, v uint64) {
	if b := a.slot(i, 8); b != nil {
		binary.LittleEndian.PutUint64(b, v)
	}
}

// SetInt64 sets parameter i, of size 8.
func (a *Args) SetInt64(i int, v int64) { a.SetUint64(i, uint64(v)) }

// SetFloat64 sets parameter i, of size 8.
func (a *Args) SetFloat64(i int, v float64) { a.SetUint64(i, math.Float64bits(v)) }

// SetUint32 sets parameter i, of size 4.
func (a *Args) SetUint32(i int, v uint32) {
	if b := a.slot(i, 4); b != nil {
		binary.LittleEndian.PutUint32(b, v)
	}
}

// SetInt32 sets parameter i, of size 4.
func (a *Args) SetInt32(i int, v int32) { a.SetUint32(i, uint32(v)) }

// SetFloat32 sets parameter i, of size 4.
func (a *Args) SetFloat32(i int, v float32) { a.SetUint32(i, math.Float32bits(v)) }

// SetBytes sets parameter i from raw bytes of exactly its size (structs,
// packed scalars).
func (a *Args) SetBytes(i int, v []byte) {
	if b := a.slot(i, len(v)); b != nil {
		copy(b, v)
	}
}

// noParams is the parameter array of kernels without parameters: the same
// non-NULL empty array a C caller passes.
var noParams [1]uintptr

// kernelParams is the void** the driver reads.
func (a *Args) kernelParams() uintptr {
	if len(a.ptrs) == 0 {
		return uintptr(unsafe.Pointer(&noParams[0]))
	}
	return uintptr(unsafe.Pointer(&a.ptrs[0]))
}

// matches checks a against f's parameter layout where the driver reports it.
func (a *Args) matches(f *Function) error {
	if a.err != nil {
		return a.err
	}
	if f.params == nil {
		return nil
	}
	if len(f.params) != len(a.sizes) {
		return fmt.Errorf("%w: %s takes %d parameters, %d given", ErrBadArguments, f.name, len(f.params), len(a.sizes))
	}
	for i, n := range f.params {
		if a.sizes[i] != n {
			return fmt.Errorf("%w: %s parameter %d is %d bytes, %d given", ErrBadArguments, f.name, i, n, a.sizes[i])
		}
	}
	return nil
}

// Launch queues f on s over grid blocks of block threads, with shared bytes
// of dynamic shared memory. It allocates nothing on success.
func (s *Stream) Launch(f *Function, grid, block Dim3, shared uint32, a *Args) error {
	if err := s.checkLaunch(f, grid, block, a); err != nil {
		return err
	}
	fr := launchFrame(f, grid, block, shared, s, a.kernelParams())
	err := s.hot(fnLaunchKernel, &fr)
	runtime.KeepAlive(a)
	if err != nil {
		return launchError(f, &fr, err)
	}
	return nil
}

// checkLaunch checks a launch of f on s over grid blocks of block threads
// with the parameters a: the sizes, the stream and its context, and a
// against f's parameter layout.
func (s *Stream) checkLaunch(f *Function, grid, block Dim3, a *Args) error {
	if err := checkDims(f, grid, block); err != nil {
		return err
	}
	if err := s.usable(); err != nil {
		return err
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	return a.matches(f)
}

// launchFrame is the cuLaunchKernel call of f on s over grid blocks of
// block threads (checked by checkDims), with shared bytes of dynamic
// shared memory and the parameter array at params; hot sets its function.
func launchFrame(f *Function, grid, block Dim3, shared uint32, s *Stream, params uintptr) cframe {
	return cframe{a: [11]uintptr{f.h,
		uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z),
		uintptr(block.X), uintptr(block.Y), uintptr(block.Z),
		uintptr(shared), s.h, params, 0}}
}

// launchError is the failure of the launch of f in frame fr.
func launchError(f *Function, fr *cframe, err error) error {
	a := &fr.a
	grid, block := Dim3{uint32(a[1]), uint32(a[2]), uint32(a[3])}, Dim3{uint32(a[4]), uint32(a[5]), uint32(a[6])}
	return fmt.Errorf("hip: launching %s (grid %v, block %v): %w", f.name, grid, block, err)
}

// clone is a copy of a with storage of its own.
func (a *Args) clone() *Args {
	c := NewArgs(a.sizes...)
	copy(c.words, a.words)
	c.err = a.err
	return c
}

// PackedLaunch is one launch of a kernel on a stream whose grid, block,
// dynamic shared memory and parameter values were checked and packed once,
// by Stream.Pack: Launch hands the driver a ready call frame and parameter
// array. Nothing changes it after Pack, so any number of goroutines may
// launch it at once.
type PackedLaunch struct {
	// s and frame are all Launch reads: they come first, together, since
	// each launch runs microseconds of driver code that evicts them from
	// the nearer caches.
	s      *Stream
	frame  cframe // cuLaunchKernel and its eleven arguments
	params *Args  // Pack's own copy; frame.a[9] points into it
	f      *Function
}

// Pack checks a launch of f on s (the grid and block sizes; the
// parameters against f's layout, where the driver reports it) and packs it
// for repeated Launch calls. It copies a: changing a afterwards changes
// nothing.
func (s *Stream) Pack(f *Function, grid, block Dim3, shared uint32, a *Args) (*PackedLaunch, error) {
	if err := checkDims(f, grid, block); err != nil {
		return nil, err
	}
	if err := s.usable(); err != nil {
		return nil, err
	}
	if err := a.matches(f); err != nil {
		return nil, err
	}
	p := &PackedLaunch{s: s, params: a.clone(), f: f}
	p.frame = launchFrame(f, grid, block, shared, s, p.params.kernelParams())
	p.frame.fn = s.ctx.lib.fn[fnLaunchKernel]
	return p, nil
}

// Launch queues the packed launch on its stream, with the same checks of
// the stream and context as Stream.Launch. It allocates nothing on success.
func (p *PackedLaunch) Launch() error {
	s := p.s
	if c := s.ctx; s.closed.Load() || c.closed.Load() || c.fault.Load() != nil {
		return p.refused()
	}
	// The frame is only read by the call: every goroutine launching p
	// passes the same one, nothing is copied.
	err := s.hotFn(fnLaunchKernel, &p.frame)
	runtime.KeepAlive(p) // p.params holds what frame.a[9] points to
	if err != nil {
		return p.failed(err)
	}
	return nil
}

// refused is the error of a launch on a closed stream or an unusable
// context, out of line (the checks are inline in Launch).
//
//go:noinline
func (p *PackedLaunch) refused() error {
	if err := p.s.usable(); err != nil {
		return err
	}
	return p.s.ctx.Err()
}

// failed is the error of a launch the driver refused, out of line.
//
//go:noinline
func (p *PackedLaunch) failed(err error) error { return launchError(p.f, &p.frame, err) }

// launchConfig is CUlaunchConfig with room for one CUlaunchAttribute: the
// grid and block sizes, dynamic shared bytes, the stream, the attribute
// array and its length, then the attribute (id, padding, a 64-byte value).
type launchConfig struct {
	grid, block [3]uint32
	shared      uint32
	_           uint32
	stream      uintptr
	attrs       uintptr
	numAttrs    uint32
	_           uint32
	attrID      uint32
	_           uint32
	attrValue   [64]byte
}

// launchAttrProgrammaticStreamSerialization is
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
const launchAttrProgrammaticStreamSerialization = 6

// LaunchProgrammatic queues f on s as Launch does, but lets the driver
// schedule it while the kernel before it on s still runs: once every
// block of that kernel has run griddepcontrol.launch_dependents (or
// ended). It is correct only when f waits (griddepcontrol.wait) before it
// touches memory the work before it touches, as loom/ptx's sm_90 entries
// do (ptx.Kernel.WaitsForPredecessors). A driver or device without
// programmatic dependencies (Context.SupportsProgrammaticDependencies) is
// ErrNotSupported. It allocates nothing on success.
func (s *Stream) LaunchProgrammatic(f *Function, grid, block Dim3, shared uint32, a *Args) error {
	if err := s.checkLaunch(f, grid, block, a); err != nil {
		return err
	}
	if s.ctx.lib.fn[fnLaunchKernelEx] == 0 || !s.ctx.programmatic() {
		return fmt.Errorf("%w: programmatic launches need an NVIDIA driver with cuLaunchKernelEx and a device of compute capability 9.0 or newer", ErrNotSupported)
	}
	cfg := launchConfig{
		grid: [3]uint32{grid.X, grid.Y, grid.Z}, block: [3]uint32{block.X, block.Y, block.Z},
		shared: shared, stream: s.h, numAttrs: 1, attrID: launchAttrProgrammaticStreamSerialization,
	}
	cfg.attrValue[0] = 1 // programmaticStreamSerializationAllowed
	cfg.attrs = uintptr(unsafe.Pointer(&cfg.attrID))
	fr := cframe{a: [11]uintptr{uintptr(unsafe.Pointer(&cfg)), f.h, a.kernelParams(), 0}}
	err := s.hot(fnLaunchKernelEx, &fr)
	runtime.KeepAlive(&cfg)
	runtime.KeepAlive(a)
	if err != nil {
		return fmt.Errorf("hip: launching %s programmatically (grid %v, block %v): %w", f.name, grid, block, err)
	}
	return nil
}
