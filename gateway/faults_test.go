package gateway

import (
	"slices"

	"github.com/nats-io/nats.go"
	"testing"
	"time"
)

const (
	liveEntities = 300
	liveInterval = 10 * time.Millisecond // 100 ticks a second
)

// TestGatewayRestart: a gateway that stops and starts again while the
// world goes on catches up from a full state and serves its clients
// (reconnected: Client.Reset, new Peers) again, with no desync.
func TestGatewayRestart(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	cfg := Config[Body]{Subject: "restart"}
	pub, err := NewPublisher(connect(t, ns), bodyCodec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lw := startWorld(t, pub, liveEntities, liveInterval)
	defer lw.halt()
	clients := newClients(3)
	lg := startGateway(t, ns.ClientURL(), cfg, lw.tr, clients)
	waitServed(t, lg, 50)
	lg.stop()
	lg.check(t, "before the restart")
	time.Sleep(20 * liveInterval) // the world goes on without it

	start := time.Now()
	lg = startGateway(t, ns.ClientURL(), cfg, lw.tr, clients)
	waitServed(t, lg, 1)
	catchUp := time.Duration(lg.first.Load() - start.UnixNano())
	waitServed(t, lg, 50)
	lg.stop()
	lg.check(t, "after the restart")
	st := lg.g.Stats()
	if st.Syncs != 1 || st.Gaps != 0 || lg.accepted.Load() == 0 {
		t.Errorf("after the restart: %+v, %d packets accepted", st, lg.accepted.Load())
	}
	t.Logf("restart: first tick served %v after NewGateway (world tick %v); full state and 50 ticks: %d bytes in %d messages", catchUp.Round(time.Millisecond), liveInterval, st.Bytes, st.Messages)
}

// TestNATSRestart: the NATS server stops and starts again on its port;
// the world and the gateway reconnect, and the gateway's clients are
// served again with no desync. With nats.go's reconnect buffer, the
// world's messages of the outage may all get through (no gap); without it
// (the second run) they are lost, and the gateway finds the gap and
// resyncs.
func TestNATSRestart(t *testing.T) {
	t.Run("buffered", func(t *testing.T) { testNATSRestart(t, false) })
	t.Run("unbuffered", func(t *testing.T) { testNATSRestart(t, true) })
}

func testNATSRestart(t *testing.T, unbuffered bool) {
	ns := startNATS(t, -1)
	port := natsPort(ns)
	cfg := Config[Body]{Subject: "natsrestart", Retry: 50 * time.Millisecond}
	opts := natsReconnect()
	if unbuffered {
		opts = append(opts, nats.ReconnectBufSize(-1))
	}
	pubConn := connect(t, ns, opts...)
	pub, err := NewPublisher(pubConn, bodyCodec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lw := startWorld(t, pub, liveEntities, liveInterval)
	defer lw.halt()
	lg := startGateway(t, ns.ClientURL(), cfg, lw.tr, newClients(3))
	defer lg.stop()
	waitServed(t, lg, 50)

	ns.Shutdown()
	down := time.Now()
	time.Sleep(20 * liveInterval)
	ns = startNATS(t, port)
	defer ns.Shutdown()
	before := lg.served.Load()
	waitServed(t, lg, 1)
	back := time.Since(down)
	waitServed(t, lg, 50)
	lg.stop()
	lw.halt()
	lg.check(t, "after the NATS restart")
	st := lg.g.Stats()
	if unbuffered && (st.Syncs < 2 || pub.Stats().Errors == 0) {
		t.Errorf("the world's publishes failed during the outage, and yet the gateway did not resync: %+v, %+v", st, pub.Stats())
	}
	t.Logf("NATS down 200ms: served again %v after it stopped (%d ticks served before); gateway %+v; publisher errors %d", back.Round(time.Millisecond), before, st, pub.Stats().Errors)
}

// TestSlowGateway: a gateway that cannot keep up (it spends 3 world ticks
// on each of its own, with a buffer of 8 messages) loses messages beyond it and falls
// back to full states, serving its clients with no desync; the world's
// ticks take no longer, and a gateway beside it that keeps up never
// resyncs.
func TestSlowGateway(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	cfg := Config[Body]{Subject: "slow", Pending: 8}
	pub, err := NewPublisher(connect(t, ns), bodyCodec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	lw := startWorld(t, pub, liveEntities, liveInterval)
	defer lw.halt()
	// The gateway that keeps up has the default buffer: a loaded machine's
	// pause of 8 ticks must not count as slowness.
	fastCfg := cfg
	fastCfg.Pending = 0
	fast := startGateway(t, ns.ClientURL(), fastCfg, lw.tr, newClients(2))
	defer fast.stop()
	slow := startGateway(t, ns.ClientURL(), cfg, lw.tr, newClients(2))
	defer slow.stop()
	waitServed(t, slow, 30)
	calm := lw.ticks()

	slow.delay.Store(int64(3 * liveInterval))
	time.Sleep(100 * liveInterval)
	slow.delay.Store(0)
	stalled := lw.ticks()
	waitServed(t, slow, 30)
	fast.stop()
	slow.stop()
	fast.check(t, "the fast gateway")
	slow.check(t, "the slow gateway")
	fs, ss := fast.g.Stats(), slow.g.Stats()
	if fs.Gaps != 0 || fs.Syncs != 1 {
		t.Errorf("the fast gateway resynced: %+v", fs)
	}
	if ss.Syncs < 2 {
		t.Errorf("the slow gateway never fell back to a full state: %+v", ss)
	}
	before, during := lw.publishTimes(0, calm), lw.publishTimes(calm, stalled)
	t.Logf("world Set+Publish per tick: median %v before, %v while a gateway was slow (%d ticks); slow gateway %+v", median(before), median(during), len(during), ss)
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
