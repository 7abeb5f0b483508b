package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/internal/entropy"
	"github.com/bitwire/bitwire/internal/tumble"
)

// TestFullMessageEntropy measures what an entropy stage would save on full
// messages (Codec.Encode) of the bench workloads and of internal/tumble's
// orientations: today's bits, the order-0 entropy of each field's keys, an
// adaptive Rice code within one message on the adaptive integers (and on
// the gaps between sorted entity ids), and a static per-field code trained
// on messages of another seed. docs/decisions.md ("Full messages and the
// entropy stage") quotes the table, printed with
//
//	cd bench && go test -run FullMessageEntropy -v .
func TestFullMessageEntropy(t *testing.T) {
	rng := func(k uint64) *rand.Rand { return rand.New(rand.NewPCG(Seed+k, Seed>>1)) }
	var out strings.Builder
	fmt.Fprintln(&out, "data set | messages | today bits/msg | order-0 entropy | adaptive in message | static, trained on another seed")

	measure := func(name string, train, test *entropy.Set, adapt func(string) bool) {
		t.Helper()
		n := len(test.Msgs)
		today := test.Bits()
		ent := test.Entropy()
		ad := test.Adaptive(adapt, 4)
		st := entropy.Train(train).Bits(test)
		if ent > float64(today) {
			t.Errorf("%s: entropy %.0f above today's %d bits", name, ent, today)
		}
		fmt.Fprintln(&out, entropy.Row(name, n, today, ent, ad, st))
		if testing.Verbose() {
			var b strings.Builder
			entropy.PrintFields(&b, entropy.Fields(train, test), n)
			t.Logf("%s, per message:\n%s", name, b.String())
		}
	}
	none := func(string) bool { return false }

	// person: one Person a message.
	person := func(k uint64) *entropy.Set {
		r := rng(k)
		c := bitwire.MustFor[Person]()
		s := &entropy.Set{}
		for range 2000 {
			p := makePerson(r)
			s.Msgs = append(s.Msgs, split(t, c, &p, func(p *entropy.Reader) {
				str := func(f string) {
					n := p.Fixed(f+".len", 7)
					for range n {
						p.Fixed(f+"[]", 8)
					}
				}
				str("Name")
				p.Bitlen("BirthDay.sec", 6)
				p.Fixed("BirthDay.nsec", 30)
				str("Phone")
				p.Fixed("Siblings", 3)
				p.Fixed("Spouse", 1)
				p.Fixed("Money", 64)
			}))
		}
		return s
	}
	measure("person", person(1), person(2), func(f string) bool { return f == "BirthDay.sec" })

	playerFields := func(p *entropy.Reader, pre string) {
		p.Fixed(pre+"Pos.X", 17)
		p.Fixed(pre+"Pos.Y", 14)
		p.Fixed(pre+"Pos.Z", 17)
		p.Fixed(pre+"Yaw", 10)
		p.Fixed(pre+"Health", 8)
		p.Fixed(pre+"Weapon", 4)
		p.Fixed(pre+"Crouch", 1)
		p.Fixed(pre+"Firing", 1)
	}
	player := func(k uint64) *entropy.Set {
		r := rng(k)
		c := bitwire.MustFor[PlayerState]()
		s := &entropy.Set{}
		for range 2000 {
			v := randPlayer(r)
			s.Msgs = append(s.Msgs, split(t, c, &v, func(p *entropy.Reader) { playerFields(p, "") }))
		}
		return s
	}
	measure("player", player(1), player(2), none)

	snapshot := func(k uint64) *entropy.Set {
		r := rng(k)
		c := bitwire.MustFor[Snapshot]()
		s := &entropy.Set{}
		for i := range 40 {
			v := Snapshot{Tick: 123456 + uint32(i)}
			for j := range v.Players {
				v.Players[j] = randPlayer(r)
			}
			s.Msgs = append(s.Msgs, split(t, c, &v, func(p *entropy.Reader) {
				p.Fixed("Tick", 32)
				for range 64 {
					playerFields(p, "Players[].")
				}
			}))
		}
		return s
	}
	measure("snapshot64", snapshot(1), snapshot(2), none)

	// world901: the base world of the delta workload, as a full message;
	// its crate ids ascend (100, 103, 106, ...).
	world := func(k uint64, gaps bool) *entropy.Set {
		c := bitwire.MustFor[World]()
		s := &entropy.Set{}
		for i := range 4 {
			base, _ := makeWorlds(rng(10*k + uint64(i)))
			m := split(t, c, &base, func(p *entropy.Reader) {
				p.Fixed("Tick", 32)
				n := p.Fixed("Crates.len", 11)
				for range n {
					p.Bitlen("Crates[].ID", 5)
					p.Fixed("Crates[].Pos.X", 17)
					p.Fixed("Crates[].Pos.Y", 13)
					p.Fixed("Crates[].Pos.Z", 17)
					p.Quat("Crates[].Rot", 9)
					p.Fixed("Crates[].Asleep", 1)
				}
			})
			if gaps {
				prev := int64(-1)
				for j := range m {
					if m[j].Field == "Crates[].ID" {
						id := int64(m[j].Key)
						m[j].Field, m[j].Key = "Crates[].ID gap", uint64(id-prev-1)
						prev = id
					}
				}
			}
			s.Msgs = append(s.Msgs, m)
		}
		return s
	}
	isID := func(f string) bool { return strings.HasPrefix(f, "Crates[].ID") }
	measure("world901", world(1, false), world(2, false), isID)
	measure("world901, ids as gaps", world(1, true), world(2, true), isID)
	// The gaps in the ids' own code (the bit-length code with a 5-bit
	// prefix, as replication packets code their entries' ids): no
	// adaptation, no model.
	gw := world(2, true)
	var gapBits int64
	for _, m := range gw.Msgs {
		for _, v := range m {
			if v.Field == "Crates[].ID gap" {
				gapBits += int64(fields.BitlenBits(v.Key, 5) - v.Bits)
			}
		}
	}
	fmt.Fprintf(&out, "world901, ids as bit-length gaps | %d | %.1f | | %.1f (%s) |\n", len(gw.Msgs),
		float64(gw.Bits())/float64(len(gw.Msgs)), float64(gw.Bits()+gapBits)/float64(len(gw.Msgs)),
		entropy.Pct(float64(gw.Bits()+gapBits), float64(gw.Bits())))

	// internal/tumble: every body's orientation at a tick is one message,
	// every 10th tick of 300; trained on seed 1, measured on seed 2.
	type body struct {
		Rot [4]float32 `net:"quat,bits=9"`
	}
	type bodies struct {
		B []body `net:",maxlen=1024"`
	}
	tumbleSet := func(w *tumble.World) *entropy.Set {
		c := bitwire.MustFor[bodies]()
		s := &entropy.Set{}
		v := bodies{B: make([]body, w.Len())}
		for tick := range 300 {
			w.Step()
			if tick%10 != 9 {
				continue
			}
			for i := range v.B {
				v.B[i].Rot = w.Rot(i)
			}
			s.Msgs = append(s.Msgs, split(t, c, &v, func(p *entropy.Reader) {
				n := p.Fixed("len", 11)
				for range n {
					p.Quat("Rot", 9)
				}
			}))
		}
		return s
	}
	measure("tumble, settling (256 bodies)", tumbleSet(tumble.New(1, 256)), tumbleSet(tumble.New(2, 256)), none)
	measure("tumble, spinning (256 bodies)", tumbleSet(tumble.NewSpinning(1, 256)), tumbleSet(tumble.NewSpinning(2, 256)), none)
	t.Logf("full messages, bits per message (change against today):\n%s", out.String())
}

// split encodes v with c and reads it back into values with read, checking
// that read accounts for every bit.
func split[T any](t *testing.T, c *bitwire.Codec[T], v *T, read func(*entropy.Reader)) entropy.Message {
	t.Helper()
	var w bits.Writer
	if err := c.Encode(&w, v); err != nil {
		t.Fatal(err)
	}
	p := entropy.NewReader(w.Bytes())
	read(p)
	m, err := p.Message()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range m {
		n += x.Bits
	}
	if n != w.Len() {
		t.Fatalf("the layout read %d bits of a %d-bit message", n, w.Len())
	}
	return m
}
