package gen_test

import (
	"testing"

	"github.com/bitwire/bitwire/internal/toolchain"
)

// TestClientToolchains fails when the conformance tests of the generated
// clients skipped for want of a toolchain, so that the default output of
// go test says so; BITWIRE_CLIENTS=skip skips them on purpose.
func TestClientToolchains(t *testing.T) {
	toolchain.Check(t, "..", "the TypeScript and C# client tests of package gen", toolchain.Node, toolchain.TSC, toolchain.MCS, toolchain.Mono)
}
