package runtime

import (
	"errors"
	"fmt"
	"os"
	gort "runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/loomgen/loomgen/hip"
	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/loom/interp"
)

// maxAlloc bounds one allocation so size arithmetic never overflows an int.
const maxAlloc = 1 << 46

// Options configure Open.
type Options struct {
	// Backend is "auto" (default when empty), "cpu", "cuda" or "hip". The
	// LOOM_BACKEND environment variable overrides it.
	Backend string
	// Device is the GPU ordinal for GPU backends.
	Device int
	// Workers bounds the goroutines the CPU backend uses, both for the
	// workgroups of one dispatch and for independent graph nodes; 0 means
	// GOMAXPROCS.
	Workers int
	// Sanitize runs every kernel in the CPU executor's checked mode
	// (interp.Sanitize): races in workgroup memory and, with GlobalRaces,
	// between workgroups are reported as errors carrying an
	// *interp.RunError with its Event. Only the cpu backend has it: "auto"
	// then means cpu, and cuda or hip are refused. A sanitizer report
	// stops its dispatch but, unlike other kernel failures, leaves the
	// session usable, so what the kernel wrote until then can be read.
	Sanitize interp.Sanitize
}

// Session owns a model's storage, compiled kernels and recorded graphs on one
// backend.
//
// A Session is safe for concurrent use by several goroutines: every method
// takes one lock for its whole duration, so calls from different goroutines
// run one at a time, each seeing the effects of the calls that took the lock
// before it. Ordering between goroutines is the order in which they take the
// lock; a caller who needs "this Replay before that Read" must order the two
// calls itself. Region, Slice, Kernel and Binding are plain values, free to
// share.
type Session struct {
	// The fields a direct Run reads come first, next to each other: a
	// launch runs microseconds of driver code that evicts them from the
	// nearer caches, so each further cache line they spread over costs a
	// miss per launch.
	id      uint64
	mu      sync.Mutex
	closed  bool
	failure error // set by the first device failure; the session is unusable after
	be      backend
	kernels []*compiledKernel
	allocs  []*allocation

	reason string
	opts   Options
	cache  map[cacheKey]int32
	graphs map[string]*recording

	staging []byte // ReadMany's combined readback buffer, reused across calls
	// run and runNodes are Run's scratch, reused across calls: a direct
	// command is issued before Run returns and nothing keeps it after.
	run      preparer
	runNodes []graphNode
}

// allocation is one backend allocation.
type allocation struct {
	mem    devMem
	size   int
	shared bool
	weight bool
}

var sessionIDs atomic.Uint64

// Open starts a session on the backend Options.Backend (or LOOM_BACKEND)
// names. With "auto" it tries each GPU backend and falls back to the CPU,
// recording in BackendReason why the GPU was not used.
func Open(opts Options) (*Session, error) {
	want := strings.ToLower(strings.TrimSpace(opts.Backend))
	if env := strings.ToLower(strings.TrimSpace(os.Getenv("LOOM_BACKEND"))); env != "" {
		want = env
	}
	if want == "" {
		want = "auto"
	}
	if opts.Workers <= 0 {
		opts.Workers = gort.GOMAXPROCS(0)
	}
	if opts.Sanitize.Races || opts.Sanitize.GlobalRaces {
		switch want {
		case "auto":
			return newSession(newCPUBackend(opts), "auto: the sanitizer runs on the cpu backend only", opts), nil
		case "cpu":
		default:
			return nil, fmt.Errorf("%w: %s: the sanitizer runs on the cpu backend only", ErrBackend, want)
		}
	}
	be, reason, err := openBackend(want, opts)
	if err != nil {
		return nil, err
	}
	return newSession(be, reason, opts), nil
}

func newSession(be backend, reason string, opts Options) *Session {
	return &Session{
		id:     sessionIDs.Add(1),
		be:     be,
		reason: reason,
		opts:   opts,
		cache:  make(map[cacheKey]int32),
		graphs: make(map[string]*recording),
	}
}

func openBackend(want string, opts Options) (backend, string, error) {
	switch want {
	case "cpu":
		return newCPUBackend(opts), "requested cpu", nil
	case "cuda", "hip":
		var errs []error
		for _, c := range gpuBackends {
			if c.Kind != want {
				continue
			}
			be, err := c.Open(opts)
			if err == nil {
				return be, "requested " + want, nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return nil, "", fmt.Errorf("%w: %s: no %s backend in this build", ErrBackend, want, want)
		}
		return nil, "", fmt.Errorf("%w: %s: %w", ErrBackend, want, errors.Join(errs...))
	case "auto":
		var why []string
		for _, c := range gpuBackends {
			be, err := c.Open(opts)
			if err == nil {
				return be, "auto: " + c.Kind + " device available", nil
			}
			why = append(why, c.Kind+": "+err.Error())
		}
		if len(why) == 0 {
			why = append(why, "no GPU backend in this build")
		}
		return newCPUBackend(opts), "auto: GPU not used (" + strings.Join(why, "; ") + "); using cpu", nil
	}
	return nil, "", fmt.Errorf("%w: unknown backend %q (want auto, cpu, cuda or hip)", ErrBackend, want)
}

// Backend names the backend that runs this session's work: "cpu", "cuda" or
// "hip".
func (s *Session) Backend() string { return s.be.name() }

// BackendReason says why this backend was chosen, including why a GPU was
// not used under "auto".
func (s *Session) BackendReason() string { return s.reason }

// Target is the compilation target of this session's backend.
func (s *Session) Target() loom.Target { return s.be.target() }

// Close releases every allocation, kernel and graph. Later calls fail with
// ErrClosed. Closing twice is a no-op.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, g := range s.graphs {
		if g.dev != nil {
			errs = append(errs, s.be.freeGraph(g.dev))
		}
	}
	for _, a := range s.allocs {
		if a != nil && a.mem != nil {
			errs = append(errs, s.be.free(a.mem))
		}
	}
	for _, k := range s.kernels {
		if k != nil && k.dev != nil {
			errs = append(errs, s.be.freeKernel(k.dev))
		}
	}
	errs = append(errs, s.be.close())
	s.graphs, s.allocs, s.kernels, s.cache, s.staging = nil, nil, nil, nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("loomrt: close: %w", err)
	}
	return nil
}

// usable reports why the session refuses work; the caller holds s.mu.
func (s *Session) usable() error {
	if s.closed {
		return ErrClosed
	}
	if s.failure != nil {
		return fmt.Errorf("%w: %w", ErrUnusable, s.failure)
	}
	return nil
}

// fail marks the session unusable after a backend error during what; the
// caller holds s.mu. The returned error wraps ErrDevice and the cause. A
// refusal hip makes before calling the driver (refusedBeforeDriver)
// leaves the session usable: nothing reached the device. It wraps
// ErrArgument and the cause instead.
func (s *Session) fail(what string, err error) error {
	if refusedBeforeDriver(err) {
		return fmt.Errorf("%w: %s: %w", ErrArgument, what, err)
	}
	e := fmt.Errorf("%w: %s: %w", ErrDevice, what, err)
	if s.sanitizerReport(err) {
		return e // the checked mode stopped the kernel; memory is intact
	}
	if s.failure == nil {
		s.failure = e
	}
	return e
}

// region resolves r to its allocation, checking ownership and bounds; the
// caller holds s.mu and says which use failed.
func (s *Session) region(r Region) (*allocation, error) {
	if r.sess == 0 {
		return nil, fmt.Errorf("%w: zero region", ErrArgument)
	}
	if r.sess != s.id {
		return nil, fmt.Errorf("%w: %v belongs to session %d, not %d", ErrForeign, r, r.sess, s.id)
	}
	if int(r.alloc) >= len(s.allocs) || s.allocs[r.alloc] == nil {
		return nil, fmt.Errorf("%w: %v was freed", ErrArgument, r)
	}
	a := s.allocs[r.alloc]
	if r.off < 0 || r.n < 0 || r.off > a.size || r.n > a.size-r.off {
		return nil, fmt.Errorf("%w: %v outside its %d-byte allocation", ErrBounds, r, a.size)
	}
	return a, nil
}

func (s *Session) allocate(n int, shared, weight bool, data []byte) (Region, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return Region{}, err
	}
	if n < 0 || n > maxAlloc {
		return Region{}, fmt.Errorf("%w: allocation of %d bytes", ErrArgument, n)
	}
	if len(s.allocs) >= 1<<32-1 {
		return Region{}, fmt.Errorf("%w: too many allocations", ErrArgument)
	}
	m, err := s.be.alloc(n, shared)
	if err != nil {
		return Region{}, s.fail(fmt.Sprintf("allocate %d bytes", n), err)
	}
	if weight && n > 0 {
		if err := s.be.upload(m, 0, data); err != nil {
			return Region{}, s.fail(fmt.Sprintf("upload %d-byte weight", n), err)
		}
	}
	s.allocs = append(s.allocs, &allocation{mem: m, size: n, shared: shared, weight: weight})
	return Region{sess: s.id, alloc: uint32(len(s.allocs) - 1), n: n}, nil
}

// Allocate returns n zeroed bytes of device memory.
func (s *Session) Allocate(n int) (Region, error) { return s.allocate(n, false, false, nil) }

// AllocateShared returns n zeroed bytes of host-visible memory; reading it
// back copies directly, without staging.
func (s *Session) AllocateShared(n int) (Region, error) { return s.allocate(n, true, false, nil) }

// Weight stores a copy of data as an immutable region: Record and Run reject
// any dispatch that binds it for writing and any fill of it, and Upload
// refuses to overwrite it.
func (s *Session) Weight(data []byte) (Region, error) {
	return s.allocate(len(data), false, true, data)
}

// Upload copies data into dst; len(data) must equal dst.Len(). It is ordered
// after all work submitted before it, so it never races a replay in flight
// (binding mistake 16 is settled by this ordering, not by a check).
func (s *Session) Upload(dst Region, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	a, err := s.region(dst)
	if err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if a.weight {
		return fmt.Errorf("%w: upload into weight %v", ErrWeightWrite, dst)
	}
	if len(data) != dst.n {
		return fmt.Errorf("%w: upload of %d bytes into a %d-byte region", ErrArgument, len(data), dst.n)
	}
	if len(data) == 0 {
		return nil
	}
	if err := s.be.upload(a.mem, dst.off, data); err != nil {
		return s.fail("upload", err)
	}
	return nil
}

// Synchronize waits for all submitted work.
func (s *Session) Synchronize() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	if err := s.be.synchronize(); err != nil {
		return s.fail("synchronize", err)
	}
	return nil
}

// ReserveReadback grows the staging buffer ReadMany uses to at least n
// bytes, so a later ReadMany of up to n bytes allocates no staging.
func (s *Session) ReserveReadback(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return err
	}
	if n < 0 || n > maxAlloc {
		return fmt.Errorf("%w: readback reservation of %d bytes", ErrArgument, n)
	}
	if cap(s.staging) < n {
		s.staging = make([]byte, n)
	}
	return nil
}

// Read waits for submitted work and copies src to a new host slice.
func (s *Session) Read(src Region) ([]byte, error) {
	out, err := s.ReadMany([]Region{src})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ReadMany waits once for submitted work and copies every region back. When
// every region is host-visible it copies directly; otherwise it queues the
// download of every region into one staging buffer (kept and reused across
// calls), waits once, and hands out copies, which are the caller's to keep.
func (s *Session) ReadMany(srcs []Region) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(); err != nil {
		return nil, err
	}
	allocs := make([]*allocation, len(srcs))
	total, allShared := 0, true
	for i, r := range srcs {
		a, err := s.region(r)
		if err != nil {
			return nil, fmt.Errorf("read #%d: %w", i, err)
		}
		allocs[i] = a
		total += r.n
		if _, ok := s.be.hostBytes(a.mem); !ok {
			allShared = false
		}
	}
	// One result block, split per region, keeps allocations to one.
	block := make([]byte, total)
	out := make([][]byte, len(srcs))
	pos := 0
	for i, r := range srcs {
		out[i] = block[pos : pos+r.n : pos+r.n]
		pos += r.n
	}
	if allShared {
		if err := s.be.synchronize(); err != nil {
			return nil, s.fail("synchronize before readback", err)
		}
		for i, r := range srcs {
			hb, _ := s.be.hostBytes(allocs[i].mem)
			copy(out[i], hb[r.off:r.off+r.n])
		}
		return out, nil
	}
	if cap(s.staging) < total {
		s.staging = make([]byte, total)
	}
	st := s.staging[:total]
	pos = 0
	for i, r := range srcs {
		if r.n > 0 {
			if err := s.be.download(st[pos:pos+r.n], allocs[i].mem, r.off); err != nil {
				return nil, s.fail(fmt.Sprintf("readback of %v", r), err)
			}
		}
		pos += r.n
	}
	// Downloads are ordered after all submitted work; one wait covers
	// both.
	if err := s.be.synchronize(); err != nil {
		return nil, s.fail("readback: synchronize", err)
	}
	copy(block, st)
	return out, nil
}

// sanitizerReport reports whether err is a report of the checked mode
// (Options.Sanitize): a race or an out-of-bounds access with its event.
func (s *Session) sanitizerReport(err error) bool {
	if !s.opts.Sanitize.Races && !s.opts.Sanitize.GlobalRaces {
		return false
	}
	var re *interp.RunError
	return errors.As(err, &re) && re.Event != nil
}

// refusedBeforeDriver reports whether err is hip refusing a call on its
// own checks — a zero grid or block size (ErrInvalidValue), arguments
// that do not match the function (ErrBadArguments) — with no driver call
// in its chain (no *hip.Error): the device and the context are untouched.
func refusedBeforeDriver(err error) bool {
	var de *hip.Error
	if errors.As(err, &de) {
		return false
	}
	return errors.Is(err, hip.ErrInvalidValue) || errors.Is(err, hip.ErrBadArguments)
}
