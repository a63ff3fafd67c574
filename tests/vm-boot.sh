#!/bin/bash
# The Debian package on real boots: for each suite, Debian 12 (bookworm: systemd 252, kernel
# 6.1) and Debian 13 (trixie: systemd 257, kernel 6.12), a guest built from the same recipe
# (tests/vm/image.sh) installs the rngd_*.deb and rngtest_*.deb built for its release, not
# `make install`, and boots under qemu three times:
#   install      rngd installed with dpkg in the guest's root before its first boot (as an
#                installer would): the postinst in a chroot (user, enablement, the initramfs
#                trigger, checked on the host with lsinitramfs); then
#                device: with a virtio-rng-pci device, the unit starts by itself, the udev
#                  rule's group and mode, READY after the first injection, journal fields,
#                  reload, restart, stop, the watchdog, rngd-once.service ten times, the
#                  exposure score, the kernel's hwrng thread taken over and given back, the
#                  package's smoke test (debian/tests/smoke); prints the boot timeline;
#                nodevice: without one, the unit is not failed and the journal says why; with
#                  no source at all it ends inactive (exit 66); a virtio-rng-pci device
#                  hot-plugged later gets fed;
#   replacement  replace: Debian's rng-tools5 installed and running; `apt-get install
#                ./rngd_*.deb` takes it out and starts our unit (no reboot); after a reboot
#                (same qemu, same disk overlay) the unit is active at boot;
#   purge        then `apt-get purge rngd`: no unit, no daemon, rng_quality and /dev/hwrng the
#                kernel's again, none of the package's files left.
# The checks run inside the guest (tests/vm/guest-check.sh) and report on the serial console,
# tagged with their scenario; this script asserts on what they print and ends each suite with
# one line: "vm-boot: SUITE (systemd N, kernel K): install P/T, replacement P/T, purge P/T".
# Images are built once per suite with mmdebstrap and cached in build/vm-image-SUITE.
# Needs root, qemu-system-x86_64, mmdebstrap and mke2fs; skips with a message where they are
# missing. Runs TCG (KVM nested guests can hang on these machines); RNGD_VM_ACCEL=kvm to try
# KVM. The image, qemu and lock code is tests/vm/lib.sh's, shared with tests/vm-init.sh.
# Usage: tests/vm-boot.sh [--prebuilt] [SUITE...]   (default: bookworm trixie)
# Each guest installs the packages built for its release: for this machine's, build/deb
# (scripts/package); for another, build/deb-SUITE (scripts/package --suite SUITE, in a chroot
# of the cached image). They are built first, unless --prebuilt (scripts/test, which has just
# built them).
# The guests' serial console logs are kept in build/vm-console-SUITE-MODE.log.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
prebuilt=0
[ "${1:-}" = --prebuilt ] && prebuilt=1 && shift
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bookworm trixie)
here=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")

. "$top/tests/vm/lib.sh" vm-boot
vm_require python3
[ -r "$top/tests/vm/guest-check.sh" ] || { echo "vm-boot: guest-check.sh missing"; exit 1; }

# The packages for one suite, built first unless --prebuilt: sets debs.
find_debs() {
	local dir=$top/build/deb-$suite p f
	[ "$suite" = "$here" ] && dir=$top/build/deb
	if [ $prebuilt = 0 ]; then
		if [ "$suite" = "$here" ]; then
			"$top/scripts/package"
		else
			"$top/scripts/package" --suite "$suite"
		fi || return 1
	fi
	debs=()
	for p in rngd rngtest; do
		f=$(ls "$dir/${p}"_*.deb 2>/dev/null | head -1)
		[ -n "$f" ] || { echo "vm-boot: no ${p}_*.deb in ${dir#"$top"/}"; return 1; }
		debs+=("$f")
	done
	echo "vm-boot: $suite: installs ${dir#"$top"/}/{${debs[*]##*/}}"
}

# Host-side checks count like the guest's: scenario, then pass/fail.
declare -A npass nfail
note() { # PASS|FAIL scenario text
	echo "vm-boot: $suite: $1 $2: $3"
	if [ "$1" = PASS ]; then
		npass[$2]=$((${npass[$2]:-0} + 1))
	else
		nfail[$2]=$((${nfail[$2]:-0} + 1))
	fi
}

# The guest's root for one disk: the cached image, the test's unit and scripts, our .debs in
# /root/debs; then `vm_make_disk` puts it in an ext4 image.
unpack_root() { # dir
	vm_unpack_root "$1" || return 1
	install -D -m 755 "$top/tests/vm/guest-check.sh" "$1/usr/local/libexec/rngd-vmtest/guest-check.sh"
	install -D -m 755 "$top/debian/tests/smoke" "$1/usr/local/libexec/rngd-vmtest/smoke"
	install -D -m 755 "$top/tests/vm/plant-hostile.sh" \
		"$1/usr/local/libexec/rngd-vmtest/plant-hostile"
	install -D -m 644 "$top/tests/vm/rngd-vmtest.service" "$1/etc/systemd/system/rngd-vmtest.service"
	systemctl --root="$1" enable rngd-vmtest.service >/dev/null 2>&1 || return 1
	mkdir -p "$1/root/debs"
	cp "${debs[@]}" "$1/root/debs/"
}

prepare_disks() {
	local root=$work/root-$suite kver
	# install: dpkg -i in the root (postinst in a chroot: the user, the enablement, the
	# initramfs trigger).
	unpack_root "$root" || return 1
	kver=$(ls "$root/lib/modules")
	if chroot "$root" sh -c 'dpkg -i /root/debs/*.deb' >"$work/dpkg-$suite.log" 2>&1; then
		note PASS install "dpkg -i rngd_*.deb rngtest_*.deb in the guest's root"
	else
		note FAIL install "dpkg -i in the guest's root:"
		tail -15 "$work/dpkg-$suite.log" | sed 's/^/  | /'
	fi
	if grep -q '^rngd:' "$root/etc/passwd" &&
		[ -L "$root/etc/systemd/system/sysinit.target.wants/rngd.service" ]; then
		note PASS install "postinst in a chroot: user rngd, rngd.service enabled"
	else
		note FAIL install "postinst in a chroot: no rngd user or rngd.service not enabled"
	fi
	# The initramfs-tools trigger ran update-initramfs, and our hook put rngd in (the image's
	# initramfs has no rngd).
	if chroot "$root" lsinitramfs "/boot/initrd.img-$kver" >"$work/lsinitramfs.log" 2>&1 &&
		grep -q 'sbin/rngd$' "$work/lsinitramfs.log" &&
		grep -q 'scripts/init-top/rngd$' "$work/lsinitramfs.log"; then
		note PASS install "the package's initramfs trigger made an initramfs with rngd and its init-top script"
	else
		note FAIL install "no initramfs with rngd from the package's trigger:"
		grep -i initramfs "$work/dpkg-$suite.log" | tail -5 | sed 's/^/  | /'
	fi
	vm_make_disk "$root" "$work/disk-$suite-install.img" || return 1
	# replacement: rng-tools5 from the image's cached .debs, enabled as its postinst does.
	unpack_root "$root" || return 1
	if ! chroot "$root" sh -c 'dpkg -i /var/cache/rngd-vmtest/debs/*.deb' \
		>"$work/dpkg-peer-$suite.log" 2>&1; then
		note FAIL replacement "dpkg -i rng-tools5 in the guest's root:"
		tail -15 "$work/dpkg-peer-$suite.log" | sed 's/^/  | /'
	fi
	vm_make_disk "$root" "$work/disk-$suite-replace.img"
}

# The guest asks for a virtio-rng-pci device to be hot-plugged (once per boot): QMP's
# device_add on the boot's socket.
vm_tick() { # log
	if [ $hot = 0 ] && grep -q "^VMTEST: HOTPLUG" "$1"; then
		hot=1
		python3 - "$qmp" <<-'EOF' || echo "vm-boot: $suite $mode: device_add failed"
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
}

boot() { # mode, disk, extra qemu arguments...
	local mode=$1 disk=$2 log=$work/console-$suite-$1.log qmp=$work/qmp-$1.sock
	local hot=0 reboot=-no-reboot line
	shift 2
	# The replacement reboots once; every other run powers off (a reboot there is a failure).
	# The -snapshot overlay lives as long as qemu does (across the guest's reboot).
	[ "$mode" = replace ] && reboot=
	# shellcheck disable=SC2086 # $reboot: no word or one
	vm_boot "$suite $mode" "$log" "$disk" \
		"root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 panic=-1 rngd.vmtest=$mode" \
		$reboot -qmp unix:"$qmp",server=on,wait=off "$@"
	cp "$log" "$top/build/vm-console-$suite-$mode.log" 2>/dev/null
	echo "vm-boot: $suite $mode: guest ran $vm_secs s (qemu exit $vm_rc)"
	grep -a "^VMTEST:" "$log" | sed "s/^/  [$suite $mode] /"
	while IFS= read -r line; do
		case $line in
		"VMTEST: PASS "*) line=${line#VMTEST: PASS } && npass[${line%%:*}]=$((${npass[${line%%:*}]:-0} + 1)) ;;
		"VMTEST: FAIL "*) line=${line#VMTEST: FAIL } && nfail[${line%%:*}]=$((${nfail[${line%%:*}]:-0} + 1)) ;;
		esac
	done < <(grep -a "^VMTEST: \(PASS\|FAIL\) " "$log")
	if ! grep -aq "^VMTEST: DONE" "$log"; then
		echo "vm-boot: $suite $mode: the checks did not finish; last console lines:"
		tail -30 "$log" | sed "s/^/  | /"
		note FAIL "$(scenario_of "$mode")" "the $mode checks did not finish"
	fi
	if ! grep -aq "^VMTEST: PASS " "$log"; then
		note FAIL "$(scenario_of "$mode")" "no check passed in the $mode boot"
	fi
	info=$(sed -n 's/^VMTEST: INFO mode [a-z]*, kernel \([^,]*\), systemd systemd \([0-9]*\).*/systemd \2, kernel \1/p' \
		"$log" | head -1)
	[ -n "$info" ] && guest_info=$info
}
scenario_of() { [ "$1" = replace ] && echo replacement || echo install; }

total_pass=0 total_fail=0
for suite in "${suites[@]}"; do
	cache=$top/build/vm-image-$suite
	npass=() nfail=() guest_info="no boot"
	suite_start=$SECONDS
	echo "== vm-boot: $suite"
	if ! "$top/tests/vm/image.sh" --suite "$suite" --download rng-tools5 "$cache"; then
		note FAIL install "image build failed"
	elif ! find_debs; then
		note FAIL install "no packages for $suite"
	elif ! prepare_disks; then
		note FAIL install "cannot make the guest's disks"
	elif ! vm_lock; then
		note FAIL install "cannot take the VM lock"
	else
		boot device "$work/disk-$suite-install.img" -device virtio-rng-pci
		boot nodevice "$work/disk-$suite-install.img"
		boot replace "$work/disk-$suite-replace.img" -device virtio-rng-pci
	fi
	rm -f "$work"/disk-"$suite"-*.img
	line="vm-boot: $suite ($guest_info):"
	sp=0 sf=0
	for s in install replacement purge; do
		p=${npass[$s]:-0} f=${nfail[$s]:-0}
		# A scenario with no check at all did not run: a failure.
		[ $((p + f)) = 0 ] && f=1
		line="$line $s $p/$((p + f)),"
		sp=$((sp + p)) sf=$((sf + f))
	done
	echo "${line%,}; $sp passed, $sf failed in $((SECONDS - suite_start)) s"
	total_pass=$((total_pass + sp)) total_fail=$((total_fail + sf))
done
echo "vm-boot: $total_pass passed, $total_fail failed, 0 skipped"
[ "$total_fail" -eq 0 ]
