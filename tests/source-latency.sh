#!/bin/bash
# Smoke test of bench/source-latency: the report has seed 000's shape (emulated PadLock via
# bench/source-latency-emu, and a file source), and the exit codes are the documented ones.
# Tiny counts, so it takes well under a second. Exit 77 off x86 (after the portable checks).
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
TOOL=$top_builddir/bench/source-latency
EMU=$top_builddir/bench/source-latency-emu
T=$(mktemp -d /tmp/rngd-source-latency-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
failed=0
fail() { echo "FAIL: $1"; failed=1; }

# The report: a title line, then seed 000's eleven-line layout with these counts.
check_shape() { # name file count
	awk -v count="$3" '
	function num(line, prefix,   v) {
		if (index(line, prefix) != 1) return -1
		v = substr(line, length(prefix) + 1)
		return v ~ /^[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/ ? v + 0 : -1
	}
	{ l[NR] = $0 }
	END {
		if (NR != 11) { print "expected 11 lines, got " NR; exit 1 }
		if (l[1] !~ /, raw driver reads \(before the FIPS tests\):$/) { print "title: " l[1]; exit 1 }
		if (l[2] != "  Maximum throughput for 10240x" count " test:") { print "line 2: " l[2]; exit 1 }
		if (num(l[3], "    Kbits / sec: ") <= 0) { print "line 3: " l[3]; exit 1 }
		for (b = 0; b < 2; b++) {
			o = 4 + 4 * b
			size = b ? 10240 : 128
			if (l[o] != "  Entropy allocation times (usec) for block size: " size) {
				print "line " o ": " l[o]; exit 1
			}
			mn = num(l[o + 1], "    Min: "); mx = num(l[o + 2], "    Max: ")
			av = num(l[o + 3], "    Avg: ")
			if (mn < 0 || mx < 0 || av < 0 || mn > av || av > mx + 1) {
				print "times of block size " size ": " l[o + 1] " " l[o + 2] " " l[o + 3]
				exit 1
			}
		}
	}' "$2" || fail "$1: report shape (output in $2):
$(cat "$2")"
}

expect_rc() { # name want command...
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ] || fail "$name: exit $rc, want $want ($(cat "$T/err"))"
	[ "$want" = 0 ] || [ -s "$T/err" ] || fail "$name: no error message"
}

[ -x "$TOOL" ] || { echo "FAIL: $TOOL not built"; exit 1; }

# A file source: raw reads, no FIPS test, so even zeros are fine. 1 x 10240 + 2 x (128 +
# 10240) + the calibration reads (128 + 10240) fit in 64 KiB.
head -c 65536 /dev/zero >"$T/zero"
expect_rc "file" 0 "$TOOL" -O "file:t:path:$T/zero" --count 1 --samples 2 file:t
check_shape file "$T/out" 1
head -c 1000 /dev/zero >"$T/short"
expect_rc "file ends" 74 "$TOOL" -O "file:t:path:$T/short" --count 1 --samples 2 file:t
grep -q "end of file" "$T/err" || fail "file ends: message: $(cat "$T/err")"
expect_rc "unknown source" 2 "$TOOL" nosuch
expect_rc "no source" 2 "$TOOL"
expect_rc "bad option" 78 "$TOOL" -O file:t:path:relative file:t
expect_rc "missing file" 66 "$TOOL" -O "file:t:path:$T/nonexistent" file:t

case $(uname -m) in
x86_64 | i?86) ;;
*)
	[ $failed = 0 ] || exit 1
	echo "skip: the emulated PadLock (xstore under SIGILL) needs x86; this is $(uname -m)"
	exit 77
	;;
esac

if ! grep -q '^#define ENABLE_SOURCE_VIA 1$' "$top_builddir/config.h"; then
	[ $failed = 0 ] || exit 1
	echo "skip: the via source is compiled out (--disable-source-via)"
	exit 77
fi

[ -x "$EMU" ] || { echo "FAIL: $EMU not built"; exit 1; }
expect_rc "emulated via" 0 "$EMU" --count 2 --samples 3 via
check_shape "emulated via" "$T/out" 2
grep -q "^via (emulated PadLock" "$T/out" || fail "emulated via: title: $(head -n 1 "$T/out")"
expect_rc "emulated via, bad dc-bias" 78 "$EMU" -O via:dc-bias:9 via
# Without emulation the via source is unavailable on a non-VIA CPU, with the reason.
if ! grep -q CentaurHauls /proc/cpuinfo 2>/dev/null && ! grep -q Shanghai /proc/cpuinfo 2>/dev/null; then
	expect_rc "real via" 66 "$TOOL" via
	grep -q "via: not available: vendor" "$T/err" || fail "real via: message: $(cat "$T/err")"
fi

[ $failed = 0 ] && echo "ok: source-latency report shape and exit codes"
exit $failed
