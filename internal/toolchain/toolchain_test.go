package toolchain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMissing(t *testing.T) {
	root := t.TempDir()
	t.Setenv("PATH", t.TempDir()) // nothing on it
	require.Equal(t, []string{Node, TSC, MCS, Mono}, Missing(root, Node, TSC, MCS, Mono))

	// the pinned compiler is found under clients/ts, node on PATH
	tsc := filepath.Join(root, "clients", "ts", "node_modules", "typescript", "bin", "tsc")
	require.NoError(t, os.MkdirAll(filepath.Dir(tsc), 0o755))
	require.NoError(t, os.WriteFile(tsc, nil, 0o755))
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", bin)
	require.Equal(t, []string{MCS, Mono}, Missing(root, Node, TSC, MCS, Mono))
	require.Empty(t, Missing(root, Node, TSC))
}
