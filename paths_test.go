package bitwire

// generalOnly returns a codec of the same plan with every fast path off.
func (c *Codec[T]) generalOnly() *Codec[T] {
	cp := *c
	cp.o.general, cp.o.slow = true, true
	return &cp
}
