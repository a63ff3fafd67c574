# Shared by the integration scripts that run the real rngd binary: paths, a temporary
# directory and the processes a test started (both cleaned up on exit), ok/FAIL/skip
# counters and what a case may need of this machine. Source it with the script's name:
#   . "$(dirname "$0")/lib.sh" NAME
# then end with `finish`: exit 1 if any case failed, 77 if all were skipped.
# shellcheck shell=bash
lib_name=$1
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
RNGD=$top_builddir/rngd
RNGTEST=$top_builddir/rngtest
T=$(mktemp -d "/tmp/rngd-$lib_name.XXXXXX")
# A cross build under qemu-user (scripts/cross, tests/emu-run sets RNGD_EMU, e.g.
# qemu-aarch64-static): rngd and rngtest run as plain "$RNGD_EMU prog" through two small
# wrappers (exec: the PID is the emulated program's); emulated() lets a case skip what
# emulation cannot give it, saying so.
emulated() { [ -n "${RNGD_EMU:-}" ]; }
if emulated; then
	for p in rngd rngtest; do
		printf '#!/bin/sh\nexec %s %s "$@"\n' "$RNGD_EMU" "$top_builddir/$p" >"$T/$p.emu"
		chmod +x "$T/$p.emu"
	done
	RNGD=$T/rngd.emu RNGTEST=$T/rngtest.emu
fi
pids=() # stopped by their own PID on exit
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
passed=0 failed=0 skipped=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
skip() { echo "skip: $1"; skipped=$((skipped + 1)); }
finish() {
	echo "$lib_name: $passed passed, $failed failed, $skipped skipped"
	[ $failed -eq 0 ] || exit 1
	[ $passed -eq 0 ] && exit 77
	exit 0
}
is_root() { [ "$(id -u)" = 0 ]; }
# Whether configure turned FEATURE on (HAVE_SYSTEMD, ENABLE_SOURCE_VIA, ...): config.h says.
built_with() { grep -q "^#define $1 1\$" "$top_builddir/config.h"; }
have_sys_admin() { # CAP_SYS_ADMIN (bit 21) in our effective set
	local eff
	eff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
	(((0x$eff >> 21) & 1))
}
# Under emulation the real /dev/hwrng is not read: the device is shared and rate-metered, and
# the cross stage leaves it to the native stages (hwrng_why says so in the skip lines).
hwrng_readable() {
	! emulated && [ -r /dev/hwrng ] && timeout 2 dd if=/dev/hwrng of=/dev/null bs=16 count=1 2>/dev/null
}
hwrng_why() {
	if emulated; then
		echo "not read under emulation ($RNGD_EMU): the shared device is left to the native tests"
	else
		echo "not present or not readable here"
	fi
}
# The real /dev/hwrng is rate-metered by the host and shared by every reader: scripts that
# read it take this lock first, so that `make -j check` runs them one after the other
# instead of letting them starve each other's timing (held until the script exits).
hwrng_lock() {
	emulated && return 0
	exec 8>"${TMPDIR:-/tmp}/rngd-test-hwrng.lock" && flock 8
}
# The scripts that change the machine's real hwrng in sysfs (kernel-hwrng*.sh) start with
# this: unless opted in (RNGD_TEST_REAL_SWITCH=1), as root with CAP_SYS_ADMIN, with a current
# backend whose rng_quality is not 0, it says why and exits 77. Otherwise it takes the hwrng
# lock; sets sys (the class directory), q (its rng_quality), orig, cur and sel (rng_quality,
# rng_current and rng_selected as found); and puts those back, with the owners and modes of
# /dev/hwrng and rng_quality, on every exit (hwrng_restore). RNGD becomes
# tests/rngd-root-test: rngd with the test hooks of root's steps, whose runtime directory (the
# state file) and root's directory are $T/run and $T/root, not /run's; sysfs is the real one.
real_hwrng_setup() {
	local why=
	sys=/sys/class/misc/hw_random q=/sys/class/misc/hw_random/rng_quality
	RNGD=$top_builddir/tests/rngd-root-test
	if [ "${RNGD_TEST_REAL_SWITCH:-}" != 1 ]; then
		why="set RNGD_TEST_REAL_SWITCH=1 to change the machine's rng_quality"
	elif ! is_root; then
		why="needs root to write $q"
	elif [ ! -c /dev/hwrng ] || [ ! -w "$q" ]; then
		why="no hwrng with rng_quality"
	elif ! have_sys_admin; then
		why="no CAP_SYS_ADMIN to feed the kernel"
	elif [ ! -x "$RNGD" ]; then
		why="tests/rngd-root-test not built"
	else
		hwrng_lock
		orig=$(cat "$q") && cur=$(cat "$sys"/rng_current) || exit 1
		sel=$(cat "$sys"/rng_selected 2>/dev/null || echo 1)
		[ "$cur" != none ] && [ "$orig" != 0 ] ||
			why="no current backend, or rng_quality is 0 already"
	fi
	if [ -n "$why" ]; then
		echo "$lib_name: skipped: $why"
		exit 77
	fi
	dev_mode=$(stat -c '%u:%g %a' /dev/hwrng) q_mode=$(stat -c '%u:%g %a' "$q")
	trap 'cleanup; hwrng_restore' EXIT
	trap 'exit 1' INT TERM HUP
	export RNGD_TEST_RUNTIME_DIR=$T/run RNGD_TEST_ROOT_DIR=$T/root
}
# rng_current and rng_selected as real_hwrng_setup found them (rng_selected 0: the kernel's
# own choice, made again by writing an empty line).
hwrng_restore_current() {
	[ "$(cat "$sys"/rng_current)" != "$cur" ] ||
		[ "$(cat "$sys"/rng_selected 2>/dev/null || echo 1)" != "$sel" ] || return 0
	if [ "$sel" = 0 ]; then echo "" >"$sys"/rng_current; else echo "$cur" >"$sys"/rng_current; fi
}
# Everything real_hwrng_setup found, put back.
hwrng_restore() {
	hwrng_restore_current
	[ "$(cat "$q")" = "$orig" ] || echo "$orig" >"$q"
	chown "${dev_mode% *}" /dev/hwrng && chmod "${dev_mode#* }" /dev/hwrng
	chown "${q_mode% *}" "$q" && chmod "${q_mode#* }" "$q"
}
# Whether rng_quality reads $1.
quality_is() { [ "$(cat "$q" 2>/dev/null)" = "$1" ]; }
# Stop the daemon $pid with signal $1 and wait for it; its exit code in rc.
stop() {
	kill "-$1" "$pid"
	wait "$pid"
	rc=$?
}
# Wait up to $1 seconds for the command after it to succeed (polls every 0.1 s).
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}
# Write file $1: a 4-byte seed and $2 random 2500-byte blocks, the same for the same $2 and
# $3 (default 1212; Python's random.Random($3 + $2)). The seeds the tests use give blocks
# that all pass FIPS 140-2.
make_random() {
	python3 - "$1" "$2" "${3:-1212}" <<'EOF'
import random, sys
path, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "wb") as f:
    f.write(random.Random(seed + n).randbytes(4 + 2500 * n))
EOF
}
# The default-on CPU sources, and no default sources at all, so that only what a test names
# runs.
NOCPU=(-x via -x rdseed -x rdrand -x rndr)
NOSRC=(-x hwrng "${NOCPU[@]}")
# Start rngd in the background with the arguments after the first four, its stderr in log
# $1, and wait up to $2 seconds for a line matching $3; sets pid (stopped on exit). When no
# such line comes, case $4 fails showing the log's start, and 1 is returned.
start_logged() {
	local log=$1 secs=$2 pattern=$3 what=$4
	shift 4
	: >"$log"
	"$RNGD" "$@" 2>"$log" &
	pid=$!
	pids+=("$pid")
	wait_until "$secs" grep -q "$pattern" "$log" && return 0
	fail "$what: no '$pattern': $(head -5 "$log")"
	return 1
}
