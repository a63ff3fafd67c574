#!/bin/sh
# The Debian packages (scripts/package, build/deb) checked by the tools Debian itself uses:
#  1. lintian --fail-on error,warning on the .changes (the source package and both binary
#     packages); overrides live in debian/*lintian-overrides, each with its reason;
#  2. piuparts in a Debian 12 chroot: install and purge, then install, upgrade and purge,
#     with no leftover file and no failed maintainer script. Its base tarball is the VM test's
#     cached bookworm root (tests/vm/image.sh, build/vm-image-bookworm), so nothing is fetched
#     twice. The upgrade comes from the same build repacked with a lower version (VERSION~0),
#     in a local repository the chroot sees.
# Prints each tool's last line and "deb-checks: N passed, N failed, N skipped".
# Usage: tests/deb-checks.sh   (after scripts/package; as root for piuparts)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
deb=$top/build/deb
work=$top/build/piuparts
pass=0 fail=0 skip=0
result() { # PASS|FAIL|SKIP what
	echo "deb-checks: $1 $2"
	case $1 in PASS) pass=$((pass + 1)) ;; FAIL) fail=$((fail + 1)) ;; *) skip=$((skip + 1)) ;; esac
}
changes=$(ls "$deb"/rngd_*.changes 2>/dev/null | head -1)
[ -n "$changes" ] || {
	echo "deb-checks: no build/deb/rngd_*.changes: run scripts/package first"
	echo "deb-checks: 0 passed, 1 failed, 0 skipped"
	exit 1
}

# 1. lintian, as an unprivileged user where we are root (it says it should not run as root).
if command -v lintian >/dev/null; then
	as_user=
	[ "$(id -u)" = 0 ] && as_user="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	$as_user env HOME=/tmp lintian --fail-on error,warning --display-info --display-experimental \
		"$changes" >"$deb/lintian.log" 2>&1
	rc=$?
	sed 's/^/  lintian | /' "$deb/lintian.log"
	echo "  lintian | $(grep -c '^E:' "$deb/lintian.log") errors," \
		"$(grep -c '^W:' "$deb/lintian.log") warnings, $(grep -c '^I:' "$deb/lintian.log") info," \
		"$(grep -c '^X:' "$deb/lintian.log") experimental on ${changes##*/} (exit $rc)"
	if [ $rc = 0 ]; then result PASS "lintian --fail-on error,warning"; else result FAIL lintian; fi
else
	result SKIP "lintian: not installed"
fi

# 2. piuparts.
if [ "$(id -u)" != 0 ]; then
	result SKIP "piuparts: needs root"
elif ! command -v piuparts >/dev/null; then
	result SKIP "piuparts: not installed"
elif ! "$top/tests/vm/image.sh" --suite bookworm --download rng-tools5 \
	"$top/build/vm-image-bookworm"; then
	result FAIL "piuparts: the base image could not be built"
else
	mkdir -p "$work"
	base=$work/base-bookworm.tgz
	rootfs=$top/build/vm-image-bookworm/rootfs.tar
	if [ ! -s "$base" ] || [ "$rootfs" -nt "$base" ]; then
		gzip -1 -c "$rootfs" >"$base.new" && mv "$base.new" "$base"
	fi
	# The previous version: the same packages, repacked as VERSION~0.
	repo=$work/repo
	rm -rf "$repo" && mkdir -p "$repo/x"
	for f in "$deb"/rngd_*.deb "$deb"/rngtest_*.deb; do
		rm -rf "$repo/x/pkg"
		dpkg-deb -R "$f" "$repo/x/pkg" &&
			sed -i 's/^Version: \(.*\)$/Version: \1~0/' "$repo/x/pkg/DEBIAN/control" &&
			dpkg-deb -b "$repo/x/pkg" "$repo" >/dev/null
	done
	rm -rf "$repo/x"
	(cd "$repo" && dpkg-scanpackages . >Packages 2>/dev/null)
	mirror=http://deb.debian.org/debian
	rm -f "$work/piuparts.log"
	# --ignore-regex: the initramfs. The package's trigger rebuilds it when the package comes
	# (with rngd) and when it goes (without): changed on purpose, by update-initramfs.
	# shellcheck disable=SC2046 # one word per .deb
	piuparts --distribution=bookworm --mirror="$mirror main" --basetgz="$base" \
		--bindmount="$repo" --extra-repo="deb [trusted=yes] file://$repo ./" \
		--ignore-regex='^/boot/initrd\.img-[^/]*$' \
		--log-file="$work/piuparts.log" $(ls "$deb"/rngd_*.deb "$deb"/rngtest_*.deb) \
		>"$work/piuparts.out" 2>&1
	rc=$?
	grep -E "INFO: (Running|Installation|Upgrade|PASS|Package)|(ERROR|FAIL):" "$work/piuparts.log" |
		sed 's/^[0-9m.]*s /  piuparts | /' | tail -25
	echo "  piuparts | $(tail -1 "$work/piuparts.log") (exit $rc)"
	if [ $rc = 0 ]; then
		result PASS "piuparts: install, upgrade, purge in Debian 12"
	else
		result FAIL "piuparts (build/piuparts/piuparts.log)"
	fi
fi
echo "deb-checks: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
