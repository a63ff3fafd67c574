#!/bin/bash
# The initramfs-tools hook and boot script: `make install DESTDIR=` installs both (with
# initramfstoolsdir set, as configure sets it where initramfs-tools is present), executable,
# valid shell, the hook naming the installed daemon; both answer "prereqs" with nothing; the
# hook, run with a stand-in for initramfs-tools' hook-functions, copies the daemon into the
# image's /sbin. (tests/vm-boot.sh builds a real initramfs with it and looks inside.)
. "$(dirname "$0")/lib.sh" initramfs-hook

dir=/usr/share/initramfs-tools
dest=$T/root
if ! make -s -C "$top_builddir" install DESTDIR="$dest" initramfstoolsdir="$dir" \
	>"$T/install.log" 2>&1; then
	cat "$T/install.log"
	fail "make install DESTDIR= initramfstoolsdir=$dir"
	finish
fi
hook=$dest$dir/hooks/rngd
script=$dest$dir/scripts/init-top/rngd
for f in "$hook" "$script"; do
	name=${f#"$dest$dir"/}
	if [ -f "$f" ] && [ -x "$f" ]; then
		ok "$name installed, executable"
	else
		fail "$name installed"
	fi
	if sh -n "$f" 2>"$T/sh.err"; then
		ok "$name: sh -n"
	else
		fail "$name: sh -n: $(cat "$T/sh.err")"
	fi
	if out=$(sh "$f" prereqs) && [ -z "$out" ]; then
		ok "$name prereqs: none"
	else
		fail "$name prereqs: '$out'"
	fi
done
if grep -q '@[a-z_]*@' "$hook"; then fail "hooks/rngd: unsubstituted @variable@"; fi
sbin=$(sed -n 's|^copy_exec \(/[^ ]*\)/rngd /sbin$|\1|p' "$hook")
if [ -n "$sbin" ] && [ -x "$dest$sbin/rngd" ]; then
	ok "hooks/rngd copies the installed daemon ($sbin/rngd)"
else
	fail "hooks/rngd: no copy_exec of an installed rngd (got '$sbin')"
fi

# The hook with a stand-in hook-functions (copy_exec SRC DIR: copies SRC into DESTDIR/DIR).
mkdir -p "$T/image"
cat >"$T/hook-functions" <<'EOS'
copy_exec() { mkdir -p "$DESTDIR$2" && cp "$1" "$DESTDIR$2/"; }
EOS
# The daemon is taken from the DESTDIR tree instead of $sbin.
sed -e "s|^\. /usr/share/initramfs-tools/hook-functions|. $T/hook-functions|" \
	-e "s|$sbin/rngd|$dest$sbin/rngd|g" "$hook" >"$T/hook"
if DESTDIR=$T/image sh "$T/hook" && cmp -s "$T/image/sbin/rngd" "$dest$sbin/rngd"; then
	ok "hooks/rngd puts rngd into the image's /sbin"
else
	fail "hooks/rngd run: no /sbin/rngd in the image"
fi
rm -f "$dest$sbin/rngd"
if DESTDIR=$T/image2 sh "$T/hook" && [ ! -e "$T/image2/sbin/rngd" ]; then
	ok "hooks/rngd with the daemon removed: nothing copied, no failure"
else
	fail "hooks/rngd with the daemon removed"
fi
finish
