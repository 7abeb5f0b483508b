package integrity_test

import (
	"errors"
	"testing"

	"github.com/bitwire/bitwire/integrity"
)

// feed checks and accepts ticks in turn and returns those refused.
func feed(w *integrity.TickWindow, ticks ...uint32) (refused []uint32) {
	for _, t := range ticks {
		if w.Check(t) != nil {
			refused = append(refused, t)
			continue
		}
		w.Accept(t)
	}
	return refused
}

func run(from uint32, n int) []uint32 {
	var ts []uint32
	for k := range n {
		ts = append(ts, from+uint32(k))
	}
	return ts
}

// A long stall moves the window forward for good; a forged burst that
// completes a run moves it forward until the next packet of the stream it
// left, which takes it back; with rewinds off (a MAC) nothing is
// remembered.
func TestTickWindowForwardReanchor(t *testing.T) {
	const ahead, after = 300, 8
	// a stall: the stream resumes 10,000 ticks on
	w := integrity.NewTickWindow(ahead, after, true)
	feed(w, run(100, 10)...)
	if got := feed(w, run(10_109, 20)...); len(got) != after-1 {
		t.Errorf("after a stall, %d packets refused, want %d", len(got), after-1)
	}
	if n, _ := w.Newest(); n != 10_128 {
		t.Errorf("newest %d after the stall, want 10128", n)
	}
	// a straggler of the old stream costs a run
	if got := feed(w, 150); len(got) != 0 {
		t.Errorf("the straggler was refused")
	}
	if got := feed(w, run(10_129, 10)...); len(got) != after-1 {
		t.Errorf("after a straggler, %d packets refused, want %d", len(got), after-1)
	}

	// a forged burst: the next honest packet takes the window back
	w = integrity.NewTickWindow(ahead, after, true)
	feed(w, run(100, 10)...)
	if got := feed(w, run(5_000_000, after)...); len(got) != after-1 {
		t.Fatalf("the burst: %d refused, want %d", len(got), after-1)
	}
	if w.Check(110) != nil || !w.Accept(110) {
		t.Errorf("the honest packet after the burst was refused, or not a rewind")
	}
	if got := feed(w, run(111, 20)...); len(got) != 0 {
		t.Errorf("%d honest packets refused after the burst", len(got))
	}
	// the forged stream is not remembered in turn
	if err := w.Check(5_000_008); !errors.Is(err, integrity.ErrFutureTick) {
		t.Errorf("the forged stream's next tick: %v, want ErrFutureTick", err)
	}

	// a forged burst of old ticks: the same
	w = integrity.NewTickWindow(ahead, after, true)
	feed(w, run(10_000, 10)...)
	if got := feed(w, run(3, after)...); len(got) != after-1 {
		t.Fatalf("the old burst: %d refused, want %d", len(got), after-1)
	}
	if got := feed(w, run(10_010, 20)...); len(got) != 0 {
		t.Errorf("%d honest packets refused after the old burst", len(got))
	}

	// with rewinds off, a re-anchoring is for good
	w = integrity.NewTickWindow(ahead, after, false)
	feed(w, run(100, 10)...)
	feed(w, run(5_000_000, after)...)
	if err := w.Check(110); !errors.Is(err, integrity.ErrStaleTick) {
		t.Errorf("without rewinds: %v, want ErrStaleTick", err)
	}
}
