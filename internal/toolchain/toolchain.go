// Package toolchain finds the toolchains that the generated-client tests
// need (node and the pinned TypeScript compiler for TypeScript, mcs and mono
// for C#) and makes their absence visible: go test prints nothing of a
// passing package but its "ok" line, so a skip alone would let a newcomer
// believe the clients were tested.
package toolchain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The toolchains a test may need.
const (
	Node = "node"
	TSC  = "tsc" // the pinned compiler, clients/ts/node_modules (npm ci)
	MCS  = "mcs"
	Mono = "mono"
)

// install is the command that provides each toolchain on a Debian-like
// system.
var install = map[string]string{
	Node: "apt-get install nodejs npm",
	TSC:  "(cd clients/ts && npm ci)",
	MCS:  "apt-get install mono-mcs",
	Mono: "apt-get install mono-runtime",
}

// Missing returns those of need that are not installed; root is the
// repository's root, where clients/ts is.
func Missing(root string, need ...string) []string {
	var out []string
	for _, n := range need {
		var err error
		if n == TSC {
			_, err = os.Stat(filepath.Join(root, "clients", "ts", "node_modules", "typescript", "bin", "tsc"))
		} else {
			_, err = exec.LookPath(n)
		}
		if err != nil {
			out = append(out, n)
		}
	}
	return out
}

// SkipIfAsked skips t, a test that needs the client toolchains, when
// BITWIRE_CLIENTS=skip asks for the generated-client tests not to run
// (a quick run while editing Go code).
func SkipIfAsked(t testing.TB) {
	t.Helper()
	if os.Getenv("BITWIRE_CLIENTS") == "skip" {
		t.Skip("BITWIRE_CLIENTS=skip: the generated-client tests do not run")
	}
}

// Check is a package's test of its toolchains: what, the tests that need
// them, do not run when one is missing, and Check then fails t, naming what
// is missing and the commands that install it, unless BITWIRE_CLIENTS=skip
// says that they are skipped on purpose (then it skips, whatever is
// installed). BITWIRE_CLIENTS=required fails the tests themselves as well.
func Check(t testing.TB, root, what string, need ...string) {
	t.Helper()
	if os.Getenv("BITWIRE_CLIENTS") == "skip" {
		t.Skip(what + " did not run: BITWIRE_CLIENTS=skip")
	}
	miss := Missing(root, need...)
	if len(miss) == 0 {
		return
	}
	cmds := make([]string, len(miss))
	for i, n := range miss {
		cmds[i] = install[n]
	}
	t.Fatal(what + " did not run: " + strings.Join(miss, ", ") + " missing; install with: " +
		strings.Join(cmds, "; ") + "; or set BITWIRE_CLIENTS=skip to skip them on purpose")
}
