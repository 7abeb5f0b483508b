//go:build !linux

package main

import "time"

// threadCPU is not measured off Linux: the -gateways report shows 0.
func threadCPU() time.Duration { return 0 }
