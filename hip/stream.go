package hip

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Stream is an in-order queue of device work. Any number of goroutines may
// queue work on one stream at once; it runs in the order the calls reach
// the driver.
type Stream struct {
	ctx    *Context
	h      uintptr
	closed atomic.Bool
}

// NewStream creates a stream that does not synchronise with the legacy
// default stream.
func (c *Context) NewStream() (*Stream, error) {
	var h uintptr
	const nonBlocking = 1 // CU_STREAM_NON_BLOCKING == hipStreamNonBlocking
	if err := c.do(fnStreamCreate, uintptr(unsafe.Pointer(&h)), nonBlocking); err != nil {
		return nil, err
	}
	return &Stream{ctx: c, h: h}, nil
}

// Context is the stream's context.
func (s *Stream) Context() *Context { return s.ctx }

// OpenStream loads vendor v's driver (OpenVendor), makes a context on
// device ordinal and a stream in it: the whole setup of a program that
// drives one GPU. Errors wrapping ErrNoLibrary or ErrNoDevice mean there
// is no such GPU. When done, close the stream, then its Context.
func OpenStream(v Vendor, ordinal int) (*Stream, error) {
	lib, err := OpenVendor(v)
	if err != nil {
		return nil, err
	}
	ctx, err := lib.NewContext(ordinal)
	if err != nil {
		return nil, err
	}
	s, err := ctx.NewStream()
	if err != nil {
		ctx.Close()
		return nil, err
	}
	return s, nil
}

// Handle is the driver's handle (CUstream, hipStream_t), for code that
// calls the driver directly; it is valid until Close.
func (s *Stream) Handle() uintptr { return s.h }

// Close destroys the stream; queued work still completes.
func (s *Stream) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.ctx.closed.Load() {
		return fmt.Errorf("hip: destroying stream: %w (context closed first)", ErrClosed)
	}
	return s.ctx.release(fnStreamDestroy, s.h)
}

func (s *Stream) usable() error {
	if s.closed.Load() {
		return fmt.Errorf("hip: stream: %w", ErrClosed)
	}
	return nil
}

// Synchronize waits for the stream's work; a kernel fault surfaces here.
func (s *Stream) Synchronize() error {
	if err := s.usable(); err != nil {
		return err
	}
	return s.call(fnStreamSynchronize, s.h)
}

// Done reports whether all queued work has completed.
func (s *Stream) Done() (bool, error) {
	if err := s.usable(); err != nil {
		return false, err
	}
	err := s.call(fnStreamQuery, s.h)
	if err == nil {
		return true, nil
	}
	if e, ok := err.(*Error); ok && e.class == ErrNotReady {
		return false, nil
	}
	return false, err
}

// hot runs the call id with the arguments in f, a frame on the caller's
// stack (the call does not keep it): no allocation, no lock, unless it
// fails.
func (s *Stream) hot(id fnID, f *cframe) error {
	f.fn = s.ctx.lib.fn[id]
	return s.hotFn(id, f)
}

// hotFn is hot of a frame whose function is already set (a PackedLaunch's).
// Only the common case, a call that needs no current context and succeeds,
// is inline here: the code a launch runs between two driver calls is kept
// small, since the driver evicts it from the nearer caches every time.
func (s *Stream) hotFn(id fnID, f *cframe) error {
	if s.ctx.setForStreams.Load() {
		return s.hotCurrent(id, f)
	}
	if r := f.status(); r != 0 {
		return s.hotRefused(id, f, r)
	}
	return nil
}

// hotRefused handles status r of a call made without the context current:
// where the driver says it wanted the context, the call is made again with
// it current, and if that works, stream calls stop skipping it.
//
//go:noinline
func (s *Stream) hotRefused(id fnID, f *cframe, r int32) error {
	c := s.ctx
	if !c.lib.spec.wantsContext[r] {
		return c.fail(id, r)
	}
	if err := s.hotCurrent(id, f); err != nil {
		return err
	}
	c.setForStreams.Store(true)
	return nil
}

// hotCurrent is hot with the context made current on the calling thread.
func (s *Stream) hotCurrent(id fnID, f *cframe) error {
	c := s.ctx
	runtime.LockOSThread()
	r := c.lib.callArgs(fnCtxSetCurrent, c.setArgs[:])
	var r2 int32
	if r == 0 {
		r2 = f.status()
	}
	runtime.UnlockOSThread()
	if r != 0 {
		return c.fail(fnCtxSetCurrent, r)
	}
	if r2 != 0 {
		return c.fail(id, r2)
	}
	return nil
}

// call runs a stream-ordered call whose arguments include s. Where the
// driver takes the context from the stream (CUDA), it skips locking the
// thread and making the context current, which cost a Go program more than
// the call itself; a refusal that says the context was wanted retries the
// careful way, as hot does.
//
//go:uintptrescapes
func (s *Stream) call(id fnID, args ...uintptr) error {
	c := s.ctx
	if err := c.Err(); err != nil {
		return err
	}
	if !c.setForStreams.Load() {
		r, _, _ := purego.SyscallN(c.lib.fn[id], args...)
		if r == 0 {
			return nil
		}
		if !c.lib.spec.wantsContext[int32(r)] {
			return c.fail(id, int32(r))
		}
		if err := c.release(id, args...); err != nil {
			return err
		}
		c.setForStreams.Store(true)
		return nil
	}
	return c.release(id, args...)
}

// CopyHtoD queues a copy of src to dst. src must stay reachable and
// unchanged until the stream has passed the copy; with pageable Go memory
// the driver stages it before returning, with HostMemory it is truly async.
func (s *Stream) CopyHtoD(dst DevicePtr, src []byte) error {
	if err := s.usable(); err != nil || len(src) == 0 {
		return err
	}
	return s.call(fnMemcpyHtoDAsync, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)), s.h)
}

// CopyDtoH queues a copy of len(dst) bytes from src into dst; dst is valid
// after the stream synchronises.
func (s *Stream) CopyDtoH(dst []byte, src DevicePtr) error {
	if err := s.usable(); err != nil || len(dst) == 0 {
		return err
	}
	return s.call(fnMemcpyDtoHAsync, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)), s.h)
}

// CopyDtoD queues a device-to-device copy of n bytes.
func (s *Stream) CopyDtoD(dst, src DevicePtr, n int) error {
	if err := s.usable(); err != nil || n == 0 {
		return err
	}
	return s.call(fnMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), s.h)
}

// MemsetD8 queues setting n bytes at dst to v.
func (s *Stream) MemsetD8(dst DevicePtr, v byte, n int) error {
	if err := s.usable(); err != nil || n == 0 {
		return err
	}
	return s.call(fnMemsetD8Async, uintptr(dst), uintptr(v), uintptr(n), s.h)
}

// MemsetD32 queues setting count 32-bit words at dst (4-byte aligned) to v.
func (s *Stream) MemsetD32(dst DevicePtr, v uint32, count int) error {
	if err := s.usable(); err != nil || count == 0 {
		return err
	}
	return s.call(fnMemsetD32Async, uintptr(dst), uintptr(v), uintptr(count), s.h)
}

// Event marks a point in a stream; two events time the work between them.
type Event struct {
	ctx    *Context
	h      uintptr
	closed atomic.Bool
}

// NewEvent creates an event that records timestamps.
func (c *Context) NewEvent() (*Event, error) {
	var h uintptr
	if err := c.do(fnEventCreate, uintptr(unsafe.Pointer(&h)), 0); err != nil {
		return nil, err
	}
	return &Event{ctx: c, h: h}, nil
}

// Close destroys the event.
func (e *Event) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	if e.ctx.closed.Load() {
		return fmt.Errorf("hip: destroying event: %w (context closed first)", ErrClosed)
	}
	return e.ctx.release(fnEventDestroy, e.h)
}

// Record queues the event on s.
func (e *Event) Record(s *Stream) error {
	if e.closed.Load() || s.closed.Load() {
		return fmt.Errorf("hip: event record: %w", ErrClosed)
	}
	return s.call(fnEventRecord, e.h, s.h)
}

// Synchronize waits until the event has been reached.
func (e *Event) Synchronize() error {
	if e.closed.Load() {
		return fmt.Errorf("hip: event: %w", ErrClosed)
	}
	return e.ctx.do(fnEventSynchronize, e.h)
}

// Elapsed is the device time between two completed events (resolution
// about half a microsecond).
func Elapsed(start, end *Event) (time.Duration, error) {
	if start.closed.Load() || end.closed.Load() {
		return 0, fmt.Errorf("hip: elapsed time: %w", ErrClosed)
	}
	var ms float32
	if err := start.ctx.do(fnEventElapsedTime, uintptr(unsafe.Pointer(&ms)), start.h, end.h); err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * float64(time.Millisecond)), nil
}
