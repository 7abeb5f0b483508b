package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/replicate"
)

// quadrant is the test's cell function: four cells by the signs of X, Z.
func quadrant(_ uint32, b *Body) int {
	k := 0
	if b.X >= 0 {
		k |= 1
	}
	if b.Z >= 0 {
		k |= 2
	}
	return k
}

// TestCells: gateways that take some cells hold exactly the world's
// entities in them, as entities move from cell to cell, are created and
// removed; one that takes every cell holds the whole world.
func TestCells(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	cfg := Config[Body]{Subject: "cells", Cells: 4, Cell: quadrant, MaxMessage: 1024}
	pub, err := NewPublisher(connect(t, ns), bodyCodec, cfg)
	if err != nil {
		t.Fatal(err)
	}
	takes := [][]int{nil, {0}, {1, 2}, {3, 2, 1}}
	var gws []*Gateway[Body]
	for _, take := range takes {
		c := cfg
		c.Cell, c.Take = nil, take
		g, err := NewGateway(connect(t, ns), bodyCodec, c)
		if err != nil {
			t.Fatal(err)
		}
		gws = append(gws, g)
	}
	waitRequests(t, pub, len(takes))
	ref, _ := replicate.NewServer(bodyCodec)
	w := newWorld(2, 300)
	w.move, w.churn = 0.5, 4
	for tick := uint32(1); tick <= 200; tick++ {
		ops := w.step(tick == 1)
		play(t, ref, tick, ops)
		play(t, pub, tick, ops)
		pub.Publish()
		for i, g := range gws {
			next(t, g, tick)
			in := map[int]bool{}
			for _, k := range takes[i] {
				in[k] = true
			}
			keep := func(b *Body) bool { return takes[i] == nil || in[quadrant(0, b)] }
			sameWorld(t, ref, g.Server(), keep)
			if t.Failed() {
				t.Fatalf("tick %d, gateway of cells %v", tick, takes[i])
			}
		}
	}
	st := pub.Stats()
	// A message a cell a tick, and the full states' (10 cells asked
	// for): more means MaxMessage split the bigger ones into parts.
	if st.Messages <= 200*4+10 {
		t.Errorf("%d messages: none was split into parts", st.Messages)
	}
	for i, g := range gws {
		if s := g.Stats(); s.Gaps+s.Bad != 0 || s.Syncs != 1 {
			t.Errorf("gateway %d: %+v", i, s)
		}
	}
}

// TestConfigErrors: bad configurations and bad cells are refused with
// their sentinel, and a failed Set publishes nothing.
func TestConfigErrors(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	nc := connect(t, ns)
	if _, err := NewGateway(nc, bodyCodec, Config[Body]{Cells: 2, Take: []int{2}}); !errors.Is(err, ErrCell) {
		t.Errorf("Take outside Cells: %v", err)
	}
	if _, err := NewPublisher(nc, bodyCodec, Config[Body]{Cells: -1}); !errors.Is(err, ErrCell) {
		t.Errorf("Cells -1: %v", err)
	}
	pub, err := NewPublisher(nc, bodyCodec, Config[Body]{Cells: 2, Cell: func(id uint32, _ *Body) int { return int(id) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Set(1, &Body{Rot: [4]float32{0, 0, 0, 1}}); !errors.Is(err, ErrTickOrder) {
		t.Errorf("Set before Advance: %v", err)
	}
	if err := pub.Publish(); !errors.Is(err, ErrTickOrder) {
		t.Errorf("Publish before Advance: %v", err)
	}
	pub.Advance(5)
	if err := pub.Advance(6); !errors.Is(err, ErrTickOrder) {
		t.Errorf("Advance before Publish: %v", err)
	}
	if _, err := pub.Set(1, &Body{Rot: [4]float32{0, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Set(2, &Body{Rot: [4]float32{0, 0, 0, 1}}); !errors.Is(err, ErrCell) {
		t.Errorf("cell 2 of 2: %v", err)
	}
	if _, err := pub.Set(3, &Body{Hp: 200, Rot: [4]float32{0, 0, 0, 1}}); err == nil {
		t.Error("a state the codec refuses was set")
	}
	if pub.Len() != 1 || pub.Stats().Events != 1 {
		t.Errorf("%d entities, %d events after one good Set", pub.Len(), pub.Stats().Events)
	}
	pub.Publish()
	if err := pub.Advance(5); !errors.Is(err, ErrTickOrder) {
		t.Errorf("Advance to the same tick: %v", err)
	}
}

// Other is a layout other than Body's.
type Other struct {
	X float32 `net:"q,min=-1,max=1,bits=8"`
}

// TestNextErrors: a world of another codec layout is ErrProtocolMismatch;
// Next ends with its context, and with ErrClosed on a closed connection.
func TestNextErrors(t *testing.T) {
	ns := startNATS(t, -1)
	defer ns.Shutdown()
	pub, err := NewPublisher(connect(t, ns), bitwire.MustFor[Other](), Config[Other]{Subject: "other"})
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, ns)
	g, err := NewGateway(nc, bodyCodec, Config[Body]{Subject: "other", Retry: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitRequests(t, pub, 1)
	pub.Advance(1)
	pub.Set(1, &Other{X: 0.5})
	pub.Publish()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 2 { // the tick's message and the full state
		if _, err := g.Next(ctx); !errors.Is(err, ErrProtocolMismatch) {
			t.Errorf("another layout, message %d: %v", i, err)
		}
	}
	short, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	if _, err := g.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no tick: %v", err)
	}
	if g.Synced() {
		t.Error("synced without a full state of its world")
	}
	nc.Close()
	if _, err := g.Next(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("closed: %v", err)
	}
	if st := g.Stats(); st.Requests < 2 {
		t.Errorf("the gateway did not ask again while it waited: %+v", st)
	}
}
