//go:build !linux

package gateway

import "time"

var clockStart = time.Now()

// threadCPU falls back to the wall clock off Linux.
func threadCPU() time.Duration { return time.Since(clockStart) }
