package main

import (
	"container/heap"
	"math/rand/v2"
	"time"
)

// NetConfig is what the network conditioner does to each packet that
// passes it, independently: drop it with probability Loss; otherwise
// deliver it after Latency ± Jitter (uniform, never below zero), plus, with
// probability Reorder, an extra 1 to 3 ReorderStep (one tick) so that later
// packets overtake it; and with probability Dup deliver a second copy with
// its own delay. Jitter alone reorders too, as on a real path.
type NetConfig struct {
	Loss, Dup, Reorder float64
	Latency, Jitter    time.Duration
	ReorderStep        time.Duration
}

// dir says which way a queued packet goes.
type dir uint8

const (
	inbound  dir = iota // a snapshot, server → client
	outbound            // an ack, client → server
)

type queued struct {
	at   time.Time
	seq  uint64 // FIFO among equal times
	dir  dir
	data []byte
	// forged: injected by the demo's forger (inject.go), for the stats
	forged bool
}

type pktHeap []queued

func (h pktHeap) Len() int { return len(h) }
func (h pktHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h pktHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pktHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *pktHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = queued{}
	*h = old[:len(old)-1]
	return x
}

// condStats counts what a conditioner did, per direction.
type condStats struct {
	In              int `json:"in"`  // snapshots offered
	Out             int `json:"out"` // acks offered
	Dropped         int `json:"dropped"`
	Duplicated      int `json:"duplicated"`
	Reordered       int `json:"reordered"`
	DroppedAcks     int `json:"dropped_acks"`
	DuplicatedAcks  int `json:"duplicated_acks"`
	ReorderedAcks   int `json:"reordered_acks"`
	PendingAtFinish int `json:"pending_at_finish"` // still queued when the run ended
}

// conditioner is a delay line with loss, duplication and reordering. It is
// a plain data structure driven by its owner's goroutine (the client loop):
// admit packets, pop the ones whose time has come, and sleep until next.
type conditioner struct {
	cfg   NetConfig
	rng   *rand.Rand
	q     pktHeap
	seq   uint64
	stats condStats
}

func newConditioner(cfg NetConfig, seed uint64) *conditioner {
	return &conditioner{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x636f6e646974696f))}
}

// admit offers a packet at time now.
func (c *conditioner) admit(now time.Time, d dir, data []byte) {
	if d == inbound {
		c.stats.In++
	} else {
		c.stats.Out++
	}
	if c.rng.Float64() < c.cfg.Loss {
		if d == inbound {
			c.stats.Dropped++
		} else {
			c.stats.DroppedAcks++
		}
		return
	}
	c.push(now, d, data, false)
	if c.rng.Float64() < c.cfg.Dup {
		if d == inbound {
			c.stats.Duplicated++
		} else {
			c.stats.DuplicatedAcks++
		}
		c.push(now, d, data, false) // the data is never written to: sharing is fine
	}
}

// admitForged queues an injected replication datagram, which suffers the
// path's delay like any other but is never lost or duplicated.
func (c *conditioner) admitForged(now time.Time, data []byte) { c.push(now, inbound, data, true) }

func (c *conditioner) push(now time.Time, d dir, data []byte, forged bool) {
	delay := c.cfg.Latency
	if c.cfg.Jitter > 0 {
		delay += time.Duration((c.rng.Float64()*2 - 1) * float64(c.cfg.Jitter))
	}
	if c.cfg.Reorder > 0 && c.rng.Float64() < c.cfg.Reorder {
		delay += time.Duration((1 + 2*c.rng.Float64()) * float64(c.cfg.ReorderStep))
		if d == inbound {
			c.stats.Reordered++
		} else {
			c.stats.ReorderedAcks++
		}
	}
	delay = max(delay, 0)
	c.seq++
	heap.Push(&c.q, queued{at: now.Add(delay), seq: c.seq, dir: d, data: data, forged: forged})
}

// pop returns the next packet due at now, if any.
func (c *conditioner) pop(now time.Time) (queued, bool) {
	if len(c.q) == 0 || c.q[0].at.After(now) {
		return queued{}, false
	}
	return heap.Pop(&c.q).(queued), true
}

// next returns when the next packet is due; false when none is queued.
func (c *conditioner) next() (time.Time, bool) {
	if len(c.q) == 0 {
		return time.Time{}, false
	}
	return c.q[0].at, true
}
