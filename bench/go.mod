module github.com/bitwire/bitwire/bench

go 1.25.0

require (
	github.com/bitwire/bitwire v0.0.0
	github.com/fxamacker/cbor/v2 v2.10.0
	github.com/kelindar/binary v1.2.3
	github.com/vmihailenco/msgpack/v5 v5.4.1
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/fatih/structtag v1.2.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
)

replace github.com/bitwire/bitwire => ../
