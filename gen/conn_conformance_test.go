package gen_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/conn"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/replicate"
	"github.com/bitwire/bitwire/snapshot"
)

// The connection corpus: a Go session (replicate.Server, conn.Server with
// an input queue and a channel, a Go conn.Client with inputs and a
// channel) over links that lose, reorder and duplicate packets; for every
// server packet the client receives, the error, the events (removed,
// added, changed with paths), the messages delivered and the input ack;
// for every tick, the messages sent, the input pushed and the bytes of the
// client's packet. The TypeScript ConnClient (clients/ts/src/conn.ts)
// must agree on all of it, byte for byte.

type ccUnit struct {
	ID uint16 `net:"id"`
	Hp uint8  `net:"range,min=0,max=100"`
}

type ccPos struct {
	X float32 `net:"q,min=-100,max=100,prec=0.01"`
	Y float32 `net:"q,min=-100,max=100,prec=0.01"`
}

type ccShip struct {
	Pos   ccPos
	Rot   [4]float32        `net:"quat"`
	Units []ccUnit          `net:",maxlen=8"`
	Guns  []uint16          `net:",maxlen=4"`
	Cargo map[string]uint16 `net:",maxlen=4"`
	Dock  *ccPos
	Name  string `net:",maxlen=8"`
}

type ccLook struct {
	Pitch float32 `net:"q,min=-1.6,max=1.6,bits=8"`
}

// ccMove is the input, a nested struct included (input_delta_test.go
// has one of every coding).
type ccMove struct {
	DX   int8 `net:"range,min=-1,max=1"`
	DY   int8 `net:"range,min=-1,max=1"`
	Fire bool
	Aim  float32 `net:"q,min=0,max=6.3,prec=0.05"`
	Look ccLook
	Seq  uint16 `net:"varint"`
}

type ccChat struct {
	Text string `net:",maxlen=40"`
}

type ccHit struct {
	Target uint32
	Damage uint8
}

type ccResult struct {
	Packet   string   `json:"packet"`
	Err      string   `json:"err"`
	Events   []string `json:"events"`
	Msgs     []string `json:"msgs"`
	InputAck int64    `json:"inputAck"` // -1: none yet
}

type ccTick struct {
	Down  []ccResult `json:"down"`
	Sends []string   `json:"sends"`
	Push  ccPush     `json:"push"`
	Up    string     `json:"up"`
}

// ccPush is the input pushed for a tick, as the TypeScript value.
type ccPush struct {
	Tick  uint32  `json:"tick"`
	DX    int8    `json:"dx"`
	DY    int8    `json:"dy"`
	Fire  bool    `json:"fire"`
	Aim   float32 `json:"aim"`
	Pitch float32 `json:"pitch"`
	Seq   uint16  `json:"seq"`
}

type ccStream struct {
	Mode  int      `json:"mode"`
	Key   string   `json:"key"`
	Ticks []ccTick `json:"ticks"`
}

func ccUnion() *bitwire.Union {
	u, err := bitwire.NewUnion(ccChat{}, ccHit{})
	if err != nil {
		panic(err)
	}
	return u
}

func ccMsg(m any) string {
	switch v := m.(type) {
	case *ccChat:
		return "chat:" + v.Text
	case *ccHit:
		return fmt.Sprintf("hit:%d,%d", v.Target, v.Damage)
	}
	return fmt.Sprintf("?%T", m)
}

func ccMutate(r *rand.Rand, e *ccShip) {
	if e.Rot == [4]float32{} {
		e.Rot = [4]float32{0, 0, 0, 1}
	}
	switch r.Intn(6) {
	case 0:
		e.Pos.X = float32(r.Intn(2000)-1000) / 10
	case 1:
		id := uint16(r.Intn(5))
		i := slices.IndexFunc(e.Units, func(u ccUnit) bool { return u.ID == id })
		switch {
		case i < 0 && len(e.Units) < 8:
			e.Units = append(slices.Clone(e.Units), ccUnit{id, uint8(r.Intn(101))})
		case i >= 0 && r.Intn(2) == 0:
			e.Units = slices.Delete(slices.Clone(e.Units), i, i+1)
		case i >= 0:
			e.Units = slices.Clone(e.Units)
			e.Units[i].Hp = uint8(r.Intn(101))
		}
	case 2:
		e.Guns = slices.Clone(e.Guns)
		if len(e.Guns) < 4 && r.Intn(2) == 0 {
			e.Guns = append(e.Guns, uint16(r.Intn(9)))
		} else if len(e.Guns) > 0 {
			e.Guns = e.Guns[:len(e.Guns)-1]
		}
	case 3:
		m := map[string]uint16{}
		for k, v := range e.Cargo {
			m[k] = v
		}
		if len(m) < 4 {
			m[fmt.Sprint("k", r.Intn(5))] = uint16(r.Intn(4))
		} else {
			clear(m)
		}
		e.Cargo = m
	case 4:
		if e.Dock == nil {
			e.Dock = &ccPos{X: float32(r.Intn(10))}
		} else {
			e.Dock = nil
		}
	case 5:
		e.Name = fmt.Sprint(r.Intn(100))
		if r.Intn(4) == 0 {
			q := randQuat(r)
			e.Rot = [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
		}
	}
}

// ccCorpus runs one session. Without refInputs the reference client sends
// no inputs (for the C# client, which has no input sender yet): a second
// client with inputs drives the server, and gets the same server packets.
func ccCorpus(t *testing.T, seed int64, mode snapshot.Mode, ticks int, refInputs bool) ccStream {
	r := rand.New(rand.NewSource(seed))
	var key []byte
	if mode == snapshot.ModeMAC {
		key = make([]byte, 16)
		r.Read(key)
	}
	codec, moves, u := bitwire.MustFor[ccShip](), bitwire.MustFor[ccMove](), ccUnion()
	srv, err := replicate.NewServer(codec)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 500
	peer, err := srv.NewPeer(replicate.PeerConfig[ccShip]{Budget: conn.StateBudget(budget, 120, mode), Refresh: 40, Integrity: mode, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := conn.NewInputQueue(moves, 0)
	sch, _ := conn.NewChannel(u, conn.ChannelConfig{Share: 120, Queue: 16})
	server, err := conn.NewServer(peer, q, sch, budget, mode, key)
	if err != nil {
		t.Fatal(err)
	}
	newClient := func(inputs *conn.InputSender[ccMove]) *conn.Client[ccShip, ccMove] {
		st, err := replicate.NewClient(codec, replicate.WithIntegrity(mode, key))
		if err != nil {
			t.Fatal(err)
		}
		ch, _ := conn.NewChannel(u, conn.ChannelConfig{Share: 120, Queue: 16})
		c, err := conn.NewClient(st, inputs, ch, mode, key)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	in, _ := conn.NewInputSender(moves, 3)
	driver := newClient(in)
	ref := driver
	if !refInputs {
		ref = newClient(nil)
	}
	var events []string
	ref.State.OnRemove(func(id uint32) { events = append(events, fmt.Sprint("remove ", id)) })
	ref.State.OnAdd(func(id uint32, _ *ccShip) { events = append(events, fmt.Sprint("add ", id)) })
	ref.State.OnChange(func(id uint32, _ *ccShip, paths []string) {
		events = append(events, fmt.Sprintf("change %d %s", id, strings.Join(paths, " ")))
	})
	var down, up []ccFlying
	var mv ccMove
	world := map[uint32]ccShip{}
	st := ccStream{Mode: int(mode), Key: hex.EncodeToString(key)}
	for tick := 1; tick <= ticks; tick++ {
		var rec ccTick
		// The clients get what arrives, in a shuffled order.
		var due []ccFlying
		down, due = split(down, tick)
		r.Shuffle(len(due), func(i, j int) { due[i], due[j] = due[j], due[i] })
		for _, p := range due {
			if driver != ref {
				_, _, _ = driver.Receive(p.pkt)
				for _, ok := driver.Messages.Receive(); ok; _, ok = driver.Messages.Receive() {
				}
			}
			events = events[:0]
			res := ccResult{Packet: hex.EncodeToString(p.pkt), InputAck: -1}
			if _, _, err := ref.Receive(p.pkt); err != nil {
				res.Err = replSentinel(err)
			}
			res.Events = slices.Clone(events)
			if a, ok := ref.InputAck(); ok {
				res.InputAck = int64(a)
			}
			for m, ok := ref.Messages.Receive(); ok; m, ok = ref.Messages.Receive() {
				res.Msgs = append(res.Msgs, ccMsg(m))
			}
			rec.Down = append(rec.Down, res)
		}
		// A message now and then, and the tick's input, held for a few
		// ticks at a time as controls are.
		if r.Intn(3) == 0 {
			text := fmt.Sprint("msg ", tick)
			if ref.Messages.Send(&ccChat{Text: text}) == nil && (driver == ref || driver.Messages.Send(&ccChat{Text: text}) == nil) {
				rec.Sends = append(rec.Sends, text)
			}
		}
		if tick == 1 || r.Intn(3) == 0 {
			mv = ccMove{DX: int8(r.Intn(3) - 1), DY: int8(r.Intn(3) - 1), Fire: r.Intn(2) == 0, Aim: float32(r.Intn(126)) * 0.05, Look: ccLook{Pitch: float32(r.Float64()*3 - 1.5)}, Seq: uint16(r.Intn(3000))}
		} else if r.Intn(2) == 0 {
			mv.Seq++
		}
		if err := in.Push(uint32(tick+3), &mv); err != nil {
			t.Fatal(err)
		}
		rec.Push = ccPush{Tick: uint32(tick + 3), DX: mv.DX, DY: mv.DY, Fire: mv.Fire, Aim: mv.Aim, Pitch: mv.Look.Pitch, Seq: mv.Seq}
		pkt, err := driver.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.Up = hex.EncodeToString(pkt)
		if driver != ref {
			refUp, err := ref.Append(nil)
			if err != nil {
				t.Fatal(err)
			}
			rec.Up = hex.EncodeToString(refUp)
		}
		if r.Intn(5) != 0 {
			up = append(up, ccFlying{tick + 1 + r.Intn(3), pkt})
		}

		// The server.
		if err := srv.Advance(uint32(tick)); err != nil {
			t.Fatal(err)
		}
		up, due = split(up, tick)
		for _, p := range due {
			_ = server.Receive(p.pkt)
		}
		for _, ok := server.Messages.Receive(); ok; _, ok = server.Messages.Receive() {
		}
		q.Next()
		for range 3 {
			id := uint32(r.Intn(12))
			if r.Intn(8) == 0 {
				_, _ = srv.Remove(id)
				delete(world, id)
				continue
			}
			e := world[id]
			ccMutate(r, &e)
			world[id] = e
			if _, err := srv.Set(id, &e); err != nil {
				t.Fatal(err)
			}
		}
		if r.Intn(4) == 0 {
			_ = server.Messages.Send(&ccHit{Target: uint32(tick), Damage: uint8(tick)})
		}
		out, ok, err := server.Append(nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok && r.Intn(5) != 0 {
			down = append(down, ccFlying{tick + 1 + r.Intn(3), out})
			if r.Intn(20) == 0 {
				down = append(down, ccFlying{tick + 2 + r.Intn(3), out}) // duplicated
			}
		}
		st.Ticks = append(st.Ticks, rec)
	}
	return st
}

type ccFlying struct {
	at  int
	pkt []byte
}

// split takes out the packets due at now.
func split(fs []ccFlying, now int) (keep, due []ccFlying) {
	for _, f := range fs {
		if f.at <= now {
			due = append(due, f)
		} else {
			keep = append(keep, f)
		}
	}
	return keep, due
}

func connTS(t *testing.T, node, dir string) {
	var streams []ccStream
	for i, mode := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeChecksum, snapshot.ModeMAC} {
		streams = append(streams, ccCorpus(t, int64(31+i), mode, 400, true))
	}
	b, err := json.Marshal(streams)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "conn.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	n, kinds := 0, map[string]int{}
	for _, s := range streams {
		for _, tk := range s.Ticks {
			n += len(tk.Down) + 1
			for _, d := range tk.Down {
				for _, e := range d.Events {
					kinds[strings.Fields(e)[0]]++
				}
				kinds["msgs"] += len(d.Msgs)
				if d.Err != "" {
					kinds[d.Err]++
				}
			}
		}
	}
	t.Logf("connection corpus: %d checks, %v", n, kinds)
	out, err := exec.Command(node, filepath.Join(dir, "build/test/conn.js"), path).CombinedOutput()
	expectAll(t, "TypeScript", n, out, err)
}

// The C# ConnClient, ReplicaEvents and InputSender (clients/cs/Conn.cs)
// on three sessions: Go's errors, events with paths, messages, input acks
// and client packets (inputs included), byte for byte.
func TestConnCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	var lines strings.Builder
	n := 0
	for i, mode := range []snapshot.Mode{snapshot.ModeNone, snapshot.ModeChecksum, snapshot.ModeMAC} {
		s := ccCorpus(t, int64(51+i), mode, 400, true)
		fmt.Fprintf(&lines, "S\t%d\t%s\n", s.Mode, s.Key)
		for _, tk := range s.Ticks {
			for _, d := range tk.Down {
				fmt.Fprintf(&lines, "D\t%s\t%s\t%d\t%s\t%s\n", d.Packet, d.Err, d.InputAck, strings.Join(d.Msgs, "|"), strings.Join(d.Events, ";"))
				n++
			}
			for _, m := range tk.Sends {
				fmt.Fprintf(&lines, "M\t%s\n", m)
			}
			p := tk.Push
			fmt.Fprintf(&lines, "P\t%d\t%d\t%d\t%t\t%s\t%s\t%d\n", p.Tick, p.DX, p.DY, p.Fire,
				strconv.FormatFloat(float64(p.Aim), 'g', -1, 32), strconv.FormatFloat(float64(p.Pitch), 'g', -1, 32), p.Seq)
			fmt.Fprintf(&lines, "U\t%s\n", tk.Up)
			n++
		}
	}
	var src strings.Builder
	if err := gen.CSharp(&src, "CC", gen.Named("Ship", bitwire.MustFor[ccShip]().Schema()), gen.Named("Msgs", ccUnion().Schema()), gen.Named("Move", bitwire.MustFor[ccMove]().Schema())); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/Conn.cs", "../clients/cs/test/ConnRunner.cs")
	path := filepath.Join(filepath.Dir(exe), "conn.tsv")
	if err := os.WriteFile(path, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mono, exe, path).CombinedOutput()
	expectAll(t, "C#", n, out, err)
}
