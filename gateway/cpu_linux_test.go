package gateway

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPUTime = 3

// threadCPU is the CPU time of the calling thread (the benchmarks lock
// their goroutine to it), exact to the nanosecond the kernel accounts: on
// a loaded machine, unlike the wall clock, it does not count the time the
// benchmark waited for a core. (getrusage's split into user and system
// time is adjusted to be monotonic, which can move CPU time between short
// intervals; this clock is not.)
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
