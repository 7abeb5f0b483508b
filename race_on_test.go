//go:build race

package bitwire

// raceEnabled tells tests that the race detector is on: it makes sync.Pool
// drop items at random, so allocation counts mean nothing.
const raceEnabled = true
