//go:build !amd64 || purego

package bitwire

import "unsafe"

// vecDiff has no vector instructions here: firstDiff compares words.
func vecDiff(a, b unsafe.Pointer, n int) (i int, ok bool) { return 0, false }
