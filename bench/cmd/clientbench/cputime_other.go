//go:build !unix

package main

import "time"

var start = time.Now()

// cpuTime falls back to wall time where getrusage is missing.
func cpuTime() int64 { return int64(time.Since(start)) }
