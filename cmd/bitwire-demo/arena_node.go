package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bitwire/bitwire"
	"github.com/bitwire/bitwire/gen"
)

// The arena's Node clients (-arena -node N): nodeclient/arena.ts, compiled
// with the runtime's conn.ts and interp.ts and code generated from the
// arena's types, one process a client, on the same connection packets as
// the Go clients.

// buildArenaNode compiles the Node client into dir and returns node and
// the script.
func buildArenaNode(dir string) (node, script string, err error) {
	chat, err := bitwire.NewUnion(ArenaSay{})
	if err != nil {
		return "", "", err
	}
	var g bytes.Buffer
	if err := gen.TypeScript(&g, "./bitwire.js", gen.Named("Avatar", bitwire.MustFor[ArenaAvatar]().Schema()),
		gen.Named("Control", bitwire.MustFor[ArenaControl]().Schema()), gen.Named("Say", chat.Schema())); err != nil {
		return "", "", err
	}
	node, err = tsBuild{
		flag:    "-node",
		files:   map[string][]byte{"arena_gen.ts": g.Bytes()},
		runtime: []string{"bitwire.ts", "conn.ts", "interp.ts"},
		demo:    map[string]string{"arena.ts": filepath.Join("cmd", "bitwire-demo", "nodeclient", "arena.ts")},
	}.compile(dir)
	if err != nil {
		return "", "", err
	}
	return node, filepath.Join(dir, "build", "arena.js"), nil
}

// arenaNode is a running Node client of the arena.
type arenaNode struct {
	cmd   *exec.Cmd
	addr  *net.UDPAddr
	sc    *bufio.Scanner
	stdin io.WriteCloser // "Q": stop chatting; closed: report and exit
}

func startArenaNode(node, script string, id int, server *net.UDPAddr, cfg ArenaConfig, players int) (*arenaNode, error) {
	cmd := exec.Command(node, script, "--server", fmt.Sprint(server.Port), "--id", fmt.Sprint(id),
		"--rate", fmt.Sprint(cfg.Rate), "--loss", fmt.Sprint(cfg.Loss), "--players", fmt.Sprint(players), "--seed", fmt.Sprint(cfg.Seed))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &arenaNode{cmd: cmd, sc: bufio.NewScanner(out), stdin: stdin}
	if !n.sc.Scan() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("-node: arena client %d printed no port", id)
	}
	port, err := strconv.Atoi(strings.TrimPrefix(n.sc.Text(), "PORT "))
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("-node: arena client %d: %q", id, n.sc.Text())
	}
	n.addr = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}
	return n, nil
}

// finish reads the client's reports to its end: the drawn players
// against truth, and its summary into sum.
func (n *arenaNode) finish(truth *arenaTruth, sum *ArenaSummary, errSum *float64) error {
	_ = n.stdin.Close()
	defer func() { _ = n.cmd.Wait() }()
	for n.sc.Scan() {
		f := strings.Fields(n.sc.Text())
		switch {
		case len(f) == 5 && f[0] == "D":
			id, _ := strconv.Atoi(f[1])
			render, _ := strconv.ParseFloat(f[2], 64)
			x, _ := strconv.ParseFloat(f[3], 64)
			z, _ := strconv.ParseFloat(f[4], 64)
			if p, ok := truth.at(uint32(id), render); ok {
				e := math.Hypot(x-float64(p[0]), z-float64(p[1]))
				*errSum += e
				sum.ErrMax = max(sum.ErrMax, e)
				sum.Samples++
				sum.NodeSamples++
			}
		case len(f) == 6 && f[0] == "S":
			pushed, _ := strconv.Atoi(f[1])
			sent, _ := strconv.Atoi(f[2])
			got, _ := strconv.Atoi(f[3])
			sum.InputsPushed += pushed
			sum.UpSent += sent
			sum.DownDelivered += got
			sum.InOrder = sum.InOrder && f[4] == "true"
			return nil
		}
	}
	return errors.New("-node: an arena client ended without its summary")
}
