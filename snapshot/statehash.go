package snapshot

import (
	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/integrity"
)

// StateHash returns the 32-bit state hash of v that senders put in their
// packets now and then (WithStateHash): the CRC32C of v's full encoding by
// c (Codec.Encode, zero-padded to whole bytes). Two states hash alike when
// they encode alike, that is when they are equal after quantization, so a
// sender hashes what its packet makes the receiver rebuild and the receiver
// hashes what it rebuilt. Senders and Receivers hash with their codec
// without Stats or debug sentinels (WithStats(nil).WithDebug(false)), so
// that neither changes the hash nor the accounting. w is scratch space,
// reused (nil: a pooled one).
func StateHash[T any](c *bitwire.Codec[T], w *bits.Writer, v *T) (uint32, error) {
	if w == nil {
		w = bits.GetWriter()
		defer bits.PutWriter(w)
	}
	w.Reset(w.Bytes()[:0])
	if err := c.Encode(w, v); err != nil {
		return 0, err
	}
	return integrity.Checksum(w.Bytes()), nil
}
