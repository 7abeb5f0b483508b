package bench

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// snapDeltaCase is a baseline and a current snapshot.
type snapDeltaCase struct {
	name      string
	base, cur DeltaSnapshot
}

// snapDeltaCases returns the pairs the hand-written DeltaSnapshot delta is
// checked on: consecutive and further-apart ticks of matches from several
// seeds, and players leaving, joining, standing still, or none at all.
func snapDeltaCases() []snapDeltaCase {
	var cases []snapDeltaCase
	base, cur := MakeSnapshotDeltas()
	cases = append(cases, snapDeltaCase{"benchmark", base, cur})
	for seed := range uint64(4) {
		m := newMatch(rand.New(rand.NewPCG(seed, 99)))
		ticks := []DeltaSnapshot{m.State()}
		for range 3 * TickRate {
			ticks = append(ticks, m.Step())
		}
		r := rand.New(rand.NewPCG(seed, 7))
		for range 8 { // random consecutive ticks
			i := 1 + r.IntN(len(ticks)-1)
			cases = append(cases, snapDeltaCase{"tick", ticks[i-1], ticks[i]})
		}
		for range 3 { // a lost packet or two: deltas across several ticks
			i := 10 + r.IntN(len(ticks)-10)
			cases = append(cases, snapDeltaCase{"ticks apart", ticks[i-1-r.IntN(10)], ticks[i]})
		}
	}

	// Players leave (every 7th) and join (an unused id after every 10th,
	// and one past the last id).
	churn := DeltaSnapshot{Tick: cur.Tick}
	for i, p := range cur.Players {
		if i%7 != 3 {
			churn.Players = append(churn.Players, p)
		}
		if i%10 == 0 {
			n := p
			n.ID++
			n.Health = 200
			churn.Players = append(churn.Players, n)
		}
	}
	churn.Players = churn.Players[:min(len(churn.Players), playersMax-1)]
	last := cur.Players[len(cur.Players)-1]
	last.ID = 255
	churn.Players = append(churn.Players, last)

	// Only some players move; one changes only its flags, one only its
	// weapon, one its height (Pos is sent whole when one coordinate moves).
	few := DeltaSnapshot{Tick: cur.Tick, Players: slices.Clone(base.Players)}
	few.Players[5].Flags.Firing = !few.Players[5].Flags.Firing
	few.Players[17].Weapon = (few.Players[17].Weapon + 1) % 16
	few.Players[40].Pos.Y += 0.5
	few.Players[63] = cur.Players[63]
	// Moves smaller than half a quantization step are no change.
	tiny, err := quantized(&base)()
	if err != nil {
		panic(err)
	}
	for i := range tiny.Players {
		tiny.Players[i].Pos.X += 0.001
	}

	cases = append(cases,
		snapDeltaCase{"churn", base, churn},
		snapDeltaCase{"few changes", base, few},
		snapDeltaCase{"sub-step moves", base, tiny},
		snapDeltaCase{"unchanged", base, base},
		snapDeltaCase{"tick only", base, DeltaSnapshot{Tick: base.Tick + 1, Players: base.Players}},
		snapDeltaCase{"from empty", DeltaSnapshot{}, cur},
		snapDeltaCase{"to empty", base, DeltaSnapshot{Tick: 9}},
		snapDeltaCase{"one of one", DeltaSnapshot{Players: base.Players[:1]}, DeltaSnapshot{Players: cur.Players[:1]}},
		snapDeltaCase{"replaced", DeltaSnapshot{Players: base.Players[:3]}, DeltaSnapshot{Players: cur.Players[3:6]}},
	)
	return cases
}

// TestHandSnapDeltaMatchesBitwire checks that the hand-written DeltaSnapshot
// delta writes exactly the bytes of bitwire.MarshalDelta, and that both
// decoders rebuild the same snapshot from them. One encoder, decoder and
// output are reused over all the cases, as in the benchmark.
func TestHandSnapDeltaMatchesBitwire(t *testing.T) {
	var enc, dec HandSnapDelta
	var w bits.Writer
	var fromHand DeltaSnapshot
	for _, c := range snapDeltaCases() {
		want, err := bitwire.MarshalDelta(&c.base, &c.cur)
		if err != nil {
			t.Fatalf("%s: bitwire: %v", c.name, err)
		}
		w.Reset(w.Bytes()[:0])
		if err := enc.Encode(&w, &c.base, &c.cur); err != nil {
			t.Fatalf("%s: handwritten: %v", c.name, err)
		}
		if got := w.Bytes(); !slices.Equal(got, want) {
			t.Errorf("%s (tick %d from %d): handwritten wrote %d bytes, bitwire %d, and they differ",
				c.name, c.cur.Tick, c.base.Tick, len(got), len(want))
			continue
		}
		// Decode on a quantized baseline, as a receiver holds it.
		qb, err := quantized(&c.base)()
		if err != nil {
			t.Fatal(err)
		}
		var fromLib DeltaSnapshot
		if err := bitwire.UnmarshalDelta(want, &qb, &fromLib); err != nil {
			t.Fatalf("%s: bitwire decode: %v", c.name, err)
		}
		r := bits.NewReader(want)
		if err := dec.Decode(r, &qb, &fromHand); err != nil {
			t.Fatalf("%s: handwritten decode: %v", c.name, err)
		}
		if !r.CheckPadding() {
			t.Errorf("%s: handwritten decode left data", c.name)
		}
		if !fromHand.Equal(&fromLib) {
			t.Errorf("%s: handwritten decoded a different snapshot than bitwire", c.name)
		}
		qc, err := quantized(&c.cur)()
		if err != nil {
			t.Fatal(err)
		}
		if !fromLib.Equal(&qc) {
			t.Errorf("%s: bitwire did not rebuild the quantized current snapshot", c.name)
		}
	}
}

// TestHandSnapDeltaRefuses checks that the hand-written delta fails where
// bitwire's does: on a changed value that cannot be coded.
func TestHandSnapDeltaRefuses(t *testing.T) {
	base, cur := MakeSnapshotDeltas()
	for name, edit := range map[string]func(p *IDPlayer){
		"X past max":      func(p *IDPlayer) { p.Pos.X = 600 },
		"Health past max": func(p *IDPlayer) { p.Health = 201 },
		"Weapon negative": func(p *IDPlayer) { p.Weapon = -1 },
	} {
		bad := DeltaSnapshot{Tick: cur.Tick, Players: slices.Clone(cur.Players)}
		edit(&bad.Players[10])
		if _, err := bitwire.MarshalDelta(&base, &bad); !errors.Is(err, bitwire.ErrOutOfRange) {
			t.Errorf("%s: bitwire: %v, want ErrOutOfRange", name, err)
		}
		var h HandSnapDelta
		if err := h.Encode(new(bits.Writer), &base, &bad); !errors.Is(err, fields.ErrOutOfRange) {
			t.Errorf("%s: handwritten: %v, want ErrOutOfRange", name, err)
		}
	}
}

// TestSnapshotDeltaWorkload pins what the workload is: 64 players, none
// joining or leaving, most moving, a few other changes.
func TestSnapshotDeltaWorkload(t *testing.T) {
	base, cur := MakeSnapshotDeltas()
	if len(base.Players) != NumPlayers || len(cur.Players) != NumPlayers || cur.Tick != base.Tick+1 {
		t.Fatalf("%d -> %d players, tick %d -> %d", len(base.Players), len(cur.Players), base.Tick, cur.Tick)
	}
	var moved, turned, health, weapon, flags, dead int
	for i := range cur.Players {
		b, c := &base.Players[i], &cur.Players[i]
		if b.ID != c.ID {
			t.Fatalf("player %d: id %d -> %d", i, b.ID, c.ID)
		}
		d := diffPlayer(b, c)
		count := func(n *int, bit uint8) {
			if d.mask&bit != 0 {
				*n++
			}
		}
		count(&moved, chPos)
		count(&turned, chYaw)
		count(&health, chHealth)
		count(&weapon, chWeapon)
		count(&flags, chFlags)
		if c.Health == 0 {
			dead++
		}
	}
	t.Logf("of %d players: %d moved, %d turned, %d health, %d weapon, %d flags changed; %d dead",
		NumPlayers, moved, turned, health, weapon, flags, dead)
	if moved < NumPlayers*3/4 || turned < NumPlayers*3/4 || health+weapon+flags == 0 || health+weapon+flags > NumPlayers/4 {
		t.Errorf("not the workload's mix of changes")
	}
}
