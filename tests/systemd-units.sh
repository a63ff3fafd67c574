#!/bin/sh
# The unit files: `systemd-analyze verify` on each generated unit, rngd.service's optional
# environment file and $RNGD_ARGS, and the exposure score of rngd.service from
# `systemd-analyze security --offline=true` (must be at most 1.5).
# Needs the units built by make (systemd/*.service in the build tree).
set -u
builddir=${top_builddir:-.}
max=1.5

command -v systemd-analyze >/dev/null 2>&1 || {
	echo "SKIP: systemd-analyze not installed"
	exit 77
}
for u in rngd rngd-once; do
	[ -f "$builddir/systemd/$u.service" ] || {
		echo "FAIL: $builddir/systemd/$u.service not built"
		exit 1
	}
done

tmp=$(mktemp -d /tmp/rngd-test-units.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# verify checks that each Exec*= command exists: point them at the built daemon, or at a
# stub when the daemon is not built yet. Everything else in the unit is tested as installed.
exe="$builddir/rngd"
if [ -x "$exe" ]; then
	exe=$(cd "$(dirname "$exe")" && pwd)/rngd
else
	echo "note: $exe not built; ExecStart points at a stub"
	exe="$tmp/rngd"
	printf '#!/bin/sh\nexit 0\n' >"$exe"
	chmod 755 "$exe"
fi

status=0
for u in rngd rngd-once; do
	unit="$builddir/systemd/$u.service"
	if grep -n '@[a-z_]*@' "$unit"; then
		echo "FAIL: $u.service: unsubstituted @variable@"
		status=1
	fi
	sed -E "s#^(Exec[A-Za-z]*=[-+]*)[^ ]*/rngd( |\$)#\1$exe\2#" "$unit" >"$tmp/$u.service"
	# --man=no: the man pages are not installed in the build tree.
	if out=$(systemd-analyze verify --man=no "$tmp/$u.service" 2>&1) && [ -z "$out" ]; then
		echo "verify $u.service: ok"
	else
		echo "FAIL: systemd-analyze verify $u.service:"
		echo "$out"
		status=1
	fi
done

# rng-tools' way of passing arguments: an optional environment file's RNGD_ARGS.
unit="$builddir/systemd/rngd.service"
if grep -qx 'EnvironmentFile=-/.*' "$unit" && grep -q '^ExecStart=.*/rngd -f \$RNGD_ARGS$' "$unit"; then
	echo "rngd.service: $(grep '^EnvironmentFile=' "$unit"), ExecStart passes \$RNGD_ARGS: ok"
else
	echo "FAIL: rngd.service: no EnvironmentFile=-/PATH with \$RNGD_ARGS on ExecStart"
	status=1
fi

for u in rngd rngd-once; do
	out=$(systemd-analyze security --offline=true --no-pager "$tmp/$u.service" 2>&1)
	score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
	if [ -z "$score" ]; then
		echo "FAIL: no exposure score for $u.service:"
		printf '%s\n' "$out" | tail -5
		status=1
		continue
	fi
	echo "exposure $u.service: $score (limit $max)"
	if [ "$u" = rngd ] && ! awk -v s="$score" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
		printf '%s\n' "$out" | grep '✗'
		echo "FAIL: rngd.service exposure $score > $max"
		status=1
	fi
done
exit $status
