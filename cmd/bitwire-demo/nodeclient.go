package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
	"github.com/bitwire/bitwire/snapshot"
)

// Node clients (-node N): N of the clients are Node processes running
// nodeclient/main.ts, compiled with the TypeScript compiler that `npm ci`
// installs in clients/ts, with code generated from the demo's schema at
// start-up (gen.TypeScript) and the runtime clients/ts/src/bitwire.ts. Each
// reports the entity states it accepts, re-encoded in full, on its standard
// output ("C id tick hex"); the demo checks each against the server's state
// of that entity at that tick, as the Go clients do in process.

// NodeSummary is what one Node client saw.
type NodeSummary struct {
	ID          int `json:"id"` // the client (peer) index
	Received    int `json:"received"`
	Dropped     int `json:"dropped"` // by its own -loss
	Accepted    int `json:"accepted"`
	Checked     int `json:"checked"`
	Unchecked   int `json:"unchecked"` // the tick had left the truth ring
	Stale       int `json:"stale"`
	NoBaseline  int `json:"no_baseline"`
	Recovering  int `json:"recovering"` // ErrFutureTick or ErrStateMismatch: the stream re-anchors
	Errors      int `json:"errors"`
	Desyncs     int `json:"desyncs"`
	AcksSent    int `json:"acks_sent"`
	AcksDropped int `json:"acks_dropped"`
}

// nodeClient is a running Node client process.
type nodeClient struct {
	id    int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  *net.UDPAddr
	sc    *bufio.Scanner
	done  chan struct{} // closed when its output has been read to the end
	sum   NodeSummary
	logf  func(string, ...any)
}

// repoRoot finds the repository from the working directory: the Node
// client's sources and the TypeScript compiler live there.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/bitwire/bitwire\n")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errNotInRepo
		}
		dir = up
	}
}

// buildNodeClient generates entity.ts from Entity's schema (with the model
// m, when not nil, as the server's codec) and compiles it with the runtime
// and nodeclient/main.ts into dir; it returns node's path and the script to
// run.
func buildNodeClient(dir string, m *bitwire.Model) (node, script string, err error) {
	var entity bytes.Buffer
	if err := gen.TypeScript(&entity, "./bitwire.js", gen.Named("EntityCodec", bitwire.MustFor[Entity]().WithModel(m).Schema())); err != nil {
		return "", "", err
	}
	node, err = tsBuild{
		flag:    "-node",
		files:   map[string][]byte{"entity.ts": entity.Bytes()},
		runtime: []string{"bitwire.ts"},
		demo:    map[string]string{"main.ts": filepath.Join("cmd", "bitwire-demo", "nodeclient", "main.ts")},
	}.compile(dir)
	if err != nil {
		return "", "", err
	}
	return node, filepath.Join(dir, "build", "main.js"), nil
}

// startNodeClient starts client id, waits for the port it bound, and
// starts checking its reports against truth.
func startNodeClient(node, script string, id int, server *net.UDPAddr, cfg Config, seed uint64,
	truth *truth, desyncs interface{ Add(int64) int64 }, logf func(string, ...any)) (*nodeClient, error) {
	loss := cfg.Net.Loss
	args := []string{script, "--server", strconv.Itoa(server.Port), "--id", strconv.Itoa(id),
		"--loss", strconv.FormatFloat(loss, 'g', -1, 64), "--seed", strconv.FormatUint(seed%4294967291+1, 10),
		"--mode", strconv.Itoa(int(cfg.Inject.Integrity))}
	if key := streamKey(cfg, id); key != nil {
		args = append(args, "--key", hex.EncodeToString(key))
	}
	if cfg.Inject.Integrity != snapshot.ModeMAC { // as clientOptions
		args = append(args, "--expiry", strconv.Itoa(3*cfg.refreshTicks()))
	}
	cmd := exec.Command(node, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	nc := &nodeClient{id: id, cmd: cmd, stdin: stdin, done: make(chan struct{}), logf: logf}
	nc.sum.ID = id
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	port := make(chan int, 1)
	go func() {
		if sc.Scan() {
			if p, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "PORT ")); err == nil {
				port <- p
			}
		}
		close(port)
	}()
	select {
	case p, ok := <-port:
		if !ok {
			nc.kill()
			return nil, fmt.Errorf("-node: client %d did not report its port", id)
		}
		nc.addr = &net.UDPAddr{IP: loopback, Port: p}
	case <-time.After(10 * time.Second):
		nc.kill()
		return nil, fmt.Errorf("-node: client %d did not start within 10s", id)
	}
	nc.sc = sc
	go nc.check(truth, desyncs) // ends with the process's output (stop)
	return nc, nil
}

func (nc *nodeClient) kill() {
	nc.stdin.Close()
	nc.cmd.Process.Kill()
	nc.cmd.Wait()
}

// check reads the client's reports until its output ends, checking each
// snapshot against the truth.
func (nc *nodeClient) check(truth *truth, desyncs interface{ Add(int64) int64 }) {
	defer close(nc.done)
	c := bitwire.MustFor[Entity]()
	for nc.sc.Scan() {
		line := nc.sc.Text()
		switch {
		case strings.HasPrefix(line, "C "):
			f := strings.Fields(line)
			if len(f) != 4 {
				nc.sum.Errors++
				continue
			}
			id, err1 := strconv.ParseUint(f[1], 10, 32)
			tick, err2 := strconv.ParseUint(f[2], 10, 32)
			b, err3 := hex.DecodeString(f[3])
			var got Entity
			var err4 error
			if err1 == nil && err2 == nil && err3 == nil {
				err4 = c.Unmarshal(b, &got)
			}
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				nc.sum.Errors++
				nc.logf("node client %d: bad report: %.80s", nc.id, line)
				continue
			}
			equal, found := truth.check(uint32(id), uint32(tick), &got)
			switch {
			case !found:
				nc.sum.Unchecked++
			case !equal:
				nc.sum.Desyncs++
				if desyncs.Add(1) <= 5 {
					nc.logf("DESYNC: node client %d entity %d tick %d: decoded state differs from the server's", nc.id, id, tick)
				}
			default:
				nc.sum.Checked++
			}
		case strings.HasPrefix(line, "S "):
			var s struct {
				Received, Dropped, Accepted, Stale, NoBaseline, Recovering, Errors, AcksSent, AcksDropped int
			}
			if err := json.Unmarshal([]byte(line[2:]), &s); err == nil {
				nc.sum.Received, nc.sum.Dropped, nc.sum.Accepted = s.Received, s.Dropped, s.Accepted
				nc.sum.Stale, nc.sum.NoBaseline, nc.sum.Recovering, nc.sum.Errors = s.Stale, s.NoBaseline, s.Recovering, nc.sum.Errors+s.Errors
				nc.sum.AcksSent, nc.sum.AcksDropped = s.AcksSent, s.AcksDropped
			}
		}
	}
}

// stop closes the client's input (it then prints its counts and exits) and
// waits, at most 5 s, for its reports to be checked.
func (nc *nodeClient) stop() {
	nc.stdin.Close()
	select {
	case <-nc.done:
		nc.cmd.Wait()
	case <-time.After(5 * time.Second):
		nc.cmd.Process.Kill()
		nc.cmd.Wait()
		nc.sum.Errors++
		nc.logf("node client %d did not stop within 5s", nc.id)
	}
}

// nodeFleet is the run's Node clients and the directory they were built in.
type nodeFleet struct {
	clients []*nodeClient
	dir     string
}

func (f *nodeFleet) stopAll() {
	for _, c := range f.clients {
		c.stop()
	}
	if f.dir != "" {
		os.RemoveAll(f.dir)
	}
}
