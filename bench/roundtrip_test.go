package bench

import (
	"slices"
	"testing"

	"github.com/bitwire/bitwire"
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

// TestSameLayout checks that the hand-written packer writes exactly the
// bytes bitwire writes, so that it measures the same layout.
func TestSameLayout(t *testing.T) {
	for _, w := range Workloads() {
		enc := map[string][]byte{}
		for _, s := range w.Subjects {
			if s.Name == "bitwire-codec" || s.Name == "handwritten" {
				b, err := s.Encode()
				if err != nil {
					t.Fatalf("%s/%s: %v", w.Name, s.Name, err)
				}
				enc[s.Name] = slices.Clone(b)
			}
		}
		bw, ok1 := enc["bitwire-codec"]
		hw, ok2 := enc["handwritten"]
		if !ok1 || !ok2 {
			t.Logf("%s: no bitwire-codec or handwritten subject to compare", w.Name)
			continue
		}
		if !slices.Equal(bw, hw) {
			t.Errorf("%s: bitwire wrote %d bytes, the hand-written packer %d, and they differ", w.Name, len(bw), len(hw))
		}
	}
}

// TestPlayerIs72Bits checks the seed workload's size in bitwire.
func TestPlayerIs72Bits(t *testing.T) {
	c := bitwire.MustFor[PlayerState]()
	if got := c.MaxBits(); got != 72 {
		t.Errorf("MaxBits = %d, want 72\n%s", got, c.Layout())
	}
	v := MakePlayer()
	if b, err := c.Marshal(&v); err != nil || len(b) != 9 {
		t.Errorf("Marshal: %d bytes, %v; want 9", len(b), err)
	}
}
