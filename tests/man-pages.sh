#!/bin/bash
# The manual pages as installed: each renders with no warning from groff (-ww: all of them)
# nor from man -l, holds no control character (a "\f" once became a form feed), and names
# the configured paths (no @WORD@ left, the defaults the daemon uses).
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh" man-pages

pages=("$top_builddir/man/rngd.8" "$top_builddir/man/rngd.conf.5" "$top_srcdir/man/rngtest.1")
if ! command -v groff >/dev/null; then
	skip "groff is not installed (groff-base)"
	finish
fi
for p in "${pages[@]}"; do
	n=$(basename "$p")
	if [ ! -f "$p" ]; then
		fail "$n: not built ($p)"
		continue
	fi
	# -ww every warning, -z no output, -b a backtrace with each; the terminal's device; the
	# preprocessors the page's first line asks for ('\" t: tbl), as man runs them.
	pre=$(sed -n "1s/^'\\\\\" \([a-z]*\).*/\1/p" "$p")
	w=$(LC_ALL=C.UTF-8 groff -ww -b -z -man ${pre:+-$pre} -Tutf8 "$p" 2>&1)
	[ -z "$w" ] && ok "$n: groff -ww renders it without a warning" ||
		fail "$n: groff -ww: $(echo "$w" | head -5)"
	if command -v man >/dev/null; then
		w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$p" 2>&1 >/dev/null)
		[ -z "$w" ] && ok "$n: man -l renders it without a warning" ||
			fail "$n: man -l: $(echo "$w" | head -5)"
	else
		skip "$n: man is not installed (man-db)"
	fi
	c=$(LC_ALL=C grep -nP '[\x00-\x08\x0b-\x1f\x7f]' "$p" | head -3)
	[ -z "$c" ] && ok "$n: no control characters" || fail "$n: control characters: $(echo "$c" | cat -A)"
	a=$(grep -nE '@[A-Za-z_]+@' "$p" | head -3)
	[ -z "$a" ] && ok "$n: every @PATH@ substituted" || fail "$n: left unsubstituted: $a"
done

# The paths the pages give are the daemon's own defaults (configure --runstatedir,
# --sysconfdir), as rngd --help / the built binary see them.
rundir=$(sed -n 's/^runstatedir = //p' "$top_builddir/Makefile")
prefix=$(sed -n 's/^prefix = //p' "$top_builddir/Makefile")
rundir=${rundir//\$\{localstatedir\}/$prefix/var}
rundir=${rundir//\$\{prefix\}/$prefix}
render() { LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$1" 2>/dev/null | sed 's/\xe2\x80\x90/-/g'; }
if command -v man >/dev/null && [ -n "$rundir" ]; then
	for p in "$top_builddir/man/rngd.8" "$top_builddir/man/rngd.conf.5"; do
		n=$(basename "$p")
		if render "$p" | grep -q "$rundir/rngd/status.json"; then
			ok "$n: names the configured status file $rundir/rngd/status.json"
		else
			fail "$n: does not name $rundir/rngd/status.json"
		fi
	done
	# The binary's default: --status without a file reads the configured path.
	out=$("$RNGD" --status 2>&1 </dev/null)
	case $out in
	*/rngd/status.json*)
		echo "$out" | grep -q "$rundir/rngd/status.json" &&
			ok "rngd --status reads the default the pages give ($rundir/rngd/status.json)" ||
			fail "rngd --status's default differs from the pages': $out"
		;;
	*) skip "rngd --status names no path to compare: $(echo "$out" | head -1)" ;;
	esac
fi
finish
