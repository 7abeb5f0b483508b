package gen_test

import (
	"encoding/hex"
	"testing"

	"github.com/bitwire/bitwire"
)

// cfFixedX holds fixed-point fields whose prec is so large (F) or so small
// (G) that some small step counts do not survive the field's float type:
// i·1e300 overflows a float64 from about 1.8e8 steps on, and 2e-45 rounds
// to the float32 of one step. Decoders must refuse those counts
// (ErrOutOfRange), as Go does, not keep a value that re-encodes otherwise.
type cfFixedX struct {
	F float64 `net:"fixed,prec=1e300"`
	G float32 `net:"fixed,prec=1e-45"`
}

// cfFixedSteps has cfFixedX's layout with the step counts as integers: a
// fixed value is a signed bitlen with W = 6, like an int64's.
type cfFixedSteps struct {
	F, G int64 `net:"bitlen"`
}

// fixedExtremeCases are cfFixedX messages of chosen step counts, each with
// Go's value or error.
func fixedExtremeCases(t *testing.T) []cfCase {
	c := bitwire.MustFor[cfFixedX]()
	s := c.Schema()
	var cs []cfCase
	for _, f := range []int64{0, 1, -3, 1 << 20, 1 << 40, -(1 << 40), 1<<50 + 1} {
		for _, g := range []int64{0, 1, 2, -2, 7, 1 << 21} {
			b, err := bitwire.Marshal(&cfFixedSteps{F: f, G: g})
			if err != nil {
				t.Fatal(err)
			}
			var v cfFixedX
			cc := cfCase{Kind: "damaged", Msg: "FixedX", Full: hex.EncodeToString(b)}
			if err := c.Unmarshal(b, &v); err != nil {
				cc.Err, cc.ErrMsg = sentinel(err), err.Error()
			} else {
				cc.Want = canonOf(t, s, &v)
			}
			cs = append(cs, cc)
		}
	}
	return cs
}
