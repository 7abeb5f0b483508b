#!/usr/bin/env bash
# Instructions per message of bitwire's Codec beside the limit (world901),
# the hand-written packer and the serializers users pick instead (protobuf-go,
# mus-go, tinylib/msgp, FlatBuffers), on every workload, encode and decode,
# all from bench/instr.sh on one test binary, with each subject's bytes; prints
# the markdown section docs/BENCHMARKS.md keeps under "Peers in instructions".
#
#   bench/peers.sh [TEST_BINARY]
#
# Instruction counts do not depend on the machine's load (see instr.sh); the
# whole run takes some 150 valgrind runs, about ten minutes on a quiet core.
set -euo pipefail
cd "$(dirname "$0")"
bin=${1:-}
tmp=$(mktemp -d /tmp/bitwire-peers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$bin" ]; then
	bin=$tmp/bench.test
	go test -c -o "$bin" .
fi
subjects="bitwire-codec limit handwritten protobuf mus msgp flatbuffers"
workloads="person player snapshot64 snapshot64-delta world901 world901-delta"
started=$(date -u '+%Y-%m-%d %H:%M UTC')
rev=$(git rev-parse --short HEAD 2>/dev/null || echo '?') # the code measured (the binary is built from the tree)
for s in $subjects; do
	wl=$workloads
	[ "$s" = limit ] && wl=world901
	./instr.sh "$bin" "$s" "Encode Decode" "$wl" | sed "s|^|$s/|" >>"$tmp/instr"
done
# Bytes: the B/msg metric of one iteration of each encoder.
"$bin" -test.run=NONE -test.bench='^BenchmarkEncode$' -test.benchtime=1x |
	awk '/B\/msg/ {n = split($1, p, "/"); sub(/-[0-9]+$/, "", p[3]); for (i = 2; i <= NF; i++) if ($i == "B/msg") print p[3] "/" p[2] "\t" int($(i-1))}' >"$tmp/bytes"

echo "## Peers in instructions"
echo
echo "Measured by \`bench/peers.sh\` ($started, tree at $rev): instructions per message"
echo "from \`bench/instr.sh\` (valgrind, \`GOMAXPROCS=1 GOGC=off\`, the difference of two iteration counts; the machine's"
echo "load does not move them), encode / decode, and the bytes of each message. **limit** (world901 only) is"
echo "bench/limit.go, **handwritten** the bit packer of bitwire's layout built on packages \`bits\` and \`fields\`; the"
echo "peers' delta rows include the diff that finds the changed entities and the rebuild by id."
echo
printf '| workload |'
for s in $subjects; do printf ' %s |' "$s"; done
printf ' bitwire ÷ mus |\n|---|'
for s in $subjects; do printf -- '--:|'; done
printf -- '--:|\n'
for w in $workloads; do
	printf '| %s |' "$w"
	for s in $subjects; do
		e=$(awk -v k="$s/Encode/$w" '$1 == k {print $2}' "$tmp/instr")
		d=$(awk -v k="$s/Decode/$w" '$1 == k {print $2}' "$tmp/instr")
		b=$(awk -v k="$s/$w" '$1 == k {print $2}' "$tmp/bytes")
		if [ -z "$e" ]; then printf ' |'; else printf " %'d / %'d (%'d B) |" "$e" "$d" "$b"; fi
	done
	ce=$(awk -v k="bitwire-codec/Encode/$w" '$1 == k {print $2}' "$tmp/instr")
	cd=$(awk -v k="bitwire-codec/Decode/$w" '$1 == k {print $2}' "$tmp/instr")
	me=$(awk -v k="mus/Encode/$w" '$1 == k {print $2}' "$tmp/instr")
	md=$(awk -v k="mus/Decode/$w" '$1 == k {print $2}' "$tmp/instr")
	printf ' %.2f× / %.2f× |\n' "$(echo "$ce / $me" | bc -l)" "$(echo "$cd / $md" | bc -l)"
done
