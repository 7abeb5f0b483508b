package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/bitwire/bitwire"
)

// setupModel loads the -model file into cfg and, for -record, sets up a
// trainer fed with each entity's consecutive published states (the pairs
// the server codes when every update is acknowledged at once). newRun
// starts the records of another run (another seed) on the same trainer;
// finish writes the model trained on every run to the -record file.
func setupModel(cfg *Config, model, record string) (newRun func(), finish func() error, err error) {
	newRun = func() {}
	finish = func() error { return nil }
	if model != "" {
		b, err := os.ReadFile(model)
		if err != nil {
			return nil, nil, err
		}
		var m bitwire.Model
		if err := m.UnmarshalBinary(b); err != nil {
			return nil, nil, fmt.Errorf("-model %s: %w", model, err)
		}
		if err := bitwire.MustFor[Entity]().WithModel(&m).ModelErr(); err != nil {
			return nil, nil, fmt.Errorf("-model %s: %w", model, err)
		}
		cfg.Model = &m
	}
	if record == "" {
		return newRun, finish, nil
	}
	c := bitwire.MustFor[Entity]()
	tr := c.NewTrainer()
	// Each entity's two last states: the delta to the next one is trained
	// as the sender codes it, its pred values against their prediction
	// from both (AddPredicted; a plain Add until an entity has two).
	type states struct {
		older, base *Entity
		n           int
	}
	prev := map[uint32]*states{}
	var addErr error
	cfg.Record = func(id uint32, v *Entity) {
		s, ok := prev[id]
		if !ok {
			s = &states{older: new(Entity), base: new(Entity)}
			prev[id] = s
		}
		var err error
		switch s.n {
		case 0:
		case 1:
			err = tr.Add(s.base, v)
		default:
			err = tr.AddPredicted(s.older, s.base, v)
		}
		if err != nil && addErr == nil {
			addErr = err
		}
		s.older, s.base = s.base, s.older
		c.Copy(s.base, v)
		s.n++
	}
	newRun = func() { clear(prev) }
	return newRun, func() error {
		if addErr != nil {
			return fmt.Errorf("-record: %w", addErr)
		}
		m, err := tr.Model()
		if err != nil {
			return fmt.Errorf("-record: %w", err)
		}
		b, _ := m.MarshalBinary()
		return os.WriteFile(record, b, 0o644)
	}, nil
}

// parseSeeds parses -seeds: seeds separated by commas, each a number or a
// range a-b (inclusive), e.g. "2-5" or "2,3,7".
func parseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("-seeds %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a || b-a >= 1000 {
				return nil, fmt.Errorf("-seeds %q: bad range %q", s, part)
			}
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	return out, nil
}
