#!/usr/bin/env bash
# Regenerates the peers' generated code: pb/bench.pb.go from pb/bench.proto
# with Debian's protoc and protoc-gen-go at the same version as the
# google.golang.org/protobuf that go.mod pins, msgp_*_gen.go from the
# workloads' structs with the msgp generator at the version go.mod pins, and
# fb/*.go from fb/bench.fbs with Debian's flatc (2.0.8, the version of the
# github.com/google/flatbuffers runtime go.mod pins).
# The generated files are committed, so building the benchmarks never needs
# the generators; run this only after editing bench.proto or the structs.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v protoc >/dev/null || ! command -v flatc >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq protobuf-compiler flatbuffers-compiler
fi

version=$(go list -m -f '{{.Version}}' google.golang.org/protobuf)
gobin=$(go env GOPATH)/bin
want="protoc-gen-go ${version}"
if [ "$("$gobin/protoc-gen-go" --version 2>/dev/null)" != "$want" ]; then
	go install "google.golang.org/protobuf/cmd/protoc-gen-go@${version}"
fi

PATH="$gobin:$PATH" protoc --proto_path=pb --go_out=pb --go_opt=paths=source_relative bench.proto
gofmt -l pb
echo "regenerated pb/bench.pb.go with $(protoc --version) and $want"

msgp_version=$(go list -m -f '{{.Version}}' github.com/tinylib/msgp)
for f in workloads:workloads snapshot_delta:delta; do
	go run "github.com/tinylib/msgp@${msgp_version}" -file "${f%%:*}.go" -o "msgp_${f##*:}_gen.go" -tests=false -io=false >/dev/null
done
echo "regenerated msgp_workloads_gen.go and msgp_delta_gen.go with msgp ${msgp_version}"

fb_version=$(go list -m -f '{{.Version}}' github.com/google/flatbuffers)
case "$fb_version" in
v"$(flatc --version | sed 's/.* //')"+incompatible) ;;
*) echo "gen.sh: flatc $(flatc --version) does not match the runtime $fb_version in go.mod" >&2; exit 1 ;;
esac
rm -f fb/*.go
flatc --go -o . fb/bench.fbs
gofmt -l fb
echo "regenerated fb/*.go with $(flatc --version)"
