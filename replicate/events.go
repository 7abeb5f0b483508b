package replicate

import (
	"fmt"
	"reflect"

	"github.com/bitwire/bitwire/internal/shape"
)

// Events. A Client tells what each packet it applies changed through
// handlers (OnRemove, OnAdd, OnChange), called by Decode after the packet
// is applied, in that order: first the entities removed (by the packet,
// then by WithExpiry), then those added, then those changed, each group
// in ascending id order (removals by expiry in sweep order). An id
// removed at the server and set again before a packet carrying the
// removal was sent (a new incarnation) arrives as a full state of an id
// the client holds: a change of what differs, not a removal and an
// addition; removed and set again later, it is both, in their packets. A
// change lists the
// paths of the fields that differ from the state the client held before
// the packet (see OnChange): a full state of an entity the client holds
// (the Peer's refresh, or a resend after a missing baseline) is compared
// like a delta, so a refresh that brings nothing new calls nothing. A
// packet that is refused calls nothing, and Reset calls nothing.
//
// Handlers run on Decode's goroutine; they may attach and detach handlers
// (a handler attached during Decode is first called at the next packet)
// but must not call Decode or Reset. With no handler attached Decode does
// no work for events, and with no OnChange handler it computes no paths.

// events is a Client's handlers and the scratch of the packet being
// applied.
type events[E any] struct {
	shape    *shape.Node
	onAdd    []handler[func(id uint32, e *E)]
	onRemove []handler[func(id uint32)]
	onChange []handler[func(id uint32, e *E, paths []string)]
	next     int
	firing   bool
	detached bool

	changes []change // this packet's changed entities, before commit
	paths   []string
	path    []byte
	// names interns the paths: the same few recur every packet, and a
	// lookup by the bytes allocates nothing. Bounded (ids of entity sets
	// and map keys make paths without end): cleared when full.
	names map[string]string
	emit  func(p []byte)
}

// maxNames bounds the interned paths.
const maxNames = 4096

func (ev *events[E]) name(p []byte) string {
	if s, ok := ev.names[string(p)]; ok {
		return s
	}
	if len(ev.names) >= maxNames {
		clear(ev.names)
	}
	s := string(p)
	ev.names[s] = s
	return s
}

type handler[F any] struct {
	key int
	f   F // nil once detached
}

type change struct {
	id         uint32
	from, upto int // paths[from:upto]
}

// OnAdd calls f for every entity a packet adds to the view (the client
// did not hold it before), with its state (read-only, valid until the
// next Decode). It returns the function that detaches f.
func (cl *Client[E]) OnAdd(f func(id uint32, e *E)) (detach func()) {
	ev := cl.events()
	ev.next++
	key := ev.next
	ev.onAdd = append(ev.onAdd, handler[func(uint32, *E)]{key, f})
	return func() { detachKey(ev, ev.onAdd, key) }
}

// OnRemove calls f for every entity a packet, or the expiry, removes from
// the view. It returns the function that detaches f.
func (cl *Client[E]) OnRemove(f func(id uint32)) (detach func()) {
	ev := cl.events()
	ev.next++
	key := ev.next
	ev.onRemove = append(ev.onRemove, handler[func(uint32)]{key, f})
	return func() { detachKey(ev, ev.onRemove, key) }
}

// OnChange calls f for every entity the client held whose state a packet
// changed, with its new state (read-only, valid until the next Decode) and
// the paths of what differs from the state held before, in wire order,
// each once: a field by its dotted path ("Pos.X"), a quaternion whole
// ("Rot"), an element of an array or slice by index ("Items[2].Count"),
// an entity of an entity set by id ("Units[id=7].Hp"), a map entry by key
// (`Inv["sword"]`); an element, entity or entry that appeared or went by
// its own path ("Units[id=9]"), a pointer that became or stopped being
// nil by its own. Equal is judged on the quantized values, as the delta's
// changed bits are; an entity whose new state equals the old (a refresh)
// is not reported. paths belongs to the Client until f returns. It
// returns the function that detaches f.
//
// The paths are computed only while an OnChange handler is attached, by
// comparing the two states through the codec's Schema (reflection, about
// a microsecond for a small entity: a cost only for those who listen).
func (cl *Client[E]) OnChange(f func(id uint32, e *E, paths []string)) (detach func()) {
	ev := cl.events()
	if ev.shape == nil {
		n, err := shape.Of(reflect.TypeFor[E](), cl.c.Schema())
		if err != nil {
			// The codec compiled, so its schema describes E: a bug.
			panic(fmt.Sprintf("replicate: internal: %v", err))
		}
		ev.shape = n
		ev.names = make(map[string]string)
		ev.path = make([]byte, 0, 256)
		ev.emit = func(p []byte) { ev.paths = append(ev.paths, ev.name(p)) }
	}
	ev.next++
	key := ev.next
	ev.onChange = append(ev.onChange, handler[func(uint32, *E, []string)]{key, f})
	return func() { detachKey(ev, ev.onChange, key) }
}

func (cl *Client[E]) events() *events[E] {
	if cl.ev == nil {
		cl.ev = &events[E]{}
	}
	return cl.ev
}

// detachKey clears the handler key in hs (the slice's storage is the
// events' own); the slices are compacted when no handler is running.
func detachKey[E any, F any](ev *events[E], hs []handler[F], key int) {
	for i := range hs {
		if hs[i].key == key {
			var zero F
			hs[i].f = zero
			hs[i].key = 0
			ev.detached = true
		}
	}
	if !ev.firing {
		ev.compact()
	}
}

func (ev *events[E]) compact() {
	if !ev.detached {
		return
	}
	ev.detached = false
	ev.onAdd = compactHandlers(ev.onAdd)
	ev.onRemove = compactHandlers(ev.onRemove)
	ev.onChange = compactHandlers(ev.onChange)
}

func compactHandlers[F any](hs []handler[F]) []handler[F] {
	k := 0
	for _, h := range hs {
		if h.key != 0 {
			hs[k] = h
			k++
		}
	}
	clear(hs[k:])
	return hs[:k]
}

// prepare computes, before the packet is applied, the paths of each
// entity it changes that the client held: the held state is still the
// newest then.
func (ev *events[E]) prepare(cl *Client[E]) {
	if ev == nil {
		return
	}
	ev.changes, ev.paths = ev.changes[:0], ev.paths[:0]
	if len(ev.onChange) == 0 {
		return
	}
	for k, d := range cl.dec {
		if d.slot < 0 {
			continue
		}
		prev := &cl.ents[d.slot].newest().val
		from := len(ev.paths)
		shape.Diff(ev.shape, reflect.ValueOf(prev).Elem(), reflect.ValueOf(&cl.vals[k]).Elem(), ev.path[:0], ev.emit)
		if len(ev.paths) > from {
			ev.changes = append(ev.changes, change{id: d.id, from: from, upto: len(ev.paths)})
		}
	}
}

// fire calls the handlers for the packet just applied.
func (ev *events[E]) fire(cl *Client[E]) {
	if ev == nil {
		return
	}
	ev.firing = true
	defer func() { ev.firing = false; ev.compact() }()
	// The handlers' slices may grow during the calls (handlers attached
	// then wait for the next packet): iterate over the lengths of now.
	if n := len(ev.onRemove); n > 0 {
		for _, id := range cl.removed {
			for i := range n {
				if h := ev.onRemove[i]; h.f != nil {
					h.f(id)
				}
			}
		}
	}
	if n := len(ev.onAdd); n > 0 {
		for _, d := range cl.dec {
			if d.slot >= 0 {
				continue
			}
			e, _, ok := cl.Get(d.id)
			if !ok {
				continue // expired at once (a state far from the stream's tick)
			}
			for i := range n {
				if h := ev.onAdd[i]; h.f != nil {
					h.f(d.id, e)
				}
			}
		}
	}
	if n := len(ev.onChange); n > 0 {
		for _, c := range ev.changes {
			e, _, ok := cl.Get(c.id)
			if !ok {
				continue
			}
			for i := range n {
				if h := ev.onChange[i]; h.f != nil {
					h.f(c.id, e, ev.paths[c.from:c.upto:c.upto])
				}
			}
		}
	}
}
