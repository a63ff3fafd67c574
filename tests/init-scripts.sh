#!/bin/bash
# The init scripts for systems without systemd (init/): shellcheck on both; the LSB/SysV
# script's actions run for real against the built daemon (start, status, start again,
# reload, restart, stop within a second of TERM, stop again, status; a start with nothing to
# do), once with dpkg's start-stop-daemon and once without it (BusyBox-style systems).
# Its copy points at the build tree, a pid file and an environment file in a scratch
# directory; the root step at stop (--restore-kernel-hwrng) is left out, as it acts on the
# machine's real hw_random (the VM test runs it). OpenRC's script runs in the VM test.
# Each case prints "ok", "skip: why" or "FAIL: why".
set -u
. "$(dirname "$0")/lib.sh" init-scripts

for s in openrc sysv; do
	[ -f "$top_builddir/init/$s/rngd" ] || {
		fail "init/$s/rngd not built"
		finish
	}
done

if command -v shellcheck >/dev/null; then
	if out=$(shellcheck -s sh -e SC1091 "$top_builddir/init/sysv/rngd" "$top_builddir/init/openrc/rngd" 2>&1); then
		ok "shellcheck: both scripts clean"
	else
		fail "shellcheck: $out"
	fi
else
	skip "shellcheck not installed"
fi
# OpenRC's reload, run as openrc-run would (its helpers stubbed): SIGHUP to the pid file's
# process; a pid file without a number is an error, not a signal to anyone.
openrc_reload() { # pid file; prints what the stubs saw
	(
		ebegin() { :; }
		eend() { echo "eend $*"; return "$1"; }
		RC_SVCNAME=rngd
		# shellcheck disable=SC1090 # the built script
		. "$top_builddir/init/openrc/rngd"
		pidfile=$1
		reload
	)
}
# The stand-in says when its trap is set: a HUP before that would end it.
sh -c 'trap "echo hup >>$1" HUP; : >"$2"; while :; do sleep 0.05; done' sh "$T/openrc.hup" "$T/openrc.ready" &
pids+=($!)
echo $! >"$T/openrc.pid"
echo junk >"$T/openrc.bad"
wait_until 30 test -e "$T/openrc.ready"
out=$(openrc_reload "$T/openrc.pid")
if [ "$out" = "eend 0" ] && wait_until 10 test -s "$T/openrc.hup" &&
	! openrc_reload "$T/openrc.bad" >/dev/null && ! openrc_reload "$T/none" >/dev/null; then
	ok "openrc: reload sends SIGHUP to the pid file's process; a pid file without a pid is an error"
else
	fail "openrc: reload: '$out', hup file: $(cat "$T/openrc.hup" 2>/dev/null)"
fi
kill -TERM "${pids[-1]}" 2>/dev/null

for s in openrc sysv; do
	if grep -v '^[[:space:]]*#' "$top_builddir/init/$s/rngd" | grep -qw KILL; then
		fail "init/$s/rngd sends KILL"
	else
		ok "init/$s/rngd: no KILL outside comments"
	fi
done
grep -q '^retry="TERM/10"$' "$top_builddir/init/openrc/rngd" &&
	grep -q '^command_args="-b -p $pidfile${RNGD_USER:+ -D $RNGD_USER} ' "$top_builddir/init/openrc/rngd" &&
	grep -q '^extra_started_commands="reload"$' "$top_builddir/init/openrc/rngd" &&
	grep -q '^	after procfs$' "$top_builddir/init/openrc/rngd" &&
	grep -q '^	provide entropy$' "$top_builddir/init/openrc/rngd" &&
	ok "openrc: -b -p \$pidfile -D rngd:rngd, TERM only, reload, after procfs, provides entropy" ||
	fail "openrc: the script lacks one of its settings"

if ! is_root; then
	skip "the SysV script's actions: not root"
	finish
fi

# A slow writer of fresh random bytes into FIFO $1, stopped on exit.
slow_fifo() {
	mkfifo "$1"
	(while head -c 2500 /dev/urandom; do sleep 0.2; done >"$1") 2>/dev/null &
	pids+=($!)
}
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
at_least() { [ "$(size_of "$1")" -ge "$2" ]; }
# An exited process that its parent (here PID 1) has not reaped yet is gone too.
gone() { ! kill -0 "$1" 2>/dev/null || grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"; }

# sysv_case VARIANT: VARIANT "ssd" uses dpkg's start-stop-daemon, "plain" does without.
sysv_case() {
	local v=$1 d=$T/$1 script pid pid2 out rc t0 ms
	mkdir -p "$d"
	chmod 755 "$T" "$d"
	slow_fifo "$d/in.fifo"
	script=$d/rngd.init
	sed -e "s|^DAEMON=.*|DAEMON=$RNGD|" -e "s|^PIDFILE=.*|PIDFILE=$d/rngd.pid|" \
		-e "s|^\[ -r .* \] && \. .*|[ -r $d/default ] \&\& . $d/default|" \
		-e 's|^	"$DAEMON" --restore-kernel-hwrng$|	: left out in this test|' \
		"$top_builddir/init/sysv/rngd" >"$script"
	if [ "$v" = plain ]; then
		sed -i 's|^have_ssd() {.*|have_ssd() { false; }|' "$script"
	elif ! start-stop-daemon --version 2>/dev/null | grep -q '^start-stop-daemon'; then
		skip "sysv with start-stop-daemon: dpkg's is not installed"
		return
	fi
	chmod 755 "$script"
	cat >"$d/default" <<-END
		RNGD_ARGS="-x hwrng -x via -x rdseed -x rdrand -O file:t:path:$d/in.fifo -o $d/out --force-output -O rngd:status-file: -x jitter"
		RNGD_USER=daemon:daemon
	END
	out=$("$script" status 2>&1)
	rc=$?
	[ $rc -eq 3 ] || { fail "sysv $v: status before start: exit $rc ($out), want 3"; return; }
	out=$("$script" start 2>&1) || { fail "sysv $v: start: $out"; return; }
	pid=$(cat "$d/rngd.pid" 2>/dev/null)
	if [ -z "$pid" ] || ! wait_until 20 at_least "$d/out" 2500; then
		fail "sysv $v: start: no daemon feeding -o ($out)"
		return
	fi
	pids+=("$pid")
	[ "$(ps -o user= -p "$pid")" = daemon ] || { fail "sysv $v: runs as $(ps -o user= -p "$pid"), want daemon"; return; }
	out=$("$script" status 2>&1) || { fail "sysv $v: status while running: exit $? ($out)"; return; }
	"$script" start >/dev/null 2>&1 && [ "$(cat "$d/rngd.pid")" = "$pid" ] ||
		{ fail "sysv $v: a second start did not leave the running daemon alone"; return; }
	for a in reload force-reload; do
		"$script" $a >/dev/null 2>&1 && kill -0 "$pid" ||
			{ fail "sysv $v: $a: exit $? or the daemon died"; return; }
	done
	"$script" restart >/dev/null 2>&1 || { fail "sysv $v: restart failed"; return; }
	pid2=$(cat "$d/rngd.pid" 2>/dev/null)
	[ -n "$pid2" ] && pids+=("$pid2")
	if [ -z "$pid2" ] || [ "$pid2" = "$pid" ] || ! wait_until 10 gone "$pid"; then
		fail "sysv $v: restart: old $pid, new ${pid2:-none}"
		return
	fi
	t0=$(date +%s%N)
	out=$("$script" stop 2>&1) || { fail "sysv $v: stop: $out"; return; }
	ms=$((($(date +%s%N) - t0) / 1000000))
	# The stop waits for the daemon; the bound is generous (a loaded machine is slow), the
	# time is reported.
	if ! gone "$pid2" || [ $ms -gt 10000 ]; then
		fail "sysv $v: stop: daemon $(gone "$pid2" && echo gone || echo running) after $ms ms"
		return
	fi
	wait_until 5 test ! -e "$d/rngd.pid" || { fail "sysv $v: pid file left after stop"; return; }
	"$script" stop >/dev/null 2>&1 || { fail "sysv $v: stop when stopped: exit $?"; return; }
	"$script" status >/dev/null 2>&1
	rc=$?
	[ $rc -eq 3 ] || { fail "sysv $v: status after stop: exit $rc, want 3"; return; }
	"$script" reload >/dev/null 2>&1
	rc=$?
	[ $rc -eq 7 ] || { fail "sysv $v: reload when stopped: exit $rc, want 7"; return; }
	# Nothing to do here (exit 66): a start that says so, not a failure.
	echo 'RNGD_ARGS="-x hwrng -x via -x rdseed -x rdrand -O rngd:status-file:"' >"$d/default"
	out=$("$script" start 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q "nothing to do" <<<"$out" || [ -e "$d/rngd.pid" ]; then
		fail "sysv $v: start with no usable source: exit $rc: $out"
		return
	fi
	ok "sysv $v: status 3, start (as daemon, feeding), status 0, start again, reload, force-reload, restart, stop in $ms ms, stop again, status 3, reload 7; nothing to do: exit 0 saying so"
}
sysv_case ssd
sysv_case plain
finish
