package bitwire

import (
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/bitwire/bitwire/bits"
)

// randomQTag returns a random q tag: bounds from a mix of round numbers,
// irrational ones (π, e), tiny and huge magnitudes, ranges on either side
// of zero or across it, with prec= or bits=.
func randomQTag(rng *rand.Rand) (string, float64, float64) {
	mags := []float64{1, math.Pi, math.E, 0.1, 512, 1e-3, 360, 1e6, 3.3, 100.25}
	pick := func() float64 {
		m := mags[rng.Intn(len(mags))] * math.Exp(rng.NormFloat64())
		if rng.Intn(3) == 0 {
			m = mags[rng.Intn(len(mags))]
		}
		return m
	}
	var lo, hi float64
	switch rng.Intn(4) {
	case 0: // symmetric
		hi = pick()
		lo = -hi
	case 1: // across zero
		lo, hi = -pick(), pick()
	case 2: // from zero or above
		lo = 0
		if rng.Intn(2) == 0 {
			lo = pick()
		}
		hi = lo + pick()
	default: // at or below zero
		hi = 0
		if rng.Intn(2) == 0 {
			hi = -pick()
		}
		lo = hi - pick()
	}
	if rng.Intn(2) == 0 {
		return fmt.Sprintf("q,min=%v,max=%v,bits=%d", lo, hi, 1+rng.Intn(30)), lo, hi
	}
	prec := (hi - lo) / math.Exp(rng.Float64()*18)
	return fmt.Sprintf("q,min=%v,max=%v,prec=%v", lo, hi, prec), lo, hi
}

// TestQuantizeIdempotentRandomTags builds random struct types of q fields
// (float32 and float64, random tags) and checks, for values at and next to
// the edges, zero and random ones, that every quantized value re-encodes,
// that Quantize is idempotent, that a quantized value equals itself and
// lies in the range, and that zero is exact whenever the range holds it.
func TestQuantizeIdempotentRandomTags(t *testing.T) {
	rng := rand.New(rand.NewSource(1414))
	accepted := 0
	for range 400 {
		n := 1 + rng.Intn(4)
		var sf []reflect.StructField
		var los, his []float64
		for i := range n {
			tag, lo, hi := randomQTag(rng)
			typ := reflect.TypeFor[float64]()
			if rng.Intn(2) == 0 {
				typ = reflect.TypeFor[float32]()
			}
			sf = append(sf, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: typ, Tag: reflect.StructTag(`net:"` + tag + `"`)})
			los, his = append(los, lo), append(his, hi)
		}
		typ := reflect.StructOf(sf)
		p, err := compileRoot(typ)
		if err != nil {
			continue // a grid finer than the type holds, or over 53 bits
		}
		accepted++
		for range 40 {
			v := reflect.New(typ)
			for i := range n {
				lo, hi := los[i], his[i]
				var x float64
				switch rng.Intn(8) {
				case 0:
					x = lo
				case 1:
					x = hi
				case 2:
					x = math.Nextafter(lo, hi)
				case 3:
					x = math.Nextafter(hi, lo)
				case 4:
					x = 0
				default:
					x = lo + rng.Float64()*(hi-lo)
				}
				f := v.Elem().Field(i)
				if f.Kind() == reflect.Float32 {
					// float32 neighbours of the bounds that lie inside them.
					x32 := float32(x)
					if rng.Intn(2) == 0 {
						x32 = math.Nextafter32(x32, float32(lo+hi)/2)
					}
					if float64(x32) < lo || float64(x32) > hi {
						x32 = float32(inward32(x, 1))
						if float64(x32) > hi {
							x32 = float32(inward32(x, -1))
						}
					}
					x = float64(x32)
				}
				if x < lo || x > hi {
					x = lo
					if f.Kind() == reflect.Float32 {
						x = inward32(lo, 1) // For made sure one is inside
					}
				}
				f.SetFloat(x)
			}
			ptr := v.UnsafePointer()
			name := fmt.Sprintf("%v %+v", typ, v.Elem().Interface())
			require.NoError(t, quantizeAt(p, ptr), name)
			q1 := v.Elem().Interface()
			for i := range n {
				got := v.Elem().Field(i).Float()
				require.True(t, got >= los[i] && got <= his[i], "%s: field %d = %v outside [%v, %v]", name, i, got, los[i], his[i])
			}
			_, err := marshalPlan(p, ptr, &options{})
			require.NoError(t, err, "re-encoding the quantized %s", name)
			require.NoError(t, quantizeAt(p, ptr), name)
			require.Equal(t, q1, v.Elem().Interface(), "Quantize is not idempotent on %s", name)
		}
		// Zero quantizes to exactly zero whenever the range holds it.
		v := reflect.New(typ)
		for i := range n {
			if f := v.Elem().Field(i); los[i] > 0 || his[i] < 0 {
				f.SetFloat(los[i])
				if f.Kind() == reflect.Float32 {
					f.SetFloat(inward32(los[i], 1))
				}
			}
		}
		require.NoError(t, quantizeAt(p, v.UnsafePointer()))
		for i := range n {
			if los[i] <= 0 && 0 <= his[i] {
				require.Equal(t, 0.0, v.Elem().Field(i).Float(), "%v field %d", typ, i)
			}
		}
	}
	require.Greater(t, accepted, 200)
}

// quantizeAt is Codec.Quantize for a plan compiled at run time.
func quantizeAt(p *plan, ptr unsafe.Pointer) error {
	var w bits.Writer
	if err := encodeRootOpt(p, &w, ptr, &options{}); err != nil {
		return err
	}
	var r bits.Reader
	r.Reset(w.Bytes())
	return decodeRootOpt(p, &r, ptr, &options{})
}

// The reproducer of issue 14: a float32 just inside ±π quantized to the
// bound, whose float32 lay above π, so that it no longer re-encoded.
type piAngle struct {
	A float32 `net:"q,min=-3.141592653589793,max=3.141592653589793,prec=0.001"`
}

func TestQuantizeFloat32InsideBounds(t *testing.T) {
	c := MustFor[piAngle]()
	v := piAngle{A: math.Nextafter32(float32(math.Pi), 0)}
	require.NoError(t, c.Quantize(&v))
	require.LessOrEqual(t, float64(v.A), math.Pi)
	_, err := c.Marshal(&v)
	require.NoError(t, err)
	q := v
	require.NoError(t, c.Quantize(&q))
	require.Equal(t, v, q)
	require.True(t, c.Equal(&v, &v))
}
