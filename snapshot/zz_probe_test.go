package snapshot_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestProbeSM(t *testing.T) {
	b, _ := os.ReadFile("testdata/fuzz/FuzzStateMachine/47bb8f57bd1d34ff")
	lines := strings.Split(string(b), "\n")
	s := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
	data, err := strconv.Unquote(s)
	if err != nil {
		t.Fatal(err)
	}
	st := time.Now()
	runStateMachine(t, []byte(data))
	t.Log(len(data), time.Since(st))
}
