#!/bin/bash
# Runs inside the VM test's guests (tests/vm-boot.sh), as root, from rngd-vmtest.service once
# multi-user.target is reached; reports on the serial console, one "VMTEST: ..." line each:
#   PASS scenario: name / FAIL scenario: name: why / INFO text / TIMELINE ... / HOTPLUG (the
#   host then adds a virtio-rng-pci device) / REBOOT (the guest reboots, in the same qemu and
#   the same disk overlay; the checks go on at the next boot) / DONE
# then powers the guest off. The scenario (install, replacement, purge) is whichever the
# checks belong to; the host counts them per scenario. The kernel command line says which
# boot this is:
#   rngd.vmtest=device    rngd installed from its .deb (a fresh install), a virtio-rng-pci
#                         device from the start: the unit, the daemon, the kernel's hwrng
#                         thread, the package's smoke test
#   rngd.vmtest=nodevice  the same install, no device at boot; one is hot-plugged half-way
#   rngd.vmtest=replace   Debian's rng-tools5 installed and running, a device: `apt-get
#                         install ./rngd_*.deb` replaces it; reboot; the unit at boot; then
#                         `apt-get purge rngd` puts everything back
# Each group of checks is one function, run by one line in the case at the end: a new check
# is a new function and a new line there.
exec >/dev/ttyS0 2>&1
# A line of its own first: systemd 257 writes terminal reset sequences to the console, which
# would otherwise stand in front of the first VMTEST: line.
echo
export SYSTEMD_PAGER= SYSTEMD_COLORS=0 LC_ALL=C

mode=$(sed -n 's/.*rngd\.vmtest=\([a-z]*\).*/\1/p' /proc/cmdline)
scenario=install
pass() { echo "VMTEST: PASS $scenario: $*"; }
fail() { echo "VMTEST: FAIL $scenario: $*"; }
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
	# The installed rngd execs the installed helper (/usr/libexec/rngd/rngd-status).
	check "rngd --status: the running daemon's table, through the installed helper" \
		eval 'rngd --status >/tmp/rngd-status.txt 2>&1 && grep -q "^SOURCE " /tmp/rngd-status.txt &&
			grep -q "pid $(prop rngd.service MainPID)," /tmp/rngd-status.txt'
	info "rngd --status: $(head -1 /tmp/rngd-status.txt)"
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
	# The watchdog with a runtime drop-in of 6 s instead of the shipped 30 s (the same code
	# path, 24 s less waiting in each boot); removed again after the restart.
	info "shipped WatchdogSec=$(prop rngd.service WatchdogUSec)"
	mkdir -p /run/systemd/system/rngd.service.d
	printf '[Service]\nWatchdogSec=6s\n' >/run/systemd/system/rngd.service.d/vmtest-watchdog.conf
	systemctl daemon-reload
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
	rm /run/systemd/system/rngd.service.d/vmtest-watchdog.conf
	systemctl daemon-reload
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

# kernel-hwrng = take-over (rngd(8)): rng_quality 0 while rngd.service runs, the original
# back after a stop and after a SIGKILL (the unit's ExecStopPost=+rngd --restore-kernel-hwrng).
khw=/sys/class/misc/hw_random/rng_quality
khw_is() { [ "$(cat $khw 2>/dev/null)" = "$1" ]; }
kernel_hwrng_checks() {
	local orig
	until_ok 30 active
	orig=$(rngd_log | sed -n 's/.*took over [^ ]* (rng_quality \([0-9]*\) .*/\1/p' | tail -1)
	info "kernel-hwrng: $(rngd_log | grep 'kernel-hwrng' | tail -2 | tr '\n' '|')"
	info "rng_quality $(cat $khw), $(stat -c '%U:%G %a' $khw)"
	check "kernel-hwrng: rng_quality 0 while rngd.service runs (was ${orig:-?})" \
		eval '[ -n "$orig" ] && [ "$orig" != 0 ] && khw_is 0'
	check "kernel-hwrng: rng_quality writable by group rngd while it runs" \
		eval '[ "$(stat -c "%G %a" $khw)" = "rngd 664" ]'
	systemctl stop rngd.service
	info "after stop: rng_quality $(cat $khw), $(stat -c '%U:%G %a' $khw)"
	check "kernel-hwrng: rng_quality $orig, root:root 644 again after systemctl stop" \
		eval 'khw_is "$orig" && [ "$(stat -c "%U:%G %a" $khw)" = "root:root 644" ]'
	systemctl start rngd.service
	check "kernel-hwrng: taken over again after a start" until_ok 30 eval 'active && khw_is 0'
	systemctl kill -s KILL rngd.service
	# Restart=on-failure starts it again after RestartSec=5s: look in between.
	check "kernel-hwrng: rng_quality $orig again after SIGKILL (ExecStopPost=)" \
		until_ok 4 khw_is "$orig"
	info "after SIGKILL: $(journalctl -b -u rngd.service -o cat | grep 'put back' | tail -1)"
	check "kernel-hwrng: the restarted daemon takes over again" \
		until_ok 40 eval 'active && khw_is 0'
}

# Root's steps against a hostile runtime directory (rngd(8), SECURITY): a drop-in runs
# plant-hostile as User=rngd after the daemon stopped and before root's restore; the restore
# must leave the canaries (root's files: hash, owner, mode) alone, put rng_quality back,
# say what it refused, and end at once.
canaries() {
	local f
	for f in /etc/shadow /etc/passwd /root/vmtest-victim; do
		echo "$f $(stat -c '%u:%g:%a' "$f") $(sha256sum <"$f" | cut -c1-64)"
	done
}
hostile_checks() {
	local orig before round t0 t1 drop=/run/systemd/system/rngd.service.d
	echo secret >/root/vmtest-victim
	chmod 600 /root/vmtest-victim
	before=$(canaries)
	until_ok 30 eval 'active && khw_is 0'
	orig=$(rngd_log | sed -n 's/.*took over [^ ]* (rng_quality \([0-9]*\) .*/\1/p' | tail -1)
	mkdir -p $drop
	for round in 1 2; do
		printf '[Service]\nExecStopPost=\nExecStopPost=%s %s\nExecStopPost=+%s --restore-kernel-hwrng\n' \
			/usr/local/libexec/rngd-vmtest/plant-hostile "$round" "$(command -v rngd)" \
			>$drop/hostile.conf
		systemctl daemon-reload
		systemctl reset-failed rngd.service 2>/dev/null
		systemctl start rngd.service
		until_ok 30 eval 'active && khw_is 0'
		t0=$(ms_now)
		systemctl stop rngd.service
		t1=$(ms_now)
		info "hostile round $round: stop took $((t1 - t0)) ms;" \
			"$(journalctl -b -u rngd.service -o cat | grep -E 'plant-hostile|refused|not in rng_available' | tail -3 | tr '\n' '|')"
		check "hostile round $round: root's restore left /etc/shadow, /etc/passwd and a 0600 file alone" \
			eval '[ "$(canaries)" = "$before" ]'
		check "hostile round $round: rng_quality ${orig:-?}, root:root 644 after the stop" \
			eval 'khw_is "$orig" && [ "$(stat -c "%U:%G %a" $khw)" = "root:root 644" ]'
		check "hostile round $round: the stop (root's restore included) ended within 5 s" \
			[ $((t1 - t0)) -lt 5000 ]
	done
	check "hostile: the restore said what it refused" \
		eval 'journalctl -b -u rngd.service -o cat | grep -q "kernel-hwrng.state refused: a symlink"'
	check "hostile: the planted backend was not written anywhere" \
		eval 'journalctl -b -u rngd.service -o cat | grep -q "AAAAAAAAAAAAAAAAAAAAAAAA is not in rng_available"'
	rm -r $drop
	systemctl daemon-reload
	systemctl reset-failed rngd.service 2>/dev/null
	systemctl start rngd.service
	until_ok 30 active
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
	printf '[Service]\nExecStart=\nExecStart=%s -f -x hwrng -x rdseed -x rdrand -x rndr\n' \
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
		check "kernel-hwrng: a device that appears later is taken over" \
			until_ok 10 khw_is 0
		info "kernel-hwrng: rng_quality $(cat $khw 2>&1), $(stat -c '%U:%G %a' $khw)," \
			"$(rngd_log | grep -E 'kernel-hwrng|rng_quality' | tail -4 | tr '\n' '|')"
	else
		fail "hot-plugged virtio-rng never appeared in the guest"
	fi
}

# The package's own smoke test (debian/tests/smoke, what autopkgtest runs) on the installed
# package; one check per line it prints.
smoke_checks() {
	local tmp line rc
	tmp=$(mktemp -d)
	AUTOPKGTEST_TMP=$tmp /usr/local/libexec/rngd-vmtest/smoke >"$tmp/out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case $line in
		"smoke: PASS "*) pass "smoke test: ${line#smoke: PASS }" ;;
		"smoke: FAIL "*) fail "smoke test: ${line#smoke: FAIL }" ;;
		*) info "smoke: $line" ;;
		esac
	done <"$tmp/out"
	check "debian/tests/smoke exits 0" [ "$rc" = 0 ]
	rm -rf "$tmp"
}

# The replacement and the purge (rngd.vmtest=replace): our .debs are in /root/debs, the
# state that crosses the reboot in /var/lib/rngd-vmtest.
debs=/root/debs
state=/var/lib/rngd-vmtest
pkg_status() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null; }
main_user() { ps -o user= -p "$(prop rngd.service MainPID)" 2>/dev/null; }
hwrng_perms() { stat -c "%U:%G %a" /dev/hwrng; }

replace_checks() {
	local t0 rc
	scenario=replacement
	check "before: rng-tools5 installed, its rngd.service running (as root)" \
		until_ok 60 eval '[ "$(pkg_status rng-tools5)" = installed ] && active &&
			[ "$(main_user)" = root ]'
	info "before: rng-tools5 $(dpkg-query -W -f='${Version}' rng-tools5)," \
		"$(prop rngd.service FragmentPath), pid $(prop rngd.service MainPID)"
	t0=$(ms_now)
	(cd "$debs" && DEBIAN_FRONTEND=noninteractive apt-get install -y ./rngd_*.deb) \
		>/tmp/apt-install.log 2>&1
	rc=$?
	info "apt-get install ./rngd_*.deb: exit $rc after $(($(ms_now) - t0)) ms"
	grep -v '^\(Reading\|Building\|Selecting\|Preparing\)' /tmp/apt-install.log |
		tail -20 | sed 's/^/VMTEST: INFO apt | /'
	check "apt-get install ./rngd_*.deb succeeds" [ "$rc" = 0 ]
	check "rng-tools5 removed in the same step" \
		eval '[ "$(pkg_status rng-tools5)" != installed ] &&
			grep -q "^Removing rng-tools5 " /tmp/apt-install.log'
	check "no rng-tools5 daemon left running" eval '! pgrep -u root -x rngd >/dev/null'
	info "rngd processes: $(ps -eo user=,pid=,args= | grep '[r]ngd' | tr -s ' ' | tr '\n' '|')"
	check "/usr/sbin/rngd and rngd.service are the package's" \
		eval '[ "$(dpkg-query -S /usr/sbin/rngd | cut -d: -f1)" = rngd ] &&
			dpkg-query -L rngd | grep -qx "$(prop rngd.service FragmentPath)"'
	check "rngd.service active without a reboot, as user rngd" \
		until_ok 30 eval 'active && [ "$(main_user)" = rngd ]'
	check "... and feeding" until_ok 30 feeding
	check "/dev/hwrng group rngd, mode 640 without a reboot (postinst's udev trigger)" \
		eval '[ "$(hwrng_perms)" = "root:rngd 640" ]'
	check "kernel-hwrng: rng_quality taken over (0)" until_ok 10 khw_is 0
	check "rngd.service enabled" eval '[ "$(systemctl is-enabled rngd.service)" = enabled ]'
	info "enabled through: $(find /etc/systemd/system -name rngd.service -printf '%P ');" \
		"rng-tools5: $(dpkg-query -W -f='${db:Status-Abbrev}' rng-tools5)"
	mkdir -p "$state"
	echo rebooted >"$state/phase"
	echo "VMTEST: REBOOT"
	systemctl reboot
	exit 0
}

# After the replacement's reboot.
replace_boot_checks() {
	scenario=replacement
	check "after a reboot: rngd.service active at boot, no manual step" until_ok 90 active
	check "... ours, as user rngd, started without a failure or restart" \
		eval '[ "$(main_user)" = rngd ] && no_failure_logged &&
			[ "$(prop rngd.service NRestarts)" = 0 ]'
	check "... and feeding" until_ok 30 feeding
	check "rng-tools5 did not come back" \
		eval '[ "$(pkg_status rng-tools5)" != installed ] && ! pgrep -u root -x rngd >/dev/null'
	# rng-tools5 is left in config-files state; purging that runs its postrm, whose
	# deb-systemd-helper purge takes the links of rngd.service with it: our trigger puts them
	# back (debian/rngd.triggers).
	info "rng-tools5: $(pkg_status rng-tools5)"
	DEBIAN_FRONTEND=noninteractive apt-get purge -y rng-tools5 >/tmp/apt-purge-peer.log 2>&1
	check "purging rng-tools5's leftover configuration leaves rngd.service enabled and running" \
		eval '[ "$(pkg_status rng-tools5)" != config-files ] &&
			[ "$(systemctl is-enabled rngd.service)" = enabled ] && active'
}

purge_checks() {
	local orig rc files left
	scenario=purge
	orig=$(rngd_log | sed -n 's/.*took over [^ ]* (rng_quality \([0-9]*\) .*/\1/p' | tail -1)
	check "before: rng_quality taken over (0; the kernel's: ${orig:-?})" \
		eval '[ -n "$orig" ] && [ "$orig" != 0 ] && until_ok 10 khw_is 0'
	files=$(dpkg-query -L rngd)
	DEBIAN_FRONTEND=noninteractive apt-get purge -y rngd >/tmp/apt-purge.log 2>&1
	rc=$?
	grep -v '^\(Reading\|Building\)' /tmp/apt-purge.log | tail -12 |
		sed 's/^/VMTEST: INFO apt | /'
	check "apt-get purge rngd succeeds" [ "$rc" = 0 ]
	check "no rngd.service unit left" \
		eval '[ "$(prop rngd.service LoadState)" = not-found ] &&
			[ -z "$(find /etc/systemd/system /run/systemd/system \( -name rngd.service -o -name rngd-once.service \))" ]'
	info "rngd.service: LoadState $(prop rngd.service LoadState)," \
		"links: $(find /etc/systemd/system /run/systemd/system \( -name rngd.service -o -name rngd-once.service \) | tr '\n' ' ')"
	check "no rngd running" eval '! pgrep -x rngd >/dev/null'
	info "after purge: rng_quality $(cat $khw), $(stat -c '%U:%G %a' $khw);" \
		"/dev/hwrng $(hwrng_perms)"
	check "rng_quality the kernel's again ($orig, root:root 644)" \
		eval 'khw_is "$orig" && [ "$(stat -c "%U:%G %a" $khw)" = "root:root 644" ]'
	check "/dev/hwrng root:root 600 again (the kernel's)" \
		eval '[ "$(hwrng_perms)" = "root:root 600" ]'
	left=$(for f in $files /run/rngd /run/rngd-root /run/rngd.pid /var/lib/systemd/deb-systemd-helper-enabled/rngd.service.dsh-also; do
		[ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done)
	[ -d /run/rngd ] && left="$left /run/rngd"
	[ -d /run/rngd-root ] && left="$left /run/rngd-root"
	check "the package's files, its runtime directory and its state are gone" \
		eval '[ "$(pkg_status rngd)" = not-installed ] || [ -z "$(pkg_status rngd)" ] &&
			[ -z "$left" ]'
	[ -z "$left" ] || info "left: $left"
}

info "mode $mode, kernel $(uname -r), systemd $(systemctl --version | head -1)"
case $mode in
device)
	boot_checks
	lifecycle_checks
	kernel_hwrng_checks
	hostile_checks
	smoke_checks
	;;
nodevice)
	nodevice_checks
	;;
replace)
	if [ "$(cat "$state/phase" 2>/dev/null)" != rebooted ]; then
		replace_checks
	else
		replace_boot_checks
		purge_checks
	fi
	;;
*) fail "unknown mode '$mode'" ;;
esac
echo "VMTEST: DONE"
systemctl poweroff --no-block
