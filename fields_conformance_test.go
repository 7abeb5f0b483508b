package bitwire

import (
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// Package fields alone produces the bytes the codec produces, for every
// coding, full and in deltas: each case encodes random values with the codec
// and again with a bits.Writer and the fields functions the wire format
// names, and compares the two. A hand-written encoder built from fields is
// therefore a conforming one.

// fieldsCase is one coding: random values through the codec (enc) and
// through fields (want), over the same values.
type fieldsCase struct {
	name string
	run  func(r *rand.Rand) (codec []byte, byFields []byte)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func full[T any](v T) []byte { return must(Marshal(&v)) }

func delta[T any](b, c T) []byte { return must(MarshalDelta(&b, &c)) }

func written(f func(w *bits.Writer)) []byte {
	var w bits.Writer
	f(&w)
	return append([]byte(nil), w.Bytes()...)
}

type (
	confBool struct{ V bool }
	confBits struct {
		U uint16 `net:"bits=11"`
		I int32  `net:"bits=9"`
	}
	confRange struct {
		U uint32 `net:"range,min=100,max=5000"`
		I int16  `net:"range,min=-300,max=300"`
	}
	confQ struct {
		A float32 `net:"q,min=-512,max=512,prec=0.01"`
		B float64 `net:"q,min=0,max=1,bits=7"`
	}
	confFloat struct {
		A float32
		B float64
	}
	confFixed struct {
		A float64 `net:"fixed,prec=0.5"`
	}
	confVarint struct {
		U uint64 `net:"varint"`
		I int32  `net:"varint,group=3"`
	}
	confBitlenU struct {
		A uint32
		B uint8 `net:"bitlen"`
	}
	confBitlenI struct {
		A int64
		B int16
	}
	confGroupU struct{ S []uint16 }
	confGroupI struct{ S [5]int32 }
	confString struct {
		S string
		B []byte `net:"maxlen=40"`
	}
	confQuat struct {
		Q [4]float32 `net:"quat,bits=11"`
	}
	confTime   struct{ T time.Time }
	confWindow struct {
		X float32 `net:"q,min=-100,max=100,prec=0.125,dmin=-4,dmax=4"`
		N int16   `net:"range,min=-1000,max=1000,dmin=-8,dmax=7"`
	}
	confQuatDelta struct {
		Q [4]float32 `net:"quat"`
	}
	confSliceDelta struct{ S []uint16 }
	confEnt        struct {
		ID uint8 `net:"id"`
		V  uint16
	}
	confEntities struct{ E []confEnt }
)

func randQuat(r *rand.Rand) [4]float32 {
	for {
		var v [4]float64
		n := 0.0
		for i := range v {
			v[i] = r.NormFloat64()
			n += v[i] * v[i]
		}
		if n < 1e-6 {
			continue
		}
		var q [4]float32
		for i := range v {
			q[i] = float32(v[i] / sqrt(n))
		}
		return q
	}
}

func sqrt(x float64) float64 {
	z := x
	for i := 0; i < 60; i++ {
		z = (z + x/z) / 2
	}
	return z
}

func quat64(q [4]float32) [4]float64 {
	return [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
}

var fieldsCases = []fieldsCase{
	{"bool", func(r *rand.Rand) ([]byte, []byte) {
		v := confBool{r.Intn(2) == 1}
		return full(v), written(func(w *bits.Writer) { w.WriteBool(v.V) })
	}},
	{"bits", func(r *rand.Rand) ([]byte, []byte) {
		v := confBits{uint16(r.Intn(1 << 11)), int32(r.Intn(512) - 256)}
		return full(v), written(func(w *bits.Writer) {
			must(0, fields.WriteUint(w, uint64(v.U), 11))
			must(0, fields.WriteInt(w, int64(v.I), 9))
		})
	}},
	{"range", func(r *rand.Rand) ([]byte, []byte) {
		v := confRange{uint32(100 + r.Intn(4901)), int16(r.Intn(601) - 300)}
		return full(v), written(func(w *bits.Writer) {
			must(0, must(fields.NewUintRange(100, 5000)).Write(w, uint64(v.U)))
			must(0, must(fields.NewIntRange(-300, 300)).Write(w, int64(v.I)))
		})
	}},
	{"q", func(r *rand.Rand) ([]byte, []byte) {
		v := confQ{float32(r.Float64()*1024 - 512), r.Float64()}
		return full(v), written(func(w *bits.Writer) {
			qa, qb := must(fields.NewQuantizer(-512, 512, 0.01)), must(fields.NewQuantizerBits(0, 1, 7))
			must(0, qa.Write(w, float64(v.A)))
			must(0, qb.Write(w, v.B))
		})
	}},
	{"float", func(r *rand.Rand) ([]byte, []byte) {
		v := confFloat{float32(r.NormFloat64()), r.NormFloat64() * 1e9}
		return full(v), written(func(w *bits.Writer) {
			fields.WriteFloat32(w, v.A)
			fields.WriteFloat64(w, v.B)
		})
	}},
	{"fixed", func(r *rand.Rand) ([]byte, []byte) {
		v := confFixed{float64(r.Intn(20001)-10000) / 4}
		return full(v), written(func(w *bits.Writer) {
			fx := must(fields.NewFixed(0.5))
			i := must(fx.ToInt(v.A))
			w.WriteBool(i < 0) // the message's "any negative" flag
			must(0, fx.Write(w, v.A, i < 0))
		})
	}},
	{"varint", func(r *rand.Rand) ([]byte, []byte) {
		v := confVarint{r.Uint64() >> uint(r.Intn(64)), int32(r.Uint32()) >> uint(r.Intn(32))}
		return full(v), written(func(w *bits.Writer) {
			fields.WriteVarint(w, v.U, 7)
			fields.WriteVarint(w, fields.Zigzag(int64(v.I)), 3)
		})
	}},
	{"bitlen unsigned", func(r *rand.Rand) ([]byte, []byte) {
		v := confBitlenU{r.Uint32() >> uint(r.Intn(32)), uint8(r.Intn(256))}
		return full(v), written(func(w *bits.Writer) {
			fields.WriteBitlen(w, uint64(v.A), fields.BitlenWidth(32))
			fields.WriteBitlen(w, uint64(v.B), fields.BitlenWidth(8))
		})
	}},
	{"bitlen signed", func(r *rand.Rand) ([]byte, []byte) {
		v := confBitlenI{int64(r.Uint64()) >> uint(r.Intn(64)), int16(r.Intn(1<<16) - 1<<15)}
		if r.Intn(2) == 0 {
			v.A, v.B = max(v.A, 0), max(v.B, 0)
		}
		neg := v.A < 0 || v.B < 0
		return full(v), written(func(w *bits.Writer) {
			w.WriteBool(neg)
			must(0, fields.WriteBitlenInt(w, v.A, fields.BitlenWidth(64), neg))
			must(0, fields.WriteBitlenInt(w, int64(v.B), fields.BitlenWidth(16), neg))
		})
	}},
	{"bitlen group, unsigned slice", func(r *rand.Rand) ([]byte, []byte) {
		v := confGroupU{make([]uint16, r.Intn(6))}
		vs := make([]uint64, len(v.S))
		sh := uint(r.Intn(16))
		for i := range v.S {
			v.S[i] = uint16(r.Intn(1<<16)) >> sh
			vs[i] = uint64(v.S[i])
		}
		return full(v), written(func(w *bits.Writer) {
			must(0, fields.WriteLen(w, len(vs), 0))
			fields.WriteBitlenUints(w, vs, fields.BitlenWidth(16))
		})
	}},
	{"bitlen group, signed array", func(r *rand.Rand) ([]byte, []byte) {
		var v confGroupI
		vs := make([]int64, len(v.S))
		neg := false
		sh := uint(r.Intn(32))
		for i := range v.S {
			v.S[i] = int32(r.Uint32()) >> sh
			if r.Intn(3) == 0 {
				v.S[i] = max(v.S[i], 0)
			}
			vs[i] = int64(v.S[i])
			neg = neg || v.S[i] < 0
		}
		return full(v), written(func(w *bits.Writer) {
			w.WriteBool(neg)
			must(0, fields.WriteBitlenInts(w, vs, fields.BitlenWidth(32), neg))
		})
	}},
	{"string and bytes", func(r *rand.Rand) ([]byte, []byte) {
		s := make([]byte, r.Intn(50))
		r.Read(s)
		v := confString{string(s), s[:min(len(s), 40)]}
		return full(v), written(func(w *bits.Writer) {
			must(0, fields.WriteString(w, v.S, 0))
			must(0, fields.WriteBytes(w, v.B, 40))
		})
	}},
	{"quat", func(r *rand.Rand) ([]byte, []byte) {
		v := confQuat{randQuat(r)}
		return full(v), written(func(w *bits.Writer) {
			must(0, must(fields.NewQuat(11)).Write(w, quat64(v.Q)))
		})
	}},
	{"time", func(r *rand.Rand) ([]byte, []byte) {
		v := confTime{time.Unix(r.Int63n(1<<40)-1<<39, r.Int63n(1e9)).UTC()}
		return full(v), written(func(w *bits.Writer) { fields.WriteTime(w, v.T) })
	}},
	{"delta window", func(r *rand.Rand) ([]byte, []byte) {
		b := confWindow{float32(r.Float64()*200 - 100), int16(r.Intn(2001) - 1000)}
		c := b
		if r.Intn(2) == 0 {
			c.X = float32(min(100, max(-100, float64(b.X)+r.Float64()*12-6)))
		}
		if r.Intn(2) == 0 {
			c.N = int16(min(1000, max(-1000, int(b.N)+r.Intn(25)-12)))
		}
		return delta(b, c), written(func(w *bits.Writer) {
			q := must(fields.NewQuantizer(-100, 100, 0.125))
			kb, kc := must(q.Index(float64(b.X))), must(q.Index(float64(c.X)))
			w.WriteBool(kb != kc)
			wx := must(fields.NewWindow(-4, 4, 0.125))
			sx := wx.NewState() // one state per windowed field per message
			if kb != kc && !wx.Write(w, &sx, kb, kc) {
				w.WriteBits(kc, q.Bits())
			}
			w.WriteBool(b.N != c.N)
			wn := must(fields.NewWindow(-8, 7, 1))
			sn := wn.NewState()
			if b.N != c.N && !wn.Write(w, &sn, uint64(int64(b.N)), uint64(int64(c.N))) {
				must(0, must(fields.NewIntRange(-1000, 1000)).Write(w, int64(c.N)))
			}
		})
	}},
	{"relative quaternion", func(r *rand.Rand) ([]byte, []byte) {
		b := confQuatDelta{randQuat(r)}
		var c confQuatDelta
		var v [4]float64
		n := 0.0
		for i := range v {
			v[i] = float64(b.Q[i]) + r.NormFloat64()*0.01*float64(r.Intn(3))
			n += v[i] * v[i]
		}
		for i := range v {
			c.Q[i] = float32(v[i] / sqrt(n))
		}
		q := must(fields.NewQuat(fields.DefaultQuatBits))
		return delta(b, c), written(func(w *bits.Writer) {
			qb, qc := must(q.Pack(quat64(b.Q))), must(q.Pack(quat64(c.Q)))
			w.WriteBool(qb != qc)
			if qb != qc {
				qs := fields.NewQuatDeltaState() // one per message
				q.WriteDelta(w, &qs, qb, true, qc)
			}
		})
	}},
	{"slice delta: index set", func(r *rand.Rand) ([]byte, []byte) {
		b := confSliceDelta{make([]uint16, r.Intn(40))}
		for i := range b.S {
			b.S[i] = uint16(r.Intn(1 << 16))
		}
		c := confSliceDelta{append([]uint16(nil), b.S...)}
		var changed []int32
		for i := range c.S {
			if r.Intn(4) == 0 {
				c.S[i]++
				changed = append(changed, int32(i))
			}
		}
		if len(changed) == 0 && len(c.S) > 0 {
			c.S[0]++
			changed = []int32{0}
		}
		return delta(b, c), written(func(w *bits.Writer) {
			w.WriteBool(len(changed) > 0)
			if len(changed) == 0 {
				return
			}
			must(0, fields.WriteLen(w, len(c.S), 0))
			fields.WriteIndexSet(w, changed, len(c.S), false)
			for _, i := range changed {
				fields.WriteBitlen(w, uint64(c.S[i]), fields.BitlenWidth(16))
			}
		})
	}},
	{"entity set delta: three index sets", func(r *rand.Rand) ([]byte, []byte) {
		var b, c confEntities
		for id := 0; id < 60; id += 1 + r.Intn(3) {
			v := uint16(r.Intn(1 << 16))
			if r.Intn(4) > 0 {
				b.E = append(b.E, confEnt{uint8(id), v})
			}
			switch k := r.Intn(5); {
			case k == 0: // removed (or never there)
			case k == 1:
				c.E = append(c.E, confEnt{uint8(id), v + 1})
			default:
				c.E = append(c.E, confEnt{uint8(id), v})
			}
		}
		return delta(b, c), written(func(w *bits.Writer) {
			var removed, added, changed []int32
			var changedC []confEnt
			i, j, surv := 0, 0, 0
			for i < len(b.E) || j < len(c.E) {
				switch {
				case j == len(c.E) || (i < len(b.E) && b.E[i].ID < c.E[j].ID):
					removed = append(removed, int32(i))
					i++
				case i == len(b.E) || c.E[j].ID < b.E[i].ID:
					added = append(added, int32(j))
					j++
				default:
					if b.E[i] != c.E[j] {
						changed = append(changed, int32(surv))
						changedC = append(changedC, c.E[j])
					}
					surv, i, j = surv+1, i+1, j+1
				}
			}
			w.WriteBool(len(removed)+len(added)+len(changed) > 0)
			if len(removed)+len(added)+len(changed) == 0 {
				return
			}
			must(0, fields.WriteLen(w, len(c.E), 0))
			fields.WriteIndexSet(w, removed, len(b.E), false)
			fields.WriteIndexSet(w, added, len(c.E), true)
			fields.WriteIndexSet(w, changed, surv, false)
			for _, e := range changedC {
				w.WriteBool(true) // V changed; the id has no changed bit
				fields.WriteBitlen(w, uint64(e.V), fields.BitlenWidth(16))
			}
			for _, k := range added {
				fields.WriteBitlen(w, uint64(c.E[k].ID), fields.BitlenWidth(8))
				fields.WriteBitlen(w, uint64(c.E[k].V), fields.BitlenWidth(16))
			}
		})
	}},
}

func TestFieldsProduceTheCodecBytes(t *testing.T) {
	for _, c := range fieldsCases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewSource(7))
			for i := 0; i < 300; i++ {
				got, want := c.run(r)
				require.Equal(t, want, got, "value %d", i)
			}
		})
	}
}

// And back: the readers of package fields read the codec's bytes into the
// values the codec decodes, for the codings whose reading the root package
// does not call through fields as a whole (groups, fixed point, signed
// bitlen values, byte strings).
func TestFieldsReadTheCodecBytes(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 300; i++ {
		// signed bitlen values under the message's flag
		bi := confBitlenI{int64(r.Uint64()) >> uint(r.Intn(64)), int16(r.Intn(1<<16) - 1<<15)}
		rd := bits.NewReader(full(bi))
		neg, err := rd.ReadBool()
		require.NoError(t, err)
		a, err := fields.ReadBitlenInt(rd, fields.BitlenWidth(64), neg)
		require.NoError(t, err)
		b, err := fields.ReadBitlenInt(rd, fields.BitlenWidth(16), neg)
		require.NoError(t, err)
		require.Equal(t, bi, confBitlenI{a, int16(b)})

		// a group of unsigned values, and one of signed values
		gu := confGroupU{make([]uint16, r.Intn(6))}
		sh := uint(r.Intn(16))
		for k := range gu.S {
			gu.S[k] = uint16(r.Intn(1<<16)) >> sh
		}
		rd = bits.NewReader(full(gu))
		l, err := fields.ReadLen(rd, 0)
		require.NoError(t, err)
		us := make([]uint64, l)
		require.NoError(t, fields.ReadBitlenUints(rd, us, fields.BitlenWidth(16)))
		require.Equal(t, len(gu.S), l)
		for k := range us {
			require.Equal(t, uint64(gu.S[k]), us[k])
		}
		var gi confGroupI
		for k := range gi.S {
			gi.S[k] = int32(r.Uint32()) >> uint(r.Intn(32))
		}
		rd = bits.NewReader(full(gi))
		neg, err = rd.ReadBool()
		require.NoError(t, err)
		is := make([]int64, len(gi.S))
		require.NoError(t, fields.ReadBitlenInts(rd, is, fields.BitlenWidth(32), neg))
		for k := range is {
			require.Equal(t, int64(gi.S[k]), is[k])
		}

		// fixed point
		fx := confFixed{float64(r.Intn(20001)-10000) / 4}
		rd = bits.NewReader(full(fx))
		neg, err = rd.ReadBool()
		require.NoError(t, err)
		f, err := must(fields.NewFixed(0.5)).Read(rd, neg)
		require.NoError(t, err)
		var dec confFixed
		require.NoError(t, Unmarshal(full(fx), &dec))
		require.Equal(t, dec.A, f)

		// strings and byte strings
		s := make([]byte, r.Intn(50))
		r.Read(s)
		cs := confString{string(s), s[:min(len(s), 40)]}
		rd = bits.NewReader(full(cs))
		str, err := fields.ReadString(rd, 0)
		require.NoError(t, err)
		bs, err := fields.ReadBytes(rd, nil, 40)
		require.NoError(t, err)
		require.Equal(t, cs.S, str)
		require.Equal(t, string(cs.B), string(bs))

		// raw floats
		cf := confFloat{float32(r.NormFloat64()), r.NormFloat64()}
		rd = bits.NewReader(full(cf))
		f32, err := fields.ReadFloat32(rd)
		require.NoError(t, err)
		f64, err := fields.ReadFloat64(rd)
		require.NoError(t, err)
		require.Equal(t, cf, confFloat{f32, f64})
	}
}
