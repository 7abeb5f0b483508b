package bitwire

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"unicode/utf8"
	"unsafe"

	"github.com/bitwire/bitwire/fields"
)

// Maps, in full and as deltas: entries in sorted key order. The one coding
// that uses reflect on the hot path.

func (e *encoder) encMap(n *node, p unsafe.Pointer) error {
	mv := reflect.NewAt(n.typ, p).Elem()
	l := mv.Len()
	if err := e.writeLen(l, n.maxlen); err != nil {
		return err
	}
	if l == 0 {
		return nil
	}
	keys, vals := sortedEntries(n, p)
	if nanKey(n, keys) {
		// NaN keys have no order (the encoding would vary from one
		// Marshal to the next) and cannot be looked up.
		return fmt.Errorf("%w: NaN map key", ErrInvalidValue)
	}
	if badStringKey(n, keys) {
		return fmt.Errorf("%w: map key not valid UTF-8", ErrInvalidValue)
	}
	for i, k := range keys {
		if err := e.encNode(n.key, k.Addr().UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("{%v}", k), e.w.Len())
		}
		if err := e.encNode(n.elem, vals[i].UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("[%v]", k), e.w.Len())
		}
	}
	return nil
}

func (d *decoder) decMap(n *node, p unsafe.Pointer) error {
	l, err := d.readLen(n, n.emin)
	if err != nil {
		return err
	}
	mv := reflect.NewAt(n.typ, p).Elem()
	if l == 0 {
		mv.SetZero()
		return nil
	}
	// A map holds at most as many entries as its key type has values
	// (two for bool, 256 for 8-bit keys): more would repeat a key, which
	// readEntries rejects.
	if err := d.charge(1, mapCost(n, min(l, n.count))); err != nil {
		return err
	}
	if mv.IsNil() || mv.Len() < min(l, n.count) {
		// A new map sized for l, charged above: one that held fewer
		// entries than l would grow by doubling, allocating up to twice
		// that again, and how much room it has is not known.
		mv.Set(reflect.MakeMapWithSize(n.typ, min(l, n.count)))
	} else {
		mv.Clear() // it held l entries or more: room for l
	}
	if err := d.readEntries(n, mv, l); err != nil {
		return err
	}
	if mv.Len() != l {
		return fmt.Errorf("%w: duplicate map key", ErrMalformed)
	}
	return nil
}

// readEntries reads count key-value pairs of map node n into m. The keys
// must come in strictly ascending order, the one order the encoder writes,
// and must not be in m already: an out-of-order or repeated key is
// ErrMalformed as soon as it is read, before anything is decoded for the
// entries after it.
func (d *decoder) readEntries(n *node, m reflect.Value, count int) error {
	if count == 0 {
		return nil
	}
	// The scratch key, previous key and value.
	if err := d.charge(1, 2*n.key.size+n.elem.size); err != nil {
		return err
	}
	k := reflect.New(n.typ.Key())
	v := reflect.New(n.typ.Elem())
	prev := reflect.New(n.typ.Key()).Elem()
	check := m.Len() > 0 // entries already there: look each key up
	for i := 0; i < count; i++ {
		k.Elem().SetZero()
		v.Elem().SetZero()
		if err := d.decNode(n.key, k.UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if n.key.code == cFloat && math.IsNaN(loadFloat(k.UnsafePointer(), n.key.mem)) {
			return wrapField(fmt.Errorf("%w: NaN map key", ErrInvalidValue), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if n.key.code == cString && !utf8.ValidString(k.Elem().String()) { // see badStringKey
			return wrapField(fmt.Errorf("%w: map key not valid UTF-8", ErrInvalidValue), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if i > 0 && !keyBefore(prev, k.Elem()) {
			return wrapField(fmt.Errorf("%w: map key %v after %v: keys must be in ascending order, each once", ErrMalformed, k.Elem(), prev), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		if check && m.MapIndex(k.Elem()).IsValid() {
			return wrapField(fmt.Errorf("%w: duplicate map key %v", ErrMalformed, k.Elem()), fmt.Sprintf("{#%d}", i), d.r.Pos())
		}
		prev.Set(k.Elem())
		if err := d.decNode(n.elem, v.UnsafePointer()); err != nil {
			return wrapField(err, fmt.Sprintf("[%v]", k.Elem()), d.r.Pos())
		}
		m.SetMapIndex(k.Elem(), v.Elem())
	}
	return nil
}

// keyBefore reports whether map key a orders strictly before key b, in the
// order of keyLess.
func keyBefore(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return !a.Bool() && b.Bool()
	case reflect.String:
		return a.String() < b.String()
	case reflect.Float32, reflect.Float64:
		return a.Float() < b.Float()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() < b.Int()
	}
	return a.Uint() < b.Uint()
}

// keyRange is how many distinct keys the key type k has, capped at
// MaxInt32.
func keyRange(k reflect.Type) int {
	switch k.Kind() {
	case reflect.Bool:
		return 2
	case reflect.Int8, reflect.Uint8:
		return 1 << 8
	case reflect.Int16, reflect.Uint16:
		return 1 << 16
	}
	return math.MaxInt32
}

// mapCost is what a map of node n made for count entries
// (reflect.MakeMapWithSize) takes from the heap, as Go's maps allocate it
// (internal/runtime/maps): up to 8 entries, one group of 8 slots; beyond,
// a directory of tables of at most 1024 slots each, sized for count·8/7
// entries (a load of 7 in 8) and rounded up to powers of two (up to twice
// what count needs: 3,585 entries take 8,192 slots). A slot holds the key
// and the value, each stored apart (a pointer in the slot, an allocation
// per entry) when over 128 bytes. Each allocation is rounded as allocCost
// says.
func mapCost(n *node, count int) uintptr {
	kt, vt := n.typ.Key(), n.typ.Elem()
	k, v := kt.Size(), vt.Size()
	var apart int64 // per entry: keys and values stored apart
	if k > 128 {
		apart += allocCost(int64(k))
		k = 8
	}
	if v > 128 {
		apart += allocCost(int64(v))
		v = 8
	}
	al := uintptr(max(kt.Align(), vt.Align(), 8))
	slot := (alignUp(k, uintptr(vt.Align())) + v + al - 1) &^ (al - 1)
	group := int64(8 + 8*slot) // a control word, then 8 slots
	const header = 48          // the map's own header
	total := header + int64(count)*apart
	if count <= 8 {
		return uintptr(total + allocCost(group))
	}
	target := int64(count) * 8 / 7
	dir := pow2Ceil((target + 1023) / 1024)
	slots := max(pow2Ceil(target/dir), 8)
	tables := dir * (allocCost(slots/8*group) + allocCost(64))
	if dir > 1 {
		// Entries spread over the tables by hash, not evenly: one that
		// gets more than 7/8 of its slots grows, to a table twice its
		// size or two of its size, while the old one is garbage (measured:
		// 897 entries in two tables of 512 slots allocated twice what the
		// two tables take). With one table the hint alone sizes it.
		tables *= 3
	}
	return uintptr(total + tables + allocCost(8*dir))
}

// alignUp rounds x up to a multiple of a (a power of two).
func alignUp(x, a uintptr) uintptr { return (x + a - 1) &^ (a - 1) }

// pow2Ceil is the least power of two at least x (1 for x <= 1).
func pow2Ceil(x int64) int64 {
	p := int64(1)
	for p < x {
		p <<= 1
	}
	return p
}

// sortIndexes orders idx by the keys they point to.
func sortIndexes(keys []reflect.Value, idx []int) {
	less := keyLess(keys)
	sort.Slice(idx, func(a, b int) bool { return less(idx[a], idx[b]) })
}

func keyLess(keys []reflect.Value) func(i, j int) bool {
	switch keys[0].Kind() {
	case reflect.Bool:
		return func(i, j int) bool { return !keys[i].Bool() && keys[j].Bool() }
	case reflect.String:
		return func(i, j int) bool { return keys[i].String() < keys[j].String() }
	case reflect.Float32, reflect.Float64:
		return func(i, j int) bool { return keys[i].Float() < keys[j].Float() }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(i, j int) bool { return keys[i].Int() < keys[j].Int() }
	}
	return func(i, j int) bool { return keys[i].Uint() < keys[j].Uint() }
}

// sortedEntries returns a map's keys and values (as addressable copies) in
// key order.
func sortedEntries(n *node, p unsafe.Pointer) (keys, vals []reflect.Value) {
	m := reflect.NewAt(n.typ, p).Elem()
	it := m.MapRange()
	for it.Next() {
		k := reflect.New(n.typ.Key())
		k.Elem().Set(it.Key())
		v := reflect.New(n.typ.Elem())
		v.Elem().Set(it.Value())
		keys = append(keys, k.Elem())
		vals = append(vals, v)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sortIndexes(keys, order)
	ks, vs := make([]reflect.Value, len(keys)), make([]reflect.Value, len(keys))
	for i, o := range order {
		ks[i], vs[i] = keys[o], vals[o]
	}
	return ks, vs
}

// encMapDelta writes: the removed keys (a set of indexes into the
// baseline's sorted keys), the changed survivors (a set of survivor
// ordinals) and their value deltas, then the count of added entries and each
// added key and value in full, in key order. It reports whether the map
// changed.
func (e *encoder) encMapDelta(n *node, b, c unsafe.Pointer) (bool, error) {
	bk, bv := sortedEntries(n, b)
	if nanKey(n, bk) {
		return false, fmt.Errorf("baseline: %w: NaN map key", ErrInvalidValue)
	}
	if badStringKey(n, bk) {
		return false, fmt.Errorf("baseline: %w: map key not valid UTF-8", ErrInvalidValue)
	}
	cm := reflect.NewAt(n.typ, c).Elem()
	if (n.maxlen > 0 && cm.Len() > n.maxlen) || (n.maxlen == 0 && cm.Len() > e.maxLen) {
		return false, fmt.Errorf("%w: %d entries", ErrTooLong, cm.Len())
	}
	var removed, changed []int32
	var survB []int
	flip := zeroSignsDiffer(reflect.NewAt(n.typ, b).Elem(), cm) // the zero key is removed and added
	for i, k := range bk {
		v := cm.MapIndex(k)
		if !v.IsValid() || (flip && k.Float() == 0) {
			removed = append(removed, int32(i))
			continue
		}
		cv := reflect.New(n.typ.Elem())
		cv.Elem().Set(v)
		if !eqNode(n.elem, bv[i].UnsafePointer(), cv.UnsafePointer(), 0) {
			changed = append(changed, int32(len(survB)))
		}
		survB = append(survB, i)
	}
	e.writeIndexSet(removed, len(bk), false)
	e.writeIndexSet(changed, len(survB), false)
	for _, s := range changed {
		i := survB[s]
		cv := reflect.New(n.typ.Elem())
		cv.Elem().Set(cm.MapIndex(bk[i]))
		if err := e.encValueDelta(n.elem, bv[i].UnsafePointer(), cv.UnsafePointer()); err != nil {
			return false, wrapField(err, fmt.Sprintf("[%v]", bk[i]), e.w.Len())
		}
	}
	ck, cv := sortedEntries(n, c)
	if nanKey(n, ck) {
		return false, fmt.Errorf("%w: NaN map key", ErrInvalidValue)
	}
	if badStringKey(n, ck) {
		return false, fmt.Errorf("%w: map key not valid UTF-8", ErrInvalidValue)
	}
	bm := reflect.NewAt(n.typ, b).Elem()
	var added []int
	for i, k := range ck {
		if !bm.MapIndex(k).IsValid() || (flip && k.Float() == 0) {
			added = append(added, i)
		}
	}
	fields.WriteBitlen(e.w, uint64(len(added)), 5)
	for _, i := range added {
		if err := e.encNode(n.key, ck[i].Addr().UnsafePointer()); err != nil {
			return false, wrapField(err, fmt.Sprintf("{%v}", ck[i]), e.w.Len())
		}
		if err := e.encNode(n.elem, cv[i].UnsafePointer()); err != nil {
			return false, wrapField(err, fmt.Sprintf("[%v]", ck[i]), e.w.Len())
		}
	}
	return len(removed) > 0 || len(changed) > 0 || len(added) > 0, nil
}

func (d *decoder) decMapDelta(n *node, b, dst unsafe.Pointer) error {
	bm := reflect.NewAt(n.typ, b).Elem()
	nb := bm.Len()
	mark := len(d.ar.buf)
	defer func() { d.ar.buf = d.ar.buf[:mark] }()
	removed, err := d.readIndexSet(d.ar, nb, -1)
	if err != nil {
		return err
	}
	surv := nb - len(removed)
	changed, err := d.readIndexSet(d.ar, surv, -1)
	if err != nil {
		return err
	}
	// The changed survivors' values come before the count of new
	// entries: they are decoded first, the new map is made once the count
	// is known, sized for all its entries (one grown from the survivors'
	// size would allocate its tables again at each doubling), as a copy of
	// the baseline without the removed keys and with the changed values.
	keys, chKeys, chVals, err := d.decMapChanged(n, bm, removed, changed)
	if err != nil {
		return err
	}
	cnt, err := fields.ReadBitlen(d.r, 5)
	if err != nil {
		return err
	}
	if cnt > 0 && cnt > uint64(d.r.Remaining()/max(1, n.emin)) {
		return fmt.Errorf("%w: %d new entries need more input than remains", ErrUnexpectedEnd, cnt)
	}
	total := surv + int(cnt)
	if (n.maxlen > 0 && total > n.maxlen) || (n.maxlen == 0 && total > d.maxLen) {
		return fmt.Errorf("%w: %d entries", ErrTooLong, total)
	}
	if err := d.charge(1, mapCost(n, min(int(cnt), n.count))); err != nil {
		return err
	}
	nm := copyMap(n, bm, min(total, n.count)) // in the map's own order
	for _, i := range removed {
		nm.SetMapIndex(keys.key(int(i)), reflect.Value{}) // deletes it
	}
	for i := range chKeys {
		nm.SetMapIndex(chKeys[i], chVals[i])
	}
	if err := d.readEntries(n, nm, int(cnt)); err != nil {
		return err
	}
	if nm.Len() != total {
		return fmt.Errorf("%w: duplicate map key", ErrMalformed)
	}
	dm := reflect.NewAt(n.typ, dst).Elem()
	if total == 0 {
		dm.SetZero()
	} else {
		dm.Set(nm)
	}
	return nil
}

// decMapChanged decodes the new values of the changed survivors of a map
// delta against bm. It returns the baseline's keys sorted (which removed
// and changed index) and the changed survivors' keys and new values; with
// nothing removed or changed, nothing, and it sorts no keys.
func (d *decoder) decMapChanged(n *node, bm reflect.Value, removed, changed []int32) (keys sortedKeys, chKeys, chVals []reflect.Value, err error) {
	if len(removed) == 0 && len(changed) == 0 {
		return keys, nil, nil, nil
	}
	// Only the keys are sorted, natively (sortKeys): sorting the entries
	// through reflect made a 4-byte delta against 65,536 of them cost
	// 328,000 allocations and 25 MB.
	keys = sortKeys(bm)
	chKeys, chVals = make([]reflect.Value, 0, len(changed)), make([]reflect.Value, 0, len(changed))
	ri := 0
	for _, c := range changed {
		// the c-th survivor: position c among the sorted keys, moved
		// past each removed key at or before it
		pos := int(c) + ri
		for ri < len(removed) && int(removed[ri]) <= pos {
			ri++
			pos = int(c) + ri
		}
		key := keys.key(pos)
		bv := reflect.New(n.typ.Elem())
		bv.Elem().Set(bm.MapIndex(key))
		v := reflect.New(n.typ.Elem())
		if err := d.decValueDelta(n.elem, bv.UnsafePointer(), v.UnsafePointer()); err != nil {
			return keys, nil, nil, wrapField(err, fmt.Sprintf("[%v]", key), d.r.Pos())
		}
		chKeys, chVals = append(chKeys, key), append(chVals, v.Elem())
	}
	return keys, chKeys, chVals, nil
}

// zeroSignsDiffer reports whether float-keyed maps a and b both have a zero
// key, of opposite signs. Go finds either zero by the other (they are ==),
// but a float key is coded raw, sign and all, so equality and deltas must
// tell them apart.
func zeroSignsDiffer(a, b reflect.Value) bool {
	na, oka := zeroKey(a)
	nb, okb := zeroKey(b)
	return oka && okb && na != nb
}

// zeroKey reports whether the float-keyed map m has a zero key, and its
// sign; false for other keys.
func zeroKey(m reflect.Value) (neg, ok bool) {
	switch m.Type().Key().Kind() {
	case reflect.Float32, reflect.Float64:
	default:
		return false, false
	}
	if !m.MapIndex(reflect.Zero(m.Type().Key())).IsValid() {
		return false, false
	}
	for it := m.MapRange(); it.Next(); {
		if k := it.Key().Float(); k == 0 {
			return math.Signbit(k), true
		}
	}
	return false, false
}

// nanKey reports whether a float-keyed map has a NaN key: NaN has no order
// and cannot be looked up, so such maps are refused.
func nanKey(n *node, keys []reflect.Value) bool {
	if n.key.code != cFloat {
		return false
	}
	for _, k := range keys {
		if f := k.Float(); f != f {
			return true
		}
	}
	return false
}

// badStringKey reports whether a string-keyed map has a key that is not
// valid UTF-8. Clients in other languages hold map keys as text, where
// such a key becomes U+FFFD (two of them one key), so its order and
// uniqueness would differ from Go's: such maps are refused
// (ErrInvalidValue) by the encoder and every decoder.
func badStringKey(n *node, keys []reflect.Value) bool {
	if n.key.code != cString {
		return false
	}
	for _, k := range keys {
		if !utf8.ValidString(k.String()) {
			return true
		}
	}
	return false
}
