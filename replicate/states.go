package replicate

// States calls f with each state the Client keeps of id (up to
// BaselineDepth: the last ones it received), oldest first, with the tick
// each is from, until f returns false; it reports whether the Client holds
// id. The states are read-only and belong to the Client: do not keep them
// past the next Decode. Package interp interpolates between them.
func (cl *Client[E]) States(id uint32, f func(tick uint32, e *E) bool) bool {
	slot, ok := cl.index[id]
	if !ok {
		return false
	}
	ent := &cl.ents[slot]
	n := len(ent.vers)
	for k := range n {
		i := ent.head + k // the ring's oldest is at head once full
		if i >= n {
			i -= n
		}
		if !f(ent.vers[i].tick, &ent.vers[i].val) {
			break
		}
	}
	return true
}
