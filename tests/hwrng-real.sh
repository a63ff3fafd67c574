#!/bin/sh
# Switch this machine's hwrng backend to "none" under the hwrng driver and back
# (kernel-interfaces.md §2.4): reads give ENODEV, a re-open says why, and the source works
# again once the backend is back. Opt-in (RNGD_TEST_REAL_SWITCH=1): for a moment every
# other reader of /dev/hwrng, and the kernel's own hwrng thread, get nothing. The original
# rng_current (or the kernel's automatic choice) is restored on every exit path.
sys=/sys/class/misc/hw_random

skip() {
	echo "hwrng-real: skipped: $*"
	exit 77
}

[ "${RNGD_TEST_REAL_SWITCH:-}" = 1 ] ||
	skip "set RNGD_TEST_REAL_SWITCH=1 to switch the machine's hwrng backend (disturbs other readers briefly)"
[ "$(id -u)" = 0 ] || skip "needs root to write $sys/rng_current"
[ -c /dev/hwrng ] && [ -r /dev/hwrng ] || skip "no readable /dev/hwrng"
[ -w "$sys/rng_current" ] || skip "$sys/rng_current is not writable"
grep -qw none "$sys/rng_available" || skip "this kernel cannot select 'none' (needs 6.19 or 6.18.y)"
# Other suites' readers of /dev/hwrng (tests/lib.sh hwrng_lock) wait while the backend is away.
exec 8>"${TMPDIR:-/tmp}/rngd-test-hwrng.lock" && flock 8
cur=$(cat "$sys/rng_current") || exit 1
sel=$(cat "$sys/rng_selected" 2>/dev/null || echo 1)
[ "$cur" != none ] || skip "no current hwrng backend"
bin=${top_builddir:-.}/tests/test_hwrng
[ -x "$bin" ] || { echo "hwrng-real: $bin not built"; exit 1; }

restore() {
	if [ "$sel" = 0 ]; then
		echo "" >"$sys/rng_current"
	else
		echo "$cur" >"$sys/rng_current"
	fi
}
trap 'rc=$?; restore; exit $rc' EXIT
trap 'exit 1' INT TERM HUP

RNGD_TEST_HWRNG_SWITCH_NOW=1 "$bin" || exit 1
restore
now=$(cat "$sys/rng_current")
[ "$now" = "$cur" ] || { echo "hwrng-real: rng_current is '$now', was '$cur'"; exit 1; }
echo "hwrng-real: driver: ENODEV while the backend is none, works again after"

# The daemon over the same switch: the hwrng source waits when its backend goes away,
# logs that once, and recovers by itself (within a second) when the backend is back.
rngd=${top_builddir:-.}/rngd
log=$(mktemp /tmp/rngd-hwrng-real.XXXXXX)
"$rngd" -f -t -x via -x rdseed -x rdrand -x rndr 2>"$log" &
pid=$!
trap 'rc=$?; kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; restore; rm -f "$log"; exit $rc' EXIT
wait_for() { # pattern, seconds
	i=0
	while ! grep -q "$1" "$log"; do
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}
wait_for "hwrng: running" 30 || { echo "hwrng-real: rngd never ran:"; cat "$log"; exit 1; }
echo none >"$sys/rng_current"
wait_for "hwrng: waiting" 30 || { echo "hwrng-real: no wait logged after the switch:"; cat "$log"; exit 1; }
sleep 1.5
restore
wait_for "hwrng: recovered" 30 || { echo "hwrng-real: rngd did not recover:"; cat "$log"; exit 1; }
kill -TERM $pid
wait $pid
rc=$?
failed=$(grep -c "hwrng: waiting" "$log")
[ "$rc" -eq 0 ] || { echo "hwrng-real: rngd exited $rc"; exit 1; }
[ "$failed" -eq 1 ] || { echo "hwrng-real: the failure was logged $failed times:"; cat "$log"; exit 1; }
echo "hwrng-real: daemon: $(grep "hwrng: waiting" "$log"); then $(grep "hwrng: recovered" "$log")"
exit 0
