#!/usr/bin/env bash
# world901, bitwire's Codec against the limit subject (bench/limit.go), in
# instructions per crate and in wall-clock time, encode and decode; prints
# the markdown section that docs/BENCHMARKS.md keeps after its
# "<!-- limit.sh -->" marker (bench/run.sh keeps it when it rewrites the file).
#
#   bench/limit.sh [COUNT]
#
# Instructions: valgrind's cachegrind, GOMAXPROCS=1 GOGC=off, each benchmark
# run at 100 and 500 iterations, the difference of the totals divided by
# 400 iterations and by the 901 crates, so set-up cost cancels and machine
# load does not move the figure. Time: the median of COUNT (default 10)
# runs of 200 ms each, interleaved, on whatever machine runs this.
set -euo pipefail
cd "$(dirname "$0")"
count=${1:-10}
command -v valgrind >/dev/null || { echo "limit.sh: valgrind not found" >&2; exit 1; }
bin=$(mktemp /tmp/bitwire-limit.XXXXXX)
trap 'rm -f "$bin" "$bin.txt"' EXIT
go test -c -o "$bin" .

irefs() { # bench regexp, iterations
	GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off valgrind --tool=cachegrind \
		--cache-sim=no --cachegrind-out-file=/dev/null "$bin" -test.run=NONE \
		-test.bench="$1" -test.benchtime="$2x" 2>&1 >/dev/null |
		sed -n 's/.*I *refs: *//p' | tr -d ,
}

load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
for i in $(seq "$count"); do
	"$bin" -test.run='^$' -test.bench='^Benchmark(Encode|Decode)$/^world901$/^(limit|bitwire-codec)$' \
		-test.benchtime=200ms -test.count=1 >>"$bin.txt"
done

load1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')

median() { # benchmark name
	grep "^Benchmark$1" "$bin.txt" | awk '{print $3}' | sort -g |
		awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'
}

declare -A ins ns
for op in Encode Decode; do
	for s in limit bitwire-codec; do
		re="^Benchmark$op\$/^world901\$/^$s\$"
		a=$(irefs "$re" 100)
		b=$(irefs "$re" 500)
		ins[$op/$s]=$(((b - a) / 400 / 901))
		ns[$op/$s]=$(median "$op/world901/$s-")
	done
done

echo "<!-- limit.sh -->"
echo "## world901 against its limit"
echo
echo "Measured by \`bench/limit.sh $count\` on $(date -u '+%Y-%m-%d %H:%M UTC'): instructions per crate from valgrind"
echo "(\`GOMAXPROCS=1 GOGC=off\`, the difference of 100 and 500 iterations), wall-clock medians of $count runs of 200 ms"
echo "(1-minute load average $load0 before them, $load1 after, on $(nproc) cores: the instruction counts do not depend on it)."
echo "**limit** is bench/limit.go: a codec written for exactly this message in plain Go, without packages \`bits\` and"
echo "\`fields\` on its hot path: one bit position and two whole-word stores or loads a crate, every check of a crate in"
echo "the sign bit of one word (range checks as integer compares on float bits), the largest quaternion component by an"
echo "integer max, 1/sqrt of the nearly unit squared norm by its first-order series, the three indices in fixed point with"
echo "the rounding guard folded into the added constant, the keep-the-indices rule as integer compares of a sum of"
echo "precomputed squares against precomputed bounds, one table entry per index at one byte offset; slow cases to"
echo "\`fields\`, errors to bitwire's \`Codec\`. bench/limit_test.go checks that it writes bitwire's bytes and decodes and"
echo "refuses exactly what bitwire does (every one of the 2^29 quaternion codes and every float32 position in range"
echo "under \`BITWIRE_LIMIT_FULL=1\`, samples that cover them by symmetry and monotonicity by default, 1,000 random worlds,"
echo "the error cases). It is the speed limit of this message; the hand-written packer, which calls \`bits\` and"
echo "\`fields\`, shares bitwire's costs."
echo
echo "| world901 (901 crates) | limit instr/crate | bitwire-codec instr/crate | × limit | limit ns/op | bitwire-codec ns/op | × limit |"
echo "|---|--:|--:|--:|--:|--:|--:|"
for op in Encode Decode; do
	l=${ins[$op/limit]} c=${ins[$op/bitwire-codec]}
	tl=${ns[$op/limit]} tc=${ns[$op/bitwire-codec]}
	printf '| %s | %d | %d | %.2f× | %.0f | %.0f | %.2f× |\n' "$op" "$l" "$c" \
		"$(echo "$c / $l" | bc -l)" "$tl" "$tc" "$(echo "$tc / $tl" | bc -l)"
done
