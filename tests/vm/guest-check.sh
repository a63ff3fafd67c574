#!/bin/bash
# Runs inside the VM test's guest (tests/vm-boot.sh), as root, from rngd-vmtest.service once
# multi-user.target is reached; reports on the serial console, one "VMTEST: ..." line each:
#   PASS name / FAIL name: why / INFO text / TIMELINE ... / HOTPLUG (the host then adds a
#   virtio-rng-pci device) / DONE
# then powers the guest off. The kernel command line says which boot this is:
#   rngd.vmtest=device    a virtio-rng-pci device from the start
#   rngd.vmtest=nodevice  none at boot; one is hot-plugged half-way
exec >/dev/ttyS0 2>&1
export SYSTEMD_PAGER= SYSTEMD_COLORS=0 LC_ALL=C

mode=$(sed -n 's/.*rngd\.vmtest=\([a-z]*\).*/\1/p' /proc/cmdline)
pass() { echo "VMTEST: PASS $*"; }
fail() { echo "VMTEST: FAIL $*"; }
info() { echo "VMTEST: INFO $*"; }
check() { # name, command...: PASS when the command succeeds
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}
until_ok() { # seconds, command...: wait for the command to succeed
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}
prop() { systemctl show -p "$2" --value "$1"; }
ms_now() { echo $(($(date +%s%N) / 1000000)); }
# CLOCK_MONOTONIC microseconds as seconds with three decimals.
usec_s() { [ -n "$1" ] && [ "$1" != 0 ] && awk -v u="$1" 'BEGIN { printf "%.3f", u / 1e6 }' ||
	echo "n/a"; }
# __MONOTONIC_TIMESTAMP (us) of the first journal entry of this boot matching the arguments.
journal_usec() {
	journalctl -b -o export "$@" 2>/dev/null | sed -n 's/^__MONOTONIC_TIMESTAMP=//p' | head -1
}
rngd_log() { journalctl -b -u rngd.service -o cat --no-pager; }
active() { [ "$(prop rngd.service ActiveState)" = active ]; }
settled() { # not starting, stopping or restarting
	case $(prop "$1" ActiveState) in activating | deactivating | reloading) return 1 ;; esac
	[ "$(prop "$1" SubState)" != auto-restart ]
}
no_failure_logged() { ! journalctl -b -u rngd.service -o cat | grep -q "Failed with result"; }
feeding() { rngd_log | grep -q "first injection"; }
# The reload's journal entry ("configuration reloaded in N ms: 1 source(s)...").
reloaded_one() {
	journalctl -b -u rngd.service RNGD_EVENT=reloaded -o cat --no-pager | grep -q ": 1 source"
}

# The unit started by itself, once, and was ready after the first injection.
boot_checks() {
	local exec_us ready_us feed_us crng
	check "rngd.service active after boot, no manual step" until_ok 90 active
	check "rngd.service started without a failure or restart" \
		eval 'no_failure_logged && [ "$(prop rngd.service NRestarts)" = 0 ]'
	check "/dev/hwrng group rngd, mode 640 (udev rule)" \
		eval '[ "$(stat -c "%G %a" /dev/hwrng)" = "rngd 640" ]'
	until_ok 30 feeding
	exec_us=$(prop rngd.service ExecMainStartTimestampMonotonic)
	ready_us=$(prop rngd.service ActiveEnterTimestampMonotonic)
	feed_us=$(journal_usec -u rngd.service RNGD_EVENT=first-feed)
	crng=$(dmesg | sed -n 's/^\[ *\([0-9.]*\)\] random: crng init done.*/\1/p' | head -1)
	echo "VMTEST: TIMELINE kernel-start=0.000 rngd-exec=$(usec_s "$exec_us")" \
		"first-credited-RNDADDENTROPY=$(usec_s "$feed_us") READY=$(usec_s "$ready_us")" \
		"crng-init-done=${crng:-n/a}"
	# The first-feed entry is logged before READY=1 is sent; systemd's "Started" entry is
	# logged after it read READY=1; journald receives both in that order.
	started_us=$(journal_usec _PID=1 UNIT=rngd.service MESSAGE_ID=39f53479d3a045ac8e11786248231fbf)
	journalctl -b -o short-monotonic --no-pager -u rngd.service -u rngd-once.service |
		head -12 | sed 's/^/VMTEST: INFO journal /'
	check "READY=1 after the first credited injection" \
		eval '[ -n "$feed_us" ] && [ -n "$started_us" ] && [ "$feed_us" -le "$started_us" ]'
	check "STATUS= says what was fed" \
		eval 'prop rngd.service StatusText | grep -q "fed"'
	info "StatusText: $(prop rngd.service StatusText)"
	local v
	v=$(journalctl -b -u rngd.service -o verbose --no-pager)
	check "journal fields RNGD_SOURCE=, RNGD_EVENT=, MESSAGE_ID=" \
		eval 'grep -q "RNGD_SOURCE=hwrng" <<<"$v" && grep -q "RNGD_EVENT=" <<<"$v" &&
			grep -q "MESSAGE_ID=" <<<"$v"'
	check "rngd runs as user rngd" eval '[ "$(ps -o user= -p "$(prop rngd.service MainPID)")" = rngd ]'
}

lifecycle_checks() {
	local pid t0 t1 n
	pid=$(prop rngd.service MainPID)
	check "systemctl reload" systemctl reload rngd.service
	info "reload: $(journalctl -b -u rngd.service RNGD_EVENT=reloaded -o cat --no-pager | tail -1)"
	check "reload keeps the daemon and its sources" \
		eval 'until_ok 10 reloaded_one && active && [ "$(prop rngd.service MainPID)" = "$pid" ]'
	check "systemctl restart" systemctl restart rngd.service
	check "restart gives a new daemon" \
		eval 'until_ok 30 active && [ "$(prop rngd.service MainPID)" != "$pid" ]'
	t0=$(ms_now)
	systemctl stop rngd.service
	t1=$(ms_now)
	info "systemctl stop took $((t1 - t0)) ms"
	check "systemctl stop under 1 s, clean" \
		eval '[ $((t1 - t0)) -lt 1000 ] && [ "$(prop rngd.service ActiveState)" = inactive ] &&
			[ "$(prop rngd.service Result)" = success ]'
	systemctl start rngd.service
	until_ok 30 active
	pid=$(prop rngd.service MainPID)
	n=$(prop rngd.service NRestarts)
	kill -STOP "$pid"
	t0=$(ms_now)
	check "a SIGSTOPped daemon is restarted by the watchdog" \
		eval 'until_ok 90 eval "active && [ \"\$(prop rngd.service MainPID)\" != $pid ]" &&
			journalctl -b -u rngd.service -o cat | grep -q "Watchdog timeout"'
	info "watchdog restart after $(($(ms_now) - t0)) ms (WatchdogSec=$(prop rngd.service WatchdogUSec))"
	local ok=0 slow=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		t0=$(ms_now)
		if timeout 60 systemctl start rngd-once.service &&
			[ "$(prop rngd-once.service Result)" = success ] &&
			[ "$(prop rngd-once.service ExecMainStatus)" = 0 ]; then
			ok=$((ok + 1))
		else
			info "rngd-once run $i: Result=$(prop rngd-once.service Result)" \
				"status=$(prop rngd-once.service ExecMainStatus)"
		fi
		t1=$(ms_now)
		[ $((t1 - t0)) -gt "$slow" ] && slow=$((t1 - t0))
	done
	info "rngd-once.service: $ok of 10 succeeded, slowest $slow ms"
	check "rngd-once.service succeeds 10 times out of 10" [ "$ok" = 10 ]
	local score
	score=$(systemd-analyze security --no-pager rngd.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for rngd.service: \([0-9.]*\).*/\1/p')
	info "systemd-analyze security rngd.service: ${score:-none}"
	check "systemd-analyze security rngd.service <= 1.5" \
		awk -v s="${score:-99}" 'BEGIN { exit !(s <= 1.5) }'
}

nodevice_checks() {
	check "rngd.service not failed without an RNG device" \
		eval 'until_ok 60 settled rngd.service && ! systemctl is-failed -q rngd.service'
	info "rngd.service: $(prop rngd.service ActiveState)/$(prop rngd.service SubState):" \
		"$(prop rngd.service StatusText)"
	check "the journal says why nothing is fed" \
		eval 'rngd_log | grep -Eq "waiting: |no usable entropy source"'
	info "journal: $(rngd_log | grep -E "waiting: |no usable entropy source" | head -1)"

	# No source at all (hwrng and the CPU's RDSEED/RDRAND left out; no VIA CPU): exit 66,
	# inactive, not failed.
	mkdir -p /run/systemd/system/rngd.service.d
	printf '[Service]\nExecStart=\nExecStart=%s -f -x hwrng -x rdseed -x rdrand\n' \
		"$(command -v rngd)" \
		>/run/systemd/system/rngd.service.d/vmtest.conf
	systemctl daemon-reload
	systemctl restart rngd.service
	until_ok 30 settled rngd.service
	info "no source: $(prop rngd.service ActiveState)/$(prop rngd.service Result)," \
		"status $(prop rngd.service ExecMainStatus)"
	check "no usable source: exit 66 leaves the unit inactive, not failed" \
		eval '[ "$(prop rngd.service ActiveState)" = inactive ] &&
			[ "$(prop rngd.service Result)" = success ] &&
			[ "$(prop rngd.service ExecMainStatus)" = 66 ]'
	check "... and the journal says why" \
		eval 'journalctl -b -u rngd.service -o cat | grep -q "no usable entropy source: "'
	rm -r /run/systemd/system/rngd.service.d
	systemctl daemon-reload
	systemctl reset-failed rngd.service 2>/dev/null

	# A device that comes late: the daemon (started again, waiting) or udev picks it up.
	systemctl start rngd.service
	echo "VMTEST: HOTPLUG"
	if until_ok 120 eval '[ -e /sys/class/misc/hw_random/rng_current ] &&
		[ "$(cat /sys/class/misc/hw_random/rng_current)" != none ]'; then
		info "hot-plugged backend: $(cat /sys/class/misc/hw_random/rng_current)"
		check "a device that appears later gets its daemon, which feeds" \
			eval 'until_ok 30 eval "active && feeding"'
		info "journal: $(rngd_log | grep -E "waiting|running|first injection" | tr '\n' '|')"
	else
		fail "hot-plugged virtio-rng never appeared in the guest"
	fi
}

info "mode $mode, kernel $(uname -r), systemd $(systemctl --version | head -1)"
case $mode in
device)
	boot_checks
	lifecycle_checks
	;;
nodevice)
	nodevice_checks
	;;
*) fail "unknown mode '$mode'" ;;
esac
echo "VMTEST: DONE"
systemctl poweroff --no-block
