package hip

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// raw calls the driver entry point id and returns its first result (the
// status code for nearly every call). uintptrescapes keeps the objects behind
// pointer arguments alive and in place for the call; it makes &local
// arguments escape, so hot paths use callArgs with preallocated storage
// instead.
//
//go:uintptrescapes
func (l *Library) raw(id fnID, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(l.fn[id], args...)
	return r
}

// callArgs calls id with a caller-owned argument slice: purego's variadic
// parameter then reuses that storage instead of allocating a new array.
func (l *Library) callArgs(id fnID, args []uintptr) int32 {
	r, _, _ := purego.SyscallN(l.fn[id], args...)
	return int32(r)
}

// check turns a status code returned by id into nil or an *Error.
func (l *Library) check(id fnID, r uintptr) error {
	code := int32(r)
	if code == 0 {
		return nil
	}
	return l.newError(id, code)
}

func (l *Library) newError(id fnID, code int32) *Error {
	return &Error{
		Vendor: l.spec.vendor,
		Call:   l.sym[id],
		Code:   code,
		Name:   l.errorName(code),
		class:  l.spec.classes[code],
		fault:  l.spec.faults[code],
	}
}

// errorName asks the driver first (it knows codes newer than this package),
// then the built-in names.
func (l *Library) errorName(code int32) string {
	if l.fn[fnGetErrorName] != 0 {
		if n, ok := l.spec.errorName(l, code); ok && n != "" {
			return n
		}
	}
	if n, ok := l.spec.names[code]; ok {
		return n
	}
	return fmt.Sprintf("%s error %d", l.spec.vendor, code)
}

// goString copies a NUL-terminated C string.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(ptr, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(ptr), n))
}

// cBytes views n bytes of C memory at p.
func cBytes(p uintptr, n int) []byte {
	if p == 0 || n == 0 {
		return nil
	}
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	return unsafe.Slice((*byte)(ptr), n)
}

// cString returns a NUL-terminated copy of s; keep the slice alive across
// the call that reads it.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
