package replicate

import (
	"sync"

	"github.com/bitwire/bitwire/bits"
)

// deltaShards is the number of locks the shared deltas are spread over,
// so that Peers encoding concurrently rarely wait for one another.
const deltaShards = 32

// deltaShare keeps, per entity, the first delta a Peer wrote of it this
// tick: a delta depends only on the baseline and the current state, so a
// Peer whose client holds the same baseline copies those bits instead of
// encoding them again (in BenchmarkServerTick, 64 clients × 10,000
// entities, about one delta in five). One per entity, the first, is
// enough: its baseline is most often the one most clients hold. Peers of
// one Server share it, so it is sharded by slot, each shard under its own
// lock, with its own bits; a shard is emptied at its first use of a tick.
type deltaShare struct {
	shards [deltaShards]deltaShard
	refs   []deltaRef // by slot
}

type deltaShard struct {
	mu   sync.Mutex
	tick uint32
	w    bits.Writer
}

// deltaKey names what a delta body depends on besides the current state:
// the version of its baseline and, when it is predicted (dist != 0), the
// version it is predicted from and the distance its prefix names.
type deltaKey struct {
	base, older, dist uint32
}

// deltaRef is a delta of tick against key: bits [off, off+n) of its
// shard's writer.
type deltaRef struct {
	tick   uint32
	key    deltaKey
	off, n int32
}

// grow makes room for n slots; the Server calls it when it adds slots,
// never while Peers encode.
func (d *deltaShare) grow(n int) {
	for len(d.refs) < n {
		d.refs = append(d.refs, deltaRef{})
	}
}

// lookup appends to w the delta of slot against key if a Peer wrote it
// at tick, and returns its length in bits; ok is false when none did.
func (d *deltaShare) lookup(w *bits.Writer, tick uint32, slot int32, key deltaKey) (n int, ok bool) {
	sh := &d.shards[uint32(slot)%deltaShards]
	sh.mu.Lock()
	r := d.refs[slot]
	if ok = sh.tick == tick && r.tick == tick && r.key == key; ok {
		copyBits(w, sh.w.Bytes(), int(r.off), int(r.n))
	}
	sh.mu.Unlock()
	return int(r.n), ok
}

// store keeps the delta of slot against key, bits [off, off+n) of src,
// for the other Peers of tick, unless one of slot is kept already.
func (d *deltaShare) store(tick uint32, slot int32, key deltaKey, src []byte, off, n int) {
	sh := &d.shards[uint32(slot)%deltaShards]
	sh.mu.Lock()
	if sh.tick != tick {
		sh.w.Reset(sh.w.Bytes()[:0])
		sh.tick = tick
	}
	if r := &d.refs[slot]; r.tick != tick {
		*r = deltaRef{tick: tick, key: key, off: int32(sh.w.Len()), n: int32(n)}
		copyBits(&sh.w, src, off, n)
	}
	sh.mu.Unlock()
}
