// Command benchmd turns benchstat's CSV output for the bench module's
// BenchmarkEncode/<workload>/<serializer> and BenchmarkDecode/... results into
// docs/BENCHMARKS.md: a headline table, then one table per workload.
//
//	benchstat -format csv bench.txt > bench.csv
//	go run ./cmd/benchmd -in bench.csv -out ../docs/BENCHMARKS.md -count 6 -benchtime 200ms
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The order of workloads and serializers in the tables; unknown names follow.
var (
	workloads = []string{"person", "player", "snapshot64", "snapshot64-delta", "world901", "world901-delta"}
	order     = []string{"bitwire-codec", "bitwire", "handwritten", "limit", "protobuf", "mus", "msgp", "flatbuffers", "binary", "kelindar", "msgpack", "cbor", "gob", "json"}
)

const limit = "handwritten" // the speed limit every ratio is taken against

var describe = map[string]string{
	"person":     "the common Go serializer benchmark struct (16-char name, time.Time, 10-char phone, siblings 0..4, bool, float64); bitwire tags are lossless",
	"player":     "the seed player state: quantized position and yaw, ranged health and weapon, two flags (72 bits in bitwire)",
	"snapshot64": "64 player states and a 32-bit tick",
	"snapshot64-delta": "the 64 players as an entity set (a uint8 id each; Pos and the Crouch/Firing flags composite) one tick (1/30 s) " +
		"later, against the previous tick: most players ran 13 to 23 cm and turned, a few changed health, weapon or flags, " +
		"none joined or left; bitwire's MarshalDelta; the peers send the changed players found by a diff and apply them by id " +
		"(both sides of that diff are timed)",
	"world901":       "901 crates (sparse uint32 id, quantized position, smallest-three quaternion, asleep flag) and a tick, in full",
	"world901-delta": "the same world one tick later with 5% of the crates changed, against the previous tick: bitwire's MarshalDelta; the peers send the changed crates found by a diff and apply them by id (both sides of that diff are timed)",
}

// stat is one benchstat cell: the center and the ± spread in percent.
type stat struct {
	v      float64
	spread string // as benchstat prints it, e.g. "3%" or "∞"; empty when none
	ok     bool
}

// key: op ("Encode"/"Decode"), workload, serializer, unit.
type key struct{ op, work, ser, unit string }

var nameRE = regexp.MustCompile(`^(Encode|Decode)/([^/]+)/(.+?)(-\d+)?$`)

func parse(r io.Reader) (map[key]stat, []string, error) {
	data := map[key]stat{}
	var header []string
	br := bufio.NewReader(r)
	var unit string
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			switch {
			case strings.HasPrefix(line, "goos:"), strings.HasPrefix(line, "goarch:"),
				strings.HasPrefix(line, "pkg:"), strings.HasPrefix(line, "cpu:"):
				header = append(header, strings.TrimSpace(line))
			default:
				rec, perr := csv.NewReader(strings.NewReader(line)).Read()
				if perr != nil || len(rec) < 2 {
					break
				}
				if rec[0] == "" { // a section header: ",sec/op,CI" or ",file,"
					if len(rec) >= 3 && rec[2] == "CI" {
						unit = rec[1]
					}
					break
				}
				m := nameRE.FindStringSubmatch(rec[0])
				if m == nil || unit == "" {
					break
				}
				s := stat{}
				if v, perr := strconv.ParseFloat(rec[1], 64); perr == nil {
					s = stat{v: v, ok: true}
				}
				if len(rec) >= 3 {
					s.spread = rec[2]
				}
				data[key{m[1], m[2], m[3], unit}] = s
			}
		}
		if err == io.EOF {
			return data, header, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

func cpuLine() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func goVersion() string {
	out, err := exec.Command("go", "version").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

// ns formats seconds per op as nanoseconds with 3 significant digits.
func ns(s stat) string {
	if !s.ok {
		return "–"
	}
	v := s.v * 1e9
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func withSpread(text string, s stat) string {
	if !s.ok || s.spread == "" {
		return text
	}
	return text + " ±" + s.spread
}

func count(s stat) string {
	if !s.ok {
		return "–"
	}
	return strconv.FormatFloat(math.Round(s.v), 'f', -1, 64)
}

func ratio(a, b stat) string {
	if !a.ok || !b.ok || b.v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a.v/b.v)
}

func serializers(data map[key]stat, work string) []string {
	var names []string
	for k := range data {
		if k.work == work && !slices.Contains(names, k.ser) {
			names = append(names, k.ser)
		}
	}
	rank := func(n string) int {
		if i := slices.Index(order, n); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func main() {
	in := flag.String("in", "-", "benchstat -format csv output")
	out := flag.String("out", "-", "markdown file to write")
	runCount := flag.String("count", "?", "the -count the benchmarks ran with (for the text)")
	benchtime := flag.String("benchtime", "?", "the -benchtime they ran with (for the text)")
	load := flag.String("load", "", "the machine's 1-minute load averages around the runs (for the text)")
	flag.Parse()

	r := os.Stdin
	if *in != "-" {
		f, err := os.Open(*in)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		r = f
	}
	data, header, err := parse(r)
	if err != nil {
		log.Fatal(err)
	}
	if len(data) == 0 {
		log.Fatal("benchmd: no Encode/Decode results in the input")
	}

	var b strings.Builder
	get := func(op, work, ser, unit string) stat { return data[key{op, work, ser, unit}] }
	size := func(work, ser string) stat {
		if s := get("Encode", work, ser, "B/msg"); s.ok {
			return s
		}
		return get("Decode", work, ser, "B/msg")
	}

	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Generated by `bench/run.sh` on %s. **These figures come from a noisy shared 2-core machine:** "+
		"compare rows of the same run, read the ± spread, and do not quote the absolute nanoseconds.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- CPU (/proc/cpuinfo): %s\n- Go: %s\n- Runs: `-count %s -benchtime %s`; each cell is benchstat's median, "+
		"± its 95%% confidence interval (∞ or missing when there were too few runs).\n", cpuLine(), goVersion(), *runCount, *benchtime)
	if *load != "" {
		fmt.Fprintf(&b, "- Load: 1-minute load average %s, on %d cores (other jobs share them).\n", *load, runtime.NumCPU())
	}
	for _, h := range header {
		fmt.Fprintf(&b, "- %s\n", h)
	}
	b.WriteString(`
Serializers: **bitwire-codec** is ` + "`Codec[T]`" + ` with reused buffers (` + "`Append`/`AppendDelta`" + ` into one buffer,
` + "`Unmarshal`/`UnmarshalDelta`" + ` into one value); **bitwire** the package-level ` + "`Marshal`/`Unmarshal`" + ` functions;
**handwritten** a bit packer of exactly bitwire's layout written by hand with packages ` + "`bits`" + ` and ` + "`fields`" + ` (every
"× hand" ratio below is against it); **limit** (world901 only) a codec written for exactly the World layout in plain
Go, without ` + "`bits`" + ` and ` + "`fields`" + ` on its hot path (one bit position and whole-word stores and loads, every check in one
sign bit, fixed-point quaternion indices, integer keep-the-indices checks; bench/limit.go), byte-equal to bitwire and tested to decode and refuse
exactly what bitwire does: the real speed limit of that message, which the hand-written packer, sharing bitwire's
costs, is not; **protobuf** google.golang.org/protobuf with protoc-generated types
(encoding a prebuilt message with ` + "`MarshalAppend`" + ` into a reused buffer, decoding into a reused message);
**mus** github.com/mus-format/mus-go (the MUS format: raw floats, varint counts and small integers), written with
its serializers, one function per type, as its users write it (bench/mus.go); **msgp** github.com/tinylib/msgp with
generated code, each struct as a MessagePack array of its fields (its tuple form, the fastest); **flatbuffers**
github.com/google/flatbuffers with flatc-generated code (players and crates as vectors of structs; decoding copies
every field into the reused Go value, and turns the runtime's out-of-range panics on malformed input into errors);
**binary** a byte-aligned encoder written by hand with encoding/binary's append functions (no reflection);
**kelindar** github.com/kelindar/binary; **msgpack** github.com/vmihailenco/msgpack/v5; **cbor**
github.com/fxamacker/cbor/v2 (lossless time.Time as RFC 3339 with nanoseconds); **gob** encoding/gob with a new
encoder per message, since each datagram must decode on its own; **json** encoding/json. The peers code the same
values at full width (float32 as 4 bytes, and so on); bitwire codes what its tags say (quantized floats, ranged ints),
which is the point of the comparison. Exact versions are in bench/go.mod.

Notes for reading the tables:
- Every subject decodes the same message into the same reused value again and again. bitwire keeps a string field
  whose decoded bytes equal its current value, so its person decode allocates nothing here; the hand-written packer
  calls ` + "`fields.ReadString`" + `, which always allocates, as do the peers.
- protobuf's full-message rows convert nothing (the message is built once); its delta rows convert the changed
  crates or players to and from messages, since the diff and the rebuild work on the Go structs.
- The hand-written World delta matches ids and judges each survivor in one pass: crates that compare equal as Go
  values are unchanged; otherwise it quantizes both (packing the quaternions) once, and encodes from those keys. The
  hand-written DeltaSnapshot delta quantizes each changed value once and writes
  the indexes it compared. The tests TestHandDeltaMatchesBitwire and TestHandSnapDeltaMatchesBitwire check that they
  write bitwire's bytes.
- In snapshot64-delta nearly every player moves, so every peer sends nearly every player in full, with its id; its
  composite Pos costs a changed bit and 48 bits for any move, even a purely horizontal one.
- Ticks are ` + "`bits=32`" + `; the crates slice has ` + "`maxlen=1024`" + ` (an 11-bit length) and the players slice
  ` + "`maxlen=64`" + ` (7 bits); crate ids are untagged uint32 (bitlen, 5-bit prefix), player ids untagged uint8
  (bitlen, 3-bit prefix).

`)

	// Headline: bitwire beside the yardstick and the serializers users
	// pick for speed, bytes and time in one cell each.
	headline := []string{"bitwire-codec", limit, "protobuf", "mus", "msgp", "flatbuffers"}
	b.WriteString("## Headline\n\nBytes per message, then encode / decode ns per message.\n\n| workload |")
	for _, s := range headline {
		fmt.Fprintf(&b, " %s |", s)
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(headline)) + "\n")
	for _, w := range workloads {
		fmt.Fprintf(&b, "| %s |", w)
		for _, s := range headline {
			fmt.Fprintf(&b, " %s B, %s / %s |", count(size(w, s)), ns(get("Encode", w, s, "sec/op")), ns(get("Decode", w, s, "sec/op")))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")

	for _, w := range workloads {
		sers := serializers(data, w)
		if len(sers) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n\n%s.\n\n", w, capitalize(describe[w]))
		b.WriteString("| serializer | bytes/msg | encode ns/op | decode ns/op | encode B/op · allocs | decode B/op · allocs | size × hand | encode × hand | decode × hand |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		hEnc, hDec := get("Encode", w, limit, "sec/op"), get("Decode", w, limit, "sec/op")
		for _, s := range sers {
			enc, dec := get("Encode", w, s, "sec/op"), get("Decode", w, s, "sec/op")
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s · %s | %s · %s | %s | %s | %s |\n",
				s, count(size(w, s)),
				withSpread(ns(enc), enc), withSpread(ns(dec), dec),
				count(get("Encode", w, s, "B/op")), count(get("Encode", w, s, "allocs/op")),
				count(get("Decode", w, s, "B/op")), count(get("Decode", w, s, "allocs/op")),
				ratio(size(w, s), size(w, limit)), ratio(enc, hEnc), ratio(dec, hDec))
		}
		b.WriteString("\n")
	}
	b.WriteString("Regenerate with `bench/run.sh` (options: `-count N`, `-benchtime D`, `-bench REGEXP`); the raw " +
		"`go test -bench` output is left in bench/bench.txt (not committed).\n")

	if *out == "-" {
		fmt.Print(b.String())
		return
	}
	// The section bench/limit.sh measured (valgrind counts, which this
	// run does not make) stays, from its marker on.
	if old, err := os.ReadFile(*out); err == nil {
		if i := strings.Index(string(old), limitMarker); i >= 0 {
			b.WriteString("\n" + string(old[i:]))
		}
	}
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

// limitMarker starts the section of docs/BENCHMARKS.md that bench/limit.sh
// writes.
const limitMarker = "<!-- limit.sh -->"
