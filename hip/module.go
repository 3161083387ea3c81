package hip

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// jitLogBytes is the size of each JIT log buffer; ptxas messages for a
// failing module fit comfortably.
const jitLogBytes = 16 << 10

// Module is loaded device code.
type Module struct {
	ctx     *Context
	h       uintptr
	infoLog string
	closed  atomic.Bool
}

// LoadModule loads PTX text (NVIDIA) or a code object (AMD) and JIT
// compiles it for the context's device. A failure returns a *JITError that
// carries the driver's error log.
func (c *Context) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("%w: empty module image", ErrInvalidImage)
	}
	img := image
	if !bytes.HasSuffix(img, []byte{0}) {
		// PTX is read as a C string: terminate a copy.
		img = append(append(make([]byte, 0, len(image)+1), image...), 0)
	}
	errLog := make([]byte, jitLogBytes)
	infoLog := make([]byte, jitLogBytes)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferBytes, jitInfoLogBuffer, jitInfoLogBufferBytes}
	vals := []uintptr{
		uintptr(unsafe.Pointer(&errLog[0])), jitLogBytes,
		uintptr(unsafe.Pointer(&infoLog[0])), jitLogBytes,
	}
	var h uintptr
	err := c.do(fnModuleLoadDataEx, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	if err != nil {
		return nil, &JITError{Err: fmt.Errorf("hip: loading module: %w", err), Log: cLog(errLog)}
	}
	return &Module{ctx: c, h: h, infoLog: cLog(infoLog)}, nil
}

func cLog(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(bytes.TrimSpace(b))
}

// InfoLog is what the JIT reported while loading (often empty).
func (m *Module) InfoLog() string { return m.infoLog }

// Close unloads the module; its functions become invalid.
func (m *Module) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	if m.ctx.closed.Load() {
		return fmt.Errorf("hip: unloading module: %w (context closed first)", ErrClosed)
	}
	return m.ctx.release(fnModuleUnload, m.h)
}

// Function is a kernel entry point of a module.
type Function struct {
	mod    *Module
	h      uintptr
	name   string
	attrs  FuncAttributes
	params []int // parameter sizes, nil where the driver cannot say
}

// FuncAttributes are what the compiler decided for a kernel.
type FuncAttributes struct {
	MaxThreadsPerBlock int // launch limit given the kernel's resources
	NumRegs            int // registers per thread
	SharedSizeBytes    int // static shared memory per block
	LocalSizeBytes     int // local (spill/stack) memory per thread
	ConstSizeBytes     int
	PTXVersion         int // 10*major+minor of the PTX it came from
	BinaryVersion      int // 10*major+minor of the machine code
}

// Function looks up a kernel by name and reads its attributes.
func (m *Module) Function(name string) (*Function, error) {
	if m.closed.Load() {
		return nil, fmt.Errorf("hip: module: %w", ErrClosed)
	}
	cname := cString(name)
	var h uintptr
	if err := m.ctx.do(fnModuleGetFunction, uintptr(unsafe.Pointer(&h)), m.h, uintptr(unsafe.Pointer(&cname[0]))); err != nil {
		return nil, fmt.Errorf("hip: kernel %q: %w", name, err)
	}
	f := &Function{mod: m, h: h, name: name}
	for _, a := range []struct {
		dst  *int
		code int32
	}{
		{&f.attrs.MaxThreadsPerBlock, funcAttrMaxThreadsPerBlock},
		{&f.attrs.NumRegs, funcAttrNumRegs},
		{&f.attrs.SharedSizeBytes, funcAttrSharedSizeBytes},
		{&f.attrs.LocalSizeBytes, funcAttrLocalSizeBytes},
		{&f.attrs.ConstSizeBytes, funcAttrConstSizeBytes},
		{&f.attrs.PTXVersion, funcAttrPTXVersion},
		{&f.attrs.BinaryVersion, funcAttrBinaryVersion},
	} {
		var v int32
		if err := m.ctx.do(fnFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a.code), h); err != nil {
			return nil, fmt.Errorf("hip: kernel %q attributes: %w", name, err)
		}
		*a.dst = int(v)
	}
	f.params = m.ctx.paramSizes(h)
	return f, nil
}

// paramSizes asks the driver for a kernel's parameter sizes, stopping at the
// first index it rejects. nil means the driver cannot report them.
func (c *Context) paramSizes(h uintptr) []int {
	if c.lib.fn[fnFuncGetParamInfo] == 0 {
		return nil
	}
	sizes := []int{}
	for i := 0; i < 4096; i++ {
		var off, size uint64
		if err := c.do(fnFuncGetParamInfo, h, uintptr(i), uintptr(unsafe.Pointer(&off)), uintptr(unsafe.Pointer(&size))); err != nil {
			break
		}
		sizes = append(sizes, int(size))
	}
	if len(sizes) == 0 {
		// Indistinguishable from a driver that cannot answer: don't check.
		return nil
	}
	return sizes
}

// Name is the kernel's symbol name.
func (f *Function) Name() string { return f.name }

// Handle is the driver's handle (CUfunction, hipFunction_t), for code that
// calls the driver directly; it is valid until the module is closed.
func (f *Function) Handle() uintptr { return f.h }

// SetMaxDynamicSharedBytes lets launches of the kernel ask for up to n
// bytes of dynamic shared memory; CUDA requires it above 48 KiB
// (cuFuncSetAttribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
// A driver without the call (HIP on AMD, which needs no opt-in) is left
// as it is.
func (f *Function) SetMaxDynamicSharedBytes(n int) error {
	c := f.mod.ctx
	if c.lib.fn[fnFuncSetAttribute] == 0 {
		return nil
	}
	if err := c.do(fnFuncSetAttribute, f.h, uintptr(funcAttrMaxDynamicSharedSizeBytes), uintptr(n)); err != nil {
		return fmt.Errorf("hip: kernel %q: allowing %d bytes of dynamic shared memory: %w", f.name, n, err)
	}
	return nil
}

// Attributes are the kernel's compiled attributes.
func (f *Function) Attributes() FuncAttributes { return f.attrs }

// ParamSizes are the kernel's parameter sizes in bytes, or nil where the
// driver cannot report them (then Launch cannot check arguments).
func (f *Function) ParamSizes() []int { return f.params }
