//go:build !(386 || amd64 || arm64 || loong64 || ppc64 || ppc64le || riscv64 || s390x || wasm)

package bitwire

import (
	"encoding/binary"
	"unsafe"
)

// load64 returns the eight bytes at p as a native word, whatever p's
// alignment: byte loads, since this machine may trap on an unaligned word
// (load_unaligned.go has the one-load form).
func load64(p unsafe.Pointer) uint64 {
	return binary.NativeEndian.Uint64((*[8]byte)(p)[:])
}
