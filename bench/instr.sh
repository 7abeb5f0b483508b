#!/usr/bin/env bash
# Instructions per operation of the bitwire-codec subject on every workload,
# encode and decode, counted by valgrind's cachegrind: each benchmark runs at
# two iteration counts and the difference of the instruction totals is divided
# by the difference of the counts, so set-up cost cancels. Machine load does
# not move these figures, so two builds can be compared on a busy machine.
#
#   bench/instr.sh [TEST_BINARY] [SUBJECT] [OPS] [WORKLOADS]
#
# Without TEST_BINARY (or with "") the bench module's test binary is built
# from the current tree. SUBJECT defaults to bitwire-codec, OPS to
# "Encode Decode", WORKLOADS to all six. Output: one line per benchmark,
# "Encode/world901  123456".
set -euo pipefail
cd "$(dirname "$0")"
bin=${1:-}
subject=${2:-bitwire-codec}
ops=${3:-Encode Decode}
workloads=${4:-person player snapshot64 snapshot64-delta world901 world901-delta}
if [ -z "$bin" ]; then
	bin=$(mktemp /tmp/bitwire-instr.XXXXXX)
	trap 'rm -f "$bin"' EXIT
	go test -c -o "$bin" .
fi
command -v valgrind >/dev/null || { echo "instr.sh: valgrind not found" >&2; exit 1; }

# Iteration counts per workload: about 300 million instructions for the
# longer run, so that the runtime's own work, which varies by some 100
# thousand instructions from run to run, moves a figure by well under 0.2%.
counts() {
	case "$1" in
	person | player) echo "40000 200000" ;;
	snapshot64) echo "1600 8000" ;;
	snapshot64-delta) echo "600 3000" ;;
	world901) echo "100 500" ;;
	*) echo "400 2000" ;;
	esac
}

irefs() { # bench regexp, iterations
	GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off valgrind --tool=cachegrind \
		--cache-sim=no --cachegrind-out-file=/dev/null "$bin" -test.run=NONE \
		-test.bench="$1" -test.benchtime="$2x" 2>&1 >/dev/null |
		sed -n 's/.*I *refs: *//p' | tr -d ,
}

for op in $ops; do
	for w in $workloads; do
		read -r n1 n2 <<<"$(counts "$w")"
		re="^Benchmark$op\$/^$w\$/^$subject\$"
		a=$(irefs "$re" "$n1")
		b=$(irefs "$re" "$n2")
		printf '%s/%s\t%d\n' "$op" "$w" $(((b - a) / (n2 - n1)))
	done
done
