package hip

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// DevicePtr is a device address (CUdeviceptr / hipDeviceptr_t).
type DevicePtr uint64

// Add offsets p by n bytes.
func (p DevicePtr) Add(n int) DevicePtr { return p + DevicePtr(n) }

// DeviceMemory is one device allocation.
type DeviceMemory struct {
	ctx    *Context
	ptr    DevicePtr
	size   int
	closed atomic.Bool
}

// Alloc allocates n bytes of device memory (n > 0).
func (c *Context) Alloc(n int) (*DeviceMemory, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: allocation of %d bytes", ErrInvalidValue, n)
	}
	var p DevicePtr
	if err := c.do(fnMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n)); err != nil {
		return nil, fmt.Errorf("hip: allocating %d bytes: %w", n, err)
	}
	return &DeviceMemory{ctx: c, ptr: p, size: n}, nil
}

// Ptr is the allocation's device address.
func (m *DeviceMemory) Ptr() DevicePtr { return m.ptr }

// Len is the allocation's size in bytes.
func (m *DeviceMemory) Len() int { return m.size }

// Close frees the allocation.
func (m *DeviceMemory) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	if m.ctx.closed.Load() {
		return fmt.Errorf("hip: freeing device memory: %w (context closed first)", ErrClosed)
	}
	// Free even after a fault: the driver accepts frees on a poisoned
	// context, and returning the fault here would only hide it twice.
	return m.ctx.release(fnMemFree, uintptr(m.ptr))
}

// HostMemory is page-locked host memory: fast, truly asynchronous copies.
type HostMemory struct {
	ctx    *Context
	ptr    uintptr
	size   int
	closed atomic.Bool
}

// AllocHost allocates n bytes of page-locked host memory (n > 0).
func (c *Context) AllocHost(n int) (*HostMemory, error) {
	if n <= 0 {
		return nil, fmt.Errorf("%w: host allocation of %d bytes", ErrInvalidValue, n)
	}
	var p uintptr
	if err := c.do(fnMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n), 0); err != nil {
		return nil, fmt.Errorf("hip: allocating %d pinned host bytes: %w", n, err)
	}
	return &HostMemory{ctx: c, ptr: p, size: n}, nil
}

// Bytes views the memory; the view is invalid after Close.
func (h *HostMemory) Bytes() []byte {
	if h.closed.Load() {
		return nil
	}
	return cBytes(h.ptr, h.size)
}

// Len is the size in bytes.
func (h *HostMemory) Len() int { return h.size }

// Close frees the memory.
func (h *HostMemory) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	if h.ctx.closed.Load() {
		return fmt.Errorf("hip: freeing host memory: %w (context closed first)", ErrClosed)
	}
	return h.ctx.release(fnMemFreeHost, h.ptr)
}

// CopyHtoD copies src to device address dst and waits until the bytes are
// on the device. The driver's synchronous copy from pageable memory returns
// once src is staged, before the DMA lands, and it is ordered only against
// the legacy default stream — not against the non-blocking streams this
// package creates — so the context is synchronized before returning.
func (c *Context) CopyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	if err := c.do(fnMemcpyHtoD, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src))); err != nil {
		return err
	}
	return c.do(fnCtxSynchronize)
}

// CopyDtoH copies len(dst) bytes from device address src and waits for it.
func (c *Context) CopyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.do(fnMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
}

// DevicePtr is the address at which the device reaches this memory: with
// unified addressing, the host address itself.
func (h *HostMemory) DevicePtr() DevicePtr { return DevicePtr(h.ptr) }
