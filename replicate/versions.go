package replicate

// version is a state of an entity from tick on, until the next version.
type version[E any] struct {
	tick uint32
	val  E
}

// versions is the ring of an entity's last states, on the server (its
// published states) and on a client (its baselines): once full, head is
// the index of the oldest, and a new state overwrites it.
type versions[E any] struct {
	vers []version[E]
	head int
}

// reset empties the ring, keeping its storage.
func (r *versions[E]) reset() { r.vers, r.head = r.vers[:0], 0 }

// push returns the slot of a new state: appended while the ring holds
// fewer than limit, else the oldest, overwritten.
func (r *versions[E]) push(limit int) *version[E] {
	if len(r.vers) < limit {
		r.vers = append(r.vers, version[E]{})
		return &r.vers[len(r.vers)-1]
	}
	v := &r.vers[r.head]
	r.head++
	if r.head == len(r.vers) {
		r.head = 0
	}
	return v
}

// newest returns the newest state; the ring must not be empty.
func (r *versions[E]) newest() *version[E] {
	i := r.head - 1
	if i < 0 {
		i = len(r.vers) - 1
	}
	return &r.vers[i]
}
