// Package golden keeps a test's expected output in a file under testdata:
// the file is the frozen form (of the wire format, of a schema), and a
// change to it is made on purpose, by the test's -update flag.
package golden

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// Check fails t unless the file at path holds exactly got. With update it
// writes got there first. what names what a difference means ("the wire
// format"), and cmd is the command that rewrites the file, for the message
// a failing test prints.
func Check(t testing.TB, path, got string, update bool, what, cmd string) {
	t.Helper()
	if update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file %s: run %s once", path, cmd)
	require.Equal(t, string(want), got, "%s changed: if on purpose, run %s and document it", what, cmd)
}
