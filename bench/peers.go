package bench

import (
	"bytes"
	"encoding/gob"
	"encoding/json"

	"github.com/fxamacker/cbor/v2"
	kbinary "github.com/kelindar/binary"
	"github.com/vmihailenco/msgpack/v5"
)

// A Peer is a reflection-based serializer used the way its documentation
// suggests for speed: each Peer value owns its reusable buffers, so the
// bytes returned by Marshal are valid only until its next call.
type Peer struct {
	Name      string
	Marshal   func(v any) ([]byte, error)
	Unmarshal func(data []byte, v any) error
	// Fresh reports that Unmarshal must be given a zero value (gob leaves
	// the fields it does not transmit, the zero ones, untouched).
	Fresh bool
}

// ReflectPeers returns a fresh instance of every reflection-based peer.
func ReflectPeers() []Peer {
	return []Peer{msgpackPeer(), cborPeer(), kelindarPeer(), gobPeer(), jsonPeer()}
}

// msgpack: one Encoder reused over one buffer; Unmarshal pools its decoders.
func msgpackPeer() Peer {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	return Peer{
		Name: "msgpack",
		Marshal: func(v any) ([]byte, error) {
			buf.Reset()
			err := enc.Encode(v)
			return buf.Bytes(), err
		},
		Unmarshal: msgpack.Unmarshal,
	}
}

// cbor: an EncMode that keeps time.Time lossless (RFC 3339 with nanoseconds;
// the default, Unix seconds, drops them), marshalling into a reused buffer.
func cborPeer() Peer {
	em, err := cbor.EncOptions{Time: cbor.TimeRFC3339Nano}.UserBufferEncMode()
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	return Peer{
		Name: "cbor",
		Marshal: func(v any) ([]byte, error) {
			buf.Reset()
			err := em.MarshalToBuffer(v, &buf)
			return buf.Bytes(), err
		},
		Unmarshal: cbor.Unmarshal,
	}
}

// kelindar/binary: one Encoder reused over one buffer.
func kelindarPeer() Peer {
	var buf bytes.Buffer
	enc := kbinary.NewEncoder(&buf)
	return Peer{
		Name: "kelindar",
		Marshal: func(v any) ([]byte, error) {
			buf.Reset()
			enc.Reset(&buf)
			err := enc.Encode(v)
			return buf.Bytes(), err
		},
		Unmarshal: kbinary.Unmarshal,
	}
}

// gob: a new Encoder and Decoder per message, because every datagram must be
// decodable on its own (a gob stream sends each type once, then relies on the
// receiver having seen it; UDP loses packets).
func gobPeer() Peer {
	var buf bytes.Buffer
	var rd bytes.Reader
	return Peer{
		Name: "gob",
		Marshal: func(v any) ([]byte, error) {
			buf.Reset()
			err := gob.NewEncoder(&buf).Encode(v)
			return buf.Bytes(), err
		},
		Unmarshal: func(data []byte, v any) error {
			rd.Reset(data)
			return gob.NewDecoder(&rd).Decode(v)
		},
		Fresh: true,
	}
}

// encoding/json: the package-level functions.
func jsonPeer() Peer {
	return Peer{Name: "json", Marshal: json.Marshal, Unmarshal: json.Unmarshal}
}
