package gen_test

import (
	"math"
	"math/rand"
	"slices"
)

// The quaternion and entity-set inputs of TestCSharpInputDelta: relative
// quaternions (small and large turns, a new dropped component, the
// absolute fallback, several of one node a message so that its adaptive
// state warms) and entity sets (adds, removes, reorders, changed
// survivors, empty sets).

// ciRot64 is a quaternion of float64s held as a struct.
type ciRot64 struct{ X, Y, Z, W float64 }

// ciQuats holds quaternions in every form an input may have: arrays and
// structs of float32 and float64 at several widths, a slice of them (one
// node, whose adaptive state warms over the elements), an array of them
// (sent whole when changed), one in a struct behind a pointer and some in
// a map.
type ciQuats struct {
	Rot    [4]float32    `net:"quat"`
	Fine   [4]float64    `net:"quat,bits=16"`
	Head   tiRot         `net:"quat,bits=12"`
	Body   ciRot64       `net:"quat,bits=4"`
	Bones  [][4]float32  `net:"quat,bits=9,maxlen=8"`
	Pair   [2][4]float32 `net:"quat,bits=6"`
	Look   *ciLook
	Joints map[uint8][4]float64 `net:"quat,bits=11,maxlen=4"`
}

// ciLook is a struct holding a quaternion.
type ciLook struct {
	Rot [4]float32 `net:"quat,bits=10"`
}

// ciUnit is an entity with a signed id that is not its first field (Go
// matches ids as unsigned 64-bit integers: the negative ones after the
// others), a window, a quaternion, a signed bitlen (the sign flag) and an
// entity set of its own.
type ciUnit struct {
	Hp   uint8      `net:"range,min=0,max=100,dmin=-8,dmax=7"`
	ID   int16      `net:"id"`
	Rot  [4]float32 `net:"quat,bits=9"`
	Off  int32      `net:"bitlen"`
	Kids []ciEnt    `net:",maxlen=4"`
}

// ciUnits holds entity sets in an input: of units (nested sets within),
// of small entities, and one behind a pointer.
type ciUnits struct {
	Units []ciUnit `net:",maxlen=10"`
	Ents  []ciEnt
	Crowd *ciCrowd
	Tick  uint16
}

// ciCrowd is a struct holding an entity set.
type ciCrowd struct {
	Ents []ciEnt `net:",maxlen=6"`
}

// ciQuat is a random rotation; one in three is near (±½, ±½, ±½, ±½),
// where a small turn changes the largest component.
func ciQuat(r *rand.Rand) [4]float64 {
	if r.Intn(3) > 0 {
		return randQuat(r)
	}
	var q [4]float64
	for i := range q {
		q[i] = float64(1-2*r.Intn(2)) * 0.5
	}
	return ciTurnBy(r, q, 0.01)
}

// ciTurn returns the rotation after q: the same, the same negated (one
// rotation, one coding), turned a little or a lot, or a new random one
// (the absolute form, mostly).
func ciTurn(r *rand.Rand, q [4]float64) [4]float64 {
	switch r.Intn(7) {
	case 0:
		return q
	case 1:
		return [4]float64{-q[0], -q[1], -q[2], -q[3]}
	case 2:
		return ciQuat(r)
	}
	return ciTurnBy(r, q, []float64{0.0005, 0.005, 0.05, 0.4}[r.Intn(4)]*r.Float64())
}

// ciTurnBy turns q by a random small rotation of about by in each
// component.
func ciTurnBy(r *rand.Rand, q [4]float64, by float64) [4]float64 {
	n := 0.0
	for i := range q {
		q[i] += (r.Float64()*2 - 1) * by
		n += q[i] * q[i]
	}
	n = math.Sqrt(n)
	for i := range q {
		q[i] /= n
	}
	return q
}

func f32Quat(q [4]float64) [4]float32 {
	return [4]float32{float32(q[0]), float32(q[1]), float32(q[2]), float32(q[3])}
}

func f64Quat(q [4]float32) [4]float64 {
	return [4]float64{float64(q[0]), float64(q[1]), float64(q[2]), float64(q[3])}
}

func randCIQuats(r *rand.Rand) ciQuats {
	h, b := ciQuat(r), ciQuat(r)
	v := ciQuats{Rot: f32Quat(ciQuat(r)), Fine: ciQuat(r), Head: tiRot{float32(h[0]), float32(h[1]), float32(h[2]), float32(h[3])},
		Body: ciRot64{b[0], b[1], b[2], b[3]}, Pair: [2][4]float32{f32Quat(ciQuat(r)), f32Quat(ciQuat(r))}}
	for i := r.Intn(9); i > 0; i-- {
		v.Bones = append(v.Bones, f32Quat(ciQuat(r)))
	}
	if r.Intn(3) > 0 {
		v.Look = &ciLook{f32Quat(ciQuat(r))}
	}
	for i := r.Intn(5); i > 0; i-- {
		if v.Joints == nil {
			v.Joints = map[uint8][4]float64{}
		}
		v.Joints[uint8(r.Intn(6))] = ciQuat(r)
	}
	return v
}

// nextCIQuats turns each quaternion of v as ciTurn does.
func nextCIQuats(r *rand.Rand, v ciQuats) ciQuats {
	w := v
	w.Rot, w.Fine = f32Quat(ciTurn(r, f64Quat(v.Rot))), ciTurn(r, v.Fine)
	h := f32Quat(ciTurn(r, [4]float64{float64(v.Head.X), float64(v.Head.Y), float64(v.Head.Z), float64(v.Head.W)}))
	w.Head = tiRot{h[0], h[1], h[2], h[3]}
	b := ciTurn(r, [4]float64{v.Body.X, v.Body.Y, v.Body.Z, v.Body.W})
	w.Body = ciRot64{b[0], b[1], b[2], b[3]}
	w.Bones = nil
	for _, q := range v.Bones {
		w.Bones = append(w.Bones, f32Quat(ciTurn(r, f64Quat(q))))
	}
	if r.Intn(4) == 0 && len(w.Bones) > 0 {
		w.Bones = w.Bones[:r.Intn(len(w.Bones))]
	} else if r.Intn(4) == 0 && len(w.Bones) < 8 {
		w.Bones = append(w.Bones, f32Quat(ciQuat(r)))
	}
	if r.Intn(2) == 0 {
		w.Pair[r.Intn(2)] = f32Quat(ciTurn(r, f64Quat(v.Pair[0])))
	}
	if v.Look != nil && r.Intn(4) > 0 {
		w.Look = &ciLook{f32Quat(ciTurn(r, f64Quat(v.Look.Rot)))}
	}
	if v.Joints != nil {
		w.Joints = map[uint8][4]float64{}
		for k, q := range v.Joints {
			w.Joints[k] = ciTurn(r, q)
		}
	}
	return w
}

// ciEntID is a unit id: mostly small, now and then negative.
func ciEntID(r *rand.Rand) int16 {
	if r.Intn(5) == 0 {
		return int16(-1 - r.Intn(40))
	}
	return int16(r.Intn(60))
}

// ciIDOrder orders units as Go matches them: by id as an unsigned 64-bit
// integer.
func ciIDOrder(a, b ciUnit) int {
	x, y := uint64(int64(a.ID)), uint64(int64(b.ID))
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func randCIKids(r *rand.Rand) []ciEnt {
	var es []ciEnt
	id := uint8(r.Intn(3))
	for i := r.Intn(5); i > 0; i-- {
		es = append(es, ciEnt{ID: id, V: r.Intn(2) == 0})
		id += uint8(1 + r.Intn(4))
	}
	return es
}

func randCIUnit(r *rand.Rand, id int16) ciUnit {
	return ciUnit{Hp: uint8(r.Intn(101)), ID: id, Rot: f32Quat(ciQuat(r)), Off: r.Int31n(2001) - 1000, Kids: randCIKids(r)}
}

// randCIUnits returns up to 10 units of distinct ids, in Go's id order
// (four in five) or shuffled.
func randCIUnits(r *rand.Rand) ciUnits {
	var v ciUnits
	for i := r.Intn(11); i > 0; i-- {
		v.Units = ciAddUnit(r, v.Units)
	}
	if r.Intn(5) == 0 {
		r.Shuffle(len(v.Units), func(i, j int) { v.Units[i], v.Units[j] = v.Units[j], v.Units[i] })
	}
	if r.Intn(4) > 0 {
		v.Ents = randCIKids(r)
	}
	if r.Intn(2) == 0 {
		v.Crowd = &ciCrowd{Ents: randCIKids(r)}
	}
	v.Tick = uint16(r.Intn(1 << 16))
	return v
}

// ciAddUnit inserts a unit of a new id in id order, unless the set is
// full or the id taken.
func ciAddUnit(r *rand.Rand, us []ciUnit) []ciUnit {
	u := randCIUnit(r, ciEntID(r))
	if len(us) >= 10 || slices.ContainsFunc(us, func(x ciUnit) bool { return x.ID == u.ID }) {
		return us
	}
	i, _ := slices.BinarySearchFunc(us, u, ciIDOrder)
	return slices.Insert(us, i, u)
}

// nextCIUnits changes v's entity sets as a game's turn does: some units
// removed, some added, some changed (hit points in the window and out,
// turns, offsets, their own sets), now and then two swapped or all gone.
func nextCIUnits(r *rand.Rand, v ciUnits) ciUnits {
	w := v
	w.Units = nil
	for _, u := range v.Units {
		if r.Intn(6) == 0 {
			continue // removed
		}
		u.Kids = slices.Clone(u.Kids)
		switch r.Intn(5) {
		case 0:
			u.Hp = uint8(max(0, min(100, int(u.Hp)+r.Intn(13)-6)))
		case 1:
			u.Rot = f32Quat(ciTurn(r, f64Quat(u.Rot)))
		case 2:
			u.Off, u.Hp = -u.Off, uint8(r.Intn(101))
		case 3:
			u.Kids = ciNextKids(r, u.Kids)
		}
		w.Units = append(w.Units, u)
	}
	for i := r.Intn(3); i > 0; i-- {
		w.Units = ciAddUnit(r, w.Units)
	}
	switch r.Intn(8) {
	case 0:
		if len(w.Units) > 1 {
			i, j := r.Intn(len(w.Units)), r.Intn(len(w.Units))
			w.Units[i], w.Units[j] = w.Units[j], w.Units[i]
		}
	case 1:
		w.Units = nil
	case 2:
		w.Units = []ciUnit{}
	}
	w.Ents = ciNextKids(r, v.Ents)
	if v.Crowd != nil && r.Intn(3) > 0 {
		w.Crowd = &ciCrowd{Ents: ciNextKids(r, v.Crowd.Ents)}
	}
	if r.Intn(3) == 0 {
		w.Tick++
	}
	return w
}

// ciNextKids changes a set of small entities: some flipped, removed or
// added.
func ciNextKids(r *rand.Rand, es []ciEnt) []ciEnt {
	var out []ciEnt
	for _, e := range es {
		switch r.Intn(5) {
		case 0:
			continue
		case 1:
			e.V = !e.V
		}
		out = append(out, e)
	}
	if r.Intn(3) == 0 && len(out) < 4 {
		id := uint8(r.Intn(20))
		if !slices.ContainsFunc(out, func(e ciEnt) bool { return e.ID == id }) {
			i, _ := slices.BinarySearchFunc(out, id, func(e ciEnt, id uint8) int { return int(e.ID) - int(id) })
			out = slices.Insert(out, i, ciEnt{ID: id, V: r.Intn(2) == 0})
		}
	}
	return out
}

// ciWindows holds windows on the elements of arrays, nested arrays,
// slices and pointers (each changed array element by element).
type ciWindows struct {
	Pos   [3]float32    `net:"q,min=-100,max=100,prec=0.1,dmin=-1,dmax=1"`
	Stick [2][2]int8    `net:"range,min=-100,max=100,dmin=-4,dmax=3"`
	Pads  []float64     `net:"fixed,prec=0.01,dmin=-0.5,dmax=0.5,maxlen=6"`
	Gain  *uint16       `net:"bits=10,dmin=-8,dmax=8"`
	Dials [2]int32      `net:"range,min=-100000,max=100000,dmin=-64,dmax=63"`
	Rest  [2]float32    `net:"q,min=-1,max=1,bits=8"` // no window: sent in full
	Trims []ciWindowArr `net:",maxlen=3"`
}

// ciWindowArr is an element whose own field is a windowed array.
type ciWindowArr struct {
	V [2]uint8 `net:"bits=6,dmin=-2,dmax=2"`
}

func randCIWindows(r *rand.Rand) ciWindows {
	var v ciWindows
	for i := range v.Pos {
		v.Pos[i] = float32(r.Intn(2001)-1000) / 10
	}
	for i := range v.Stick {
		for j := range v.Stick[i] {
			v.Stick[i][j] = int8(r.Intn(201) - 100)
		}
	}
	for i := r.Intn(6); i > 0; i-- {
		v.Pads = append(v.Pads, float64(r.Intn(20001)-10000)/100)
	}
	if r.Intn(3) > 0 {
		g := uint16(r.Intn(1024))
		v.Gain = &g
	}
	v.Dials = [2]int32{r.Int31n(200001) - 100000, r.Int31n(200001) - 100000}
	v.Rest = [2]float32{float32(r.Float64()*2 - 1), float32(r.Float64()*2 - 1)}
	for i := r.Intn(4); i > 0; i-- {
		v.Trims = append(v.Trims, ciWindowArr{V: [2]uint8{uint8(r.Intn(64)), uint8(r.Intn(64))}})
	}
	return v
}

// nextCIWindows moves some values of v a little (in their windows), some
// a lot (beyond them), and leaves the rest.
func nextCIWindows(r *rand.Rand, v ciWindows) ciWindows {
	w := v
	w.Pads = slices.Clone(v.Pads)
	w.Trims = slices.Clone(v.Trims)
	move := func(x, small, lo, hi int) int {
		switch r.Intn(4) {
		case 0:
			return x
		case 1:
			return lo + r.Intn(hi-lo+1)
		}
		return min(max(x+r.Intn(2*small+1)-small, lo), hi)
	}
	for i := range w.Pos {
		w.Pos[i] = float32(move(int(math.Round(float64(v.Pos[i])*10)), 12, -1000, 1000)) / 10
	}
	i, j := r.Intn(2), r.Intn(2)
	w.Stick[i][j] = int8(move(int(v.Stick[i][j]), 5, -100, 100))
	for i := range w.Pads {
		w.Pads[i] = float64(move(int(math.Round(v.Pads[i]*100)), 60, -10000, 10000)) / 100
	}
	if v.Gain != nil && r.Intn(2) == 0 {
		g := uint16(move(int(*v.Gain), 10, 0, 1023))
		w.Gain = &g
	}
	w.Dials[r.Intn(2)] = int32(move(int(v.Dials[0]), 80, -100000, 100000))
	if r.Intn(3) == 0 {
		w.Rest[r.Intn(2)] = float32(r.Float64()*2 - 1)
	}
	for i := range w.Trims {
		w.Trims[i].V[r.Intn(2)] = uint8(move(int(v.Trims[i].V[0]), 3, 0, 63))
	}
	return w
}
