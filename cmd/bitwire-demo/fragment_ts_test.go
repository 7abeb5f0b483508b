package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/snapshot"
)

// fragCheck is the TypeScript side of TestFragmentsTypeScript: for each
// case, a receiver of the case's codec (codecs.ts, generated from
// fragGolden and fragState), mode and key, and its Reassembler
// (forReceiver, of the case's bound), take the packets in turn: each
// whole block goes to the receiver. It prints one line a case, one
// outcome a packet: "ok" and the block's hex, or the error's name.
const fragCheck = `import * as fs from "node:fs";
import * as fr from "./fragment.js";
import { Golden, State } from "./codecs.js";
const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const bytes = (s: string) => Uint8Array.from(s.match(/../g) ?? [], (h) => parseInt(h, 16));
for (const c of cases) {
  const codec = c.golden ? Golden : State;
  const rc = codec.receiver({ mode: c.mode, key: c.mode === 2 ? bytes(c.key) : undefined });
  if (rc.fp !== c.fp) throw new Error(c.name + ": fingerprint " + rc.fp + ", the fragments' " + c.fp);
  const r = fr.Reassembler.forReceiver(rc, c.max);
  const out: string[] = [];
  for (const p of c.packets) {
    try {
      const block = r.add(bytes(p));
      rc.decode(block);
      out.push("ok " + hex(block));
    } catch (e) { out.push((e as Error).name); }
  }
  console.log(out.join(","));
}
`

// fragGolden is snapshot's goldenFrag (the same layout, so the
// fingerprint of the golden fragments).
type fragGolden struct {
	A [12]uint32
}

type fragCase struct {
	Name    string   `json:"name"`
	Golden  bool     `json:"golden"` // of fragGolden, else of fragState
	FP      uint32   `json:"fp"`
	Mode    int      `json:"mode"`
	Key     string   `json:"key"`
	Max     int      `json:"max"`
	Packets []string `json:"packets"`
	want    []string
}

// fragName is the outcome of one packet at a Go Receiver, as the
// TypeScript runtime names it.
func fragName(err error) string {
	for _, e := range []struct {
		err  error
		name string
	}{{snapshot.ErrIncomplete, "ErrIncomplete"}, {snapshot.ErrBadMagic, "ErrBadMagic"}, {snapshot.ErrProtocolMismatch, "ErrProtocolMismatch"},
		{snapshot.ErrIntegrity, "ErrIntegrity"}, {snapshot.ErrStaleTick, "ErrStaleTick"}, {snapshot.ErrFutureTick, "ErrFutureTick"},
		{snapshot.ErrNoBaseline, "ErrNoBaseline"}, {bitwire.ErrTooLong, "ErrTooLong"},
		{bitwire.ErrMalformed, "ErrMalformed"}, {bitwire.ErrUnexpectedEnd, "ErrUnexpectedEnd"}} {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return "other: " + err.Error()
}

type fragState struct {
	Words []uint32 `net:",maxlen=4096"`
}

// The TypeScript runtime's fragment reassembly (clients/ts/src/fragment.ts)
// against Go's: the blocks of snapshot/testdata/golden/fragments.txt
// reassembled in every mode, and sessions of a Go Sender's fragments in
// random order, duplicated, superseded, and every kind of bad fragment,
// for which the Go Receiver and the TypeScript Reassembler must give the
// same outcome packet by packet (the block itself when whole).
func TestFragmentsTypeScript(t *testing.T) {
	nodeTools(t)
	key := []byte("bitwire golden session key, 32B")
	var cases []fragCase

	// The golden vectors: every block from its fragments, last first.
	f, err := os.Open(filepath.Join("..", "..", "snapshot", "testdata", "golden", "fragments.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	mode := -1
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## mode "):
			mode++
			cases = append(cases, fragCase{Name: "golden " + line[8:], Golden: true, Mode: mode}) // Max 0: DefaultMaxBlock, as Go's SetMaxBlock(0)
			if mode == 2 {
				cases[mode].Key = hex.EncodeToString(key)
			}
		case strings.HasPrefix(line, "block = "):
			cases[mode].want = []string{"ok " + line[8:]}
		case strings.HasPrefix(line, "fragment "):
			p := line[strings.Index(line, "= ")+2:]
			b, _ := hex.DecodeString(p)
			h, err := snapshot.ParseFragmentHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			cases[mode].FP = h.Fingerprint
			cases[mode].Packets = append([]string{p}, cases[mode].Packets...)
		}
	}
	f.Close()
	if len(cases) != 3 {
		t.Fatalf("%d modes in fragments.txt", len(cases))
	}
	for k := range cases {
		n := len(cases[k].Packets)
		cases[k].want = append(slices.Repeat([]string{"ErrIncomplete"}, n-1), cases[k].want...)
	}

	// Go's sessions, and what a Go Receiver makes of them.
	c := bitwire.MustFor[fragState]()
	rng := rand.New(rand.NewSource(7))
	for m, opt := range []snapshot.Option{nil, snapshot.WithChecksum(), snapshot.WithMAC(key)} {
		s, err := snapshot.NewSender(c, opt, snapshot.WithBudget(300))
		if err != nil {
			t.Fatal(err)
		}
		st := fragState{Words: make([]uint32, 600)}
		var pkts [][]byte
		for tick := uint32(1); tick <= 4; tick++ {
			for i := range st.Words {
				st.Words[i] = rng.Uint32()
			}
			frags, err := s.EncodeFragments(tick, &st)
			if err != nil {
				t.Fatal(err)
			}
			for k, p := range frags {
				if k == 0 && tick == 2 {
					continue // tick 2 stays incomplete: superseded by tick 3
				}
				pkts = append(pkts, append([]byte(nil), p...))
				if rng.Float64() < 0.1 {
					pkts = append(pkts, append([]byte(nil), p...))
				}
			}
		}
		bad := pkts[len(pkts)-1]
		mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), bad...)) }
		// Each kind of bad fragment, the trailer left as it was: each
		// check in its order decides.
		pkts = append(pkts,
			bad[:10],
			mut(func(b []byte) []byte { b[1] = 0xb5; return b }),          // magic
			mut(func(b []byte) []byte { b[3] ^= 1; return b }),            // fingerprint
			mut(func(b []byte) []byte { b[10] = b[10]&^3 | 3; return b }), // mode 3
			mut(func(b []byte) []byte { b[10] |= 4; return b }),           // reserved
			mut(func(b []byte) []byte { b[11] = b[12] + 1; return b }),    // index past count
			mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }),     // trailer (in mode 0, the payload)
			mut(func(b []byte) []byte { b[15] = 0x7f; return b }),         // a block over the bound
			mut(func(b []byte) []byte { return b[:len(b)-1] }),            // a byte short
			mut(func(b []byte) []byte { b[6] = 0; return b }),             // another tick
		)
		// A block whose fragment checks but whose header is cut short
		// (magic, fingerprint, tick: 10 bytes): not a snapshot packet.
		g, err := snapshot.NewIntegrity(s.Mode(), map[bool][]byte{true: key}[m == 2])
		if err != nil {
			t.Fatal(err)
		}
		fp := snapshot.Fingerprint32(c.Fingerprint())
		cut := binary.LittleEndian.AppendUint16(nil, snapshot.Magic)
		cut = binary.LittleEndian.AppendUint32(cut, fp)
		cut = binary.LittleEndian.AppendUint32(cut, 50)
		frag := binary.LittleEndian.AppendUint16(nil, snapshot.FragmentMagic)
		frag = binary.LittleEndian.AppendUint32(frag, fp)
		frag = binary.LittleEndian.AppendUint32(frag, 50)
		frag = append(frag, byte(m), 0, 0, byte(len(cut)), 0, 0)
		frag, _ = g.Seal(append(frag, cut...), 0)
		pkts = append(pkts, frag)
		rc, err := snapshot.NewReceiver(c, opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.SetMaxBlock(8000); err != nil {
			t.Fatal(err)
		}
		fc := fragCase{Name: "session " + s.Mode().String(), FP: snapshot.Fingerprint32(c.Fingerprint()), Mode: m, Max: 8000}
		if m == 2 {
			fc.Key = hex.EncodeToString(key)
		}
		var out fragState
		decoded := 0
		for i, p := range pkts {
			fc.Packets = append(fc.Packets, hex.EncodeToString(p))
			tick, err := rc.Decode(p, &out)
			if err == nil {
				decoded++
				fc.want = append(fc.want, "ok "+hex.EncodeToString(blockOf(pkts[:i+1], tick, s.Mode().Overhead())))
			} else {
				fc.want = append(fc.want, fragName(err))
			}
		}
		if decoded < 2 || rc.ReassemblyStats().Superseded == 0 || rc.ReassemblyStats().Duplicates == 0 {
			t.Fatalf("%s: %d blocks decoded, %+v: the session does not cover enough", fc.Name, decoded, rc.ReassemblyStats())
		}
		cases = append(cases, fc)
	}

	var codecs bytes.Buffer
	if err := gen.TypeScript(&codecs, "./bitwire.js", gen.Named("Golden", bitwire.MustFor[fragGolden]().Schema()), gen.Named("State", c.Schema())); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	node, err := tsBuild{flag: "test", files: map[string][]byte{"fragcheck.ts": []byte(fragCheck), "codecs.ts": codecs.Bytes()},
		runtime: []string{"bitwire.ts", "fragment.ts"}}.compile(dir)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(cases)
	in := filepath.Join(dir, "cases.json")
	if err := os.WriteFile(in, js, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(node, filepath.Join(dir, "build", "fragcheck.js"), in).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, got)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d lines for %d cases:\n%s", len(lines), len(cases), got)
	}
	for k, fc := range cases {
		ts := strings.Split(lines[k], ",")
		if len(ts) != len(fc.want) {
			t.Errorf("%s: %d outcomes, want %d", fc.Name, len(ts), len(fc.want))
			continue
		}
		for i := range ts {
			if ts[i] != fc.want[i] {
				t.Errorf("%s: packet %d: TypeScript %q, Go %q", fc.Name, i, short(ts[i]), short(fc.want[i]))
			}
		}
	}
}

// blockOf joins the payloads of tick's fragments among pkts, by index:
// the block a Receiver decoded.
func blockOf(pkts [][]byte, tick uint32, overhead int) []byte {
	pieces := map[int][]byte{}
	for _, p := range pkts {
		if h, err := snapshot.ParseFragmentHeader(p); err == nil && h.Tick == tick && len(p) >= 16+overhead {
			pieces[h.Index] = p[16 : len(p)-overhead]
		}
	}
	var b []byte
	for k := range len(pieces) {
		b = append(b, pieces[k]...)
	}
	return b
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
