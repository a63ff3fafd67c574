#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# random.trust_cpu=off on the kernel command line: the CPU sources (rdseed, rdrand, rndr)
# are mixed in but credited 0 by default, -l and the log say why, and a configured quality
# still wins. tests/rngd-cmdline is the daemon with the kernel command line taken from
# $RNGD_TEST_CMDLINE (tests/cmdline_env.c) instead of /proc/cmdline; the real instructions
# run. Cases skip, saying so, where this machine has none of the CPU sources. The daemon
# case feeds the real kernel (credit 0) and needs CAP_SYS_ADMIN; no /dev/hwrng, no sysfs.
. "$(dirname "$0")/lib.sh" cpu-trust
TOOL=$top_builddir/tests/rngd-cmdline
# A cross build under qemu-user (RNGD_EMU, tests/emu-run): the tool runs through it too.
if [ -n "${RNGD_EMU:-}" ]; then
	printf '#!/bin/sh\nexec %s %s "$@"\n' "$RNGD_EMU" "$TOOL" >"$T/rngd-cmdline.emu"
	chmod +x "$T/rngd-cmdline.emu"
	TOOL=$T/rngd-cmdline.emu
fi
CPU_SOURCES=(rdseed rdrand rndr)
OFF="quiet random.trust_cpu=off ro"

list() { # cmdline, rngd arguments...: -l of the tool into $T/list
	local cmdline=$1
	shift
	RNGD_TEST_CMDLINE=$cmdline "$TOOL" -l -x hwrng -x via "$@" >"$T/list" 2>&1
}
line_of() { grep "^$1: " "$T/list"; }

# The shipped daemon reads /proc/cmdline only: no trace of the test's variable in it.
if grep -q RNGD_TEST_CMDLINE "$RNGD"; then
	fail "the shipped rngd mentions RNGD_TEST_CMDLINE"
else
	ok "the shipped rngd has no test seam for the command line (reads $(grep -c . /proc/cmdline 2>/dev/null) line of /proc/cmdline)"
fi

list "$OFF"
avail=() known=()
for s in "${CPU_SOURCES[@]}"; do
	case $(line_of "$s") in
	"$s: available, "*) avail+=("$s") known+=("$s") ;;
	"$s: "*) known+=("$s") ;;
	esac
done
# -O NAME says it for each CPU driver of this build, whatever this CPU has.
for s in "${known[@]}"; do
	"$TOOL" -O "$s" >"$T/opt" 2>&1
	if grep -q "default quality [0-9]*/1024 (0 with random.trust_cpu=off on the kernel command line)" "$T/opt"; then
		ok "-O $s: $(grep 'default quality' "$T/opt" | sed 's/^ *//')"
	else
		fail "-O $s: $(head -2 "$T/opt")"
	fi
done

if [ ${#avail[@]} -eq 0 ]; then
	skip "none of ${CPU_SOURCES[*]} is available here: $(grep -E "^(${CPU_SOURCES[*]// /|}): " "$T/list" | tr '\n' ';')"
	finish
fi

for s in "${avail[@]}"; do
	line=$(line_of "$s")
	case $line in
	*[\(\ ]"random.trust_cpu=off on the kernel command line: mixed in, not credited, quality 0)")
		ok "-l, random.trust_cpu=off: $line" ;;
	*) fail "-l, random.trust_cpu=off: $line" ;;
	esac

	# Each spelling the kernel reads as false; the last valid setting wins.
	for c in "random.trust_cpu=0" "random.trust-cpu=n" "random.trust_cpu=\"no\"" \
		"random.trust_cpu=1 random.trust_cpu=false" "random.trust_cpu=0 random.trust_cpu=bogus"; do
		list "$c"
		case $(line_of "$s") in
		*"not credited, quality 0)") ok "-l, '$c': $s credited 0" ;;
		*) fail "-l, '$c': $(line_of "$s")" ;;
		esac
	done
	for c in "random.trust_cpu=on" "random.trust_cpu=0 random.trust_cpu=y" "" \
		"quiet -- random.trust_cpu=0"; do
		list "$c"
		line=$(line_of "$s")
		case $line in
		*trust_cpu* | *"quality 0)") fail "-l, '$c': $line" ;;
		*) ok "-l, '$c': $line" ;;
		esac
	done

	# A configured quality wins, and -l says so.
	printf '[source %s]\nquality = 7\n' "$s" >"$T/q.conf"
	list "$OFF" -c "$T/q.conf"
	line=$(line_of "$s")
	case $line in
	*[\(\ ]"random.trust_cpu=off on the kernel command line: configured quality wins, quality 7)")
		ok "-l, random.trust_cpu=off, quality = 7: $line" ;;
	*) fail "-l, random.trust_cpu=off, quality = 7: $line" ;;
	esac
done

# The daemon: the log says why, and what it feeds is credited 0.
s=${avail[0]}
if ! is_root || ! have_sys_admin; then
	skip "the daemon case feeds the kernel: needs root with CAP_SYS_ADMIN"
	finish
fi
if [ -n "${RNGD_EMU:-}" ]; then
	skip "the daemon case feeds the kernel, which a program under $RNGD_EMU cannot (RNDADDENTROPY)"
	finish
fi
# The other CPU sources are turned off by the configuration, in rngd's names: on the command
# line -x rdrand is rng-tools' rdrand, which is both rdseed and rdrand (rngd(8)).
: >"$T/only.conf"
for o in "${known[@]}"; do
	[ "$o" = "$s" ] || printf '[source %s]\nenabled = no\n' "$o" >>"$T/only.conf"
done
export RNGD_TEST_CMDLINE=$OFF
RNGD=$TOOL
if start_logged "$T/run.log" 30 "$s: random.trust_cpu=off on the kernel command line: mixed in, credited 0" \
	"daemon, random.trust_cpu=off" -f -c "$T/only.conf" -x hwrng -x via \
	--kernel-hwrng=leave -R 1 -O rngd:pid-file: -O "rngd:status-file:$T/st.json" \
	-O rngd:status-interval:1; then
	ok "log: $(grep -m1 'random.trust_cpu' "$T/run.log")"
	fed() {
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["sources"] if x["name"] == sys.argv[2]][0]
print(s.get("bytes_fed", 0), s.get("bits_credited", -1))' "$T/st.json" "$s" 2>/dev/null
	}
	feeds() { set -- $(fed); [ "${1:-0}" -ge 128 ]; }
	if wait_until 30 feeds; then
		read -r bytes bits <<<"$(fed)"
		if [ "$bits" = 0 ]; then
			ok "daemon, random.trust_cpu=off: $s fed $bytes bytes to the kernel, $bits bits credited"
		else
			fail "daemon, random.trust_cpu=off: $s fed $bytes bytes, $bits bits credited"
		fi
	else
		fail "daemon: $s fed nothing: $(head -c 400 "$T/st.json"); $(tail -3 "$T/run.log")"
	fi
	kill -TERM "$pid"
	wait "$pid"
fi
finish
