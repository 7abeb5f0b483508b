package bitwire

import (
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// For, Marshal and Unmarshal from 16 goroutines at once, on types that no
// other test compiles first, so that the compilation itself races. Run with
// go test -race.

type ConcVec struct{ X, Y float32 }

type ConcA struct {
	ID  uint16  `net:"bits=16"`
	X   float32 `net:"q,min=-100,max=100,prec=0.01"`
	HP  int     `net:"range,min=0,max=200"`
	Tag string  `net:"maxlen=8"`
}

type ConcB struct {
	Pos  ConcVec `net:"q,min=-10,max=10,prec=0.1"`
	Vel  ConcVec `net:"q,min=-1,max=1,bits=8"`
	Kids []ConcA
	N    int64 `net:"bitlen"`
}

type ConcC struct {
	M map[string]ConcA
	P *ConcB
	Q [4]float32 `net:"quat"`
}

type ConcNode struct {
	V    int32 `net:"varint"`
	Kids []ConcNode
	Next *ConcNode
}

type ConcD struct {
	Root ConcNode
	S    []int16 `net:"bitlen"`
	G1   int32   `net:"bitlen,group=g"`
	G2   int32   `net:"bitlen,group=g"`
}

type ConcE struct {
	F  float64   `net:"fixed,prec=0.001"`
	FS []float32 `net:"fixed,prec=0.5"`
	B  []byte    `net:"maxlen=32"`
}

// ConcF, ConcG and ConcH are only ever seen by the package-level functions.
type ConcF struct {
	A uint8 `net:"bits=5"`
	B ConcVec
}

type ConcG struct {
	Items map[int16]*ConcF
}

type ConcH struct {
	L []ConcG
	V ConcVec `net:"q,min=0,max=1,prec=0.01"`
}

func concValues(i int) (ConcA, ConcB, ConcC, ConcD, ConcE, ConcF, ConcG, ConcH) {
	a := ConcA{ID: uint16(i), X: float32(i%200) - 99.5, HP: i % 201, Tag: fmt.Sprint(i % 1000)}
	b := ConcB{Pos: ConcVec{1.25, -3}, Vel: ConcVec{0.5, -0.5}, Kids: []ConcA{a, a}, N: int64(-i)}
	c := ConcC{M: map[string]ConcA{"x": a, "y": {}}, P: &b, Q: [4]float32{0, 0, 0, 1}}
	d := ConcD{Root: ConcNode{V: 1, Kids: []ConcNode{{V: 2, Next: &ConcNode{V: 3}}}}, S: []int16{1, -2, 3}, G1: 5, G2: int32(i)}
	e := ConcE{F: float64(i) / 7, FS: []float32{1.5, -2}, B: []byte("concurrency")}
	f := ConcF{A: uint8(i % 32), B: ConcVec{1, 2}}
	g := ConcG{Items: map[int16]*ConcF{1: &f, -1: nil}}
	h := ConcH{L: []ConcG{g, {}}, V: ConcVec{0.25, 0.75}}
	return a, b, c, d, e, f, g, h
}

// concCodec compiles T with For, encodes v, decodes it, and checks the
// result against Quantize. It returns the codec so the caller can check
// every goroutine got the same one.
func concCodec[T any](v T) (any, error) {
	c, err := For[T]()
	if err != nil {
		return nil, err
	}
	data, err := c.Marshal(&v)
	if err != nil {
		return nil, err
	}
	var got T
	if err := c.Unmarshal(data, &got); err != nil {
		return nil, err
	}
	q := v
	if err := c.Quantize(&q); err != nil {
		return nil, err
	}
	again, err := c.Marshal(&got)
	if err != nil {
		return nil, err
	}
	if string(again) != string(data) || !c.Equal(&got, &q) {
		return nil, fmt.Errorf("%T: decoded value encodes differently", v)
	}
	_ = c.Layout()
	_ = c.MaxBits()
	_ = c.Fingerprint()
	return c, nil
}

// concPackage does the same with the package-level functions only. v is
// shared by all goroutines: encoding must only read it.
func concPackage[T any](v *T) error {
	data, err := Marshal(v)
	if err != nil {
		return err
	}
	var got T
	if err := Unmarshal(data, &got); err != nil {
		return err
	}
	again, err := Marshal(got)
	if err != nil {
		return err
	}
	if string(again) != string(data) {
		return fmt.Errorf("%T: decoded value encodes differently", got)
	}
	return nil
}

func TestConcurrentForAndMarshal(t *testing.T) {
	const workers = 16
	const rounds = 50
	_, _, _, _, _, sf, sg, sh := concValues(7) // shared by all goroutines
	var (
		start  = make(chan struct{})
		wg     sync.WaitGroup
		mu     sync.Mutex
		errs   []error
		codecs = map[string]map[any]bool{}
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			<-start
			for r := 0; r < rounds; r++ {
				a, b, c, d, e, f, g, h := concValues(w*rounds + r)
				jobs := []func() (any, error){
					func() (any, error) { return concCodec(a) },
					func() (any, error) { return concCodec(b) },
					func() (any, error) { return concCodec(c) },
					func() (any, error) { return concCodec(d) },
					func() (any, error) { return concCodec(e) },
					func() (any, error) { return nil, concPackage(&f) },
					func() (any, error) { return nil, concPackage(&g) },
					func() (any, error) { return nil, concPackage(&h) },
					func() (any, error) { return nil, concPackage(&sf) },
					func() (any, error) { return nil, concPackage(&sg) },
					func() (any, error) { return nil, concPackage(&sh) },
				}
				for _, i := range rng.Perm(len(jobs)) {
					c, err := jobs[i]()
					if err != nil {
						fail(fmt.Errorf("worker %d round %d job %d: %w", w, r, i, err))
						return
					}
					if c != nil {
						name := reflect.TypeOf(c).String()
						mu.Lock()
						if codecs[name] == nil {
							codecs[name] = map[any]bool{}
						}
						codecs[name][c] = true
						mu.Unlock()
					}
				}
			}
		}(w)
	}
	close(start)
	wg.Wait()
	require.Empty(t, errs)
	require.Len(t, codecs, 5)
	for name, set := range codecs {
		require.Len(t, set, 1, "%s: For returned different codecs", name)
	}
}

// Codecs of one type share one plan; distinct goroutines encoding into
// their own writers through one Codec do not interfere.
func TestConcurrentEncodeDecodeOneCodec(t *testing.T) {
	c := MustFor[ConcD]()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			buf := make([]byte, 0, 64)
			var got ConcD
			for i := 0; i < 200; i++ {
				_, _, _, d, _, _, _, _ := concValues(w*1000 + i)
				var err error
				buf, err = c.Append(buf[:0], &d)
				if err != nil {
					errs <- err
					return
				}
				if err := c.Unmarshal(buf, &got); err != nil {
					errs <- err
					return
				}
				if got.G2 != d.G2 || got.Root.Kids[0].Next.V != 3 {
					errs <- fmt.Errorf("worker %d: got %+v, want %+v", w, got, d)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
