# Shared by the VM tests (tests/vm-boot.sh, tests/vm-init.sh): their skip line, the tools they
# need, a scratch directory $work and the qemu they started (both cleaned up on exit), the
# machine's VM lock, the guest's root from the cached image ($cache, tests/vm/image.sh) and
# its disk, and one qemu run. Source it with the script's name, then set cache:
#   . "$top/tests/vm/lib.sh" NAME
# shellcheck shell=bash disable=SC2034,SC2154 # vm_rc, vm_secs: the caller's; cache: set by it
vm_name=$1
vm_limit=${RNGD_VM_TIMEOUT:-420} # seconds per qemu run, checks (and a reboot) included
# TCG: KVM nested guests can hang on these machines; RNGD_VM_ACCEL=kvm to try KVM.
vm_accel=${RNGD_VM_ACCEL:-tcg}
[ "$vm_accel" = tcg ] && vm_accel=tcg,thread=multi

vm_skip() {
	echo "$vm_name: skipped: $*"
	echo "$vm_name: 0 passed, 0 failed, 1 skipped"
	exit 77
}
vm_require() { # tools...
	local t
	[ "$(id -u)" = 0 ] || vm_skip "needs root (image build, the guest's root)"
	for t in qemu-system-x86_64 mmdebstrap mke2fs "$@"; do
		command -v "$t" >/dev/null 2>&1 || vm_skip "$t not installed"
	done
}

work=$(mktemp -d "/tmp/rngd-$vm_name.XXXXXX")
qpid=
vm_cleanup() {
	if [ -n "$qpid" ]; then
		kill -TERM "$qpid" 2>/dev/null
		wait "$qpid" 2>/dev/null
	fi
	rm -rf "$work"
}
trap vm_cleanup EXIT
trap 'exit 1' INT TERM HUP

# The machine's VM lock (/tmp/rngd-vm.lock: one guest at a time, HELPERS.md), held until the
# script exits. Not taken again by this script, nor under a caller that holds it (flock(1)
# around the whole suite, or a shell's `exec 9>FILE; flock 9`: this process or an ancestor
# has the file open), which would wait for ever.
vm_locked=0
vm_lock() {
	local f=/tmp/rngd-vm.lock p=$$ fd
	[ $vm_locked = 1 ] && return 0
	while [ "${p:-0}" -gt 1 ]; do
		for fd in /proc/"$p"/fd/*; do
			[ "$(readlink "$fd" 2>/dev/null)" = "$f" ] && vm_locked=1 && return 0
		done
		p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
	done
	exec 9>"$f" && flock 9 && vm_locked=1
}

# The cached image's root in directory $1, with a policy-rc.d that starts nothing (dpkg runs
# there, and it is not the guest's system yet).
vm_unpack_root() {
	mkdir "$1" && tar -xpf "$cache/rootfs.tar" -C "$1" || return 1
	printf '#!/bin/sh\nexit 101\n' >"$1/usr/sbin/policy-rc.d"
	chmod 755 "$1/usr/sbin/policy-rc.d"
}
# Root $1 into ext4 image $2 (the root is removed). In the guests, a package's initramfs
# trigger does nothing: mkinitramfs costs tens of seconds under TCG, and the guests boot the
# cached initramfs anyway.
vm_make_disk() {
	rm -f "$1/usr/sbin/policy-rc.d"
	sed -i 's/^update_initramfs=.*/update_initramfs=no/' \
		"$1/etc/initramfs-tools/update-initramfs.conf"
	mke2fs -q -t ext4 -L root -d "$1" "$2" 2G >/dev/null && rm -rf "$1"
}

# vm_boot NAME LOG DISK CMDLINE [qemu arguments...]: boot the cached kernel on DISK (writes go
# to a throw-away overlay, -snapshot), the serial console in LOG, until the guest powers off
# or vm_limit seconds have passed (then qemu is stopped, saying so). vm_tick LOG, when the
# script defines it, runs every half second meanwhile. Sets vm_rc (qemu's exit) and vm_secs.
vm_boot() {
	local name=$1 log=$2 disk=$3 cmdline=$4 start=$SECONDS
	shift 4
	: >"$log"
	qemu-system-x86_64 -machine pc -accel "$vm_accel" -smp 2 -m 1024 -nodefaults \
		-display none -snapshot -drive file="$disk",format=raw,if=virtio \
		-kernel "$cache/vmlinuz" -initrd "$cache/initrd.img" -append "$cmdline" \
		-serial file:"$log" "$@" &
	qpid=$!
	while kill -0 "$qpid" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$vm_limit" ]; then
			echo "$vm_name: $name: no power-off within $vm_limit s; stopping qemu"
			kill -TERM "$qpid"
			break
		fi
		if declare -F vm_tick >/dev/null; then vm_tick "$log"; fi
		sleep 0.5
	done
	wait "$qpid"
	vm_rc=$?
	qpid=
	vm_secs=$((SECONDS - start))
}
