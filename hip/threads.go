package hip

import "sync/atomic"

// Why a table of threads: the driver keeps the current context per OS
// thread, and Go moves goroutines between threads, so each call must make
// sure its context is current on the thread it runs on. Setting it on every
// call costs a second driver call per launch, which is most of what separates
// a launch from native speed. Instead, while the goroutine is locked to its
// thread, the call reads the thread's id (gettid, a raw system call with no
// scheduler involvement) and looks up which context this package last made
// current there; only a different or unknown one costs a cuCtxSetCurrent.
//
// The record can be stale: a thread may die and its id be reused, or code
// outside the package may change the thread's current context. The driver
// then fails the call with an invalid- or destroyed-context error, on which
// the call forgets the record, sets the context and retries once; a call that
// failed that way did nothing. Contexts are recorded by a per-Context serial
// number, never by driver handle, so a context closed and retained again (the
// driver hands back the same primary-context handle) is set afresh.
//
// What the retry cannot catch is foreign code making another valid context
// current on a thread this package has used (CUDA then runs context-bound
// calls such as allocations in that context), or, on HIP, a dead thread's id
// reused by a thread whose default device is another: a program that switches
// contexts behind the package's back must do so on threads it does not share
// with it (runtime.LockOSThread for the foreign work keeps it off them).

// threadSlots is the table size, a power of two: Go programs run a few
// threads per core, and thread ids are handed out consecutively, so ids
// rarely collide below it. A collision only costs redundant cuCtxSetCurrent
// calls, since each slot holds the id of the thread it describes.
const threadSlots = 1024

// threadContexts maps OS thread ids to the serial number of the context this
// package last made current on that thread. Each slot packs tid<<32 | serial
// in one word, so a slot is read and written atomically as a pair; zero is
// empty (no thread has id 0 and serials start at 1).
type threadContexts struct {
	slots [threadSlots]atomic.Uint64
}

func threadKey(tid, serial uint32) uint64 { return uint64(tid)<<32 | uint64(serial) }

func (t *threadContexts) slot(tid uint32) *atomic.Uint64 {
	return &t.slots[tid&(threadSlots-1)]
}

// current reports whether serial is recorded as current on thread tid. An
// unknown thread (tid 0, where the id cannot be read) is never current.
func (t *threadContexts) current(tid, serial uint32) bool {
	return tid != 0 && t.slot(tid).Load() == threadKey(tid, serial)
}

// record notes that serial was made current on thread tid, evicting whatever
// thread shared the slot.
func (t *threadContexts) record(tid, serial uint32) {
	if tid != 0 {
		t.slot(tid).Store(threadKey(tid, serial))
	}
}

// forget drops thread tid's record, leaving a colliding thread's alone.
func (t *threadContexts) forget(tid uint32) {
	s := t.slot(tid)
	if v := s.Load(); v != 0 && uint32(v>>32) == tid {
		s.CompareAndSwap(v, 0)
	}
}

// contextSerials numbers Contexts for the thread table.
var contextSerials atomic.Uint32

func nextContextSerial() uint32 {
	for {
		if n := contextSerials.Add(1); n != 0 {
			return n
		}
	}
}
