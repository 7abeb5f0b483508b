// Command clientbench times the generated TypeScript (Node) and C# (mono)
// decoders on the bench workloads world901, world901-delta and snapshot64,
// beside Go's Codec decoding the same bytes, and prints a Markdown table
// (docs/BENCHMARKS.md, "Generated clients"). It needs node, the pinned
// TypeScript compiler (`npm ci` in clients/ts) and mono (mcs); run it from
// the bench directory:
//
//	cd bench && go run ./cmd/clientbench
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/bench"
	"github.com/bitwire/bitwire/gen"
)

var workloads = []string{"world901", "world901-delta", "snapshot64"}

func main() {
	keep := flag.String("keep", "", "build in `dir` and keep it (to profile the clients by hand)")
	flag.Parse()
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "clientbench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}

	wc, sc := bitwire.MustFor[bench.World](), bitwire.MustFor[bench.Snapshot]()
	base, cur := bench.MakeWorlds()
	snap := bench.MakeSnapshot()
	full, err := wc.Marshal(&cur)
	check(err)
	baseBytes, err := wc.Marshal(&base)
	check(err)
	var qbase bench.World // the receiver's baseline: what it decoded
	check(wc.Unmarshal(baseBytes, &qbase))
	delta, err := wc.MarshalDelta(&qbase, &cur)
	check(err)
	snapBytes, err := sc.Marshal(&snap)
	check(err)
	inputs := map[string][]byte{"world901": full, "world901-base": baseBytes, "world901-delta": delta, "snapshot64": snapBytes}
	for name, b := range inputs {
		check(os.WriteFile(filepath.Join(dir, name+".hex"), []byte(hex.EncodeToString(b)), 0o644))
	}

	// Go: the same decodes, into reused values.
	goNs := map[string]float64{}
	var w, w2 bench.World
	var s bench.Snapshot
	goNs["world901"] = median(func(n int) {
		for i := 0; i < n; i++ {
			if err := wc.Unmarshal(full, &w); err != nil {
				log.Fatal(err)
			}
		}
	})
	goNs["world901-delta"] = median(func(n int) {
		for i := 0; i < n; i++ {
			if err := wc.UnmarshalDelta(delta, &qbase, &w2); err != nil {
				log.Fatal(err)
			}
		}
	})
	goNs["snapshot64"] = median(func(n int) {
		for i := 0; i < n; i++ {
			if err := sc.Unmarshal(snapBytes, &s); err != nil {
				log.Fatal(err)
			}
		}
	})

	msgs := []gen.Message{gen.Named("WorldCodec", wc.Schema()), gen.Named("SnapshotCodec", sc.Schema())}
	tsNs := runTS(dir, msgs)
	csNs := runCS(dir, msgs)

	fmt.Printf("Measured by `cd bench && go run ./cmd/clientbench` on %s (%s, node %s, %s; GOMAXPROCS %d).\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.Version(), strings.TrimSpace(output("node", "--version")), monoVersion(), runtime.GOMAXPROCS(0))
	fmt.Println("CPU time per decode (user and system, all of a process's threads), the median of 9 batches of at least 200 ms after a warm-up.")
	fmt.Println()
	fmt.Println("| workload | bytes | Go ns/op | Node ns/op | mono ns/op | Node × Go | mono × Go |")
	fmt.Println("|---|--:|--:|--:|--:|--:|--:|")
	for _, wl := range workloads {
		n := len(inputs[wl])
		fmt.Printf("| %s | %d | %.0f | %.0f | %.0f | %.1f× | %.1f× |\n", wl, n, goNs[wl], tsNs[wl], csNs[wl], tsNs[wl]/goNs[wl], csNs[wl]/goNs[wl])
	}
	fmt.Printf("\nmono gen-0 collections during the C# loops (decode into reused values): %.0f\n", csNs["gc"])
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// median warms f up (batches doubled until one takes 200 ms of CPU), then
// returns the median CPU time per call, in ns, over 9 batches of that size:
// the same measure as the Node and mono loops (bench/clients), which a
// loaded machine disturbs less than wall time.
func median(f func(n int)) float64 {
	n := 1
	for {
		t0 := cpuTime()
		f(n)
		if cpuTime()-t0 > 200e6 {
			break
		}
		n *= 2
	}
	var v []float64
	for k := 0; k < 9; k++ {
		t0 := cpuTime()
		f(n)
		v = append(v, float64(cpuTime()-t0)/float64(n))
	}
	sort.Float64s(v)
	return v[4]
}

func output(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return string(out)
}

func monoVersion() string {
	first, _, _ := strings.Cut(output("mono", "--version"), "\n")
	first = strings.TrimPrefix(first, "Mono JIT compiler version ")
	v, _, _ := strings.Cut(first, " ")
	return "mono " + v
}

func root() string {
	wd, err := os.Getwd()
	check(err)
	if filepath.Base(wd) != "bench" {
		log.Fatal("run from the bench directory: cd bench && go run ./cmd/clientbench")
	}
	return filepath.Dir(wd)
}

func runTS(dir string, msgs []gen.Message) map[string]float64 {
	r := root()
	ts := filepath.Join(dir, "ts")
	check(os.MkdirAll(filepath.Join(ts, "src"), 0o755))
	var src bytes.Buffer
	check(gen.TypeScript(&src, "./bitwire.js", msgs...))
	check(os.WriteFile(filepath.Join(ts, "src", "gen.ts"), src.Bytes(), 0o644))
	for name, from := range map[string]string{"bitwire.ts": "clients/ts/src/bitwire.ts", "bench.ts": "bench/clients/bench.ts"} {
		b, err := os.ReadFile(filepath.Join(r, from))
		check(err)
		check(os.WriteFile(filepath.Join(ts, "src", name), b, 0o644))
	}
	types := filepath.Join(r, "clients", "ts", "node_modules", "@types")
	config := fmt.Sprintf(`{"compilerOptions": {"target": "ES2020", "module": "ES2020", "moduleResolution": "node", "strict": true, "outDir": "build", "skipLibCheck": true, "types": ["node"], "typeRoots": [%q]}, "include": ["src/*.ts"]}`, types)
	check(os.WriteFile(filepath.Join(ts, "tsconfig.json"), []byte(config), 0o644))
	check(os.WriteFile(filepath.Join(ts, "package.json"), []byte(`{"type": "module"}`), 0o644))
	if out, err := exec.Command("node", filepath.Join(r, "clients", "ts", "node_modules", "typescript", "bin", "tsc"), "-p", ts).CombinedOutput(); err != nil {
		log.Fatalf("tsc: %v\n%s", err, out)
	}
	return parse(output("node", filepath.Join(ts, "build", "bench.js"), dir))
}

func runCS(dir string, msgs []gen.Message) map[string]float64 {
	r := root()
	var src bytes.Buffer
	check(gen.CSharp(&src, "Bench", msgs...))
	genPath := filepath.Join(dir, "Gen.cs")
	check(os.WriteFile(genPath, src.Bytes(), 0o644))
	exe := filepath.Join(dir, "bench.exe")
	runtime, err := filepath.Glob(filepath.Join(r, "clients", "cs", "Bitwire", "*.cs"))
	check(err)
	args := append([]string{"-nologo", "-optimize+", "-out:" + exe, genPath, filepath.Join(r, "bench", "clients", "Bench.cs")}, runtime...)
	if out, err := exec.Command("mcs", args...).CombinedOutput(); err != nil {
		log.Fatalf("mcs: %v\n%s", err, out)
	}
	return parse(output("mono", "--optimize=all", exe, dir))
}

func parse(s string) map[string]float64 {
	m := map[string]float64{}
	check(json.Unmarshal([]byte(s), &m))
	return m
}
