package bitwire

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Stats is an opt-in per-field bit accounting: attach one to a codec with
// Codec.WithStats and every message that codec encodes adds, for each field
// path (such as "Crates[].Rot"), the bits the field took and whether its
// value was written. Paths nest: a struct's row includes its fields' bits,
// "[]" stands for every element of an array or slice. A Stats is safe for
// concurrent use; accounting costs time, so leave it off where speed matters.
type Stats struct {
	mu      sync.RWMutex
	ids     map[statKey]int
	entries []FieldStats
	spare   [][]statRec
}

// FieldStats is the accounting of one field path.
type FieldStats struct {
	Path    string // field path below the message type, e.g. "Pos.X" or "Crates[].Rot"
	Bits    int64  // bits the field took, its changed bits included
	Count   int64  // messages that carried the field (counting each element of a slice)
	Changed int64  // how many of those wrote its value: always in full encoding, when changed in a delta
	Leaf    bool   // the path has no sub-paths
	// Unordered counts, for an entity set (a slice with an id field),
	// the entities of the deltas' current values whose id was not above
	// the id before them. Deltas match entities in one pass that assumes
	// ascending ids, so such entities may be sent as removed and added
	// again, in full: keep entity sets sorted by id.
	Unordered int64
}

type statKey struct {
	parent int
	name   string
}

type statRec struct {
	id        int
	bits      int
	changed   bool
	unordered int // > 0: a note of out-of-order entities, not a message
}

// NewStats returns an empty accounting. The zero Stats is empty too.
func NewStats() *Stats { return &Stats{ids: map[statKey]int{}} }

// WithStats returns a codec of the same plan that records into s what each
// message it encodes spends on each field. s may be shared by many codecs.
func (c *Codec[T]) WithStats(s *Stats) *Codec[T] {
	cp := *c
	cp.o.stats = s
	// The fast paths write without the walker's hooks: accounting takes the
	// general path.
	cp.o.slow = s != nil || cp.o.debug || cp.o.general
	return &cp
}

// id returns the number of the path parent/name, creating it on first use.
func (s *Stats) id(parent int, name string) int {
	k := statKey{parent, name}
	s.mu.RLock()
	id, ok := s.ids[k]
	s.mu.RUnlock()
	if ok {
		return id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.ids[k]; ok {
		return id
	}
	if s.ids == nil {
		s.ids = map[statKey]int{}
	}
	path := name
	if parent >= 0 {
		s.entries[parent].Leaf = false
		pp := s.entries[parent].Path
		if strings.HasPrefix(name, "[") {
			path = pp + name
		} else {
			path = pp + "." + name
		}
	}
	id = len(s.entries)
	s.entries = append(s.entries, FieldStats{Path: path, Leaf: true})
	s.ids[k] = id
	return id
}

func (s *Stats) buffer() []statRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.spare); n > 0 {
		b := s.spare[n-1]
		s.spare = s.spare[:n-1]
		return b[:0]
	}
	return nil
}

// commit adds one message's records.
func (s *Stats) commit(recs []statRec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		e := &s.entries[r.id]
		if r.unordered > 0 {
			e.Unordered += int64(r.unordered)
			continue
		}
		e.Bits += int64(r.bits)
		e.Count++
		if r.changed {
			e.Changed++
		}
	}
	s.spare = append(s.spare, recs)
}

// Fields returns a copy of every path's accounting, most bits first.
func (s *Stats) Fields() []FieldStats {
	s.mu.RLock()
	out := append([]FieldStats(nil), s.entries...)
	s.mu.RUnlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Bits > out[j].Bits })
	return out
}

// Reset forgets everything recorded.
func (s *Stats) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.entries {
		e := &s.entries[i]
		e.Bits, e.Count, e.Changed, e.Unordered = 0, 0, 0, 0
	}
}

// String renders the leaf paths, most bits first, as a table.
func (s *Stats) String() string {
	var b strings.Builder
	var total int64
	fs := s.Fields()
	for _, f := range fs {
		if f.Leaf {
			total += f.Bits
		}
	}
	fmt.Fprintf(&b, "%-32s %12s %6s %10s %8s\n", "field", "bits", "share", "count", "changed")
	for _, f := range fs {
		if !f.Leaf || f.Count == 0 {
			continue
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(f.Bits) / float64(total)
		}
		fmt.Fprintf(&b, "%-32s %12d %5.1f%% %10d %7.1f%%\n", f.Path, f.Bits, share, f.Count, 100*float64(f.Changed)/float64(f.Count))
	}
	for _, f := range fs {
		if f.Unordered > 0 {
			fmt.Fprintf(&b, "%s: %d entities out of id order in deltas (sent as removed and new: sort the set by id)\n", f.Path, f.Unordered)
		}
	}
	return b.String()
}

// ---- the encoder's side: accounting loops used only when stats are on ----

// statRun is one message's accounting in progress. The encoder refers to
// it by a handle (see encoder.stats).
type statRun struct {
	s    *Stats
	recs []statRec
}

var statRuns struct {
	mu   sync.Mutex
	m    map[int32]*statRun
	next int32
}

// startStats opens the accounting of one message; 0 when st is nil.
func startStats(st *Stats) int32 {
	if st == nil { // inlined: the plain path costs a comparison
		return 0
	}
	return startStatsRun(st)
}

func startStatsRun(st *Stats) int32 {
	statRuns.mu.Lock()
	defer statRuns.mu.Unlock()
	if statRuns.m == nil {
		statRuns.m = map[int32]*statRun{}
	}
	statRuns.next++
	if statRuns.next <= 0 {
		statRuns.next = 1
	}
	h := statRuns.next
	statRuns.m[h] = &statRun{s: st, recs: st.buffer()}
	return h
}

func runOf(h int32) *statRun {
	statRuns.mu.Lock()
	defer statRuns.mu.Unlock()
	return statRuns.m[h]
}

// restartStats drops what a message recorded before it was encoded again.
func restartStats(h int32) {
	if h != 0 {
		r := runOf(h)
		r.recs = r.recs[:0]
	}
}

// endStats closes the accounting of a message, keeping its records if ok.
func endStats(h int32, ok bool) {
	if h != 0 { // inlined: the plain path costs a comparison
		endStatsRun(h, ok)
	}
}

func endStatsRun(h int32, ok bool) {
	statRuns.mu.Lock()
	r := statRuns.m[h]
	delete(statRuns.m, h)
	statRuns.mu.Unlock()
	if !ok {
		r.recs = r.recs[:0]
	}
	r.s.commit(r.recs)
}

// noteUnordered records, on the current path, how many entities of the
// entity set s are not above the one before them in id order.
func (e *encoder) noteUnordered(n *node, s *sliceHeader) {
	idf := &n.elem.sub.fields[n.idField]
	k := 0
	for j := 1; j < s.len; j++ {
		prev := loadInt(ptrAt(s.data, uintptr(j-1)*n.stride+idf.off), idf.node.mem)
		cur := loadInt(ptrAt(s.data, uintptr(j)*n.stride+idf.off), idf.node.mem)
		if !(prev < cur) { // the order the matcher walks in (ids as unsigned)
			k++
		}
	}
	if k > 0 && e.statPath >= 0 {
		r := runOf(e.stats)
		r.recs = append(r.recs, statRec{id: e.statPath, unordered: k})
	}
}

// enter makes name the current path and returns what to restore.
func (e *encoder) enter(name string) (id, saved, start int) {
	saved = e.statPath
	id = runOf(e.stats).s.id(saved, name)
	e.statPath = id
	return id, saved, e.w.Len()
}

func (e *encoder) leave(id, saved, start int, changed bool) {
	e.statPath = saved
	r := runOf(e.stats)
	r.recs = append(r.recs, statRec{id: id, bits: e.w.Len() - start, changed: changed})
}
