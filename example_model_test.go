package bitwire_test

import (
	"fmt"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

type Ship struct {
	X   float32    `net:"q,min=-1000,max=1000,prec=0.01,dmin=-5,dmax=5"`
	Rot [4]float32 `net:"quat,bits=9"`
}

// Train a model on recorded (baseline, current) pairs, ship it as a file,
// load it and code deltas with it.
func ExampleTrainer() {
	codec := bitwire.MustFor[Ship]()
	tr := codec.NewTrainer()
	base := Ship{X: 10, Rot: [4]float32{0, 0, 0, 1}}
	for i := range 100 {
		cur := base
		cur.X += 0.03 * float32(i%7)
		if err := tr.Add(&base, &cur); err != nil {
			panic(err)
		}
	}
	m, err := tr.Model()
	if err != nil {
		panic(err)
	}
	file, _ := m.MarshalBinary()

	var loaded bitwire.Model
	if err := loaded.UnmarshalBinary(file); err != nil {
		panic(err)
	}
	c := codec.WithModel(&loaded)
	if err := c.ModelErr(); err != nil {
		panic(err) // a model for another layout
	}
	cur := base
	cur.X += 0.06
	plain, _ := codec.MarshalDelta(&base, &cur)
	small, _ := c.MarshalDelta(&base, &cur)
	var got Ship
	if err := c.UnmarshalDelta(small, &base, &got); err != nil {
		panic(err)
	}
	fmt.Printf("model file %d bytes; delta %d bits without the model, %d with; X=%.2f\n",
		len(file), deltaBits(codec, &base, &cur), deltaBits(c, &base, &cur), got.X)
	fmt.Println("fingerprints differ:", codec.Fingerprint() != c.Fingerprint(), "bytes:", len(plain), len(small))
	// Output:
	// model file 478 bytes; delta 10 bits without the model, 6 with; X=10.06
	// fingerprints differ: true bytes: 2 1
}

func deltaBits(c *bitwire.Codec[Ship], base, cur *Ship) int {
	w := bits.NewWriter(nil)
	if err := c.EncodeDelta(w, base, cur); err != nil {
		panic(err)
	}
	return w.Len()
}
