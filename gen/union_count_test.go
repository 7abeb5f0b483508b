package gen_test

import (
	"encoding/hex"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
	"github.com/bitwire/bitwire/gen"
)

// The count framing of unions in the generated clients: packets of
// several messages (Union.EncodeCount, then the messages), whole, cut
// short, and with counts no input could hold, decoded by Go (count, then
// each message) and by the TypeScript and C# clients, which must agree on
// the count or the first error, and re-encode what they decoded to the
// same bytes; and counts the encoders must refuse.

type ucChat struct {
	Text string `net:",maxlen=24"`
}

type ucHit struct {
	Target uint16 `net:"bits=16"`
	Damage uint8  `net:"range,min=0,max=100"`
}

type ucCase struct {
	kind string // decode, encode
	hex  string // decode: the packet; encode: the expected bytes
	n    int    // decode: the count Go read; encode: the count to write
	err  string // the sentinel of the first error, or ""
}

func ucUnion(t *testing.T) *bitwire.Union {
	u, err := bitwire.NewUnion(ucChat{}, ucHit{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func ucCorpus(t *testing.T) []ucCase {
	u := ucUnion(t)
	r := rand.New(rand.NewSource(23))
	var cases []ucCase
	decode := func(b []byte) {
		var rd bits.Reader
		rd.Reset(b)
		n, err := u.DecodeCount(&rd)
		for i := 0; err == nil && i < n; i++ {
			_, err = u.Decode(&rd)
		}
		c := ucCase{kind: "decode", hex: hex.EncodeToString(b), n: n}
		if err != nil {
			c.err, c.n = sentinel(err), 0
		}
		cases = append(cases, c)
	}
	for range 300 {
		var w bits.Writer
		n := r.Intn(12)
		if err := u.EncodeCount(&w, n); err != nil {
			t.Fatal(err)
		}
		for range n {
			var v any = ucHit{Target: uint16(r.Intn(65536)), Damage: uint8(r.Intn(101))}
			if r.Intn(2) == 0 {
				v = ucChat{Text: strings.Repeat("x", r.Intn(25))}
			}
			if err := u.Encode(&w, v); err != nil {
				t.Fatal(err)
			}
		}
		b := append([]byte(nil), w.Bytes()...)
		decode(b)
		if len(b) > 1 {
			decode(b[:r.Intn(len(b))]) // cut short
		}
	}
	// Counts no input holds, and counts over the limit.
	for _, n := range []uint64{1000, 1 << 20, 1<<20 + 1, 1 << 31} {
		var w bits.Writer
		fields.WriteBitlen(&w, n, 5)
		w.WriteBits(0, 16)
		decode(append([]byte(nil), w.Bytes()...))
	}
	for _, n := range []int{0, 1, 31, 32, 1000, 1 << 20, 1<<20 + 1, -1} {
		var w bits.Writer
		c := ucCase{kind: "encode", n: n}
		if err := u.EncodeCount(&w, n); err != nil {
			c.err = sentinel(err)
		} else {
			c.hex = hex.EncodeToString(w.Bytes())
		}
		cases = append(cases, c)
	}
	return cases
}

func ucLines(cases []ucCase) string {
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "%s\t%s\t%d\t%s\n", c.kind, c.hex, c.n, c.err)
	}
	return b.String()
}

func unionCountTS(t *testing.T, node, dir string) {
	cases := ucCorpus(t)
	path := filepath.Join(dir, "cases.tsv")
	if err := os.WriteFile(path, []byte(ucLines(cases)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "build/test/union_count.js"), path).CombinedOutput()
	expectAll(t, "TypeScript", len(cases), out, err)
}

func TestUnionCountCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	cases := ucCorpus(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "UC", gen.Named("Msgs", ucUnion(t).Schema())); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/UnionCount.cs")
	path := filepath.Join(filepath.Dir(exe), "cases.tsv")
	if err := os.WriteFile(path, []byte(ucLines(cases)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mono, exe, path).CombinedOutput()
	expectAll(t, "C#", len(cases), out, err)
}

// TestTypeScriptConnection compiles one TypeScript project for the
// runtime's connection code (union counts, conn.ts, interp.ts) and runs
// the corpora of union_count_test.go, conn_conformance_test.go,
// interp_conformance_test.go and input_delta_test.go through it: one tsc
// run for the four.
func TestTypeScriptConnection(t *testing.T) {
	node, tsc := clientTools(t)
	var src strings.Builder
	err := gen.TypeScript(&src, "./bitwire.js",
		gen.Named("UCMsgs", ucUnion(t).Schema()),
		gen.Named("Ship", bitwire.MustFor[ccShip]().Schema()), gen.Named("Msgs", ccUnion().Schema()), gen.Named("Move", bitwire.MustFor[ccMove]().Schema()),
		gen.Named("Mob", bitwire.MustFor[icMob]().Schema()), gen.Named("TI", bitwire.MustFor[tiInput]().Schema()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"src", "test"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"src/bitwire.ts", "src/conn.ts", "src/interp.ts", "test/union_count.ts", "test/conn.ts", "test/interp.ts", "test/input.ts", "tsconfig.json", "package.json"} {
		copyFile(t, "../clients/ts/"+f, filepath.Join(dir, f))
	}
	nm, _ := filepath.Abs("../clients/ts/node_modules")
	if err := os.Symlink(nm, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src/gen.ts"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, tsc, "-p", dir).CombinedOutput(); err != nil {
		t.Fatalf("tsc: %v\n%s", err, out)
	}
	t.Run("union-count", func(t *testing.T) { unionCountTS(t, node, dir) })
	t.Run("conn", func(t *testing.T) { connTS(t, node, dir) })
	t.Run("interp", func(t *testing.T) { interpTS(t, node, dir) })
	t.Run("input", func(t *testing.T) { inputTS(t, node, dir) })
}
