package gen

import (
	"fmt"
	"math"

	"github.com/bitwire/bitwire"
)

// The count framing of unions (Go's Union.EncodeCount and DecodeCount):
// several messages in one packet are preceded by their count, a length
// without maxlen (an unsigned bitlen with a 5-bit prefix). A reader
// refuses a count over bitwire.DefaultMaxLen (ErrTooLong), or over what
// the input left can hold at the fewest bits a message takes (its tag and
// the smallest variant: ErrUnexpectedEnd), before reading any message.

// unionMinBits is the fewest bits a message of the union takes: its tag
// and the smallest variant's fewest (Go's Union keeps the same figure).
func unionMinBits(s *bitwire.Schema) int {
	least := math.MaxInt
	for _, v := range s.Union.Variants {
		least = min(least, s.Types[v].MinBits)
	}
	return s.Union.TagBits + least
}

func tsUnionCount(s *bitwire.Schema) string {
	return fmt.Sprintf(`  /** writes the count of the messages that follow in a packet of several (Go's Union.EncodeCount) */
  encodeCount(w: bw.BitWriter, n: number): void {
    if (!(Number.isInteger(n) && n >= 0 && n <= %[1]d)) throw new bw.ErrTooLong(`+"`${n} messages`"+`);
    bw.writeBitlen(w, n, 5);
  },
  /** reads the count encodeCount wrote, refusing one over %[1]d or over what the input left can hold (%[2]d bits a message at least) */
  decodeCount(r: bw.BitReader): number {
    const n = bw.readBitlen(r, 5);
    if (typeof n !== "number" || n > %[1]d) throw new bw.ErrTooLong(`+"`message count ${n} over %[1]d`"+`);
    if (%[2]d > 0 && n > Math.floor(r.remaining() / %[2]d)) throw new bw.ErrUnexpectedEnd(`+"`message count ${n} against the input left`"+`);
    return n;
  },
`, bitwire.DefaultMaxLen, unionMinBits(s))
}

func csUnionCount(s *bitwire.Schema) string {
	return fmt.Sprintf(`        /// <summary>Writes the count of the messages that follow in a packet of several (Go's Union.EncodeCount).</summary>
        public static void EncodeCount(BitWriter w, int n)
        {
            if (n < 0 || n > %[1]d) throw new ErrTooLong(n + " messages");
            Codings.WriteBitlen(w, (ulong)n, 5);
        }
        /// <summary>Reads the count EncodeCount wrote, refusing one over %[1]d or over what the input left can hold (%[2]d bits a message at least).</summary>
        public static int DecodeCount(BitReader r)
        {
            ulong n = Codings.ReadBitlen(r, 5);
            if (n > %[1]d) throw new ErrTooLong("message count " + n + " over %[1]d");
            if (%[2]d > 0 && n > (ulong)(r.Remaining / %[2]d)) throw new ErrUnexpectedEnd("message count " + n + " against the input left");
            return (int)n;
        }
`, bitwire.DefaultMaxLen, unionMinBits(s))
}
