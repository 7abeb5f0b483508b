package snapshot

import (
	"fmt"

	"github.com/bitwire/bitwire"
)

// History is a ring of the last Size snapshots, each stored with its tick.
// Ticks must increase from one Put to the next; once the ring is full, each
// Put overwrites the oldest snapshot, which is then gone: Get never returns
// a slot for a tick other than the one it was stored with. Because the ring
// counts snapshots, not tick numbers, gaps between ticks (lost packets,
// clients served every other tick) do not shorten it.
//
// A History owns deep copies of its snapshots (made with Codec.Copy); once
// its slots have grown to the size of the state, storing allocates nothing
// for states without maps.
type History[T any] struct {
	c     *bitwire.Codec[T]
	vals  []*T     // ring storage; a nil entry is allocated on first use
	ticks []uint32 // ticks[i] is the tick of vals[i]
	// tokens[i] is the ack token of the packet that carried vals[i], for
	// the senders' and receivers' rings (0 in a History filled by Put)
	tokens []uint32
	// acked[i]: the receiver acknowledged vals[i] (senders' rings only),
	// so it may serve as the older baseline of a prediction
	acked []bool
	first int // index of the oldest snapshot
	n     int // number of snapshots held
}

// NewHistory returns an empty History holding up to size snapshots of the
// codec's type. It panics when c is nil or size is outside
// 1..MaxHistorySize, which is always a bug in the caller.
func NewHistory[T any](c *bitwire.Codec[T], size int) *History[T] {
	if c == nil {
		panic("snapshot: NewHistory with a nil codec")
	}
	if size < 1 || size > MaxHistorySize {
		panic(fmt.Sprintf("snapshot: history size %d outside 1..%d", size, MaxHistorySize))
	}
	return &History[T]{c: c, vals: make([]*T, size), ticks: make([]uint32, size), tokens: make([]uint32, size), acked: make([]bool, size)}
}

// Size returns the number of snapshots the History can hold.
func (h *History[T]) Size() int { return len(h.vals) }

// Len returns the number of snapshots the History holds.
func (h *History[T]) Len() int { return h.n }

// Newest returns the tick of the newest snapshot; ok is false when the
// History is empty.
func (h *History[T]) Newest() (tick uint32, ok bool) {
	if h.n == 0 {
		return 0, false
	}
	return h.ticks[h.index(h.n-1)], true
}

// Oldest returns the tick of the oldest snapshot still held; ok is false
// when the History is empty.
func (h *History[T]) Oldest() (tick uint32, ok bool) {
	if h.n == 0 {
		return 0, false
	}
	return h.ticks[h.first], true
}

// Put stores a deep copy of v as the snapshot of tick, overwriting the
// oldest snapshot when the ring is full. A tick not newer than the newest
// held is ErrStaleTick, and nothing changes.
func (h *History[T]) Put(tick uint32, v *T) error {
	if v == nil {
		return fmt.Errorf("snapshot: Put of a nil value at tick %d", tick)
	}
	i, err := h.claim(tick)
	if err != nil {
		return err
	}
	if h.vals[i] == nil {
		h.vals[i] = new(T)
	}
	h.c.Copy(h.vals[i], v)
	h.commit(i, tick, 0)
	return nil
}

// Get returns the snapshot of tick, or false when the History does not hold
// it (never stored, or overwritten since). The value belongs to the
// History: read it, do not modify it, and do not keep it past the next Put
// or Reset, which may reuse its storage. Use Load for a copy of one's own.
func (h *History[T]) Get(tick uint32) (*T, bool) {
	i, ok := h.find(tick)
	if !ok {
		return nil, false
	}
	return h.vals[i], true
}

// Load makes dst a deep copy of the snapshot of tick and reports whether
// the History holds it; dst is untouched when it does not.
func (h *History[T]) Load(tick uint32, dst *T) bool {
	i, ok := h.find(tick)
	if !ok || dst == nil {
		return false
	}
	h.c.Copy(dst, h.vals[i])
	return true
}

// token returns the ack token stored with the snapshot of tick.
func (h *History[T]) token(tick uint32) (uint32, bool) {
	i, ok := h.find(tick)
	if !ok {
		return 0, false
	}
	return h.tokens[i], true
}

// markAcked records that the receiver acknowledged the snapshot of tick.
func (h *History[T]) markAcked(tick uint32) {
	if i, ok := h.find(tick); ok {
		h.acked[i] = true
	}
}

// clearAcked forgets every acknowledgement markAcked recorded.
func (h *History[T]) clearAcked() { clear(h.acked) }

// ackedBefore returns the acknowledged snapshot older than tick whose
// distance from it is nearest to gap (the larger distance on a tie),
// among those less than 2·gap before it; ok is false when there is none.
func (h *History[T]) ackedBefore(tick, gap uint32) (older uint32, v *T, ok bool) {
	best := uint32(0)
	for k := h.n - 1; k >= 0; k-- {
		i := h.index(k)
		t := h.ticks[i]
		if t >= tick || !h.acked[i] {
			continue
		}
		d := tick - t
		if uint64(d) >= 2*uint64(gap) {
			break // older still are farther
		}
		if e := absDiff(d, gap); !ok || e <= best {
			older, v, best, ok = t, h.vals[i], e, true
		}
	}
	return older, v, ok
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// dropFrom forgets the snapshots of tick and every newer tick.
func (h *History[T]) dropFrom(tick uint32) {
	for h.n > 0 && h.ticks[h.index(h.n-1)] >= tick {
		h.n--
	}
}

// Reset forgets every snapshot. The storage is kept for reuse.
func (h *History[T]) Reset() {
	h.first, h.n = 0, 0
}

// index maps a position in tick order (0 is the oldest) to a ring index.
func (h *History[T]) index(k int) int {
	i := h.first + k
	if i >= len(h.vals) {
		i -= len(h.vals)
	}
	return i
}

// find returns the ring index of tick by binary search: ticks increase from
// the oldest to the newest slot.
func (h *History[T]) find(tick uint32) (int, bool) {
	lo, hi := 0, h.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if h.ticks[h.index(m)] < tick {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < h.n {
		if i := h.index(lo); h.ticks[i] == tick {
			return i, true
		}
	}
	return 0, false
}

// claim checks that tick may be stored and returns the ring index it will
// take: the next free slot, or the oldest one when the ring is full.
func (h *History[T]) claim(tick uint32) (int, error) {
	if newest, ok := h.Newest(); ok && tick <= newest {
		return 0, fmt.Errorf("%w: tick %d, history's newest is %d", ErrStaleTick, tick, newest)
	}
	if h.n == len(h.vals) {
		return h.first, nil
	}
	return h.index(h.n), nil
}

// commit records that ring index i, returned by claim, now holds tick,
// carried by a packet of the given ack token.
func (h *History[T]) commit(i int, tick, token uint32) {
	h.ticks[i] = tick
	h.tokens[i] = token
	h.acked[i] = false
	if h.n == len(h.vals) {
		h.first = h.index(1)
	} else {
		h.n++
	}
}

// swap stores v itself (not a copy) as the snapshot of tick, carried by a
// packet of the given ack token, and returns the
// value it displaced, or a new one, for the caller to reuse as scratch
// space. Senders and receivers decode into scratch space and swap it in, so
// a failed decode never leaves a half-written snapshot in the ring.
func (h *History[T]) swap(tick, token uint32, v *T) (*T, error) {
	i, err := h.claim(tick)
	if err != nil {
		return v, err
	}
	old := h.vals[i]
	h.vals[i] = v
	h.commit(i, tick, token)
	if old == nil {
		old = new(T)
	}
	return old, nil
}
