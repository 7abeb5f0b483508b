package gen_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/internal/toolchain"
	"github.com/bitwire/bitwire/snapshot"
)

// The conformance corpus: types that cover every coding and option, random
// values of them, and deltas between them; the generated clients must
// decode each case to exactly what Go's Quantize gives and re-encode each
// full message to the same bytes.

type cfVec struct {
	X, Y float32 `net:"q,min=-100,max=100,prec=0.01,dmin=-1,dmax=1"`
	Z    float32 `net:"q,min=-16,max=112,prec=0.01"`
}

type cfQuat struct{ X, Y, Z, W float32 }

type cfEntity struct {
	ID   uint16     `net:"id"`
	Pos  cfVec      `net:"composite"`
	Rot  [4]float32 `net:"quat,bits=11"`
	HP   int        `net:"range,min=0,max=200,dmin=-20,dmax=20"`
	Name string     `net:"maxlen=15"`
}

type cfAll struct {
	B    bool
	U8   uint8   `net:"bits=5"`
	I16  int16   `net:"bits=12,dmin=-8,dmax=7"`
	U64  uint64  `net:"bits=64"`
	I64  int64   `net:"range,min=-1000000000000,max=1000000000000"`
	BigR int64   `net:"range,min=-9223372036854775808,max=9223372036854775807"`
	R    int32   `net:"range,min=-10,max=20,clamp"`
	Q64  float64 `net:"q,min=0,max=360,bits=10"`
	QC   float32 `net:"q,min=-1,max=1,prec=0.001,clamp"`
	F32  float32
	F64  float64
	Fx   float32    `net:"fixed,prec=0.01,dmin=-1,dmax=1"`
	Fxs  [3]float64 `net:"fixed,prec=0.001"`
	V7   uint32     `net:"varint"`
	V5   int64      `net:"varint,group=5"`
	A    int64
	Bl1  int32  `net:"bitlen,group=g"`
	Bl2  uint16 `net:"bitlen,group=g"`
	Ints []int16
	Us   []uint64 `net:"maxlen=6"`
	S    string
	Bs   []byte     `net:"maxlen=40"`
	Q    cfQuat     `net:"quat"`
	Rot  [4]float64 `net:"quat,bits=20"`
	T    time.Time
	P    *cfVec
	M    map[string]int32 `net:"maxlen=8"`
	MI   map[int64]bool
	Es   []cfEntity
	Arr  [2]cfVec
	Comp cfVec `net:"composite"`
}

// cfPlayer is the seed player state: a small flat message.
type cfPlayer struct {
	Pos struct {
		X, Z float32 `net:"q,min=-512,max=512,prec=0.01"`
		Y    float32 `net:"q,min=-16,max=112,prec=0.01"`
	}
	Yaw            float32 `net:"q,min=0,max=360,bits=10"`
	Health         int     `net:"range,min=0,max=200"`
	Weapon         int     `net:"range,min=0,max=15"`
	Crouch, Firing bool
}

// cfWorld is a game world of entities: what a client decodes each tick,
// used to check that the C# client decodes it into existing values without
// allocating.
type cfWorld struct {
	Tick   uint32 `net:"bits=32"`
	Crates []cfCrate
}

type cfCrate struct {
	ID     uint32 `net:"id"`
	Pos    cfVec
	Rot    [4]float32 `net:"quat"`
	Asleep bool
}

// cfLimited is decoded under tight limits (limitedCodec): lengths without
// maxlen and nesting beyond them are refused, as the schema says.
type cfLimited struct {
	S    []uint16
	Next *cfLimited
}

func limitedCodec() *bitwire.Codec[cfLimited] {
	return bitwire.MustFor[cfLimited]().WithLimits(bitwire.Limits{MaxDepth: 4, MaxLen: 3, MaxAllocPerByte: noBudget})
}

// limitedCases are messages written without limits and decoded under
// limitedCodec's: each holds Go's value or error.
func limitedCases(t *testing.T, n int, r *rand.Rand) []cfCase {
	full, lim := bitwire.MustFor[cfLimited](), limitedCodec()
	s := lim.Schema()
	var cs []cfCase
	for i := 0; i < n; i++ {
		var v *cfLimited
		for d := r.Intn(6); d >= 0; d-- {
			v = &cfLimited{S: make([]uint16, r.Intn(5)), Next: v}
			for k := range v.S {
				v.S[k] = uint16(r.Intn(1000))
			}
		}
		b, err := full.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out cfLimited
		c := cfCase{Kind: "damaged", Msg: "Limited", Full: hex.EncodeToString(b)}
		if err := lim.Unmarshal(b, &out); err != nil {
			c.Err, c.ErrMsg = sentinel(err), err.Error()
		} else {
			c.Want = canonOf(t, s, &out)
		}
		cs = append(cs, c)
	}
	return cs
}

const casesPerType = 2000

func randQuat(r *rand.Rand) [4]float64 {
	var q [4]float64
	n := 0.0
	for n < 1e-6 {
		for i := range q {
			q[i] = r.NormFloat64()
		}
		n = math.Sqrt(q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3])
	}
	for i := range q {
		q[i] /= n
	}
	return q
}

func small(r *rand.Rand, bits int) int64 { return r.Int63n(1 << uint(r.Intn(min(bits, 62))+1)) }

func signedSmall(r *rand.Rand, bits int) int64 {
	v := small(r, bits)
	if r.Intn(3) == 0 {
		return -v
	}
	return v
}

func randVec(r *rand.Rand) cfVec {
	return cfVec{X: float32(r.Float64()*200 - 100), Y: float32(r.Float64()*200 - 100), Z: float32(r.Float64()*128 - 16)}
}

func randEntity(r *rand.Rand, id uint16) cfEntity {
	q := randQuat(r)
	return cfEntity{ID: id, Pos: randVec(r), Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])},
		HP: r.Intn(201), Name: strings.Repeat("e", r.Intn(16))}
}

func randAll(r *rand.Rand) cfAll {
	q, rot := randQuat(r), randQuat(r)
	v := cfAll{
		B: r.Intn(2) == 0, U8: uint8(r.Intn(32)), I16: int16(r.Intn(4096) - 2048), U64: r.Uint64(),
		I64: r.Int63n(2_000_000_000_001) - 1_000_000_000_000, BigR: int64(r.Uint64()),
		R: int32(r.Intn(41) - 20), Q64: r.Float64() * 360, QC: float32(r.Float64()*3 - 1.5),
		F32: float32(r.NormFloat64() * 1000), F64: r.NormFloat64() * 1e6,
		Fx: float32(r.NormFloat64() * 100), V7: uint32(small(r, 32)), V5: signedSmall(r, 63),
		A: signedSmall(r, 63), Bl1: int32(signedSmall(r, 31)), Bl2: uint16(small(r, 16)),
		S: string([]rune("héllo wörld ✓")[:r.Intn(13)]),
		Q: cfQuat{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}, Rot: rot,
		T: time.Unix(r.Int63n(4e9)-2e9, r.Int63n(1e9)),
	}
	for i := range v.Fxs {
		v.Fxs[i] = r.NormFloat64() * 10
	}
	for i := r.Intn(6); i > 0; i-- {
		v.Ints = append(v.Ints, int16(signedSmall(r, 15)))
	}
	for i := r.Intn(7); i > 0; i-- {
		v.Us = append(v.Us, uint64(small(r, 63)))
	}
	for i := r.Intn(41); i > 0; i-- {
		v.Bs = append(v.Bs, byte(r.Intn(256)))
	}
	if r.Intn(2) == 0 {
		p := randVec(r)
		v.P = &p
	}
	if r.Intn(3) > 0 {
		v.M = map[string]int32{}
		for i := r.Intn(9); i > 0; i-- {
			v.M[strconv.Itoa(r.Intn(100))] = int32(signedSmall(r, 31))
		}
	}
	if r.Intn(3) > 0 {
		v.MI = map[int64]bool{}
		for i := r.Intn(5); i > 0; i-- {
			v.MI[signedSmall(r, 40)] = r.Intn(2) == 0
		}
	}
	id := uint16(0)
	for i := r.Intn(12); i > 0; i-- {
		id += uint16(1 + r.Intn(3))
		v.Es = append(v.Es, randEntity(r, id))
	}
	v.Arr = [2]cfVec{randVec(r), randVec(r)}
	v.Comp = randVec(r)
	return v
}

// mutate changes some fields of a copy of v: what a next tick looks like.
func mutate(r *rand.Rand, v cfAll) cfAll {
	n := randAll(r)
	out := v
	out.Es = append([]cfEntity(nil), v.Es...)
	pick := func() bool { return r.Intn(3) == 0 }
	if pick() {
		out.I16 = int16(max(-2048, min(2047, int(v.I16)+r.Intn(15)-7)))
	}
	if pick() {
		out.Fx = v.Fx + float32(r.Intn(200)-100)*0.01
	}
	if pick() {
		out.U64, out.BigR, out.F64, out.S = n.U64, n.BigR, n.F64, n.S
	}
	if pick() {
		out.Ints, out.Us, out.Bs = n.Ints, n.Us, n.Bs // grown or shrunk
	}
	if pick() {
		out.P, out.M, out.MI = n.P, n.M, n.MI
	}
	if pick() {
		out.Q, out.Rot, out.T = n.Q, n.Rot, n.T
	}
	if pick() {
		out.Comp.X, out.Arr[1].Y = n.Comp.X, n.Arr[1].Y
	}
	// entity set: removes, adds (ascending ids), changes
	var es []cfEntity
	id := uint16(0)
	for _, e := range out.Es {
		id = e.ID
		switch r.Intn(6) {
		case 0: // removed
			continue
		case 1:
			e.HP = max(0, min(200, e.HP+r.Intn(41)-20))
			e.Pos.X = max(-100, min(100, e.Pos.X+float32(r.Float64()-0.5)))
		case 2:
			q := randQuat(r)
			e.Rot = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
		}
		es = append(es, e)
	}
	for i := r.Intn(3); i > 0; i-- {
		id += uint16(1 + r.Intn(3))
		es = append(es, randEntity(r, id))
	}
	out.Es = es
	return out
}

type cfCase struct {
	Kind  string `json:"kind,omitempty"` // "" (full or delta), "union", "snap"
	Msg   string `json:"msg"`
	Full  string `json:"full,omitempty"`
	Want  string `json:"want"`
	Base  *int   `json:"base,omitempty"`
	Delta string `json:"delta,omitempty"`
	Older string `json:"older,omitempty"` // a predicted delta's older baseline, in full
	// snapshot packets: the receiver (stream) they go to, the packet, the
	// tick accepted or the error's sentinel name
	Stream int    `json:"stream,omitempty"`
	Packet string `json:"packet"`
	Tick   uint32 `json:"tick,omitempty"`
	Mode   int    `json:"mode,omitempty"` // the stream's integrity mode
	Key    string `json:"key,omitempty"`  // its MAC key, in hex
	Ack    string `json:"ack,omitempty"`  // the ack Go's receiver asks for, in hex
	Err    string `json:"err,omitempty"`
	ErrMsg string `json:"errmsg,omitempty"` // Go's error text, for failure reports
	Max    int    `json:"max,omitempty"`    // replication: the client's WithMaxEntities
	// replication: the client's WithExpiry (nil: not given, the default
	// expiry), WithRefresh and WithTickRate (0: not given)
	Expiry   *int `json:"expiry,omitempty"`
	Refresh  int  `json:"refresh,omitempty"`
	TickRate int  `json:"tickrate,omitempty"`
}

// canon is the canonical form of a decoded value that the runner compares
// (clients/ts/test/conformance.ts): struct fields in order, integers in
// decimal, floats as their float64 bits, strings and bytes in hex, maps as
// key-ordered pairs.
func canon(n *bitwire.NodeSchema, s *bitwire.Schema, v reflect.Value) any {
	switch n.Coding {
	case "bool":
		return v.Bool()
	case "bits", "range", "varint", "bitlen":
		if v.CanInt() {
			return strconv.FormatInt(v.Int(), 10)
		}
		return strconv.FormatUint(v.Uint(), 10)
	case "q", "float", "fixed":
		return fbits(v.Float())
	case "string":
		if !utf8.ValidString(v.String()) {
			sawInvalidUTF8 = true
		}
		return hex.EncodeToString([]byte(v.String()))
	case "bytes":
		return hex.EncodeToString(v.Bytes())
	case "quat":
		out := []any{}
		if v.Kind() == reflect.Struct {
			for _, f := range n.Quat.Fields {
				out = append(out, fbits(v.FieldByName(f).Float()))
			}
			return out
		}
		for i := 0; i < 4; i++ {
			out = append(out, fbits(v.Index(i).Float()))
		}
		return out
	case "time":
		t := v.Interface().(time.Time)
		return fmt.Sprintf("%d:%d", t.Unix(), t.Nanosecond())
	case "struct":
		ts := &s.Types[*n.Ref]
		out := []any{}
		for _, f := range ts.Fields {
			out = append(out, canon(f.Node, s, v.FieldByName(f.Name)))
		}
		return out
	case "array", "slice":
		out := []any{}
		for i := 0; i < v.Len(); i++ {
			out = append(out, canon(n.Elem, s, v.Index(i)))
		}
		return out
	case "ptr":
		if v.IsNil() {
			return nil
		}
		return canon(n.Elem, s, v.Elem())
	case "map":
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			switch a.Kind() {
			case reflect.String:
				return a.String() < b.String()
			case reflect.Bool:
				return !a.Bool() && b.Bool()
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				return a.Int() < b.Int()
			case reflect.Float32, reflect.Float64:
				return a.Float() < b.Float()
			}
			return a.Uint() < b.Uint()
		})
		out := []any{}
		for _, k := range keys {
			out = append(out, []any{canon(n.Key, s, k), canon(n.Elem, s, v.MapIndex(k))})
		}
		return out
	}
	panic("canon: " + n.Coding)
}

// sawInvalidUTF8 is set by canon on meeting a string that is not UTF-8:
// TypeScript strings are text, so such a string cannot round-trip there
// (its bad bytes become U+FFFD), and the damaged corpus leaves those out.
var sawInvalidUTF8 bool

func fbits(f float64) string { return fmt.Sprintf("x%016x", math.Float64bits(f)) }

func canonOf[T any](t *testing.T, s *bitwire.Schema, v *T) string {
	ref := s.Root
	b, err := json.Marshal(canon(&bitwire.NodeSchema{Coding: "struct", Ref: &ref}, s, reflect.ValueOf(v).Elem()))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// corpus appends to cases n full messages of random values and a delta
// from each to the next.
func corpus[T any](t *testing.T, name string, n int, random func() T, next func(T) T, cases *[]cfCase) {
	c := bitwire.MustFor[T]()
	s := c.Schema()
	base := -1
	var prev T
	for i := 0; i < n; i++ {
		v := random()
		if i > 0 && next != nil && i%2 == 1 {
			v = next(prev)
		}
		full, err := c.Marshal(&v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		q := v
		if err := c.Unmarshal(full, &q); err != nil {
			t.Fatal(err)
		}
		want := v
		if err := c.Quantize(&want); err != nil {
			t.Fatal(err)
		}
		if !c.Equal(&q, &want) {
			t.Fatalf("%s: Quantize differs from the decoded value", name)
		}
		*cases = append(*cases, cfCase{Msg: name, Full: hex.EncodeToString(full), Want: canonOf(t, s, &q)})
		if base >= 0 {
			d, err := c.MarshalDelta(&prev, &v)
			if err != nil {
				t.Fatalf("%s delta: %v", name, err)
			}
			var out T
			if err := c.UnmarshalDelta(d, &prev, &out); err != nil {
				t.Fatal(err)
			}
			b := base
			*cases = append(*cases, cfCase{Msg: name, Base: &b, Delta: hex.EncodeToString(d), Want: canonOf(t, s, &out)})
		}
		base++
		prev = q // the receiver's baseline is what it decoded
	}
}

// unionCorpus appends n streams of one to four tagged messages of the
// union of cfPlayer and cfEntity.
func unionCorpus(t *testing.T, name string, n int, r *rand.Rand, player func() cfPlayer, cases *[]cfCase) {
	u, err := bitwire.NewUnion(cfPlayer{}, cfEntity{})
	if err != nil {
		t.Fatal(err)
	}
	ps, es := bitwire.MustFor[cfPlayer]().Schema(), bitwire.MustFor[cfEntity]().Schema()
	for i := 0; i < n; i++ {
		w := bits.NewWriter(nil)
		var want []any
		for k := r.Intn(4); k >= 0; k-- {
			var v any
			if r.Intn(2) == 0 {
				p := player()
				v = &p
			} else {
				e := randEntity(r, uint16(r.Intn(65536)))
				v = &e
			}
			if err := u.Encode(w, v); err != nil {
				t.Fatal(err)
			}
		}
		data := append([]byte(nil), w.Bytes()...)
		rd := bits.NewReader(data)
		for rd.Remaining() >= 8 || (rd.Remaining() > 0 && !rd.CheckPadding()) {
			v, err := u.Decode(rd)
			if err != nil {
				t.Fatal(err)
			}
			switch v := v.(type) {
			case *cfPlayer:
				want = append(want, []any{0, json.RawMessage(canonOf(t, ps, v))})
			case *cfEntity:
				want = append(want, []any{1, json.RawMessage(canonOf(t, es, v))})
			}
		}
		b, _ := json.Marshal(want)
		*cases = append(*cases, cfCase{Kind: "union", Msg: name, Full: hex.EncodeToString(data), Want: string(b)})
	}
}

// sentinel names the Go sentinel an error wraps, as the clients name
// theirs.
func sentinel(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{snapshot.ErrBadMagic, "ErrBadMagic"}, {snapshot.ErrProtocolMismatch, "ErrProtocolMismatch"},
		{snapshot.ErrNoBaseline, "ErrNoBaseline"}, {snapshot.ErrStaleTick, "ErrStaleTick"},
		{snapshot.ErrIntegrity, "ErrIntegrity"}, {snapshot.ErrFutureTick, "ErrFutureTick"},
		{snapshot.ErrStateMismatch, "ErrStateMismatch"},
		{bitwire.ErrUnexpectedEnd, "ErrUnexpectedEnd"}, {bitwire.ErrOutOfRange, "ErrOutOfRange"},
		{bitwire.ErrInvalidValue, "ErrInvalidValue"}, {bitwire.ErrTooLong, "ErrTooLong"},
		{bitwire.ErrTrailingData, "ErrTrailingData"}, {bitwire.ErrMalformed, "ErrMalformed"},
		{bitwire.ErrUnknownTag, "ErrUnknownTag"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "other: " + err.Error()
}

// snapCorpus appends snapshot packet sequences of values of T (the first
// from rnd, each next from the last by next): a sender and a receiver
// per stream over a channel that loses, reorders and duplicates packets
// (and loses acks), with some packets damaged (bad magic, another
// fingerprint, cut short, a bit flipped). Streams take integrity modes
// none, crc32c and hmac-sha256-80 in turn, and carry a state hash every 4th
// packet.
// Each delivered packet is a case with what Go's Receiver made of it: the
// tick and value, or the error, and the ack it asks for.
func snapCorpus[T any](t *testing.T, name string, streams, ticks int, r *rand.Rand, cases *[]cfCase, rnd func() T, next func(T) T) {
	c := bitwire.MustFor[T]()
	s := c.Schema()
	for st := 1; st <= streams; st++ {
		mode := st % 3
		var ropts []snapshot.Option
		key := ""
		switch mode {
		case 1:
			ropts = append(ropts, snapshot.WithChecksum())
		case 2:
			k := make([]byte, 16+st)
			r.Read(k)
			key = hex.EncodeToString(k)
			ropts = append(ropts, snapshot.WithMAC(k))
		}
		snd, err := snapshot.NewSender(c, append(ropts, snapshot.WithStateHash(4), snapshot.WithBudget(4000))...)
		if err != nil {
			t.Fatal(err)
		}
		rcv, err := snapshot.NewReceiver(c, ropts...)
		if err != nil {
			t.Fatal(err)
		}
		state := rnd()
		var inflight [][]byte
		deliver := func(p []byte) {
			var out T
			tick, err := rcv.Decode(p, &out)
			cs := cfCase{Kind: "snap", Msg: name, Stream: st, Mode: mode, Key: key, Packet: hex.EncodeToString(p)}
			if err != nil {
				cs.Err = sentinel(err)
			} else {
				cs.Tick, cs.Want = tick, canonOf(t, s, &out)
			}
			if a, ok := rcv.Ack(); ok {
				b, _ := a.MarshalBinary()
				cs.Ack = hex.EncodeToString(b)
				if r.Intn(5) > 0 { // the ack may be lost
					snd.HandleAck(a)
				}
			}
			*cases = append(*cases, cs)
		}
		tick := uint32(r.Intn(1000))
		for i := 0; i < ticks; i++ {
			tick += uint32(1 + r.Intn(2))
			state = next(state)
			p, err := snd.Encode(nil, tick, &state)
			if err != nil {
				t.Fatal(err)
			}
			switch x := r.Intn(40); {
			case x < 6: // lost
			case x < 10: // held back: delivered after the next one
				inflight = append(inflight, p)
				continue
			case x < 12: // duplicated
				deliver(p)
				deliver(p)
			case x == 12:
				deliver(damage(r, p, mode))
				deliver(p)
			default:
				deliver(p)
			}
			for _, q := range inflight {
				deliver(q)
			}
			inflight = inflight[:0]
		}
	}
}

// damage returns a copy of p with one kind of damage. Bits are flipped
// only in packets with a trailer (modes 1 and 2), which catches them: in
// mode 0 a flip that Go accepts can put bytes that are not UTF-8 in a
// string, which the clients' text strings cannot hold (docs/clients.md),
// and the streams would part.
func damage(r *rand.Rand, p []byte, mode int) []byte {
	q := append([]byte(nil), p...)
	kinds := 3
	if mode != 0 {
		kinds = 4
	}
	switch r.Intn(kinds) {
	case 0:
		q[0] ^= 1 // magic
	case 1:
		q[3] ^= 0x10 // fingerprint
	case 2:
		q = q[:r.Intn(len(q))] // cut short
	default:
		i := r.Intn(len(q) * 8)
		q[i/8] ^= 1 << uint(i%8)
	}
	return q
}

// noBudget turns the Go decoders' allocation budget off (see damagedCorpus).
const noBudget = -1

// damagedCorpus appends n hostile inputs: full messages of earlier cases
// of msg with bits flipped, bytes cut off or appended, or random bytes. Each case holds what
// Go's Unmarshal made of it: the value, or the error's sentinel.
//
// The Go decoders run without their allocation budget (Limits.
// MaxAllocPerByte): it is the Go package's own policy, not the wire
// format's, and the clients do not implement it.
func damagedCorpus(t *testing.T, msg string, n int, r *rand.Rand, cases *[]cfCase) {
	var fulls []string
	for _, c := range *cases {
		if c.Msg == msg && c.Kind == "" && c.Delta == "" {
			fulls = append(fulls, c.Full)
		}
	}
	var s *bitwire.Schema
	var decode func([]byte) (string, error)
	switch msg {
	case "All":
		c := bitwire.MustFor[cfAll]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
		s = c.Schema()
		decode = func(b []byte) (string, error) {
			var v cfAll
			err := c.Unmarshal(b, &v)
			return canonOf(t, s, &v), err
		}
	case "Player":
		c := bitwire.MustFor[cfPlayer]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
		s = c.Schema()
		decode = func(b []byte) (string, error) {
			var v cfPlayer
			err := c.Unmarshal(b, &v)
			return canonOf(t, s, &v), err
		}
	case "Edge":
		c := bitwire.MustFor[cfEdge]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
		s = c.Schema()
		decode = func(b []byte) (string, error) {
			var v cfEdge
			err := c.Unmarshal(b, &v)
			return canonOf(t, s, &v), err
		}
	}
	for i := 0; i < n; i++ {
		b, _ := hex.DecodeString(fulls[r.Intn(len(fulls))])
		switch r.Intn(5) {
		case 4: // garbage of a plausible length
			b = make([]byte, r.Intn(len(b)+8))
			r.Read(b)
		case 0:
			b = b[:r.Intn(len(b))]
		case 1:
			b = append(b, byte(r.Intn(256)))
		default:
			for k := r.Intn(3); k >= 0; k-- {
				j := r.Intn(len(b) * 8)
				b[j/8] ^= 1 << uint(j%8)
			}
		}
		c := cfCase{Kind: "damaged", Msg: msg, Full: hex.EncodeToString(b)}
		sawInvalidUTF8 = false
		want, err := decode(b)
		if err == nil && sawInvalidUTF8 {
			i--
			continue
		}
		if err != nil {
			c.Err, c.ErrMsg = sentinel(err), err.Error()
		} else {
			c.Want = want
		}
		*cases = append(*cases, c)
	}
}

// damagedDeltaCorpus appends n damaged deltas of cfAll: earlier delta
// cases with bits flipped, cut short or replaced by random bytes, applied to
// the same baseline; each holds Go's value or error.
func damagedDeltaCorpus(t *testing.T, n int, r *rand.Rand, cases *[]cfCase) {
	c := bitwire.MustFor[cfAll]().WithLimits(bitwire.Limits{MaxAllocPerByte: noBudget})
	s := c.Schema()
	var fulls []string
	var deltas []cfCase
	for _, cs := range *cases {
		if cs.Msg != "All" || cs.Kind != "" {
			continue
		}
		if cs.Delta == "" {
			fulls = append(fulls, cs.Full)
		} else {
			deltas = append(deltas, cs)
		}
	}
	for i := 0; i < n; i++ {
		d := deltas[r.Intn(len(deltas))]
		b, _ := hex.DecodeString(d.Delta)
		switch k := r.Intn(4); {
		case k == 0 && len(b) > 0:
			b = b[:r.Intn(len(b))]
		case k == 1:
			b = make([]byte, r.Intn(len(b)+8))
			r.Read(b)
		default:
			for j := r.Intn(3); j >= 0 && len(b) > 0; j-- {
				x := r.Intn(len(b) * 8)
				b[x/8] ^= 1 << uint(x%8)
			}
		}
		fb, _ := hex.DecodeString(fulls[*d.Base])
		var base, out cfAll
		if err := c.Unmarshal(fb, &base); err != nil {
			t.Fatal(err)
		}
		sawInvalidUTF8 = false
		err := c.UnmarshalDelta(b, &base, &out)
		cs := cfCase{Kind: "damaged-delta", Msg: "All", Base: d.Base, Delta: hex.EncodeToString(b)}
		if err != nil {
			cs.Err, cs.ErrMsg = sentinel(err), err.Error()
		} else if cs.Want = canonOf(t, s, &out); sawInvalidUTF8 {
			i--
			continue
		}
		*cases = append(*cases, cs)
	}
}

// clientTools finds node and the pinned tsc (clients/ts/node_modules, set
// up by `npm ci` there); without them the test is skipped, unless
// BITWIRE_CLIENTS=required (as .ci/run sets), where it fails.
func clientTools(t *testing.T) (node, tsc string) {
	t.Helper()
	toolchain.SkipIfAsked(t)
	missing := func(what string) {
		if os.Getenv("BITWIRE_CLIENTS") == "required" {
			t.Fatalf("%s missing and BITWIRE_CLIENTS=required", what)
		}
		t.Skipf("%s missing: skipping the generated-client conformance test (run `npm ci` in clients/ts; BITWIRE_CLIENTS=required makes this a failure)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	tsc, _ = filepath.Abs("../clients/ts/node_modules/typescript/bin/tsc")
	if _, err := os.Stat(tsc); err != nil {
		missing("clients/ts/node_modules/typescript (npm ci)")
	}
	return node, tsc
}

// buildTS lays out a TypeScript project in a temporary directory: the
// runtime, the conformance runner and the generated module, and compiles
// it with the pinned tsc.
func buildTS(t *testing.T, node, tsc string, generated []byte) string {
	dir := t.TempDir()
	for _, d := range []string{"src", "test"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, "../clients/ts/src/bitwire.ts", filepath.Join(dir, "src/bitwire.ts"))
	copyFile(t, "../clients/ts/test/conformance.ts", filepath.Join(dir, "test/conformance.ts"))
	copyFile(t, "../clients/ts/tsconfig.json", filepath.Join(dir, "tsconfig.json"))
	copyFile(t, "../clients/ts/package.json", filepath.Join(dir, "package.json"))
	nm, _ := filepath.Abs("../clients/ts/node_modules")
	if err := os.Symlink(nm, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src/gen.ts"), generated, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, tsc, "-p", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustUnion(t *testing.T) *bitwire.Union {
	u, err := bitwire.NewUnion(cfPlayer{}, cfEntity{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// theCorpus is built once per test binary: both languages check it.
var (
	corpusOnce  sync.Once
	corpusCases []cfCase
)

func buildCorpus(t *testing.T) []cfCase {
	corpusOnce.Do(func() {
		r := rand.New(rand.NewSource(11))
		var cases []cfCase
		corpus(t, "All", casesPerType, func() cfAll { return randAll(r) }, func(v cfAll) cfAll { return mutate(r, v) }, &cases)
		corpus(t, "Player", casesPerType, func() cfPlayer {
			var p cfPlayer
			p.Pos.X, p.Pos.Z, p.Pos.Y = float32(r.Float64()*1024-512), float32(r.Float64()*1024-512), float32(r.Float64()*128-16)
			p.Yaw, p.Health, p.Weapon = float32(r.Float64()*360), r.Intn(201), r.Intn(16)
			p.Crouch, p.Firing = r.Intn(2) == 0, r.Intn(2) == 0
			return p
		}, nil, &cases)
		unionCorpus(t, "Union", casesPerType, r, func() cfPlayer {
			var p cfPlayer
			p.Pos.X, p.Yaw, p.Health = float32(r.Float64()*1024-512), float32(r.Float64()*360), r.Intn(201)
			return p
		}, &cases)
		snapCorpus(t, "All", 12, 200, r, &cases, func() cfAll { return randAll(r) }, func(v cfAll) cfAll { return mutate(r, v) })
		damagedCorpus(t, "All", casesPerType, r, &cases)
		damagedCorpus(t, "Player", casesPerType/4, r, &cases)
		damagedDeltaCorpus(t, casesPerType/2, r, &cases)
		cases = append(cases, limitedCases(t, casesPerType, r)...)
		corpus(t, "Edge", casesPerType, func() cfEdge { return randEdge(r) }, func(v cfEdge) cfEdge { return nextEdge(r, v) }, &cases)
		damagedCorpus(t, "Edge", casesPerType, r, &cases)
		cases = append(cases, q3Cases(t)...)
		corpus(t, "Maps", casesPerType, func() cfMaps { return randMaps(r) }, func(cfMaps) cfMaps { return randMaps(r) }, &cases)
		cases = append(cases, mapCases(t, casesPerType, r)...)
		cases = append(cases, fixedExtremeCases(t)...)
		cases = append(cases, namesCases(t, casesPerType/10, r)...)
		corpus(t, "Wide", casesPerType/4, func() cfWide { return randWide(r) }, func(cfWide) cfWide { return randWide(r) }, &cases)
		cases = append(cases, zeroCases(t, r)...)
		cases = append(cases, utf8KeyCases(t, r)...)
		kinds := map[string]int{}
		for _, c := range cases {
			kinds[c.Msg+" "+caseKind(c)]++
		}
		t.Logf("corpus: %d cases: %v", len(cases), kinds)
		corpusCases = cases
	})
	if corpusCases == nil {
		t.Fatal("no corpus")
	}
	return corpusCases
}

func caseKind(c cfCase) string {
	if c.Kind != "" {
		return c.Kind
	}
	if c.Delta != "" {
		return "delta"
	}
	return "full"
}

// corpusMessages are the schemas the corpus is written for, under the
// names its cases use.
func corpusMessages(t *testing.T) []gen.Message {
	return append([]gen.Message{
		gen.Named("All", bitwire.MustFor[cfAll]().Schema()),
		gen.Named("Player", bitwire.MustFor[cfPlayer]().Schema()),
		gen.Named("Union", mustUnion(t).Schema()),
		gen.Named("World", bitwire.MustFor[cfWorld]().Schema()),
		gen.Named("Limited", limitedCodec().Schema()),
		gen.Named("Edge", bitwire.MustFor[cfEdge]().Schema()),
		gen.Named("Q3", bitwire.MustFor[cfQ3]().Schema()),
		gen.Named("Maps", bitwire.MustFor[cfMaps]().Schema()),
		gen.Named("FixedX", bitwire.MustFor[cfFixedX]().Schema()),
		gen.Named("Wide", bitwire.MustFor[cfWide]().Schema()),
		gen.Named("Zero", bitwire.MustFor[cfZero]().Schema()),
		gen.Named("Shell", bitwire.MustFor[cfShell]().Schema()),
	}, namesMessages()...)
}

// allocCases are a world, full, and a delta from it (45 of 300 crates
// changed, two removed, two added): the C# runner decodes each many times
// into one reused value and requires that nothing is allocated.
func allocCases(t *testing.T) []cfCase {
	r := rand.New(rand.NewSource(7))
	c := bitwire.MustFor[cfWorld]()
	var base cfWorld
	for i := 0; i < 300; i++ {
		q := randQuat(r)
		base.Crates = append(base.Crates, cfCrate{ID: uint32(10 + 2*i), Pos: randVec(r), Rot: [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}})
	}
	full, err := c.Marshal(&base)
	if err != nil {
		t.Fatal(err)
	}
	var qbase cfWorld
	if err := c.Unmarshal(full, &qbase); err != nil {
		t.Fatal(err)
	}
	cur := cfWorld{Tick: 1, Crates: append([]cfCrate(nil), qbase.Crates[2:]...)}
	for _, i := range r.Perm(len(cur.Crates))[:45] {
		cur.Crates[i].Pos.X = max(-100, min(100, cur.Crates[i].Pos.X+0.3))
		cur.Crates[i].Asleep = !cur.Crates[i].Asleep
	}
	cur.Crates = append(cur.Crates, cfCrate{ID: 5000, Rot: [4]float32{0, 0, 0, 1}}, cfCrate{ID: 5002, Rot: [4]float32{0, 0, 1, 0}})
	d, err := c.MarshalDelta(&qbase, &cur)
	if err != nil {
		t.Fatal(err)
	}
	b := 0
	return []cfCase{
		{Kind: "alloc", Msg: "World", Full: hex.EncodeToString(full)},
		{Kind: "alloc-delta", Msg: "World", Full: hex.EncodeToString(full), Delta: hex.EncodeToString(d), Base: &b},
	}
}

func TestTypeScriptConformance(t *testing.T) {
	node, tsc := clientTools(t)
	cases := buildCorpus(t)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", corpusMessages(t)...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

// csTools finds mcs and mono; without them the test is skipped, unless
// BITWIRE_CLIENTS=required.
func csTools(t *testing.T) (mcs, mono string) {
	t.Helper()
	toolchain.SkipIfAsked(t)
	for _, name := range []string{"mcs", "mono"} {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("BITWIRE_CLIENTS") == "required" {
				t.Fatalf("%s missing and BITWIRE_CLIENTS=required", name)
			}
			t.Skipf("%s missing: skipping the generated C# conformance test (apt-get install mono-mcs mono-runtime; BITWIRE_CLIENTS=required makes this a failure)", name)
		}
		if name == "mcs" {
			mcs = p
		} else {
			mono = p
		}
	}
	return mcs, mono
}

// buildCS compiles the runtime (every file of clients/cs/Bitwire), the
// generated code and extra sources into dir/out.exe.
func buildCS(t *testing.T, mcs string, generated []byte, extra ...string) string {
	dir := t.TempDir()
	genPath := filepath.Join(dir, "Generated.cs")
	if err := os.WriteFile(genPath, generated, 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "out.exe")
	// The sources are copied through this process, so that go test's cache
	// sees them: a change to the runtime reruns the test.
	// C# 7.2, the newest mcs knows: within the 7.3 that Unity 2021 compiles.
	args := []string{"-langversion:7.2", "-nologo", "-warn:0", "-optimize+", "-out:" + exe, genPath}
	runtime, err := filepath.Glob("../clients/cs/Bitwire/*.cs")
	if err != nil || len(runtime) == 0 {
		t.Fatalf("the C# runtime clients/cs/Bitwire/*.cs: %v", err)
	}
	for _, f := range append(runtime, extra...) {
		to := filepath.Join(dir, filepath.Base(f))
		copyFile(t, f, to)
		args = append(args, to)
	}
	if out, err := exec.Command(mcs, args...).CombinedOutput(); err != nil {
		t.Fatalf("mcs: %v\n%s", err, out)
	}
	return exe
}

func TestCSharpConformance(t *testing.T) {
	mcs, mono := csTools(t)
	cases := buildCorpus(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", corpusMessages(t)...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, append(append([]cfCase(nil), cases...), allocCases(t)...))
}
