//go:build !purego

package bitwire

import "unsafe"

// diffAVX2 returns the index of the first byte where the n bytes at a and
// b differ, or n; n must be a multiple of 64 (equal_amd64.s).
//
//go:noescape
func diffAVX2(a, b unsafe.Pointer, n int) int

// cpuAVX2 reports whether the processor and the operating system support
// AVX2 (equal_amd64.s).
func cpuAVX2() bool

// haveAVX2 is whether firstDiff compares long stretches with diffAVX2.
var haveAVX2 = cpuAVX2()

// vecDiff returns the index of the first differing byte of the leading
// multiple of 64 bytes at a and b, or that multiple, comparing 128 bytes a
// step (then a last 64) with vector instructions; ok is false when they
// are missing.
func vecDiff(a, b unsafe.Pointer, n int) (i int, ok bool) {
	if !haveAVX2 {
		return 0, false
	}
	return diffAVX2(a, b, n&^63), true
}
