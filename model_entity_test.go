package bitwire

import "testing"

type meBody struct {
	ID  uint16     `net:"id"`
	Rot [4]float32 `net:"quat,bits=9"`
}

type meFrame struct {
	Bodies []meBody `net:",maxlen=64"`
}

// TestModelQuatChoiceInMessage: frames of 32 bodies spinning 15..30° a
// tick. The adaptive code warms its running mean over a frame's bodies
// and codes most of them relative; a trainer that recorded the absolute
// or relative choice of a fresh state (as at a message's start) recorded
// most of them absolute, and its model lost to no model (905.6 against
// 880.5 bits a frame on 400 frames; 798.6 now). The trainer records the choice made
// in the message's own state.
func TestModelQuatChoiceInMessage(t *testing.T) {
	base, cur := hPairs(hStreams()[4], 7, 32*200, hAge{name: "1", max: 1})
	var bf, cf []meFrame
	for f := 0; f+32 <= len(base); f += 32 {
		var b, c meFrame
		for j := range 32 {
			b.Bodies = append(b.Bodies, meBody{uint16(j * 3), f32q(base[f+j].q)})
			c.Bodies = append(c.Bodies, meBody{uint16(j * 3), f32q(cur[f+j].q)})
		}
		bf, cf = append(bf, b), append(cf, c)
	}
	r := heldOut(t, bf, cf)
	t.Logf("model %.1f, no model %.1f bits a frame", r.model, r.noModel)
	if r.model > 0.95*r.noModel {
		t.Fatalf("model %.1f bits a frame, no model %.1f: want at most 0.95 of it", r.model, r.noModel)
	}
}
