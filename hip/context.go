package hip

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Context is a device's primary context. Every call through it locks the
// calling goroutine to its OS thread and makes the context current there,
// so any goroutine may use it at any time.
type Context struct {
	// closed, fault and setForStreams are what every launch reads: they
	// share one cache line with lib.
	closed atomic.Bool
	// setForStreams is set once the driver refused a stream-ordered call
	// made without the context current: from then on those calls make it
	// current first, like every other call. It starts set where the
	// vendor's streams do not carry their context.
	setForStreams atomic.Bool
	fault         atomic.Pointer[Error]
	lib           *Library
	dev           *Device
	h             uintptr
	setArgs       [1]uintptr // cuCtxSetCurrent's argument, written once
	// ccMajor is the device's compute capability major number (0 where
	// the driver could not say), read once for the launch paths.
	ccMajor int
}

// NewContext retains the primary context of device ordinal. Close releases
// it; the driver destroys the context when its last holder releases it, so
// a context poisoned by a fault is replaced by a fresh one on the next
// NewContext once every holder has closed.
func (l *Library) NewContext(ordinal int) (*Context, error) {
	if l.closed.Load() {
		return nil, fmt.Errorf("%w: library %s", ErrClosed, l.path)
	}
	d, err := l.Device(ordinal)
	if err != nil {
		return nil, err
	}
	var h uintptr
	if err := l.check(fnPrimaryCtxRetain, l.raw(fnPrimaryCtxRetain, uintptr(unsafe.Pointer(&h)), uintptr(d.handle))); err != nil {
		return nil, fmt.Errorf("hip: device %d: %w", ordinal, err)
	}
	c := &Context{lib: l, dev: d, h: h}
	if major, _, err := d.ComputeCapability(); err == nil {
		c.ccMajor = major
	}
	c.setArgs[0] = h
	c.setForStreams.Store(!l.spec.streamContext)
	return c, nil
}

// Device is the device the context belongs to.
func (c *Context) Device() *Device { return c.dev }

// Library is the driver the context came from.
func (c *Context) Library() *Library { return c.lib }

// Close releases the primary context. Handles made from it must be closed
// first; later calls through c return ErrClosed.
func (c *Context) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.lib.check(fnPrimaryCtxRelease, c.lib.raw(fnPrimaryCtxRelease, uintptr(c.dev.handle)))
}

// Err reports why the context is unusable (closed, or poisoned by a device
// fault), or nil.
func (c *Context) Err() error {
	if c.closed.Load() {
		return ErrClosed
	}
	if f := c.fault.Load(); f != nil {
		return fmt.Errorf("hip: context unusable after an earlier device fault: %w", f)
	}
	return nil
}

// do calls id with c current on the calling thread.
//
//go:uintptrescapes
func (c *Context) do(id fnID, args ...uintptr) error {
	if err := c.Err(); err != nil {
		return err
	}
	return c.release(id, args...)
}

// release is do without the fault check, for calls that free resources:
// they must still run on a poisoned context so it can be torn down.
//
//go:uintptrescapes
func (c *Context) release(id fnID, args ...uintptr) error {
	if c.closed.Load() {
		return ErrClosed
	}
	runtime.LockOSThread()
	r := c.lib.callArgs(fnCtxSetCurrent, c.setArgs[:])
	var r2 uintptr
	if r == 0 {
		r2, _, _ = purego.SyscallN(c.lib.fn[id], args...)
	}
	runtime.UnlockOSThread()
	if r != 0 {
		return c.fail(fnCtxSetCurrent, r)
	}
	return c.fail(id, int32(r2))
}

// fail converts a status into an error and remembers faults that poison
// the context.
func (c *Context) fail(id fnID, code int32) error {
	if code == 0 {
		return nil
	}
	e := c.lib.newError(id, code)
	if e.fault {
		c.fault.CompareAndSwap(nil, e)
	}
	return e
}

// Synchronize waits for all work in the context.
func (c *Context) Synchronize() error { return c.do(fnCtxSynchronize) }

// MemInfo reports free and total device memory in bytes.
func (c *Context) MemInfo() (free, total uint64, err error) {
	err = c.do(fnMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return free, total, err
}
