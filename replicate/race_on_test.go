//go:build race

package replicate_test

// raceEnabled tells tests that the race detector is on: it allocates, so
// allocation counts mean nothing.
const raceEnabled = true
