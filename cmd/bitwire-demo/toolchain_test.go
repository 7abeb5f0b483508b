package main

import (
	"testing"

	"github.com/bitwire/bitwire/internal/toolchain"
)

// TestClientToolchains fails when TestNodeClients skipped for want of node
// or the TypeScript compiler, so that the default output of go test says
// so; BITWIRE_CLIENTS=skip skips it on purpose.
func TestClientToolchains(t *testing.T) {
	toolchain.Check(t, "../..", "the demo's Node client test", toolchain.Node, toolchain.TSC)
}
