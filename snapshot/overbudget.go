package snapshot

// OverBudget returns the number of Encode calls the Sender refused with
// ErrOverBudget: states whose packet, delta or full, would not fit the
// budget, and which were therefore not sent (Encode never splits a
// snapshot into several datagrams; EncodeFragments does, and counts here
// only a block of more than MaxFragments fragments). Nothing is lost
// silently: each refusal is the call's error and counts here. Like every method of a Sender, it must
// not run concurrently with another.
func (s *Sender[T]) OverBudget() int { return s.overBudget }
