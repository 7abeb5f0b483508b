package main

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time (user and system) of the calling thread: with
// the goroutine locked to its thread, that goroutine's cost alone.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
