#!/bin/bash
# Seed 000's throughput and latency figures, measured here (see bench/README.md,
# "source-latency"): the real /dev/hwrng with small counts, then the via source under the
# xstore emulator with seed 000's full 10240x1024 test when it fits in the time budget
# (else the tool reduces the amounts and says so), once with one xstore per 8 bytes (the
# default) and once with rep xstore. Builds nothing.
#
# usage: bench/source-latency.sh [BUILDDIR]     (default build/plain)
# environment: HWRNG_COUNT, HWRNG_SAMPLES (default 4 and 4: about 10 s at 9.6 kB/s),
#              EMU_BUDGET (seconds per emulated run, default 60)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build/plain}
TOOL=$build/bench/source-latency
EMU=$build/bench/source-latency-emu
for t in "$TOOL" "$EMU"; do
	if [ ! -x "$t" ]; then
		echo "source-latency.sh: $t is not built (./scripts/build plain)" >&2
		exit 1
	fi
done

echo "== hwrng: the real /dev/hwrng ($(cat /sys/class/misc/hw_random/rng_current 2>/dev/null || echo 'no sysfs'))"
if [ -r /dev/hwrng ] && timeout 2 dd if=/dev/hwrng of=/dev/null bs=16 count=1 2>/dev/null; then
	"$TOOL" --count "${HWRNG_COUNT:-4}" --samples "${HWRNG_SAMPLES:-4}" hwrng
	echo "(exit $?)"
else
	echo "skipped: /dev/hwrng is missing, not readable by $(id -un) or gives nothing in 2 s"
fi

echo
echo "== via: emulated PadLock, one xstore per 8 bytes (the default)"
"$EMU" --budget "${EMU_BUDGET:-60}" via 2>&1
echo "(exit $?)"

echo
echo "== via: emulated PadLock, rep xstore (rep=yes)"
"$EMU" --budget "${EMU_BUDGET:-60}" -O via:rep:yes via 2>&1
echo "(exit $?)"
