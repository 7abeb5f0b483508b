package gateway

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time of the calling thread (the benchmarks lock
// their goroutine to it): on a loaded machine, unlike the wall clock, it
// does not count the time the benchmark waited for a core.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
