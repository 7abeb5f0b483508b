module github.com/bitwire/bitwire/bench

go 1.25.0

require (
	github.com/bitwire/bitwire v0.0.0
	github.com/fxamacker/cbor/v2 v2.10.0
	github.com/google/flatbuffers v2.0.8+incompatible
	github.com/kelindar/binary v1.2.3
	github.com/mus-format/mus-go v0.7.2
	github.com/tinylib/msgp v1.6.5
	github.com/vmihailenco/msgpack/v5 v5.4.1
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/fatih/structtag v1.2.0 // indirect
	github.com/mus-format/common-go v0.0.0-20251026152644-9f5ac6728d8a // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/exp v0.0.0-20230425010034-47ecfdc1ba53 // indirect
)

replace github.com/bitwire/bitwire => ../
