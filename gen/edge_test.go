package gen_test

import (
	"encoding/hex"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
)

// The edge corpus: wire version 2's corners, which random values of the
// main corpus reach too seldom. cfEdge's q fields are valued at zero, half
// a step either side of it, the clamped ends of grids anchored at zero, the
// float32 bounds and the ranges' edges; its quaternions sit near the grid's
// zero. cfQ3 is every encoding of a 3-bit quaternion (2,048 of them,
// index 7 above the grid among them); cfMaps is maps written key by key,
// in and out of ascending order.

type cfEdge struct {
	Z   float32          `net:"q,min=-1,max=1,prec=0.1"`                                 // anchored, symmetric
	ZA  float64          `net:"q,min=-0.35,max=1.27,prec=0.1"`                           // anchored, ends off the multiples
	ZB  float32          `net:"q,min=-3.141592653589793,max=3.141592653589793,bits=8"`   // anchored, bits, float32 bounds
	ZC  float64          `net:"q,min=-0.04,max=0.03,prec=0.1"`                           // anchored, 0 steps: 0 bits
	ZD  float32          `net:"q,min=-5,max=3,bits=1"`                                   // anchored, one bit
	ZE  float32          `net:"q,min=-2,max=5,bits=2,clamp"`                             // anchored, clamped
	ZF  float64          `net:"q,min=-1e-300,max=1e300,bits=40"`                         // anchored, lopsided
	F32 float32          `net:"q,min=0.1,max=0.7,prec=0.001"`                            // from A to B, float32 bounds
	Neg float32          `net:"q,min=-10,max=-2,prec=0.01"`                              // from A to B, negative
	W   float32          `net:"q,min=-1,max=1,prec=0.01,dmin=-0.5,dmax=0.5"`             // window on an anchored grid
	WC  float64          `net:"q,min=-100,max=100,bits=12,dmin=-2,dmax=2,clamp"`         // window, bits, clamp
	R0  int32            `net:"range,min=7,max=7"`                                       // 0 bits
	R   int16            `net:"range,min=-32768,max=32767,dmin=-3,dmax=3"`               // the type's edges
	RU  uint64           `net:"range,min=18446744073709551614,max=18446744073709551615"` // 1 bit at the top
	Q2  [4]float32       `net:"quat,bits=2"`                                             // the coarsest grid
	Q9  [4]float64       `net:"quat"`                                                    // the default grid
	QS  cfQuat           `net:"quat,bits=12"`                                            // relative deltas
	M   map[int8]float32 `net:"q,min=-1,max=1,bits=4"`                                   // anchored values in a map
}

type cfQ3 struct {
	R [4]float32 `net:"quat,bits=3"`
}

type cfMaps struct {
	M  map[uint8]int8  `net:"maxlen=7"`
	MS map[string]bool `net:"maxlen=7"`
	MB map[bool]uint16 `net:"maxlen=3"`
	MN map[int16]uint8 `net:"maxlen=7"`
}

// edgeValue picks a value of a q field from its schema's grid: zero, the
// points next to it and half a step from them, the bounds and their
// neighbours, the clamped ends, or any value in the range.
func edgeValue(r *rand.Rand, q *bitwire.QParams, f32 bool) float64 {
	lo, hi := q.Min, q.Max
	var v float64
	switch r.Intn(12) {
	case 0:
		v = 0
	case 1:
		v = q.Step / 2
	case 2:
		v = -q.Step / 2
	case 3:
		v = math.Nextafter(q.Step/2, 0)
	case 4:
		v = math.Nextafter(-q.Step/2, 0)
	case 5:
		v = lo
	case 6:
		v = hi
	case 7:
		v = float64(q.KMin) * q.Step // the multiple index 0 stands for (clamped below)
	case 8:
		v = float64(q.KMin+int64(q.Steps)) * q.Step
	case 9:
		v = float64(r.Intn(7)-3) * q.Step
	case 10:
		v = math.Nextafter(lo, hi)
	default:
		v = lo + r.Float64()*(hi-lo)
	}
	if f32 {
		v = float64(float32(v))
	}
	return min(max(v, lo), hi)
}

// nearZeroQuat is a unit quaternion with some components at or near 0.
func nearZeroQuat(r *rand.Rand) [4]float64 {
	q := randQuat(r)
	switch r.Intn(5) {
	case 0:
		q = [4]float64{}
		q[r.Intn(4)] = 1 - 2*float64(r.Intn(2))
	case 1, 2:
		for i := range q {
			if r.Intn(2) == 0 {
				q[i] *= 1e-4 * float64(r.Intn(30))
			}
		}
	case 3:
		q = [4]float64{}
		a, b := r.Intn(4), r.Intn(4)
		q[a], q[b] = math.Sqrt2/2, math.Sqrt2/2*(1-2*float64(r.Intn(2)))
	}
	n := math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
	if n < 0.5 {
		return [4]float64{0, 0, 0, 1}
	}
	for i := range q {
		q[i] /= n
	}
	return q
}

func randEdge(r *rand.Rand) cfEdge {
	s := bitwire.MustFor[cfEdge]().Schema()
	var v cfEdge
	rv := reflect.ValueOf(&v).Elem()
	for _, f := range s.Types[s.Root].Fields {
		if f.Node.Coding != "q" {
			continue
		}
		rv.FieldByName(f.Name).SetFloat(edgeValue(r, f.Node.Q, f.Node.Type == "float32"))
	}
	if r.Intn(4) == 0 { // clamped: beyond the ends
		v.ZE = float32(r.Float64()*20 - 10)
		v.WC = r.Float64()*400 - 200
	}
	v.R0 = 7
	v.R = int16(r.Intn(65536) - 32768)
	switch r.Intn(4) {
	case 0:
		v.R = math.MinInt16
	case 1:
		v.R = math.MaxInt16
	}
	v.RU = math.MaxUint64 - uint64(r.Intn(2))
	q := nearZeroQuat(r)
	v.Q2 = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
	v.Q9 = nearZeroQuat(r)
	q = nearZeroQuat(r)
	v.QS = cfQuat{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
	if r.Intn(3) > 0 {
		v.M = map[int8]float32{}
		mq := s.Types[s.Root].Fields[len(s.Types[s.Root].Fields)-1].Node.Elem.Q
		for i := r.Intn(6); i > 0; i-- {
			v.M[int8(r.Intn(256)-128)] = float32(edgeValue(r, mq, true))
		}
	}
	return v
}

// nextEdge moves some fields of v a little: deltas inside and outside the
// windows, relative quaternions.
func nextEdge(r *rand.Rand, v cfEdge) cfEdge {
	n := randEdge(r)
	out := v
	if r.Intn(2) == 0 {
		out.W = max(-1, min(1, v.W+float32(r.Intn(121)-60)*0.01))
	}
	if r.Intn(2) == 0 {
		out.WC = v.WC + float64(r.Intn(9)-4)*0.05
	}
	if r.Intn(2) == 0 {
		out.R = int16(max(math.MinInt16, min(math.MaxInt16, int(v.R)+r.Intn(9)-4)))
	}
	if r.Intn(2) == 0 {
		out.QS = cfQuat{v.QS.X + float32(r.NormFloat64()*1e-3), v.QS.Y, v.QS.Z, v.QS.W}
		n2 := out.QS.X*out.QS.X + out.QS.Y*out.QS.Y + out.QS.Z*out.QS.Z + out.QS.W*out.QS.W
		if math.Abs(float64(n2)-1) > 1e-3 {
			out.QS = v.QS
		}
	} else if r.Intn(2) == 0 {
		out.QS = n.QS
	}
	if r.Intn(3) == 0 {
		out.Z, out.ZA, out.ZB, out.ZD, out.ZF, out.F32, out.Neg = n.Z, n.ZA, n.ZB, n.ZD, n.ZF, n.F32, n.Neg
	}
	if r.Intn(3) == 0 {
		out.Q2, out.Q9 = n.Q2, n.Q9
	}
	if r.Intn(3) == 0 {
		out.M = n.M
	}
	return out
}

// q3Cases are every 11-bit encoding of cfQ3, each with Go's value or
// error.
func q3Cases(t *testing.T) []cfCase {
	c := bitwire.MustFor[cfQ3]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
	s := c.Schema()
	var cs []cfCase
	for u := 0; u < 1<<11; u++ {
		w := bits.NewWriter(nil)
		w.WriteBits(uint64(u), 11)
		b := append([]byte(nil), w.Bytes()...)
		var v cfQ3
		cc := cfCase{Kind: "damaged", Msg: "Q3", Full: hex.EncodeToString(b)}
		if err := c.Unmarshal(b, &v); err != nil {
			cc.Err, cc.ErrMsg = sentinel(err), err.Error()
		} else {
			cc.Want = canonOf(t, s, &v)
		}
		cs = append(cs, cc)
	}
	return cs
}

type cfKeyU8 struct{ K uint8 }
type cfKeyI16 struct{ K int16 }
type cfKeyS struct{ K string }
type cfValI8 struct{ V int8 }
type cfValU8 struct{ V uint8 }
type cfValU16 struct{ V uint16 }

// writeMap writes a map's length in lbits bits, then each key and value
// with the codecs of one-field structs (a struct is its fields, nothing
// more), in the order given.
func writeMap[K, V any](t *testing.T, w *bits.Writer, lbits int, keys []K, vals []V) {
	kc, vc := bitwire.MustFor[K](), bitwire.MustFor[V]()
	w.WriteBits(uint64(len(keys)), lbits)
	for i := range keys {
		if err := kc.Encode(w, &keys[i]); err != nil {
			t.Fatal(err)
		}
		if err := vc.Encode(w, &vals[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// keyOrder returns n keys from pick in ascending order (less), or, one
// time in two, with two of them swapped or one repeated.
func keyOrder[K any](r *rand.Rand, n int, pick func() K, less func(a, b K) bool) []K {
	ks := make([]K, n)
	for i := range ks {
		ks[i] = pick()
	}
	sort.Slice(ks, func(i, j int) bool { return less(ks[i], ks[j]) })
	if n >= 2 && r.Intn(2) == 0 {
		i := r.Intn(n - 1)
		if r.Intn(2) == 0 {
			ks[i], ks[i+1] = ks[i+1], ks[i]
		} else {
			ks[i+1] = ks[i]
		}
	}
	return ks
}

// mapCases are n cfMaps messages written key by key, a third of their
// maps out of order or with a repeated key, each with Go's value or error.
func mapCases(t *testing.T, n int, r *rand.Rand) []cfCase {
	c := bitwire.MustFor[cfMaps]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
	s := c.Schema()
	var cs []cfCase
	for i := 0; i < n; i++ {
		w := bits.NewWriter(nil)
		ku := keyOrder(r, r.Intn(8), func() cfKeyU8 { return cfKeyU8{uint8(r.Intn(256))} }, func(a, b cfKeyU8) bool { return a.K < b.K })
		vu := make([]cfValI8, len(ku))
		for j := range vu {
			vu[j].V = int8(r.Intn(256) - 128)
		}
		writeMap(t, w, 3, ku, vu)
		ks := keyOrder(r, r.Intn(8), func() cfKeyS { return cfKeyS{strconv.Itoa(r.Intn(300))} }, func(a, b cfKeyS) bool { return a.K < b.K })
		vs := make([]cfKeyB, len(ks))
		for j := range vs {
			vs[j].B = r.Intn(2) == 0
		}
		writeMap(t, w, 3, ks, vs)
		kb := keyOrder(r, r.Intn(3), func() cfKeyB { return cfKeyB{r.Intn(2) == 0} }, func(a, b cfKeyB) bool { return !a.B && b.B })
		vb := make([]cfValU16, len(kb))
		for j := range vb {
			vb[j].V = uint16(r.Intn(65536))
		}
		writeMap(t, w, 2, kb, vb)
		kn := keyOrder(r, r.Intn(8), func() cfKeyI16 { return cfKeyI16{int16(r.Intn(65536) - 32768)} }, func(a, b cfKeyI16) bool { return a.K < b.K })
		vn := make([]cfValU8, len(kn))
		for j := range vn {
			vn[j].V = uint8(r.Intn(256))
		}
		writeMap(t, w, 3, kn, vn)
		b := append([]byte(nil), w.Bytes()...)
		var v cfMaps
		cc := cfCase{Kind: "damaged", Msg: "Maps", Full: hex.EncodeToString(b)}
		if err := c.Unmarshal(b, &v); err != nil {
			cc.Err, cc.ErrMsg = sentinel(err), err.Error()
		} else {
			cc.Want = canonOf(t, s, &v)
		}
		cs = append(cs, cc)
	}
	return cs
}

type cfKeyB struct{ B bool }

// randMaps is a cfMaps of random, well-ordered maps, for full messages
// and deltas (added keys among surviving ones).
func randMaps(r *rand.Rand) cfMaps {
	var v cfMaps
	if r.Intn(4) > 0 {
		v.M = map[uint8]int8{}
		for i := r.Intn(8); i > 0; i-- {
			v.M[uint8(r.Intn(16))] = int8(r.Intn(256) - 128)
		}
	}
	if r.Intn(4) > 0 {
		v.MS = map[string]bool{}
		for i := r.Intn(8); i > 0; i-- {
			v.MS[strconv.Itoa(r.Intn(20))] = r.Intn(2) == 0
		}
	}
	if r.Intn(2) > 0 {
		v.MB = map[bool]uint16{}
		for i := r.Intn(3); i > 0; i-- {
			v.MB[r.Intn(2) == 0] = uint16(r.Intn(65536))
		}
	}
	if r.Intn(4) > 0 {
		v.MN = map[int16]uint8{}
		for i := r.Intn(8); i > 0; i-- {
			v.MN[int16(r.Intn(20)-10)] = uint8(r.Intn(256))
		}
	}
	return v
}
