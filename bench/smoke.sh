#!/usr/bin/env bash
# The CI step for the comparison module: vet, the round-trip tests, and every
# benchmark once (-benchtime=1x) so that none of them can rot. Timings are
# never asserted.
set -euo pipefail
cd "$(dirname "$0")"
go vet ./...
go test -count=1 ./...
go test -run '^$' -bench . -benchtime=1x -count=1 . >/dev/null
echo "bench smoke: all benchmarks ran once"
