package gateway

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/bitwire/bitwire/bits"
	"github.com/bitwire/bitwire/fields"
)

// The bus message: a fixed header of headerSize bytes, then the events as
// a bit stream (package bits, LSB-first), zero-padded to a byte.
// docs/gateway.md has every field.
const (
	magic0, magic1 = 'B', 'G'
	// BusVersion is the version of the bus message format; a gateway
	// refuses messages of another (ErrBadMessage).
	BusVersion = 1
	headerSize = 32
	crcAt      = 28 // the CRC32C of the message, this field left out
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// messageCRC is the CRC32C of a message but its CRC field.
func messageCRC(msg []byte) uint32 {
	return crc32.Update(crc32.Checksum(msg[:crcAt], castagnoli), castagnoli, msg[crcAt+4:])
}

// sealMessage writes the CRC of a message whose header and body are in.
func sealMessage(msg []byte) []byte {
	binary.LittleEndian.PutUint32(msg[crcAt:], messageCRC(msg))
	return msg
}

// The kinds of message.
const (
	kindTick = 0 // what changed in a cell at a tick
	kindFull = 1 // a cell's whole state at a tick, to one gateway
)

// flagLast marks the last part of a cell's message of a tick.
const flagLast = 1

// The kinds of event, 2 bits.
const (
	opDelta  = 0 // the entity changed: a delta against its previous state
	opFull   = 1 // created, or entered the cell: its state in full
	opRemove = 2 // removed from the world
	opLeave  = 3 // left the cell for another one (still in the world)
)

// idWidth is the bitlen prefix of an event's id step (a zigzagged 33-bit
// difference needs HighBit up to 32: 6 bits).
const idWidth = 6

// header is the fixed part of a bus message.
type header struct {
	kind  uint8
	flags uint8
	part  uint16 // index of this part among the parts of the cell's message
	fp    uint32 // the codec's fingerprint, folded to 32 bits
	tick  uint32
	prev  uint32 // kindTick: the tick of the cell's previous message (0: none)
	cell  uint32
	count uint32 // events in this part
}

func appendHeader(dst []byte, h header) []byte {
	dst = append(dst, magic0, magic1, BusVersion, h.kind)
	dst = binary.LittleEndian.AppendUint16(dst, h.part)
	dst = append(dst, h.flags, 0)
	dst = binary.LittleEndian.AppendUint32(dst, h.fp)
	dst = binary.LittleEndian.AppendUint32(dst, h.tick)
	dst = binary.LittleEndian.AppendUint32(dst, h.prev)
	dst = binary.LittleEndian.AppendUint32(dst, h.cell)
	dst = binary.LittleEndian.AppendUint32(dst, h.count)
	return binary.LittleEndian.AppendUint32(dst, 0) // the CRC, by sealMessage
}

// parseHeader reads the header; body is the rest.
func parseHeader(msg []byte) (h header, body []byte, err error) {
	if len(msg) < headerSize {
		return h, nil, fmt.Errorf("%w: %d bytes, under the header's %d", ErrBadMessage, len(msg), headerSize)
	}
	if msg[0] != magic0 || msg[1] != magic1 || msg[2] != BusVersion {
		return h, nil, fmt.Errorf("%w: magic %q version %d", ErrBadMessage, msg[:2], msg[2])
	}
	if got, want := binary.LittleEndian.Uint32(msg[crcAt:]), messageCRC(msg); got != want {
		return h, nil, fmt.Errorf("%w: CRC %#08x, want %#08x", ErrBadMessage, got, want)
	}
	h.kind = msg[3]
	if h.kind > kindFull {
		return h, nil, fmt.Errorf("%w: kind %d", ErrBadMessage, h.kind)
	}
	h.part = binary.LittleEndian.Uint16(msg[4:])
	h.flags = msg[6]
	if h.flags&^flagLast != 0 || msg[7] != 0 {
		return h, nil, fmt.Errorf("%w: flags %#x %#x", ErrBadMessage, msg[6], msg[7])
	}
	h.fp = binary.LittleEndian.Uint32(msg[8:])
	h.tick = binary.LittleEndian.Uint32(msg[12:])
	h.prev = binary.LittleEndian.Uint32(msg[16:])
	h.cell = binary.LittleEndian.Uint32(msg[20:])
	h.count = binary.LittleEndian.Uint32(msg[24:])
	// Every event takes at least 2+idWidth+1 bits: a count beyond what the
	// body can hold is malformed, found before any loop over it.
	if uint64(h.count)*(2+idWidth+1) > uint64(len(msg)-headerSize)*8 {
		return h, nil, fmt.Errorf("%w: %d events in %d bytes", ErrBadMessage, h.count, len(msg)-headerSize)
	}
	return h, msg[headerSize:], nil
}

// idStep codes an event's id as the zigzagged difference from the previous
// event's: a world that sets its entities in id order pays a few bits.
type idStep struct{ prev uint32 }

func (s *idStep) write(w *bits.Writer, id uint32) {
	d := int64(id) - int64(s.prev)
	fields.WriteBitlen(w, uint64(d<<1^d>>63), idWidth)
	s.prev = id
}

func (s *idStep) read(r *bits.Reader) (uint32, error) {
	z, err := fields.ReadBitlen(r, idWidth)
	if err != nil {
		return 0, err
	}
	d := int64(z>>1) ^ -int64(z&1)
	id := int64(s.prev) + d
	if id < 0 || id > 1<<32-1 {
		return 0, fmt.Errorf("%w: id step %d from %d", ErrBadMessage, d, s.prev)
	}
	s.prev = uint32(id)
	return s.prev, nil
}

// writeStored writes nbits bits of an encoding kept as bytes.
func writeStored(w *bits.Writer, enc []byte, nbits int) {
	whole := nbits / 8
	w.WriteBytes(enc[:whole])
	if rest := nbits % 8; rest > 0 {
		w.WriteBits(uint64(enc[whole]), rest)
	}
}

// fingerprint32 folds a codec's fingerprint to the header's 32 bits.
func fingerprint32(fp uint64) uint32 { return uint32(fp) ^ uint32(fp>>32) }
