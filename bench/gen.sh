#!/usr/bin/env bash
# Regenerates pb/bench.pb.go from pb/bench.proto with Debian's protoc and
# protoc-gen-go at the same version as the google.golang.org/protobuf that
# go.mod pins. The generated file is committed, so building the benchmarks
# never needs protoc; run this only after editing bench.proto.
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v protoc >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq protobuf-compiler
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
