package gen_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// goldenCase is one block of testdata/golden/codings.txt: a delta's block
// also has the full messages of its baseline (base) and of what it decodes
// to (result).
type goldenCase struct{ name, hex, base, result, older string }

func readGolden(t *testing.T) []goldenCase {
	f, err := os.Open("../testdata/golden/codings.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			cs = append(cs, goldenCase{name: l[1 : len(l)-1]})
		} else if k, v, ok := strings.Cut(l, "="); ok && len(cs) > 0 {
			switch c := &cs[len(cs)-1]; strings.TrimSpace(k) {
			case "hex":
				c.hex = strings.TrimSpace(v)
			case "base":
				c.base = strings.TrimSpace(v)
			case "result":
				c.result = strings.TrimSpace(v)
			case "older":
				c.older = strings.TrimSpace(v)
			}
		}
	}
	return cs
}

// goldenMessages reads the schema of every golden case and the cases as
// conformance lines: generated from the JSON schema files alone, each client
// must decode each whole message or union stream and re-encode it to the
// same bytes, and decode each delta against its baseline (the block's base)
// to a value whose full encoding is the block's result. Cases in debug mode
// are left out: generated clients refuse debug schemas (gen.ErrSchema),
// which is checked here.
func goldenMessages(t *testing.T) ([]gen.Message, []cfCase) {
	var msgs []gen.Message
	var cases []cfCase
	for _, c := range readGolden(t) {
		b, err := os.ReadFile(filepath.Join("../testdata/golden/schemas", c.name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var s bitwire.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		name := "G_" + strings.ReplaceAll(c.name, "-", "_")
		if s.Debug {
			if err := gen.TypeScript(io.Discard, "./bitwire.js", gen.Named(name, &s)); !errors.Is(err, gen.ErrSchema) {
				t.Fatalf("%s: a debug schema gave %v, want gen.ErrSchema", c.name, err)
			}
			continue
		}
		msgs = append(msgs, gen.Named(name, &s))
		switch {
		case c.older != "":
			cases = append(cases, cfCase{Kind: "golden-predicted", Msg: name, Full: c.base, Older: c.older, Delta: c.hex, Want: c.result})
		case strings.HasPrefix(c.name, "delta-"):
			if c.base == "" || c.result == "" {
				t.Fatalf("%s: a delta block without base and result", c.name)
			}
			cases = append(cases, cfCase{Kind: "golden-delta", Msg: name, Full: c.base, Delta: c.hex, Want: c.result})
		case s.Union != nil:
			cases = append(cases, cfCase{Kind: "golden-union", Msg: name, Full: c.hex})
		default:
			cases = append(cases, cfCase{Kind: "golden", Msg: name, Full: c.hex})
		}
	}
	if len(cases) < 20 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	return msgs, cases
}

func TestGoldenTypeScript(t *testing.T) {
	node, tsc := clientTools(t)
	msgs, cases := goldenMessages(t)
	var src strings.Builder
	if err := gen.TypeScript(&src, "./bitwire.js", msgs...); err != nil {
		t.Fatal(err)
	}
	dir := buildTS(t, node, tsc, []byte(src.String()))
	runTS(t, node, dir, cases)
}

func TestGoldenCSharp(t *testing.T) {
	mcs, mono := csTools(t)
	msgs, cases := goldenMessages(t)
	var src strings.Builder
	if err := gen.CSharp(&src, "Conf", msgs...); err != nil {
		t.Fatal(err)
	}
	exe := buildCS(t, mcs, []byte(src.String()), "../clients/cs/test/Conformance.cs")
	runCS(t, mono, exe, cases)
}

func expectAll(t *testing.T, lang string, n int, out []byte, err error) {
	t.Logf("%s, %d cases: %s", lang, n, strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("%s: %v\n%s", lang, err, out)
	}
	if want := fmt.Sprintf("%d passed, 0 failed", n); !strings.Contains(string(out), want) {
		t.Fatalf("want %q", want)
	}
}

func runTS(t *testing.T, node, dir string, cases []cfCase) {
	var lines strings.Builder
	for _, c := range cases {
		b, _ := json.Marshal(c)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	path := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(path, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "build/test/conformance.js"), "file://"+filepath.Join(dir, "build/src/gen.js"), path).CombinedOutput()
	expectAll(t, "TypeScript", len(cases), out, err)
}

func runCS(t *testing.T, mono, exe string, cases []cfCase) {
	var lines strings.Builder
	for _, c := range cases {
		kind, data, want, tick := caseKind(c), c.Full, c.Want, c.Tick
		base := ""
		switch kind {
		case "delta", "damaged-delta":
			data, base = c.Delta, fmt.Sprint(*c.Base)
		case "input":
			data, base = c.Full, c.Delta // the baseline and the input, in full
		case "alloc-delta", "golden-delta", "golden-predicted":
			base = c.Delta // the delta; data is the baseline (and the last column the older one)
		case "snap":
			data = c.Packet
		case "repl", "repl-golden", "repl-held":
			data, base = c.Packet, fmt.Sprint(c.Max)
		}
		if c.Err != "" {
			want = c.Err
		}
		// then a replication client's options: its expiry ("" when not
		// given), refresh and tick rate (0 when not given)
		expiry := ""
		if c.Expiry != nil {
			expiry = fmt.Sprint(*c.Expiry)
		}
		fmt.Fprintf(&lines, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%d\t%s\n", kind, c.Msg, data, want, base, c.Stream, tick, c.Mode, c.Ack, c.Key, expiry, c.Refresh, c.TickRate, c.Older)
	}
	path := filepath.Join(filepath.Dir(exe), "corpus.tsv")
	if err := os.WriteFile(path, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(mono, exe, "Conf", path).CombinedOutput()
	expectAll(t, "C#", len(cases), out, err)
}
