package main

import (
	"fmt"
	"os"

	"github.com/bitwire/bitwire"
)

// setupModel loads the -model file into cfg and, for -record, sets up a
// trainer fed with each entity's consecutive published states (the pairs
// the server codes when every update is acknowledged at once). finish writes the
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
		if err := bitwire.MustFor[Entity]().WithModel(&m).ModelErr(); err != nil {
			return nil, fmt.Errorf("-model %s: %w", model, err)
		}
		cfg.Model = &m
	}
	if record == "" {
		return finish, nil
	}
	c := bitwire.MustFor[Entity]()
	tr := c.NewTrainer()
	prev := map[uint32]*Entity{}
	var addErr error
	cfg.Record = func(id uint32, v *Entity) {
		p, ok := prev[id]
		if ok {
			if err := tr.Add(p, v); err != nil && addErr == nil {
				addErr = err
			}
		} else {
			p = new(Entity)
			prev[id] = p
		}
		c.Copy(p, v)
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
