package snapshot

import (
	"errors"
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// A snapshot larger than the budget goes as a block transfer: the packet
// Encode would write with no budget (a delta, or the full state, header,
// state hash and trailer included) is cut into fragments of at most the
// budget each, numbered, each with its own trailer; the Receiver collects
// them and, once it holds them all, decodes the block as any packet. So
// the block keeps every check of a packet (its own trailer, the tick
// window, the baseline, the state hash) and its ack is the ordinary one.
// Under loss a block is not resent, whole or piece by piece: the next
// tick's state supersedes it, as a lost packet is superseded by the next
// one, and the Receiver keeps only the newest block it is collecting. docs/wire-format.md
// ("Fragments") has the packet's every bit.

// FragmentMagic is the first 16 bits of a fragment packet (the bytes 0x7E
// 0xB4): a receiver that predates fragments refuses one with ErrBadMagic.
const FragmentMagic = 0xB47E

// The fragment header: magic, fingerprint, tick, mode and 6 reserved
// bits, index, count-1, block length; 128 bits, whole bytes.
const (
	fragmentHeaderBits   = magicBits + fingerprintBits + tickBits + modeBits + fragmentReservedBits + 8 + 8 + fragmentLengthBits
	fragmentHeaderSize   = fragmentHeaderBits / 8
	fragmentReservedBits = 6
	fragmentLengthBits   = 24
)

// MaxFragments is the most fragments a block is cut into.
const MaxFragments = 256

// DefaultMaxBlock is the largest block a Receiver reassembles, in bytes:
// the memory it holds for a block being collected is at most this.
const DefaultMaxBlock = 256 << 10

// ErrIncomplete: Decode took a fragment of a block it has not got whole
// yet. Nothing is decoded and there is nothing to acknowledge; it is not
// a fault.
var ErrIncomplete = errors.New("snapshot: fragment kept, block incomplete")

// FragmentHeader is the decoded header of a fragment packet.
type FragmentHeader struct {
	Fingerprint uint32
	Tick        uint32 // the block's tick
	Integrity   Mode
	Index       int // 0 .. Count-1
	Count       int // 1 .. MaxFragments
	Length      int // the block's size in bytes
}

// FragmentStats counts a Sender's block transfers.
type FragmentStats struct {
	Blocks    int // states sent as blocks: larger than the budget
	Fragments int // fragment packets written
	Bytes     int // their bytes, trailers included
}

// ReassemblyStats counts a Receiver's fragments.
type ReassemblyStats struct {
	Fragments  int // fragment packets taken (a duplicate is not taken)
	Duplicates int // fragments it already held
	Blocks     int // blocks completed and handed to the decoder
	Superseded int // blocks dropped incomplete for a newer block's fragment
}

// fragSender is a Sender's block-transfer state.
type fragSender struct {
	block []byte   // the last block
	buf   []byte   // the last fragments, back to back
	out   [][]byte // views of buf
	stats FragmentStats
}

// fragReceiver is a Receiver's reassembly state: one block at a time.
type fragReceiver struct {
	max    int // DefaultMaxBlock unless set
	active bool
	h      FragmentHeader
	block  []byte
	have   [MaxFragments / 64]uint64
	got    int
	stats  ReassemblyStats
}

// EncodeFragments is Encode for a state whose packet may exceed the
// budget: when Encode's packet fits, it returns it alone; when it does
// not, it returns the block's fragments, each at most Budget bytes, to
// send as separate datagrams (in any order). The slice and the packets
// are the Sender's, valid until its next call. Each call with a new tick
// is a new block, encoded against the acknowledged baseline as a packet
// is: a block lost in part is superseded by the next one, and its ack
// (once the Receiver decoded it) makes it a baseline like any packet's.
// The Sender never returns a fragment of an earlier call again: a caller
// that spreads a block's fragments over time drops those not yet sent
// when it makes the next call, whose block supersedes them (their bytes
// are reused).
// The block counts in FragmentStats; only a block of more than
// MaxFragments fragments is refused, with ErrOverBudget (counted in
// OverBudget). Errors as Encode's otherwise, leaving the Sender as it
// was. It must not run concurrently with any other method of the Sender.
func (s *Sender[T]) EncodeFragments(tick uint32, state *T) ([][]byte, error) {
	pkt, err := s.Encode(s.frag.block[:0], tick, state)
	if err == nil {
		s.frag.block = pkt[:0]
		s.frag.out = append(s.frag.out[:0], pkt)
		return s.frag.out, nil
	}
	if !errors.Is(err, ErrOverBudget) {
		return nil, err
	}
	s.overBudget-- // not refused yet: it goes as a block if it can
	payload := s.budget - fragmentHeaderSize - s.guard.Overhead()
	if payload < 1 {
		s.overBudget++
		return nil, fmt.Errorf("%w: budget %d leaves no room for a fragment's payload", ErrOverBudget, s.budget)
	}
	limit := min(MaxFragments*payload, 1<<fragmentLengthBits-1)
	budget := s.budget
	s.budget = limit
	block, err := s.Encode(s.frag.block[:0], tick, state)
	s.budget = budget
	if err != nil {
		if errors.Is(err, ErrOverBudget) {
			err = fmt.Errorf("%w: a block of more than %d fragments (%d bytes) at tick %d, budget %d", ErrOverBudget, MaxFragments, limit, tick, budget)
		}
		return nil, err
	}
	s.frag.block = block
	count := (len(block) + payload - 1) / payload
	size := (len(block) + count - 1) / count // every piece but the last; the last is not empty
	count = (len(block) + size - 1) / size
	h := FragmentHeader{Fingerprint: s.fp, Tick: tick, Integrity: s.guard.Mode(), Count: count, Length: len(block)}
	s.frag.buf = s.frag.buf[:0]
	var starts [MaxFragments + 1]int
	var w bits.Writer
	for k := range count {
		start := len(s.frag.buf)
		starts[k] = start
		h.Index = k
		w.ResetAppend(s.frag.buf)
		writeFragmentHeader(&w, h)
		out := append(w.Bytes(), block[k*size:min(len(block), (k+1)*size)]...)
		s.frag.buf, _ = s.guard.Seal(out, start)
	}
	starts[count] = len(s.frag.buf)
	w.ResetAppend(nil)
	s.frag.out = s.frag.out[:0]
	for k := range count {
		s.frag.out = append(s.frag.out, s.frag.buf[starts[k]:starts[k+1]:starts[k+1]])
	}
	s.frag.stats.Blocks++
	s.frag.stats.Fragments += count
	s.frag.stats.Bytes += len(s.frag.buf)
	return s.frag.out, nil
}

// FragmentStats returns the Sender's block-transfer counters. Like every
// method of a Sender, it must not run concurrently with another.
func (s *Sender[T]) FragmentStats() FragmentStats { return s.frag.stats }

func writeFragmentHeader(w *bits.Writer, h FragmentHeader) {
	w.WriteBits(FragmentMagic, magicBits)
	w.WriteBits(uint64(h.Fingerprint), fingerprintBits)
	w.WriteBits(uint64(h.Tick), tickBits)
	w.WriteBits(uint64(h.Integrity), modeBits)
	w.WriteBits(0, fragmentReservedBits)
	w.WriteBits(uint64(h.Index), 8)
	w.WriteBits(uint64(h.Count-1), 8)
	w.WriteBits(uint64(h.Length), fragmentLengthBits)
}

// ParseFragmentHeader decodes the header of a fragment packet, checking
// its magic (ErrBadMagic), its length (bitwire.ErrUnexpectedEnd) and that
// its fields are consistent (bitwire.ErrMalformed: a reserved bit set,
// integrity mode 3, an index past the count, a length the count cannot
// cut into non-empty pieces), not its fingerprint nor its trailer.
func ParseFragmentHeader(packet []byte) (FragmentHeader, error) {
	var h FragmentHeader
	if len(packet) < fragmentHeaderSize {
		if len(packet) >= 2 && uint16(packet[0])|uint16(packet[1])<<8 != FragmentMagic {
			return h, fmt.Errorf("%w: %#04x, want %#04x", ErrBadMagic, uint16(packet[0])|uint16(packet[1])<<8, FragmentMagic)
		}
		return h, fmt.Errorf("snapshot: fragment header: %w", bitwire.ErrUnexpectedEnd)
	}
	var r bits.Reader
	r.Reset(packet[:fragmentHeaderSize])
	m, _ := r.ReadBits(magicBits)
	if m != FragmentMagic {
		return h, fmt.Errorf("%w: %#04x, want %#04x", ErrBadMagic, m, FragmentMagic)
	}
	fp, _ := r.ReadBits(fingerprintBits)
	tick, _ := r.ReadBits(tickBits)
	mode, _ := r.ReadBits(modeBits)
	reserved, _ := r.ReadBits(fragmentReservedBits)
	index, _ := r.ReadBits(8)
	count, _ := r.ReadBits(8)
	length, _ := r.ReadBits(fragmentLengthBits)
	h = FragmentHeader{Fingerprint: uint32(fp), Tick: uint32(tick), Integrity: Mode(mode), Index: int(index), Count: int(count) + 1, Length: int(length)}
	switch {
	case mode > uint64(ModeMAC):
		return h, fmt.Errorf("snapshot: fragment header: %w: integrity mode %d", bitwire.ErrMalformed, mode)
	case reserved != 0:
		return h, fmt.Errorf("snapshot: fragment header: %w: reserved bits %#x", bitwire.ErrMalformed, reserved)
	case h.Index >= h.Count:
		return h, fmt.Errorf("snapshot: fragment header: %w: fragment %d of %d", bitwire.ErrMalformed, h.Index, h.Count)
	case h.Length < h.Count || (h.Count-1)*h.pieceSize() >= h.Length:
		return h, fmt.Errorf("snapshot: fragment header: %w: %d bytes do not make %d fragments", bitwire.ErrMalformed, h.Length, h.Count)
	}
	return h, nil
}

// pieceSize is the payload of every fragment but the last.
func (h FragmentHeader) pieceSize() int { return (h.Length + h.Count - 1) / h.Count }

// piece is the range of the block fragment Index carries.
func (h FragmentHeader) piece() (from, to int) {
	n := h.pieceSize()
	return h.Index * n, min(h.Length, (h.Index+1)*n)
}

// IsFragment reports whether packet starts with the fragment magic.
func IsFragment(packet []byte) bool {
	return len(packet) >= 2 && uint16(packet[0])|uint16(packet[1])<<8 == FragmentMagic
}

// SetMaxBlock bounds the block the Receiver reassembles, in bytes
// (DefaultMaxBlock when n is 0): a fragment of a larger block is refused
// with bitwire.ErrTooLong, so the memory held for reassembly is at most n.
// It must not run concurrently with any other method of the Receiver.
func (rc *Receiver[T]) SetMaxBlock(n int) error {
	if n < 0 || n >= 1<<fragmentLengthBits {
		return fmt.Errorf("snapshot: SetMaxBlock(%d): want 0..%d", n, 1<<fragmentLengthBits-1)
	}
	rc.frag.max = n
	return nil
}

// ReassemblyStats returns the Receiver's fragment counters. It must not
// run concurrently with any other method of the Receiver.
func (rc *Receiver[T]) ReassemblyStats() ReassemblyStats { return rc.frag.stats }

// decodeFragment takes one fragment packet (Decode's, for the fragment
// magic). The checks, in order: the header (ParseFragmentHeader's
// errors), the fingerprint and mode (ErrProtocolMismatch), the trailer
// (ErrIntegrity), the block's size against SetMaxBlock
// (bitwire.ErrTooLong), the payload's size (bitwire.ErrMalformed), the
// tick window as for a packet (ErrStaleTick, ErrFutureTick; the fragment
// counts toward a recovery run), a tick older than the block being
// collected by at most ReorderTicks (ErrStaleTick) or the same tick with
// another count or length (bitwire.ErrMalformed); then a newer tick, or
// one more than ReorderTicks older, drops the block being collected for
// the new one. A fragment that leaves
// the block incomplete is ErrIncomplete; the last one decodes the block
// as Decode decodes a packet, with its errors.
func (rc *Receiver[T]) decodeFragment(packet []byte, out *T) (uint32, error) {
	h, err := ParseFragmentHeader(packet)
	if err != nil {
		return 0, err
	}
	if h.Fingerprint != rc.fp {
		return 0, fmt.Errorf("%w: fragment %#08x, receiver %#08x", ErrProtocolMismatch, h.Fingerprint, rc.fp)
	}
	if h.Integrity != rc.guard.Mode() {
		return 0, fmt.Errorf("%w: fragment's integrity mode %v, receiver's %v", ErrProtocolMismatch, h.Integrity, rc.guard.Mode())
	}
	body, _, err := rc.guard.Open(packet)
	if err != nil {
		return 0, err
	}
	f := &rc.frag
	limit := f.max
	if limit == 0 {
		limit = DefaultMaxBlock
	}
	if h.Length > limit {
		return 0, fmt.Errorf("snapshot: fragment: %w: a block of %d bytes, at most %d", bitwire.ErrTooLong, h.Length, limit)
	}
	from, to := h.piece()
	if len(body) < fragmentHeaderSize || len(body)-fragmentHeaderSize != to-from {
		return 0, fmt.Errorf("snapshot: fragment %d of %d at tick %d: %w: %d payload bytes, want %d", h.Index, h.Count, h.Tick, bitwire.ErrMalformed, len(body)-fragmentHeaderSize, to-from)
	}
	// The fragment's tick is held to the window as a packet's is (and
	// counts toward its runs), so that a forged tick far ahead does not
	// become the block collected.
	if err := rc.window.Check(h.Tick); err != nil {
		return 0, fmt.Errorf("snapshot: fragment %d of %d: %w", h.Index, h.Count, err)
	}
	if f.active {
		switch {
		case h.Tick < f.h.Tick && f.h.Tick-h.Tick <= ReorderTicks:
			return 0, fmt.Errorf("%w: fragment of tick %d, collecting tick %d", ErrStaleTick, h.Tick, f.h.Tick)
		case h.Tick < f.h.Tick:
			// A block more than ReorderTicks ahead of a fragment the window
			// takes is not the stream's (a forged tick, or one before a
			// rewind): it is dropped for the fragment's.
			f.stats.Superseded++
			f.active = false
		case h.Tick == f.h.Tick && (h.Count != f.h.Count || h.Length != f.h.Length):
			return 0, fmt.Errorf("snapshot: fragment at tick %d: %w: %d fragments of %d bytes, the block's are %d of %d", h.Tick, bitwire.ErrMalformed, h.Count, h.Length, f.h.Count, f.h.Length)
		case h.Tick > f.h.Tick:
			f.stats.Superseded++
			f.active = false
		}
	}
	if !f.active {
		f.active, f.h, f.got, f.have = true, h, 0, [len(f.have)]uint64{}
		if cap(f.block) < h.Length {
			f.block = make([]byte, h.Length)
		}
		f.block = f.block[:h.Length]
	}
	if f.have[h.Index/64]&(1<<(h.Index%64)) != 0 {
		f.stats.Duplicates++
		return 0, fmt.Errorf("%w: fragment %d of %d at tick %d again", ErrIncomplete, h.Index, h.Count, h.Tick)
	}
	f.have[h.Index/64] |= 1 << (h.Index % 64)
	copy(f.block[from:to], body[fragmentHeaderSize:])
	f.got++
	f.stats.Fragments++
	if f.got < f.h.Count {
		return 0, fmt.Errorf("%w: %d of %d fragments at tick %d", ErrIncomplete, f.got, f.h.Count, h.Tick)
	}
	f.active = false
	f.stats.Blocks++
	// The block is a packet of its own, of the fragments' tick.
	if bh, err := ParseHeader(f.block); err != nil || bh.Tick != h.Tick {
		return 0, fmt.Errorf("snapshot: block of tick %d: %w: not a snapshot packet of that tick", h.Tick, bitwire.ErrMalformed)
	}
	return rc.Decode(f.block, out)
}
