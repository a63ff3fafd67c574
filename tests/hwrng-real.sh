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
exit 0
