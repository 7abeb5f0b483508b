//go:build 386 || amd64 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x || wasm

package bitwire

import "unsafe"

// load64 returns the eight bytes at p as a native word, whatever p's
// alignment: one load, since this machine loads unaligned words
// (load_aligned.go reads bytes where a machine may trap on them).
func load64(p unsafe.Pointer) uint64 {
	return *(*uint64)(p)
}
