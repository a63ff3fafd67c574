#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark: our rngtest against rng-tools' rngtest (Debian rng-tools5, /usr/bin/rngtest) on
# the same random file, alternating the two, and compare their verdicts.
#
# Usage: bench/rngtest.sh [-n RUNS] [-s MIB] [OUR-RNGTEST]
#   OUR-RNGTEST  our binary (default: build/plain/rngtest of this tree)
#   -n RUNS      runs of each program (default 3)
#   -s MIB       size of the random input in MiB (default 256)
# Installs rng-tools5 with apt-get when /usr/bin/rngtest is missing (needs root).
set -eu
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options 256 rngtest "$@"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
input=$tmp/random.bin
head -c $((size * 1024 * 1024)) /dev/urandom >"$input"
bytes=$(wc -c <"$input")
cat "$input" >/dev/null # into the page cache for both

# run PROGRAM STDERR-FILE: prints elapsed nanoseconds
run() {
	t0=$(date +%s%N)
	"$1" <"$input" 2>"$2" >/dev/null || true
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
mbs() { awk -v b="$bytes" -v ns="$1" 'BEGIN { printf "%.1f", b / 1e6 / (ns / 1e9) }'; }

echo "rngtest benchmark: $size MiB from /dev/urandom, $runs runs each, alternating"
echo "  ours: $ours"
echo "  ref:  $ref ($(ref_version))"
ratios=
i=1
while [ "$i" -le "$runs" ]; do
	ns_ours=$(run "$ours" "$tmp/ours.err")
	ns_ref=$(run "$ref" "$tmp/ref.err")
	r=$(awk -v a="$ns_ref" -v b="$ns_ours" 'BEGIN { printf "%.2f", a / b }')
	ratios="$ratios $r"
	printf '  run %d: ours %8s MB/s   rng-tools %8s MB/s   ratio %sx\n' "$i" \
		"$(mbs "$ns_ours")" "$(mbs "$ns_ref")" "$r"
	i=$((i + 1))
done
echo "  median ratio (ours faster by): $(median_of "$ratios")x"

# Verdicts of the last runs: successes, failures and per-test counts.
counts() { grep -E '^rngtest: (FIPS 140-2|bits received)' "$1"; }
counts "$tmp/ours.err" >"$tmp/ours.cnt"
counts "$tmp/ref.err" >"$tmp/ref.cnt"
if cmp -s "$tmp/ours.cnt" "$tmp/ref.cnt"; then
	echo "  verdicts: identical ($(grep -E 'successes|failures' "$tmp/ours.cnt" |
		sed 's/^rngtest: FIPS 140-2 //' | tr '\n' ' '))"
else
	echo "  verdicts: differ (expected: rng-tools5's Runs test miscounts runs and can corrupt its"
	echo "  Poker count, nhorman/rng-tools#105, fixed upstream in 2020; about 2 in 100000 blocks):"
	paste -d '|' "$tmp/ours.cnt" "$tmp/ref.cnt" | while IFS='|' read -r a b; do
		[ "$a" = "$b" ] && continue
		printf '    ours: %s\n    ref:  %s\n' "${a#rngtest: }" "${b#rngtest: }"
	done
fi
