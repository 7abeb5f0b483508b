#!/usr/bin/env bash
# Runs the comparison benchmarks with repeats, summarises them with benchstat
# and writes docs/BENCHMARKS.md.
#
#   bench/run.sh [-count N] [-benchtime D] [-bench REGEXP]
#
# Defaults: -count 6 (benchstat needs 6 runs for a confidence interval),
# -benchtime 200ms, -bench . (everything). The raw output stays in
# bench/bench.txt. Timings come from whatever machine runs this (the load
# around the runs is written beside them); nothing is asserted about them.
# The sections from the "<!-- limit.sh -->" marker on are kept: bench/limit.sh
# and bench/peers.sh print theirs (instruction counts) to paste there.
set -euo pipefail
cd "$(dirname "$0")"

count=6
benchtime=200ms
bench=.
while [ $# -gt 0 ]; do
	case "$1" in
	-count) count=$2; shift 2 ;;
	-benchtime) benchtime=$2; shift 2 ;;
	-bench) bench=$2; shift 2 ;;
	*) echo "usage: $0 [-count N] [-benchtime D] [-bench REGEXP]" >&2; exit 2 ;;
	esac
done

# benchstat, pinned (golang.org/x/perf has no releases, only pseudo-versions).
benchstat_version=v0.0.0-20260908200009-22c9c6c9d4da
gobin=$(go env GOPATH)/bin
if ! [ -x "$gobin/benchstat" ] || ! go version -m "$gobin/benchstat" | grep -q "$benchstat_version"; then
	go install "golang.org/x/perf/cmd/benchstat@$benchstat_version"
fi

# One test binary, run count times over the whole set rather than each
# benchmark count times in a row: on a shared machine a burst of load then
# spreads over every serializer instead of landing on a few.
go test -c -o bench.test .
trap 'rm -f bench.test bench.csv bench.csv.log' EXIT
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
: > bench.txt
for i in $(seq "$count"); do
	echo "run $i of $count" >&2
	./bench.test -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" -test.count 1 | tee -a bench.txt
done
load1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
"$gobin/benchstat" -format csv bench.txt > bench.csv 2> bench.csv.log || { cat bench.csv.log >&2; exit 1; }
mkdir -p ../docs
go run ./cmd/benchmd -in bench.csv -out ../docs/BENCHMARKS.md -count "$count" -benchtime "$benchtime" \
	-load "$load0 before the runs, $load1 after"
echo "wrote docs/BENCHMARKS.md"
