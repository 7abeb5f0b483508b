package main

import (
	"fmt"
	"os"

	"github.com/bitwire/bitwire"
)

// setupModel loads the -model file into cfg and, for -record, sets up a
// trainer fed with every stream's consecutive ticks (the pairs a sender
// codes when each snapshot is acknowledged at once). finish writes the
// trained model to the -record file after the run.
func setupModel(cfg *Config, model, record string) (finish func() error, err error) {
	finish = func() error { return nil }
	if model != "" {
		b, err := os.ReadFile(model)
		if err != nil {
			return nil, err
		}
		var m bitwire.Model
		if err := m.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("-model %s: %w", model, err)
		}
		if err := bitwire.MustFor[Shard]().WithModel(&m).ModelErr(); err != nil {
			return nil, fmt.Errorf("-model %s: %w", model, err)
		}
		cfg.Model = &m
	}
	if record == "" {
		return finish, nil
	}
	c := bitwire.MustFor[Shard]()
	tr := c.NewTrainer()
	var prev []Shard
	var addErr error
	cfg.Record = func(shards []Shard) {
		if len(prev) == len(shards) {
			for k := range shards {
				if err := tr.Add(&prev[k], &shards[k]); err != nil && addErr == nil {
					addErr = err
				}
			}
		}
		if len(prev) != len(shards) {
			prev = make([]Shard, len(shards))
		}
		for k := range shards {
			c.Copy(&prev[k], &shards[k])
		}
	}
	return func() error {
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
