//go:build go1.24

package fields

import (
	"testing"

	"github.com/bitwire/bitwire/bits"
)

// Each benchmark codes 256 values per iteration on a reused Writer and
// Reader; compare runs with benchstat.

func benchValues() []float64 {
	rng := newRand(20)
	vs := make([]float64, 256)
	for i := range vs {
		vs[i] = rng.Float64()*1024 - 512
	}
	return vs
}

func BenchmarkQuantizer(b *testing.B) {
	q, _ := NewQuantizer(-512, 512, 0.01)
	vs := benchValues()
	w := bits.NewWriter(make([]byte, 0, 1024))
	b.Run("Write", func(b *testing.B) {
		for b.Loop() {
			w.Reset(w.Bytes()[:0])
			for _, v := range vs {
				_ = q.Write(w, v)
			}
		}
	})
	data := append([]byte(nil), w.Bytes()...)
	var r bits.Reader
	b.Run("Read", func(b *testing.B) {
		for b.Loop() {
			r.Reset(data)
			for range vs {
				_, _ = q.Read(&r)
			}
		}
	})
}

func BenchmarkBitlen(b *testing.B) {
	rng := newRand(21)
	vs := make([]int64, 256)
	for i := range vs {
		vs[i] = randInt64(rng) >> 20
	}
	w := bits.NewWriter(make([]byte, 0, 4096))
	b.Run("WriteInt", func(b *testing.B) {
		for b.Loop() {
			w.Reset(w.Bytes()[:0])
			for _, v := range vs {
				_ = WriteBitlenInt(w, v, 6, true)
			}
		}
	})
	data := append([]byte(nil), w.Bytes()...)
	var r bits.Reader
	b.Run("ReadInt", func(b *testing.B) {
		for b.Loop() {
			r.Reset(data)
			for range vs {
				_, _ = ReadBitlenInt(&r, 6, true)
			}
		}
	})
	b.Run("WriteGroup", func(b *testing.B) {
		for b.Loop() {
			w.Reset(w.Bytes()[:0])
			_ = WriteBitlenInts(w, vs, 6, true)
		}
	})
	group := append([]byte(nil), w.Bytes()...)
	dst := make([]int64, len(vs))
	b.Run("ReadGroup", func(b *testing.B) {
		for b.Loop() {
			r.Reset(group)
			_ = ReadBitlenInts(&r, dst, 6, true)
		}
	})
}

func BenchmarkVarint(b *testing.B) {
	rng := newRand(22)
	vs := make([]uint64, 256)
	for i := range vs {
		vs[i] = randUint64(rng)
	}
	w := bits.NewWriter(make([]byte, 0, 4096))
	b.Run("Write", func(b *testing.B) {
		for b.Loop() {
			w.Reset(w.Bytes()[:0])
			for _, v := range vs {
				WriteVarint(w, v, 7)
			}
		}
	})
	data := append([]byte(nil), w.Bytes()...)
	var r bits.Reader
	b.Run("Read", func(b *testing.B) {
		for b.Loop() {
			r.Reset(data)
			for range vs {
				_, _ = ReadVarint(&r, 7)
			}
		}
	})
}

func BenchmarkQuat(b *testing.B) {
	rng := newRand(23)
	q, _ := NewQuat(9)
	vs := make([][4]float64, 256)
	for i := range vs {
		vs[i] = randomRotation(rng)
	}
	w := bits.NewWriter(make([]byte, 0, 1024))
	b.Run("Write", func(b *testing.B) {
		for b.Loop() {
			w.Reset(w.Bytes()[:0])
			for _, v := range vs {
				_ = q.Write(w, v)
			}
		}
	})
	data := append([]byte(nil), w.Bytes()...)
	var r bits.Reader
	b.Run("Read", func(b *testing.B) {
		for b.Loop() {
			r.Reset(data)
			for range vs {
				_, _ = q.Read(&r)
			}
		}
	})
}
