#!/bin/sh
# Build (once) and cache a small Debian guest for the VM tests, the package checks and the
# benchmarks: systemd as PID 1, udev, dbus, journald, Debian's kernel and initramfs, and the
# libraries rngd links.
# Usage: tests/vm/image.sh [--suite SUITE] [--include PKGS] [--download PKGS] CACHEDIR
#   --suite SUITE   Debian release by code name: bookworm (12, the default) or trixie (13)
#   --include PKGS  comma-separated packages installed too (rng-tools5 for bench/boot)
#   --download PKGS comma-separated packages whose .debs, with the dependencies the image
#                   lacks, are left in /var/cache/rngd-vmtest/debs for the guest to install
#                   without a network (tests/vm-boot.sh: rng-tools5, for the replacement)
# Give each suite and package list its own CACHEDIR, or every change rebuilds the other's
# cache. Leaves in CACHEDIR: rootfs.tar (the root file system), vmlinuz and initrd.img (for
# qemu's -kernel/-initrd; also in the root's /boot), and stamp, whose content names what the
# cache was built from; a cache whose stamp differs is rebuilt. Needs root and mmdebstrap;
# only Debian's archive is used.
set -eu
usage() {
	echo "usage: $0 [--suite SUITE] [--include PKGS] [--download PKGS] CACHEDIR" >&2
	exit 2
}
suite=bookworm include='' download=''
while [ $# -gt 1 ]; do
	case $1 in
	--suite) suite=$2 ;;
	--include) include=$2 ;;
	--download) download=$2 ;;
	*) usage ;;
	esac
	shift 2
done
{ [ $# = 1 ] && [ -n "$1" ]; } || usage
cache=$1
case $suite in bookworm | trixie) ;; *) echo "$0: unknown suite '$suite'" >&2 && exit 2 ;; esac
pkgs="systemd,systemd-sysv,udev,dbus,linux-image-amd64,initramfs-tools,libcap-ng0,libjansson4"
pkgs="$pkgs,libsystemd0,procps"
[ -n "$include" ] && pkgs="$pkgs,$include"
# Bump when the recipe changes.
want="v3 $suite $pkgs download=$download"

mkdir -p "$cache"
if [ -f "$cache/stamp" ] && [ "$(cat "$cache/stamp")" = "$want" ] &&
	[ -s "$cache/rootfs.tar" ] && [ -s "$cache/vmlinuz" ] && [ -s "$cache/initrd.img" ]; then
	exit 0
fi
rm -rf "$cache/stamp" "$cache/rootfs.tar" "$cache/rootfs.new.tar" "$cache/vmlinuz" "$cache/initrd.img"
echo "vm image: building a $suite guest with mmdebstrap (about 2 minutes, cached in $cache)"
# What no guest needs is never unpacked (dpkg's path-exclude, kept in the image's
# /etc/dpkg/dpkg.cfg.d, so debsums and piuparts know): documentation but copyright files,
# manual pages, translations, and the kernel modules no virtio guest loads (both paths: the
# kernel package has them under /lib on Debian 12, /usr/lib on 13).
exclude="--dpkgopt=path-exclude=/usr/share/doc/* --dpkgopt=path-include=/usr/share/doc/*/copyright"
exclude="$exclude --dpkgopt=path-exclude=/usr/share/man/* --dpkgopt=path-exclude=/usr/share/info/*"
exclude="$exclude --dpkgopt=path-exclude=/usr/share/locale/*"
for d in drivers/gpu drivers/net/wireless drivers/net/ethernet drivers/infiniband drivers/media \
	drivers/staging drivers/iio sound; do
	exclude="$exclude --dpkgopt=path-exclude=/lib/modules/*/kernel/$d/*"
	exclude="$exclude --dpkgopt=path-exclude=/usr/lib/modules/*/kernel/$d/*"
done
# The hooks run with the root directory as $1:
#  - setup: an initramfs with only what a virtio guest needs to mount its root (smaller, faster
#    to make and to boot than the default "most"); in files no package owns;
#  - customize: the kernel and initramfs copied out (both stay in /boot, where update-initramfs
#    and mkinitramfs look); the --download packages fetched with the image's own apt; a root on
#    /dev/vda; the serial console only.
debs=/var/cache/rngd-vmtest/debs
fetch=true
if [ -n "$download" ]; then
	fetch="mkdir -p \"\$1$debs/partial\" && chroot \"\$1\" apt-get install --download-only -y -qq"
	fetch="$fetch -o Dir::Cache::Archives=$debs $(echo "$download" | tr , ' ') >/dev/null &&"
	fetch="$fetch rm -rf \"\$1$debs/partial\" \"\$1$debs/lock\" && ls \"\$1$debs\"/*.deb >/dev/null"
fi
# shellcheck disable=SC2016 # the hooks' $1 is the root mmdebstrap gives them
build() {
	rm -rf "$cache/rootfs.new.tar"
	# shellcheck disable=SC2086 # $exclude: one word per option
	mmdebstrap --quiet --variant=minbase --include="$pkgs" $exclude \
		--setup-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"' \
		--setup-hook='echo MODULES=list >"$1/etc/initramfs-tools/conf.d/rngd-vm"' \
		--setup-hook='printf "virtio_pci\nvirtio_blk\next4\n" >"$1/usr/share/initramfs-tools/modules.d/rngd-vm"' \
		--customize-hook="cp \"\$1\"/boot/vmlinuz-* '$cache/vmlinuz'" \
		--customize-hook="cp \"\$1\"/boot/initrd.img-* '$cache/initrd.img'" \
		--customize-hook="$fetch" \
		--customize-hook='echo "/dev/vda / ext4 rw,noatime 0 1" >"$1/etc/fstab"' \
		--customize-hook='echo rngd-vm >"$1/etc/hostname"' \
		--customize-hook='systemctl --root="$1" mask getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_reap.service 2>/dev/null || true' \
		"$suite" "$cache/rootfs.new.tar"
}
# One more try: a download from the archive can fail once.
build || { echo "vm image: mmdebstrap failed; trying once more"; build; }
mv "$cache/rootfs.new.tar" "$cache/rootfs.tar"
echo "$want" >"$cache/stamp"
