package snapshot

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// A delta packet of a codec with values tagged pred (Codec.Predicts)
// carries, between the header and the codec's message, which older
// snapshot the receiver predicts them from (docs/wire-format.md,
// "Snapshot packets"): one bit, 0 for none (the message is then the plain
// delta against the baseline), else 1 and the distance d from the
// baseline back to the older snapshot, d-1 as a bit-length code of prefix
// width 5 (as the header's baseline distance). The message is then
// Codec.EncodePredicted(older, base, state). Packets of other codecs have
// no such bits.

// writePrediction writes the prediction prefix of distance d (0: none).
func writePrediction(w *bits.Writer, d uint32) {
	w.WriteBool(d != 0)
	if d != 0 {
		fields.WriteBitlen(w, uint64(d-1), distanceWidth)
	}
}

// readPrediction reads a prediction prefix of a delta against baseline
// and returns the distance (0: none). A distance that reaches back past
// tick 0 is bitwire.ErrMalformed.
func readPrediction(r *bits.Reader, baseline uint32) (uint32, error) {
	on, err := r.ReadBool()
	if err != nil || !on {
		return 0, err
	}
	d, err := fields.ReadBitlen(r, distanceWidth)
	if err != nil {
		return 0, err
	}
	if d >= uint64(baseline) {
		return 0, fmt.Errorf("%w: an older baseline %d ticks before baseline %d", bitwire.ErrMalformed, d+1, baseline)
	}
	return uint32(d) + 1, nil
}
