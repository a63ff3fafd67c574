#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Benchmark: FIPS-tested throughput of a pipeline, a FIFO fed from a file in memory through
#   rngd -f -x rdseed -x rdrand -r FIFO -o /dev/stdout | (reader)
# against rng-tools' FIPS speed (Debian rng-tools5's rngtest -p on the same file), alternating
# the two, RUNS times each. The rngd run ends when its reader has taken MB - 2 MB (so that the
# blocks that failed do not leave it waiting for more).
#
# Usage: bench/pipeline.sh [-n RUNS] [-s MB] [OUR-RNGD]
#   OUR-RNGD  our binary (default: build/plain/rngd of this tree)
#   -n RUNS   runs of each (default 3)
#   -s MB     input size in 10^6 bytes (default 300)
# RNGD_FIPS_ENGINE (rngd(8)) passes through, e.g. RNGD_FIPS_ENGINE=avx2. Installs rng-tools5
# with apt-get when /usr/bin/rngtest is missing (needs root).
set -eu
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_options 300 rngd "$@"

dir=/dev/shm
[ -w "$dir" ] || dir=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$dir/rngd-pipeline.XXXXXX")
feeder=
trap '[ -n "$feeder" ] && kill "$feeder" 2>/dev/null; rm -rf "$tmp"' EXIT
input=$tmp/random.bin
head -c $((size * 1000000)) /dev/urandom >"$input"
out=$((size * 1000000 - 2000000))

now() { date +%s%N; }
rate() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.1f", b / 1e6 / (ns / 1e9) }'; }

echo "pipeline benchmark: $size MB through a FIFO, $runs runs each, alternating;" \
	"host load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  ours: $ours -f -x rdseed -x rdrand -r FIFO -o /dev/stdout (engine ${RNGD_FIPS_ENGINE:-auto})"
echo "  ref:  $ref -p <file ($(ref_version))"
ratios=
i=1
while [ "$i" -le "$runs" ]; do
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo"
	cat "$input" >"$tmp/fifo" &
	feeder=$!
	t0=$(now)
	"$ours" -f -q -x rdseed -x rdrand -r "$tmp/fifo" -o /dev/stdout 2>/dev/null |
		head -c "$out" >/dev/null
	t1=$(now)
	kill "$feeder" 2>/dev/null || true
	wait "$feeder" 2>/dev/null || true
	feeder=
	t2=$(now)
	"$ref" -p <"$input" >/dev/null 2>&1 || true
	t3=$(now)
	o=$(rate "$out" $((t1 - t0)))
	p=$(rate $((size * 1000000)) $((t3 - t2)))
	r=$(awk -v a="$o" -v b="$p" 'BEGIN { printf "%.2f", a / b }')
	ratios="$ratios $r"
	printf '  run %d: rngd %8s MB/s   rng-tools5 rngtest -p %6s MB/s   ratio %sx\n' "$i" "$o" "$p" "$r"
	i=$((i + 1))
done
echo "  median ratio (rngd / rng-tools' FIPS speed): $(median_of "$ratios")x"
