package replicate_test

import (
	"errors"
	"math/rand"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
