package hip

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Vendor names a GPU driver family.
type Vendor int

// The drivers this package binds.
const (
	CUDA Vendor = iota + 1 // NVIDIA driver API, libcuda.so.1
	HIP                    // AMD HIP, libamdhip64.so
)

// String returns "CUDA" or "HIP".
func (v Vendor) String() string {
	switch v {
	case CUDA:
		return "CUDA"
	case HIP:
		return "HIP"
	}
	return fmt.Sprintf("Vendor(%d)", int(v))
}

// Library is a loaded, initialised driver with its resolved entry points.
type Library struct {
	spec    *vendorSpec
	path    string
	handle  uintptr
	version int32
	fn      [numFns]uintptr
	sym     [numFns]string // the symbol each entry resolved to, for errors
	closed  atomic.Bool
}

// Open loads the first driver that works, CUDA before HIP. An explicit path
// in LOOM_CUDA_LIB or LOOM_HIP_LIB is used instead of the usual names for
// that vendor. When no driver loads, the error explains each attempt; the
// most telling class wins: ErrNoDevice (a driver is there but no GPU) over
// ErrOldDriver and ErrMissingSymbol over ErrNoLibrary.
func Open() (*Library, error) {
	var errs []error
	for _, s := range vendorSpecs {
		l, err := openSpec(s)
		if err == nil {
			return l, nil
		}
		errs = append(errs, err)
	}
	for _, class := range []error{ErrNoDevice, ErrOldDriver, ErrMissingSymbol} {
		for _, e := range errs {
			if errors.Is(e, class) {
				return nil, fmt.Errorf("%w (also tried: %v)", e, othersThan(errs, e))
			}
		}
	}
	return nil, fmt.Errorf("%w: %v; install the NVIDIA driver (libcuda.so.1) or ROCm (libamdhip64.so), or set LOOM_CUDA_LIB / LOOM_HIP_LIB to the library's path", ErrNoLibrary, errors.Join(errs...))
}

func othersThan(errs []error, skip error) error {
	var rest []error
	for _, e := range errs {
		if e != skip {
			rest = append(rest, e)
		}
	}
	return errors.Join(rest...)
}

// OpenVendor loads one vendor's driver: the path in its environment variable
// if set, else its usual library names.
func OpenVendor(v Vendor) (*Library, error) {
	s := specFor(v)
	if s == nil {
		return nil, fmt.Errorf("hip: unknown vendor %v", v)
	}
	return openSpec(s)
}

func openSpec(s *vendorSpec) (*Library, error) {
	if p := os.Getenv(s.envVar); p != "" {
		l, err := OpenPath(s.vendor, p)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", s.envVar, p, err)
		}
		return l, nil
	}
	var tried []string
	for _, name := range s.libraries {
		l, err := OpenPath(s.vendor, name)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrNoLibrary) {
			return nil, err // the library is there but unusable: say why
		}
		tried = append(tried, name)
	}
	return nil, fmt.Errorf("%w: %s: none of %s could be loaded", ErrNoLibrary, s.vendor, strings.Join(tried, ", "))
}

// OpenPath loads the driver library at path (a file path or a name the
// dynamic loader searches for) as vendor v, resolves its symbols, checks its
// version and initialises it. A library without devices yields ErrNoDevice.
func OpenPath(v Vendor, path string) (*Library, error) {
	s := specFor(v)
	if s == nil {
		return nil, fmt.Errorf("hip: unknown vendor %v", v)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoLibrary, path, err)
	}
	l := &Library{spec: s, path: path, handle: h}
	if err := l.resolve(); err != nil {
		return nil, err
	}
	if err := l.init(); err != nil {
		return nil, err
	}
	return l, nil
}

// resolve fills the function table. Every missing required entry is named
// in one error.
func (l *Library) resolve() error {
	var missing []string
	for id := fnID(0); id < numFns; id++ {
		for _, name := range l.spec.symbols[id] {
			if p, err := purego.Dlsym(l.handle, name); err == nil && p != 0 {
				l.fn[id], l.sym[id] = p, name
				break
			}
		}
		if l.fn[id] == 0 && !l.spec.optional[id] {
			missing = append(missing, strings.Join(l.spec.symbols[id], " or "))
		}
		if l.sym[id] == "" && len(l.spec.symbols[id]) > 0 {
			l.sym[id] = l.spec.symbols[id][0]
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s lacks %s; the driver is older than this package needs (%s): update it",
			ErrMissingSymbol, l.path, strings.Join(missing, ", "), l.spec.minDriverS)
	}
	return nil
}

func (l *Library) init() error {
	// Any start-up call may be the one that notices there is no device:
	// ROCm fails hipInit on some releases and hipDriverGetVersion or
	// hipGetDeviceCount on others. Each failure names the library.
	noDevice := func(err error) error {
		return fmt.Errorf("%w: %s loaded but found no %s device (%v); check that the GPU is visible to this process, or use the CPU backend", ErrNoDevice, l.path, l.spec.vendor, err)
	}
	if err := l.check(fnInit, l.raw(fnInit, 0)); err != nil {
		if errors.Is(err, ErrNoDevice) {
			return noDevice(err)
		}
		return fmt.Errorf("hip: initialising %s: %w", l.path, err)
	}
	var ver int32
	if err := l.check(fnDriverGetVersion, l.raw(fnDriverGetVersion, uintptr(unsafe.Pointer(&ver)))); err != nil {
		if errors.Is(err, ErrNoDevice) {
			return noDevice(err)
		}
		return fmt.Errorf("hip: %s: %w", l.path, err)
	}
	l.version = ver
	if ver < l.spec.minDriver {
		return fmt.Errorf("%w: %s reports version %d; need %s", ErrOldDriver, l.path, ver, l.spec.minDriverS)
	}
	n, err := l.DeviceCount()
	if err != nil {
		return fmt.Errorf("hip: %s: %w", l.path, err)
	}
	if n == 0 {
		return noDevice(errors.New("it reports 0 devices"))
	}
	return nil
}

// Vendor reports which driver this is.
func (l *Library) Vendor() Vendor { return l.spec.vendor }

// Path is the library path or name that was loaded.
func (l *Library) Path() string { return l.path }

// DriverVersion is the driver's version number (CUDA: 1000*major+10*minor).
func (l *Library) DriverVersion() int { return int(l.version) }

// Close marks the library unusable for new contexts. The shared object stays
// mapped: GPU drivers start threads and register handlers that make
// unloading them unsafe, and contexts already open keep working until closed.
func (l *Library) Close() error {
	l.closed.Store(true)
	return nil
}

// DeviceCount is the number of devices the driver exposes.
func (l *Library) DeviceCount() (int, error) {
	var n int32
	if err := l.check(fnDeviceGetCount, l.raw(fnDeviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		if errors.Is(err, ErrNoDevice) {
			return 0, nil
		}
		return 0, err
	}
	return int(n), nil
}

// Device describes one GPU.
type Device struct {
	lib     *Library
	ordinal int
	handle  int32
}

// Device returns the device with the given ordinal.
func (l *Library) Device(ordinal int) (*Device, error) {
	n, err := l.DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("%w: device %d requested, %d present", ErrNoDevice, ordinal, n)
	}
	var h int32
	if err := l.check(fnDeviceGet, l.raw(fnDeviceGet, uintptr(unsafe.Pointer(&h)), uintptr(ordinal))); err != nil {
		return nil, err
	}
	return &Device{lib: l, ordinal: ordinal, handle: h}, nil
}

// Ordinal is the device's index.
func (d *Device) Ordinal() int { return d.ordinal }

// Name is the marketing name, e.g. "NVIDIA H200".
func (d *Device) Name() (string, error) {
	buf := make([]byte, 256)
	r := d.lib.raw(fnDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(d.handle))
	if err := d.lib.check(fnDeviceGetName, r); err != nil {
		return "", err
	}
	return goString(uintptr(unsafe.Pointer(&buf[0]))), nil
}

// TotalMemory is the device memory in bytes.
func (d *Device) TotalMemory() (uint64, error) {
	var n uint64
	r := d.lib.raw(fnDeviceTotalMem, uintptr(unsafe.Pointer(&n)), uintptr(d.handle))
	return n, d.lib.check(fnDeviceTotalMem, r)
}

func (d *Device) attr(code int32) (int, error) {
	var v int32
	r := d.lib.raw(fnDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(code), uintptr(d.handle))
	return int(v), d.lib.check(fnDeviceGetAttribute, r)
}

// ComputeCapability is the major and minor architecture version (9, 0 for
// an H100/H200; on AMD the gfx major and minor).
func (d *Device) ComputeCapability() (major, minor int, err error) {
	if major, err = d.attr(d.lib.spec.attrs.ccMajor); err != nil {
		return 0, 0, err
	}
	minor, err = d.attr(d.lib.spec.attrs.ccMinor)
	return major, minor, err
}

// Arch names the instruction set a module must target: "sm_90" on NVIDIA,
// the gfx target (e.g. "gfx942") on AMD.
func (d *Device) Arch() (string, error) {
	major, minor, err := d.ComputeCapability()
	if err != nil {
		return "", err
	}
	return d.lib.spec.arch(d, major, minor), nil
}

// Limits are the launch limits of a device.
type Limits struct {
	MaxThreadsPerBlock int
	SharedPerBlock     int // bytes of shared memory per block without opt-in
	// SharedPerBlockOptin is the most shared memory (static and dynamic)
	// a block may have once its kernel opts in
	// (Function.SetMaxDynamicSharedBytes).
	SharedPerBlockOptin int
	Multiprocessors     int
	WarpSize            int
}

// Limits reads the device's launch limits.
func (d *Device) Limits() (Limits, error) {
	a := d.lib.spec.attrs
	var lim Limits
	var err error
	for _, f := range []struct {
		dst  *int
		code int32
	}{
		{&lim.MaxThreadsPerBlock, a.maxThreadsPerBlock},
		{&lim.SharedPerBlock, a.sharedPerBlock},
		{&lim.SharedPerBlockOptin, a.sharedPerBlockOptin},
		{&lim.Multiprocessors, a.multiprocessors},
		{&lim.WarpSize, a.warpSize},
	} {
		if *f.dst, err = d.attr(f.code); err != nil {
			return Limits{}, err
		}
	}
	return lim, nil
}
