#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The rndr source's real instructions, in the arm64 build run under qemu-user: with
# -cpu max (FEAT_RNG: RNDR and RNDRRS, HWCAP2_RNG) -l says it is available and uses RNDRRS,
# and a daemon with rndr alone writes tested blocks to -o that rngtest passes; with
# -cpu cortex-a72 (no FEAT_RNG) -l says why it is not available. Where the arm64 build has
# its test tools, random.trust_cpu=off (tests/rngd-cmdline) makes it credit 0. Runs each
# program as plain "qemu-aarch64-static PROG" (the multiarch loader and libraries, no -L,
# no binfmt handler). The arm64 build: $RNGD_ARM64_BUILD, else this build when it is
# arm64, else build/cross-arm64 (scripts/cross); without one, or without qemu, it skips.
. "$(dirname "$0")/lib.sh" rndr-qemu

# e_machine of an ELF file: 183 (0xb7) is AArch64 (little-endian, at offset 18).
is_arm64() { [ -f "$1" ] && [ "$(od -An -tx1 -j18 -N2 "$1" 2>/dev/null | tr -d ' \n')" = b700 ]; }

QEMU=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
if [ -z "$QEMU" ]; then
	skip "no qemu-aarch64-static (qemu-user-static): cannot run the arm64 build"
	finish
fi
build=
for d in "${RNGD_ARM64_BUILD:-}" "$top_builddir" "$top_srcdir/build/cross-arm64"; do
	if [ -n "$d" ] && is_arm64 "$d/rngd"; then
		build=$d
		break
	fi
done
if [ -z "$build" ]; then
	skip "no arm64 build of rngd (RNGD_ARM64_BUILD, build/cross-arm64: scripts/cross arm64)"
	finish
fi
ARM_RNGD=$build/rngd
if ! grep -q "^#define ENABLE_SOURCE_RNDR 1\$" "$build/config.h"; then
	"$QEMU" "$ARM_RNGD" -l -x hwrng >"$T/list" 2>&1
	case $(grep '^rndr: ' "$T/list") in
	*"not compiled in"*) ok "-l, rndr compiled out: $(grep '^rndr: ' "$T/list")" ;;
	*) fail "-l, rndr compiled out: $(grep '^rndr: ' "$T/list")" ;;
	esac
	finish
fi
# rngtest: this machine's own build when it is native, else the arm64 one under qemu.
if [ -x "$RNGTEST" ] && ! is_arm64 "$RNGTEST"; then
	rngtest() { "$RNGTEST" "$@"; }
else
	rngtest() { "$QEMU" "$build/rngtest" "$@"; }
fi

# -cpu cortex-a72: no FEAT_RNG.
"$QEMU" -cpu cortex-a72 "$ARM_RNGD" -l -x hwrng >"$T/a72" 2>&1
line=$(grep '^rndr: ' "$T/a72")
case $line in
"rndr: not available: no FEAT_RNG on this CPU (AT_HWCAP2 lacks HWCAP2_RNG"*)
	ok "-cpu cortex-a72: $line" ;;
*) fail "-cpu cortex-a72: $line" ;;
esac

# -cpu max: FEAT_RNG, RNDRRS preferred.
"$QEMU" -cpu max "$ARM_RNGD" -l -x hwrng >"$T/max" 2>&1
line=$(grep '^rndr: ' "$T/max")
case $line in
"rndr: available, enabled (RNDRRS, quality 256)") ok "-cpu max: $line" ;;
*"random.trust_cpu"*) ok "-cpu max (this kernel distrusts the CPU): $line" ;;
*) fail "-cpu max: $line" ;;
esac
printf '[source rndr]\ninstruction = rndr\n' >"$T/rndr.conf"
"$QEMU" -cpu max "$ARM_RNGD" -l -x hwrng -c "$T/rndr.conf" >"$T/max-rndr" 2>&1
line=$(grep '^rndr: ' "$T/max-rndr")
case $line in
"rndr: available, enabled (RNDR, as configured, quality 2)" | *"random.trust_cpu"*)
	ok "-cpu max, instruction = rndr: $line" ;;
*) fail "-cpu max, instruction = rndr: $line" ;;
esac

# -cpu max: rndr alone feeds -o; everything written is tested blocks, which rngtest passes.
want=$((2500 * 40))
out=$T/rndr.out
"$QEMU" -cpu max "$ARM_RNGD" -f -x hwrng -x via -x rdseed -x rdrand -O rngd:pid-file: \
	-O rngd:status-file: -o "$out" 2>"$T/run.log" &
pid=$!
pids+=("$pid")
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
if wait_until 60 eval '[ "$(size_of "$out")" -ge $want ]'; then
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	size=$(size_of "$out")
	# After a stand-in seed (-o gets no seed): rngtest tests the daemon's own blocks, and
	# every one passes. Seeded with the output's head, it tested blocks shifted by 4 bytes,
	# random ones (p ~ 1/1250 each; 4 failures allowed, of 40 blocks or of thousands).
	{ printf 'XXXX'; head -c $((size / 2500 * 2500)) "$out"; } | rngtest >/dev/null 2>"$T/rngtest"
	good=$(sed -n 's/^rngtest: FIPS 140-2 successes: //p' "$T/rngtest")
	bad=$(sed -n 's/^rngtest: FIPS 140-2 failures: //p' "$T/rngtest")
	blocks=$((size / 2500))
	if [ $rc -eq 0 ] && [ $((size % 2500)) -eq 0 ] && [ "${good:-0}" = "$blocks" ] &&
		[ "${bad:-9}" = 0 ]; then
		ok "-cpu max: rndr fed -o $size bytes ($blocks tested blocks), exit 0 on TERM; rngtest: $good passed, $bad failed"
	else
		fail "-cpu max, -o: exit $rc, $size bytes, rngtest ${good:-?} passed ${bad:-?} failed: $(head -5 "$T/run.log")"
	fi
else
	fail "-cpu max: rndr wrote $(size_of "$out") bytes to -o in 60 s: $(head -5 "$T/run.log")"
fi
grep -q "rndr: running" "$T/run.log" ||
	fail "-cpu max: no 'rndr: running' in the log: $(head -5 "$T/run.log")"

# random.trust_cpu=off: the arm64 build's rngd-cmdline (its make check builds it).
if is_arm64 "$build/tests/rngd-cmdline"; then
	line=$(RNGD_TEST_CMDLINE="quiet random.trust_cpu=off" "$QEMU" -cpu max \
		"$build/tests/rngd-cmdline" -l -x hwrng 2>&1 | grep '^rndr: ')
	case $line in
	"rndr: available, enabled (RNDRRS, random.trust_cpu=off on the kernel command line: mixed in, not credited, quality 0)")
		ok "-cpu max, random.trust_cpu=off: $line" ;;
	*) fail "-cpu max, random.trust_cpu=off: $line" ;;
	esac
else
	skip "random.trust_cpu=off under qemu: no $build/tests/rngd-cmdline (make check there builds it)"
fi
finish
