#!/usr/bin/env bash
# Instructions per world tick of the gateway benchmarks (bench_test.go),
# counted by valgrind's cachegrind: each benchmark runs at two iteration
# counts and the difference of the instruction totals is divided by the
# difference of the counts, so set-up and the 60 warm-up ticks cancel.
# Machine load does not move these figures.
#
#   gateway/instr.sh [BENCH_REGEXP...]
#
# Default: BenchmarkPublish, BenchmarkApply and BenchmarkGatewayTick with
# 1, 4 and 16 gateways. Output: one line per benchmark, "name  instructions".
# The gateway tick of 64 clients takes some minutes under valgrind.
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instr.sh: valgrind not found" >&2; exit 1; }
bin=$(mktemp /tmp/gateway-instr.XXXXXX)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" .
benches=("$@")
if [ ${#benches[@]} -eq 0 ]; then
	# Each level of a sub-benchmark's name is matched on its own, and
	# anchored: "gateways=1" alone would match gateways=16 too.
	benches=('^BenchmarkPublish$' '^BenchmarkApply$')
	for g in 1 4 16; do
		benches+=("^BenchmarkGatewayTick\$/^gateways=$g\$/^clients=64\$/")
	done
fi
irefs() { # bench regexp, iterations
	GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off valgrind --tool=cachegrind \
		--cache-sim=no --cachegrind-out-file=/dev/null "$bin" -test.run=NONE \
		-test.bench="$1" -test.benchtime="$2x" 2>&1 >/dev/null |
		sed -n 's/.*I *refs: *//p' | tr -d ,
}
for re in "${benches[@]}"; do
	case "$re" in
	*GatewayTick*) n1=4 n2=12 ;;
	*) n1=20 n2=60 ;;
	esac
	a=$(irefs "$re" "$n1")
	b=$(irefs "$re" "$n2")
	printf '%s\t%d\n' "$re" $(((b - a) / (n2 - n1)))
done
