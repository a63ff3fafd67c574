#!/bin/bash
# The init scripts for systems without systemd, at boot (issue 20), in Debian 12 guests made
# from the VM test's image recipe (tests/vm/image.sh) with Debian's sysvinit-core and openrc
# .debs fetched into the image and installed in the guest's root before its boot:
#   sysv    sysvinit-core as PID 1, rngd installed by `make install` configured with
#           --enable-sysvinit and enabled with update-rc.d: the LSB script starts rngd at
#           boot (rcS), as user rngd, rng_quality granted to group rngd (root's step before
#           the start) and the kernel's hwrng thread taken over (rng_quality 0); status,
#           reload, restart; at shutdown it is stopped and rng_quality, its owner and its
#           mode are the kernel's again (checked by a script that stops after it).
#   openrc  Debian's openrc as the rc system, rngd configured with --enable-openrc and added
#           to the boot runlevel: started at boot as user rngd, granted, rng_quality 0;
#           rc-service rngd reload, stop (rng_quality, owner and mode the kernel's again, no
#           daemon left) and start.
# Last run (03:47 UTC, 2 Dec): sysv 12/12, openrc 10/10 in 3 min 53 s (guests 68 s and 119 s
# under TCG).
# The checks run in the guest and print "VMTEST: PASS|FAIL ..." on the serial console; this
# script counts them and ends with "vm-init: P passed, F failed, 0 skipped".
# Needs root, qemu-system-x86_64, mmdebstrap and mke2fs (skips otherwise). Takes the VM lock
# for the boots (tests/vm/lib.sh, whose image and qemu code this shares with vm-boot.sh); the
# guests read no device of this machine. TCG unless RNGD_VM_ACCEL=kvm.
# Usage: tests/vm-init.sh [sysv] [openrc]   (default: both)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/build/vm-image-bookworm-init
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(sysv openrc)
. "$top/tests/vm/lib.sh" vm-init
vm_require

pass=0 failn=0
note() { # PASS|FAIL text
	echo "vm-init: $1 $2"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else failn=$((failn + 1)); fi
}

"$top/tests/vm/image.sh" --suite bookworm --download sysvinit-core,openrc "$cache" ||
	{ echo "vm-init: image build failed"; exit 1; }

# rngd built for the guest (Debian 12, as this machine) and installed into its root.
build_rngd() { # mode, root
	local b=$top/build/vm-init-$1 sw=--enable-sysvinit
	[ "$1" = openrc ] && sw=--enable-openrc
	mkdir -p "$b"
	(cd "$b" && { [ -f Makefile ] || "$top/configure" -q --prefix=/usr --sysconfdir=/etc \
		--localstatedir=/var --with-initramfs-tools-dir=no "$sw"; } &&
		make -s -j2 >/dev/null && make -s install DESTDIR="$2" >/dev/null) ||
		{ echo "vm-init: $1: cannot build rngd"; return 1; }
}

# The guest's checks, as an init script of each kind.
write_checks() { # mode, root
	local r=$2
	cat >"$r/usr/local/sbin/rngd-vmtest-lib" <<-'EOF'
		# Shared by the guest's checks: serial console output and waiting.
		say() { echo "VMTEST: $*" >/dev/ttyS0; }
		check() { # text, command...
			local t=$1
			shift
			if "$@" >/dev/null 2>&1; then say "PASS $t"; else say "FAIL $t"; fi
		}
		until_ok() { # seconds, command...
			local n=$(($1 * 10))
			shift
			while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
			return 1
		}
		rpid() { pidof rngd | tr ' ' '\n' | while read -r p; do
			[ "$(ps -o ppid= -p "$p" | tr -d ' ')" = 1 ] && echo "$p"; done | head -1; }
		runs_as_rngd() { p=$(rpid); [ -n "$p" ] && [ "$(ps -o user= -p "$p")" = rngd ]; }
		q=/sys/class/misc/hw_random/rng_quality
		quality() { [ "$(cat $q)" = "$1" ]; }
		# Root's grant: group rngd may write rng_quality while the daemon runs.
		granted() { [ "$(stat -c %U:%G:%a $q)" = root:rngd:664 ] && [ -d /run/rngd-root ]; }
		# Given back: the kernel's own value again (virtio-rng's is 1000 on 6.1), not 0, and
		# the file's owner and mode (root's step after the stop).
		given_back() { ! quality 0 && [ "$(stat -c %U:%G:%a $q)" = root:root:644 ]; }
		no_rngd() { [ -z "$(pidof rngd)" ]; }
	EOF
	if [ "$1" = sysv ]; then
		# Started in runlevel 2, after rcS's rngd; stopped after it (X-Stop-After), to see
		# what its stop left.
		cat >"$r/etc/init.d/rngd-vmtest" <<-'EOF'
			#!/bin/sh
			### BEGIN INIT INFO
			# Provides:          rngd-vmtest
			# Required-Start:
			# Required-Stop:
			# X-Stop-After:      rngd
			# Default-Start:     2 3 4 5
			# Default-Stop:      0 6
			# Short-Description: rngd's VM checks (tests/vm-init.sh)
			### END INIT INFO
			. /usr/local/sbin/rngd-vmtest-lib
			case "$1" in
			start)
				say "INFO sysv: $(uname -r), init $(readlink /proc/1/exe)"
				check "sysv: rngd started at boot, as user rngd" until_ok 60 runs_as_rngd
				check "sysv: the kernel's hwrng thread taken over (rng_quality 0)" until_ok 30 quality 0
				check "sysv: rng_quality granted to group rngd before the start (root:rngd 664)" granted
				check "sysv: /etc/init.d/rngd status" /etc/init.d/rngd status
				p=$(rpid)
				check "sysv: /etc/init.d/rngd reload keeps the daemon" sh -c "/etc/init.d/rngd reload && sleep 1 && kill -0 $p"
				check "sysv: /etc/init.d/rngd force-reload" /etc/init.d/rngd force-reload
				/etc/init.d/rngd restart >/dev/ttyS0 2>&1
				check "sysv: /etc/init.d/rngd restart: a new daemon, as rngd" sh -c ". /usr/local/sbin/rngd-vmtest-lib; until_ok 10 runs_as_rngd && [ \"\$(rpid)\" != $p ]"
				check "sysv: rng_quality 0 again after the restart, granted" sh -c ". /usr/local/sbin/rngd-vmtest-lib; until_ok 30 quality 0 && granted"
				say "INFO sysv: shutting down"
				(sleep 1; init 0) &
				;;
			stop)
				check "sysv: at shutdown, rngd stopped before this script" no_rngd
				check "sysv: at shutdown, rng_quality given back (not 0; root:root 644)" given_back
				say DONE
				;;
			esac
			exit 0
		EOF
		chmod 755 "$r/etc/init.d/rngd-vmtest"
		chroot "$r" sh -c 'update-rc.d rngd defaults && update-rc.d rngd-vmtest defaults' \
			>"$work/update-rc.log" 2>&1 || { cat "$work/update-rc.log"; return 1; }
		# No terminals to get on: the serial console is the checks'.
		sed -i '/getty/s/^\([^#]\)/#\1/' "$r/etc/inittab"
	else
		cat >"$r/etc/init.d/rngd-vmtest" <<-'EOF'
			#!/sbin/openrc-run
			description="rngd's VM checks (tests/vm-init.sh)"
			# after, not need: stopping rngd here must not wait for this script to stop.
			depend() { after rngd; }
			start() {
				. /usr/local/sbin/rngd-vmtest-lib
				say "INFO openrc: $(uname -r), $(openrc --version 2>&1 | head -1)"
				check "openrc: rngd started at boot, as user rngd" until_ok 60 runs_as_rngd
				check "openrc: the kernel's hwrng thread taken over (rng_quality 0)" until_ok 30 quality 0
				check "openrc: rng_quality granted to group rngd before the start (root:rngd 664)" granted
				check "openrc: rc-service rngd status" rc-service rngd status
				p=$(rpid)
				check "openrc: rc-service rngd reload keeps the daemon" sh -c "rc-service rngd reload && sleep 1 && kill -0 $p"
				rc-service rngd stop >/dev/ttyS0 2>&1
				check "openrc: rc-service rngd stop: no daemon left" until_ok 5 no_rngd
				check "openrc: rng_quality given back at stop (not 0; root:root 644)" given_back
				rc-service rngd start >/dev/ttyS0 2>&1
				check "openrc: rc-service rngd start: runs as rngd" until_ok 10 runs_as_rngd
				check "openrc: rng_quality 0 again, granted" sh -c ". /usr/local/sbin/rngd-vmtest-lib; until_ok 30 quality 0 && granted"
				say DONE
				(sleep 1; poweroff) &
				return 0
			}
		EOF
		chmod 755 "$r/etc/init.d/rngd-vmtest"
		chroot "$r" sh -c 'rc-update add rngd boot && rc-update add rngd-vmtest default' \
			>"$work/rc-update.log" 2>&1 || { cat "$work/rc-update.log"; return 1; }
		sed -i '/getty/s/^\([^#]\)/#\1/' "$r/etc/inittab"
	fi
}

prepare() { # mode: the disk image in $work/disk-MODE.img
	local r=$work/root-$1 debs
	vm_unpack_root "$r" || return 1
	# The image's download of sysvinit-core and openrc together has openrc as the rc
	# system; sysv-rc and startpar, its alternative, come from this machine's apt (Debian 12
	# too), fetched once.
	if [ "$1" = sysv ]; then
		if ! ls "$top"/build/vm-init-debs/sysv-rc_*.deb >/dev/null 2>&1; then
			mkdir -p "$top/build/vm-init-debs"
			(cd "$top/build/vm-init-debs" && apt-get download sysv-rc startpar) >/dev/null 2>&1 ||
				{ echo "vm-init: cannot download sysv-rc and startpar"; return 1; }
		fi
		cp "$top"/build/vm-init-debs/*.deb "$r/var/cache/rngd-vmtest/debs/"
	fi
	debs=$(cd "$r" && ls var/cache/rngd-vmtest/debs/*.deb)
	[ "$1" = sysv ] && debs=$(grep -v '/openrc_\|/librc1_\|/libeinfo1_' <<<"$debs")
	# shellcheck disable=SC2046 # one word per file
	if ! chroot "$r" sh -c 'cd / && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--allow-remove-essential "$@"' sh $(sed 's|^|/|' <<<"$debs") >"$work/apt-$1.log" 2>&1; then
		note FAIL "$1: installing $(tr '\n' ' ' <<<"$debs" | sed 's|var/cache/rngd-vmtest/debs/||g')in the guest's root:"
		tail -15 "$work/apt-$1.log" | sed 's/^/  | /'
		return 1
	fi
	note PASS "$1: the guest's root has $( [ "$1" = sysv ] && echo sysvinit-core || echo openrc) in place of systemd-sysv"
	chroot "$r" useradd --system --user-group --no-create-home --shell /usr/sbin/nologin rngd ||
		return 1
	build_rngd "$1" "$r" || return 1
	write_checks "$1" "$r" || return 1
	vm_make_disk "$r" "$work/disk-$1.img"
}

boot() { # mode
	local log=$work/console-$1.log line
	vm_boot "$1" "$log" "$work/disk-$1.img" "root=/dev/vda rw console=ttyS0 panic=-1" \
		-no-reboot -device virtio-rng-pci
	cp "$log" "$top/build/vm-console-init-$1.log" 2>/dev/null
	echo "vm-init: $1: guest ran $vm_secs s (qemu exit $vm_rc)"
	while IFS= read -r line; do
		line=${line%$'\r'}
		case $line in
		"VMTEST: PASS "*) note PASS "${line#VMTEST: PASS }" ;;
		"VMTEST: FAIL "*) note FAIL "${line#VMTEST: FAIL }" ;;
		"VMTEST: INFO "*) echo "vm-init: ${line#VMTEST: }" ;;
		esac
	done < <(grep -a "^VMTEST: " "$log")
	if ! grep -aq "^VMTEST: DONE" "$log"; then
		note FAIL "$1: the checks did not finish; last console lines:"
		tail -40 "$log" | sed 's/^/  | /'
	fi
}

for m in "${modes[@]}"; do
	case $m in sysv | openrc) ;; *) echo "vm-init: unknown mode '$m'" && exit 2 ;; esac
	echo "== vm-init: $m"
	prepare "$m" || { note FAIL "$m: cannot prepare the guest"; continue; }
	if vm_lock; then
		boot "$m"
	else
		note FAIL "$m: cannot take the VM lock"
	fi
	rm -f "$work/disk-$m.img"
done
echo "vm-init: $pass passed, $failn failed, 0 skipped"
[ $failn -eq 0 ]
