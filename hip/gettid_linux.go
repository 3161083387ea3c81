package hip

import "syscall"

// gettid is the calling OS thread's id; the caller holds
// runtime.LockOSThread, so the id stays the goroutine's until it unlocks.
// syscall.Gettid is a raw system call: it does not enter the scheduler.
func gettid() uint32 { return uint32(syscall.Gettid()) }
