# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by bench/rngtest.sh and bench/pipeline.sh, which time one of our programs against
# rng-tools5's /usr/bin/rngtest, alternating the two. Sourced after `set -eu`:
#   . "$(dirname "$0")/lib.sh"
# shellcheck shell=sh
top=$(cd "$(dirname "$0")/.." && pwd)

# bench_options SIZE PROGRAM "$@": the script's options and binaries. Sets runs (-n, default
# 3), size (-s, default SIZE), ours (the argument after the options, default
# build/plain/PROGRAM of this tree, which must exist) and ref, rng-tools5's rngtest,
# installed with apt-get when missing (needs root). Any other option prints the script's
# header comment (from its third line) and exits 2.
# shellcheck disable=SC2034 # runs, size, ours and ref are the calling script's
bench_options() {
	size=$1
	ours=$top/build/plain/$2
	shift 2
	runs=3
	while getopts n:s:h opt; do
		case $opt in
		n) runs=$OPTARG ;;
		s) size=$OPTARG ;;
		*) sed -n '3,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 2 ;;
		esac
	done
	shift $((OPTIND - 1))
	ours=${1:-$ours}
	ref=/usr/bin/rngtest
	[ -x "$ours" ] || { echo "bench: $ours not found; build it first (./scripts/build plain)" >&2; exit 1; }
	if [ ! -x "$ref" ]; then
		echo "bench: installing rng-tools5 for $ref" >&2
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -q \
			rng-tools5 >/dev/null || { echo "bench: cannot install rng-tools5" >&2; exit 1; }
	fi
}

# The package and version of $ref, for the report.
ref_version() { dpkg-query -W -f '${Package} ${Version}' rng-tools5 2>/dev/null || echo unknown; }

# The median of the numbers in $1 (separated by spaces).
median_of() {
	echo "$1" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
