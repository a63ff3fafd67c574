#!/bin/sh
# Build (once) and cache a small Debian 12 guest for the VM tests and benchmarks: systemd as
# PID 1, udev, dbus, journald, Debian's kernel and initramfs, and the libraries rngd links.
# Usage: tests/vm/image.sh CACHEDIR [EXTRA-PACKAGES]
# EXTRA-PACKAGES (comma-separated, e.g. rng-tools5 for bench/boot) are installed too; give
# each package list its own CACHEDIR, or every change rebuilds the other's cache.
# Leaves in CACHEDIR: rootfs.tar (the root file system), vmlinuz and initrd.img (for qemu's
# -kernel/-initrd), and stamp, whose content names what the cache was built from; a cache
# whose stamp differs is rebuilt. Needs root and mmdebstrap; only Debian's archive is used.
set -eu
cache=$1
extra=${2:-}
suite=bookworm
pkgs="systemd,systemd-sysv,udev,dbus,linux-image-amd64,initramfs-tools,libcap-ng0,libjansson4"
pkgs="$pkgs,libsystemd0,procps"
[ -n "$extra" ] && pkgs="$pkgs,$extra"
# Bump when the recipe changes.
want="v2 $suite $pkgs"

mkdir -p "$cache"
if [ -f "$cache/stamp" ] && [ "$(cat "$cache/stamp")" = "$want" ] &&
	[ -s "$cache/rootfs.tar" ] && [ -s "$cache/vmlinuz" ] && [ -s "$cache/initrd.img" ]; then
	exit 0
fi
rm -rf "$cache/stamp" "$cache/rootfs.tar" "$cache/rootfs.new.tar" "$cache/vmlinuz" "$cache/initrd.img"
echo "vm image: building a $suite guest with mmdebstrap (about 2 minutes, cached in $cache)"
# The hooks run with the root directory as $1:
#  - setup: initramfs with only what a virtio guest needs to mount its root (smaller, faster
#    to make and to boot than the default "most");
#  - customize: the kernel and initramfs copied out (the kernel's config stays in /boot:
#    mkinitramfs reads it, for the initramfs hook's check and bench/boot); documentation,
#    locales and kernel modules no virtio guest loads removed; a root on /dev/vda; the
#    serial console only.
build() {
	rm -rf "$cache/rootfs.new.tar"
	mmdebstrap --quiet --variant=minbase --include="$pkgs" \
		--setup-hook='mkdir -p "$1/etc/initramfs-tools/conf.d"' \
		--setup-hook='echo MODULES=list >"$1/etc/initramfs-tools/conf.d/rngd-vm"' \
		--setup-hook='printf "virtio_pci\nvirtio_blk\next4\n" >"$1/etc/initramfs-tools/modules"' \
		--customize-hook="cp \"\$1\"/boot/vmlinuz-* '$cache/vmlinuz'" \
		--customize-hook="cp \"\$1\"/boot/initrd.img-* '$cache/initrd.img'" \
		--customize-hook='rm -rf "$1"/boot/vmlinuz-* "$1"/boot/initrd.img-* "$1"/boot/System.map-* "$1"/usr/share/doc/* "$1"/usr/share/man/* "$1"/usr/share/locale/*' \
		--customize-hook='for d in gpu sound net/wireless net/ethernet infiniband media staging iio; do rm -rf "$1"/lib/modules/*/kernel/drivers/$d; done' \
		--customize-hook='rm -rf "$1"/lib/modules/*/kernel/sound "$1"/lib/firmware/*' \
		--customize-hook='echo "/dev/vda / ext4 rw,noatime 0 1" >"$1/etc/fstab"' \
		--customize-hook='echo rngd-vm >"$1/etc/hostname"' \
		--customize-hook='systemctl --root="$1" mask getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_reap.service 2>/dev/null || true' \
		"$suite" "$cache/rootfs.new.tar"
}
# One more try: a download from the archive can fail once.
build || { echo "vm image: mmdebstrap failed; trying once more"; build; }
mv "$cache/rootfs.new.tar" "$cache/rootfs.tar"
echo "$want" >"$cache/stamp"
