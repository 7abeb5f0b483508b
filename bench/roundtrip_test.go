package bench

import (
	"slices"
	"testing"
)

// TestRoundTrip checks that every serializer reproduces its workload: the
// peers the exact values, bitwire and the hand-written packer the values
// that Codec.Quantize makes of them.
func TestRoundTrip(t *testing.T) {
	for _, w := range Workloads() {
		for _, s := range w.Subjects {
			t.Run(w.Name+"/"+s.Name, func(t *testing.T) {
				enc, err := s.Encode()
				if err != nil {
					t.Fatal(err)
				}
				data := slices.Clone(enc)
				// Twice: reused buffers and outputs must not leak state.
				for range 2 {
					if err := s.Decode(data); err != nil {
						t.Fatal(err)
					}
					if err := s.Check(); err != nil {
						t.Fatal(err)
					}
				}
				again, err := s.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(again, data) {
					t.Errorf("encoding twice gave different bytes")
				}
				t.Logf("%d bytes", len(data))
			})
		}
	}
}

// TestWorkloadsComplete checks that every workload has every serializer.
func TestWorkloadsComplete(t *testing.T) {
	for _, w := range Workloads() {
		var names []string
		for _, s := range w.Subjects {
			names = append(names, s.Name)
		}
		for _, want := range Order {
			if !slices.Contains(names, want) {
				t.Logf("%s: no %s subject yet", w.Name, want)
			}
		}
	}
}
