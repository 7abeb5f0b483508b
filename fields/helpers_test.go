package fields

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bitwire/bitwire/bits"
	"github.com/stretchr/testify/require"
)

// stream returns the bits written to w in stream order, as '0' and '1',
// so that tests can spell out exact wire patterns: the first character is
// the first bit written.
func stream(w *bits.Writer) string {
	var sb strings.Builder
	data := w.Bytes()
	for i := 0; i < w.Len(); i++ {
		sb.WriteByte('0' + data[i/8]>>(i%8)&1)
	}
	return sb.String()
}

// lsb spells the low n bits of v low bit first, the order they appear in
// the stream.
func lsb(v uint64, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteByte('0' + byte(v>>i&1))
	}
	return sb.String()
}

// fromStream packs a '0'/'1' pattern (spaces ignored) into bytes, first
// character first, for feeding hand-made input to readers.
func fromStream(t testing.TB, pattern string) []byte {
	t.Helper()
	pattern = strings.ReplaceAll(pattern, " ", "")
	var w bits.Writer
	for _, c := range pattern {
		require.Contains(t, "01", string(c))
		w.WriteBool(c == '1')
	}
	return append([]byte(nil), w.Bytes()...)
}

// reader returns a Reader over the bits of w.
func reader(w *bits.Writer) *bits.Reader {
	return bits.NewReader(append([]byte(nil), w.Bytes()...))
}

// requireDone asserts that r consumed everything but the zero padding.
func requireDone(t testing.TB, r *bits.Reader) {
	t.Helper()
	require.Less(t, r.Remaining(), 8, "unread bits")
	require.True(t, r.CheckPadding(), "non-zero padding")
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// randUint64 draws uint64s spread over every bit length, not just the large
// ones a uniform draw gives.
func randUint64(rng *rand.Rand) uint64 {
	n := rng.IntN(65)
	if n == 64 {
		return rng.Uint64()
	}
	return rng.Uint64() & (1<<uint(n) - 1)
}

func randInt64(rng *rand.Rand) int64 {
	v := int64(randUint64(rng))
	if rng.IntN(2) == 0 {
		v = -v
	}
	return v
}

func TestStreamHelper(t *testing.T) {
	// The seed example: 3 bits of 0b101010 then 3 bits of 0b1111.
	var w bits.Writer
	w.WriteBits(0b101010, 3)
	w.WriteBits(0b1111, 3)
	require.Equal(t, []byte{0b00111010}, w.Bytes())
	require.Equal(t, "010111", stream(&w))
	require.Equal(t, lsb(0b010, 3)+lsb(0b111, 3), stream(&w))
	require.Equal(t, []byte{0b00111010}, fromStream(t, "010 111"))
}

func errorIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
