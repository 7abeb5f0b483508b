package bench

import (
	"slices"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// TestHandDeltaMatchesBitwire checks the hand-written World delta against
// bitwire's on more than the benchmark's case: crates removed and added,
// nothing changed, everything changed, and an empty baseline.
func TestHandDeltaMatchesBitwire(t *testing.T) {
	base, cur := MakeWorlds()
	churn := World{Tick: cur.Tick}
	for i, c := range cur.Crates {
		if i%7 != 3 { // remove every 7th crate
			churn.Crates = append(churn.Crates, c)
		}
		if i%50 == 0 { // and add one after every 50th, with an unused id
			n := c
			n.ID++
			n.Pos.Y = 1
			churn.Crates = append(churn.Crates, n)
		}
	}
	moved := World{Tick: cur.Tick, Crates: slices.Clone(base.Crates)}
	for i := range moved.Crates {
		moved.Crates[i].Pos.X += 0.25
	}
	cases := map[string][2]World{
		"benchmark":   {base, cur},
		"churn":       {base, churn},
		"unchanged":   {base, base},
		"all moved":   {base, moved},
		"from empty":  {{}, cur},
		"to empty":    {base, {Tick: 9}},
		"tick only":   {base, {Tick: 1, Crates: base.Crates}},
		"few crates":  {{Crates: base.Crates[:3]}, {Crates: cur.Crates[1:5]}},
		"single kept": {{Crates: base.Crates[:1]}, {Crates: base.Crates[:1]}},
	}
	c := bitwire.MustFor[World]()
	for name, pair := range cases {
		b, v := pair[0], pair[1]
		want, err := c.MarshalDelta(&b, &v)
		if err != nil {
			t.Fatalf("%s: bitwire: %v", name, err)
		}
		var h HandWorldDelta
		var w bits.Writer
		if err := h.Encode(&w, &b, &v); err != nil {
			t.Fatalf("%s: handwritten: %v", name, err)
		}
		if got := w.Bytes(); !slices.Equal(got, want) {
			t.Errorf("%s: handwritten wrote %d bytes, bitwire %d, and they differ", name, len(got), len(want))
			continue
		}
		// Decode on a quantized baseline, as a receiver holds it.
		qb, err := quantized(&b)()
		if err != nil {
			t.Fatal(err)
		}
		var fromLib, fromHand World
		if err := c.UnmarshalDelta(want, &qb, &fromLib); err != nil {
			t.Fatalf("%s: bitwire decode: %v", name, err)
		}
		if err := h.Decode(bits.NewReader(want), &qb, &fromHand); err != nil {
			t.Fatalf("%s: handwritten decode: %v", name, err)
		}
		if !fromHand.Equal(&fromLib) {
			t.Errorf("%s: handwritten decoded a different world than bitwire", name)
		}
	}
}
