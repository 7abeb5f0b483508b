package snapshot

import "github.com/bitwire/bitwire/bits"

// Reheader rewrites the header of packet (whose trailer, of overhead
// bytes, is dropped) with edit, keeps the body bits as they are, and
// seals the result with g (nil: no trailer). It is the tests' forger: what
// an attacker who knows the format does to a packet it saw. The edited
// header must take as many bits as the original (the same delta flag and
// baseline distance code length), so that the padding stays in place.
func Reheader(packet []byte, overhead int, edit func(*Header), g *Integrity) []byte {
	packet = packet[:len(packet)-overhead]
	var r bits.Reader
	r.Reset(packet)
	h, err := readHeader(&r)
	if err != nil {
		panic(err)
	}
	old := r.Pos()
	edit(&h)
	var w bits.Writer
	writeHeader(&w, h)
	if w.Len() != old {
		panic("Reheader: the edited header has another length")
	}
	for r.Remaining() > 0 {
		n := min(r.Remaining(), 64)
		v, _ := r.ReadBits(n)
		w.WriteBits(v, n)
	}
	out := append([]byte(nil), w.Bytes()...)
	if g != nil {
		out, _ = g.Seal(out, 0)
	}
	return out
}
