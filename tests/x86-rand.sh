#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The rdseed and rdrand sources with the real instructions: -l says what this CPU has and
# which one is on by default; a megabyte of each through --dump passes rngtest; and, with
# only the CPUID flag faked (tests/rngd-no-rdseed hides RDSEED), rdrand becomes a default
# source and its real instruction runs. Cases skip, saying so, where this CPU (a CI machine,
# another architecture) lacks an instruction or the sources are compiled out. No /dev/hwrng.
. "$(dirname "$0")/lib.sh" x86-rand
NORDSEED=$top_builddir/tests/rngd-no-rdseed

# The kernel's flag (the sources need it as well as CPUID).
cpu_has() { grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw "$1"; }

if [ "$(uname -m)" != x86_64 ]; then
	echo "SKIP: not x86-64 ($(uname -m)): rdseed and rdrand are stubs here"
	exit 77
fi

"$RNGD" -l -x hwrng >"$T/list" 2>&1
for s in rdseed rdrand; do
	line=$(grep "^$s: " "$T/list")
	if ! built_with "ENABLE_SOURCE_${s^^}"; then
		case $line in
		*"not compiled in"*) ok "-l: $line" ;;
		*) fail "-l, $s compiled out: $line" ;;
		esac
		continue
	fi
	if ! cpu_has "$s"; then
		case $line in
		"$s: not available: "*) ok "-l without $s: $line" ;;
		*) fail "-l without $s: $line" ;;
		esac
		skip "this CPU has no ${s^^} (or the kernel disabled it): no real $s test"
		continue
	fi
	# Which is on by default: rdseed where present, rdrand only where RDSEED is not.
	if [ $s = rdrand ] && cpu_has rdseed && built_with ENABLE_SOURCE_RDSEED; then
		want="$s: available, disabled (off by default where rdseed is available"
	else
		want="$s: available, enabled"
	fi
	case $line in
	"$want"*) ok "-l: $line" ;;
	*) fail "-l: want '$want...', got '$line'" ;;
	esac

	# A megabyte of tested output (400 blocks) through rngtest, after a stand-in seed: --dump
	# writes no seed, and rngtest seeded with the output's head would test blocks shifted by 4
	# bytes, random ones (p ~ 1/1250 each: 5 failures of 399 or more, 2e-5 a source). So
	# rngtest tests the daemon's own blocks, and every one passes.
	"$RNGD" --dump "$s" --dump-bytes 1000000 2>"$T/$s.err" >"$T/$s.bin"
	rc=$?
	size=$(stat -c %s "$T/$s.bin")
	{ printf 'XXXX'; cat "$T/$s.bin"; } | "$RNGTEST" >/dev/null 2>"$T/$s.rngtest"
	good=$(sed -n 's/^rngtest: FIPS 140-2 successes: //p' "$T/$s.rngtest")
	bad=$(sed -n 's/^rngtest: FIPS 140-2 failures: //p' "$T/$s.rngtest")
	if [ $rc -eq 0 ] && [ "$size" = 1000000 ] && [ "${good:-0}" = 400 ] &&
		[ "${bad:-9}" = 0 ]; then
		ok "--dump $s: 1 MB, rngtest: $good blocks passed, $bad failed"
	else
		fail "--dump $s: exit $rc, $size bytes, rngtest: ${good:-?} passed," \
			"${bad:-?} failed: $(head -3 "$T/$s.err")"
	fi
done

# The CF=0 and stuck-output counters are in the status file (and the statistics).
if built_with ENABLE_SOURCE_RDSEED && cpu_has rdseed; then
	if start_logged "$T/st.log" 30 "rdseed: running" "rdseed, status file" -f -t -x hwrng \
		-x via -O "rngd:status-file:$T/st.json" -O rngd:status-interval:1; then
		counters() {
			python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
c = [s.get("counters", {}) for s in d["sources"] if s["name"] == "rdseed"][0]
print(" ".join("%s=%d" % kv for kv in sorted(c.items())))' "$T/st.json" 2>/dev/null
		}
		if wait_until 30 eval 'counters | grep -q "stuck-repeat="'; then
			ok "rdseed counters in the status file: $(counters)"
		else
			fail "rdseed counters not in the status file: $(head -c 300 "$T/st.json")"
		fi
		kill -TERM "$pid"
		wait "$pid"
	fi
fi

# Only the flag faked: RDSEED hidden from CPUID, the real RDRAND runs as a default source.
if ! built_with ENABLE_SOURCE_RDRAND || ! cpu_has rdrand; then
	skip "no usable RDRAND here: no test of rdrand as the default"
elif [ ! -x "$NORDSEED" ]; then
	fail "$NORDSEED not built"
else
	"$NORDSEED" -l -x hwrng >"$T/list2" 2>&1
	if grep -q "^rdseed: not available: .*no RDSEED on this CPU" "$T/list2" &&
		grep -q "^rdrand: available, enabled" "$T/list2"; then
		ok "RDSEED hidden: -l: $(grep -E '^rd(seed|rand):' "$T/list2" | tr '\n' ';')"
	else
		fail "RDSEED hidden: -l: $(tr '\n' ';' <"$T/list2")"
	fi
	if RNGD=$NORDSEED start_logged "$T/nord.log" 30 "test: " "RDSEED hidden, test mode" \
		-f -t -x hwrng -x via -O rngd:status-file:; then
		if grep -q "started: 1 source(s)" "$T/nord.log" &&
			grep -q "rdrand: running" "$T/nord.log"; then
			ok "RDSEED hidden: rdrand runs by default: $(grep -m1 'test: ' "$T/nord.log")"
		else
			fail "RDSEED hidden: $(head -4 "$T/nord.log")"
		fi
		kill -TERM "$pid"
		wait "$pid"
	fi
fi
finish
