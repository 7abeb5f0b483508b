package replicate

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// encodePool is the Server's workers for EncodeAll: goroutines started at
// the first call that needs them, waiting for a token on start between
// calls, so that a tick starts no goroutine and allocates nothing.
type encodePool[E any] struct {
	mu      sync.Mutex // one EncodeAll at a time
	start   chan int   // a worker's number, once per call it helps with
	workers int        // started so far
	done    sync.WaitGroup
	closed  bool

	// The current call's job.
	send  func(p *Peer[E], pkt []byte)
	next  atomic.Int64 // the next Peer to take
	bufs  [][]byte     // per worker: its packet buffer
	errMu sync.Mutex
	err   error
}

// EncodeAll encodes the current tick's packets of every Peer over up to
// workers goroutines (runtime.GOMAXPROCS(0) when workers < 1), and calls
// send with each packet from the goroutine that encoded it. send is called
// concurrently for different Peers, and in order for the packets of one
// Peer; pkt is valid only until send returns (copy it to keep it). The
// goroutine calling EncodeAll is one of the workers; the others are
// started at the first call that needs them and wait between calls, so a
// tick in steady state starts no goroutine and allocates nothing (Close
// stops them).
//
// It is Encode called until ok is false for each Peer, as a server would
// write it by hand, and makes the same packets. Acks must not be given to
// the Peers while it runs. The error is the first one a Peer's Encode
// returned (the other Peers are still encoded); ErrClosed after Close.
func (s *Server[E]) EncodeAll(workers int, send func(p *Peer[E], pkt []byte)) error {
	if send == nil {
		return errors.New("replicate: EncodeAll with a nil send")
	}
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(s.peers)))
	pl := &s.pool
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return ErrClosed
	}
	for len(pl.bufs) < workers {
		pl.bufs = append(pl.bufs, nil)
	}
	if pl.start == nil {
		pl.start = make(chan int, 64)
	}
	for pl.workers < workers-1 {
		pl.workers++
		go s.helper()
	}
	pl.send, pl.err = send, nil
	pl.next.Store(0)
	pl.done.Add(workers - 1)
	for w := 1; w < workers; w++ {
		pl.start <- w
	}
	s.encodePeers(0)
	pl.done.Wait()
	pl.send = nil
	return pl.err
}

// ErrClosed is EncodeAll's error after Server.Close.
var ErrClosed = errors.New("replicate: server closed")

// Close stops the goroutines EncodeAll started; EncodeAll then fails with
// ErrClosed. The Server is otherwise usable. It returns nil.
func (s *Server[E]) Close() error {
	pl := &s.pool
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if !pl.closed {
		pl.closed = true
		if pl.start != nil {
			close(pl.start)
		}
	}
	return nil
}

// helper is a worker of EncodeAll besides its caller.
func (s *Server[E]) helper() {
	for w := range s.pool.start {
		s.encodePeers(w)
		s.pool.done.Done()
	}
}

// encodePeers takes Peers until none is left and encodes each one's
// packets, worker w's buffer holding each while send runs.
func (s *Server[E]) encodePeers(w int) {
	pl := &s.pool
	for {
		i := int(pl.next.Add(1) - 1)
		if i >= len(s.peers) {
			return
		}
		p := s.peers[i]
		for {
			pkt, ok, err := p.Encode(pl.bufs[w][:0])
			if err != nil {
				pl.errMu.Lock()
				if pl.err == nil {
					pl.err = fmt.Errorf("replicate: EncodeAll, peer %d: %w", i, err)
				}
				pl.errMu.Unlock()
				break
			}
			if !ok {
				break
			}
			pl.bufs[w] = pkt
			pl.send(p, pkt)
		}
	}
}
