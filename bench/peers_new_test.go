package bench

import (
	"slices"
	"testing"
)

// TestPeersRefuseTruncated checks that the peers read from generated or
// hand-written code (mus, msgp, flatbuffers) never panic on a truncated
// message, as a server reading datagrams needs, and refuse an empty one.
func TestPeersRefuseTruncated(t *testing.T) {
	for _, w := range Workloads() {
		for _, s := range w.Subjects {
			if !slices.Contains([]string{"mus", "msgp", "flatbuffers"}, s.Name) {
				continue
			}
			enc, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			data := slices.Clone(enc)
			if err := s.Decode(nil); err == nil {
				t.Errorf("%s/%s: empty message accepted", w.Name, s.Name)
			}
			// Every length of small messages; about 300 of large ones.
			for n := 0; n < len(data); n += 1 + len(data)/300 {
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Errorf("%s/%s: %d of %d bytes: panic %v", w.Name, s.Name, n, len(data), r)
						}
					}()
					s.Decode(data[:n])
				}()
			}
		}
	}
}
