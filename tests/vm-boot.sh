#!/bin/bash
# The service on a real boot: a Debian 12 guest (systemd 252 as PID 1, udev, journald,
# Debian's 6.1 kernel) with rngd installed by `make install` the way a package would
# (sysusers entry applied, rngd.service enabled), booted twice under qemu:
#   1. with a virtio-rng-pci device: the unit starts by itself, the udev rule's group and
#      mode, READY after the first injection, journal fields, reload, restart, stop, the
#      watchdog, rngd-once.service ten times, the exposure score; prints the boot timeline;
#   2. without one: the unit is not failed and the journal says why; with no source at all
#      it ends inactive (exit 66); a virtio-rng-pci device hot-plugged later gets fed.
# Before the boots, on the host: an initramfs made in the guest's root with our
# initramfs-tools hook holds rngd and its init-top script (lsinitramfs).
# The checks run inside the guest (tests/vm/guest-check.sh) and report on the serial
# console; this script asserts on what they print. The guest image is built once with
# mmdebstrap and cached (tests/vm/image.sh). Needs root, qemu-system-x86_64, mmdebstrap and
# mke2fs; skips with a message where they are missing. Runs TCG (KVM nested guests can hang
# on these machines); RNGD_VM_ACCEL=kvm to try KVM.
# Usage: tests/vm-boot.sh   (from scripts/test; builds build/vm itself). The guests' serial
# console logs are kept in build/vm-console-{device,nodevice}.log.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build/vm
cache=${RNGD_VM_CACHE:-$top/build/vm-image}
boot_limit=${RNGD_VM_TIMEOUT:-420} # seconds per boot, checks included

skip() {
	echo "vm-boot: skipped: $*"
	echo "vm-boot: 0 passed, 0 failed, 1 skipped"
	exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (image build, make install into it)"
for t in qemu-system-x86_64 mmdebstrap mke2fs python3; do
	command -v "$t" >/dev/null 2>&1 || skip "$t not installed"
done
[ -r "$(dirname "$0")/vm/guest-check.sh" ] || { echo "vm-boot: guest-check.sh missing"; exit 1; }

work=$(mktemp -d /tmp/rngd-vm.XXXXXX)
qpid=
cleanup() {
	if [ -n "$qpid" ]; then
		kill -TERM "$qpid" 2>/dev/null
		wait "$qpid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# A distribution's layout, as a package would install it.
echo "vm-boot: building rngd for /usr (build/vm)"
"$top/scripts/build" vm --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
	--runstatedir=/run --with-udevrulesdir=/usr/lib/udev/rules.d || {
	echo "vm-boot: build failed"
	exit 1
}
"$top/tests/vm/image.sh" "$cache" || { echo "vm-boot: image build failed"; exit 1; }

echo "vm-boot: installing into the guest's root file system"
root=$work/root
mkdir "$root"
tar -xpf "$cache/rootfs.tar" -C "$root" || exit 1
make -s -C "$build" install DESTDIR="$root" initramfstoolsdir=/usr/share/initramfs-tools \
	>"$work/install.log" 2>&1 || {
	cat "$work/install.log"
	exit 1
}
# The initramfs-tools hook, as update-initramfs would run it: the initramfs made in the
# guest's root holds rngd and the init-top script (the guest itself boots the cached one).
host_pass=0 host_fail=0
kver=$(ls "$root/lib/modules")
if chroot "$root" mkinitramfs -o /tmp/initrd.rngd "$kver" >"$work/mkinitramfs.log" 2>&1 &&
	chroot "$root" lsinitramfs /tmp/initrd.rngd >"$work/lsinitramfs.log" 2>&1 &&
	grep -q 'sbin/rngd$' "$work/lsinitramfs.log" &&
	grep -q 'scripts/init-top/rngd$' "$work/lsinitramfs.log"; then
	echo "vm-boot: PASS an initramfs made with the hook holds rngd and its init-top script"
	host_pass=1
else
	echo "vm-boot: FAIL initramfs with the hook:"
	tail -5 "$work/mkinitramfs.log" "$work/lsinitramfs.log" 2>/dev/null | sed 's/^/  | /'
	host_fail=1
fi
rm -f "$root/tmp/initrd.rngd"
install -D -m 755 "$top/tests/vm/guest-check.sh" "$root/usr/local/libexec/rngd-vmtest/guest-check.sh"
install -D -m 644 "$top/tests/vm/rngd-vmtest.service" "$root/etc/systemd/system/rngd-vmtest.service"
# What a package's postinst does: create the user, enable the unit.
systemd-sysusers --root="$root" >/dev/null 2>&1 || { echo "vm-boot: sysusers failed"; exit 1; }
grep -q '^rngd:' "$root/etc/passwd" || { echo "vm-boot: no rngd user in the guest"; exit 1; }
systemctl --root="$root" enable rngd.service rngd-vmtest.service >/dev/null 2>&1 || {
	echo "vm-boot: cannot enable the units"
	exit 1
}
mke2fs -q -t ext4 -L root -d "$root" "$work/disk.img" 2G >/dev/null || exit 1
rm -rf "$root"

accel=${RNGD_VM_ACCEL:-tcg}
[ "$accel" = tcg ] && accel=tcg,thread=multi

passed=$host_pass failed=$host_fail
boot() { # mode, extra qemu arguments...
	local mode=$1 log=$work/console-$1.log qmp=$work/qmp-$1.sock start hot=0 rc
	shift
	: >"$log"
	start=$SECONDS
	# -snapshot: both boots start from the same disk; writes go to a throw-away overlay.
	qemu-system-x86_64 -machine pc -accel "$accel" -smp 2 -m 1024 -nodefaults -no-reboot \
		-display none -snapshot -drive file="$work/disk.img",format=raw,if=virtio \
		-kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 panic=-1 rngd.vmtest=$mode" \
		-serial file:"$log" -qmp unix:"$qmp",server=on,wait=off "$@" &
	qpid=$!
	while kill -0 "$qpid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$boot_limit" ]; then
			echo "vm-boot: $mode: no power-off within $boot_limit s; stopping qemu"
			kill -TERM "$qpid"
			break
		fi
		if [ $hot = 0 ] && grep -q "^VMTEST: HOTPLUG" "$log"; then
			hot=1
			python3 - "$qmp" <<-'EOF' || echo "vm-boot: $mode: device_add failed"
				import json, socket, sys
				s = socket.socket(socket.AF_UNIX)
				s.connect(sys.argv[1])
				f = s.makefile("rw")
				f.readline()
				for cmd in ({"execute": "qmp_capabilities"},
				            {"execute": "device_add",
				             "arguments": {"driver": "virtio-rng-pci", "id": "rng-late"}}):
				    f.write(json.dumps(cmd) + "\n")
				    f.flush()
				    while True:
				        r = json.loads(f.readline())
				        if "return" in r or "error" in r:
				            break
				    if "error" in r:
				        sys.exit("qmp: " + r["error"]["desc"])
				EOF
		fi
		sleep 0.5
	done
	wait "$qpid"
	rc=$?
	qpid=
	cp "$log" "$top/build/vm-console-$mode.log" 2>/dev/null
	echo "vm-boot: $mode: guest ran $((SECONDS - start)) s (qemu exit $rc)"
	grep -a "^VMTEST:" "$log" | sed "s/^/  [$mode] /"
	local p f
	p=$(grep -ac "^VMTEST: PASS" "$log")
	f=$(grep -ac "^VMTEST: FAIL" "$log")
	if ! grep -aq "^VMTEST: DONE" "$log"; then
		echo "vm-boot: $mode: the checks did not finish; last console lines:"
		tail -30 "$log" | sed "s/^/  | /"
		f=$((f + 1))
	fi
	[ "$p" -gt 0 ] || f=$((f + 1))
	passed=$((passed + p))
	failed=$((failed + f))
}

boot device -device virtio-rng-pci
boot nodevice
echo "vm-boot: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
