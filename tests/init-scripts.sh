#!/bin/bash
# The init scripts for systems without systemd (init/): shellcheck on both; the LSB/SysV
# script's actions run for real against the built daemon (start, status, start again,
# reload, restart, stop within a second of TERM, stop again, status; a start with nothing to
# do), once with dpkg's start-stop-daemon and once without it (BusyBox-style systems).
# Its copy points at the build tree, a pid file and an environment file in a scratch
# directory; root's steps around the daemon (--grant-kernel-hwrng before a start,
# --restore-kernel-hwrng after a stop) run tests/rngd-root-test on a fake hw_random
# directory: granted while the daemon runs, put back after; and a daemon that does not stop
# on TERM gets no restore while it runs. The VM test runs them on the real thing, and
# OpenRC's script.
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
if [ "$out" = "eend 0" ] && wait_until 30 test -s "$T/openrc.hup" &&
	! openrc_reload "$T/openrc.bad" >/dev/null && ! openrc_reload "$T/none" >/dev/null; then
	ok "openrc: reload sends SIGHUP to the pid file's process; a pid file without a pid is an error"
else
	fail "openrc: reload: '$out', hup file: $(cat "$T/openrc.hup" 2>/dev/null)"
fi
kill -TERM "${pids[-1]}" 2>/dev/null
# OpenRC's root steps around the daemon: the grant to RNGD_USER's group before it (none when
# it stays root), the restore after it.
openrc_steps() { # RNGD_USER; prints the steps' arguments
	(
		RC_SVCNAME=rngd
		RNGD_USER=$1
		# shellcheck disable=SC1090 # the built script
		. "$top_builddir/init/openrc/rngd"
		command=echo
		start_pre && stop_post
	) | tr '\n' ' '
}
out="$(openrc_steps rngd:rngd)/ $(openrc_steps '')/ $(openrc_steps root)"
if [ "$out" = "--grant-kernel-hwrng=rngd --restore-kernel-hwrng / --restore-kernel-hwrng / --grant-kernel-hwrng=root --restore-kernel-hwrng " ]; then
	ok "openrc: start_pre grants rng_quality to RNGD_USER's group (none as root), stop_post restores"
else
	fail "openrc: root's steps: $out"
fi

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

ROOTTEST=$top_builddir/tests/rngd-root-test
[ -x "$ROOTTEST" ] || make -C "$top_builddir" tests/rngd-root-test >/dev/null 2>&1
# A copy of the SysV script in directory $2 for VARIANT $1 ("ssd": dpkg's
# start-stop-daemon, "plain": without), running daemon $3 and root's steps $4; "ssd" without
# dpkg's start-stop-daemon fails (the caller skips).
sysv_copy() {
	local v=$1 d=$2 script=$2/rngd.init
	sed -e "s|^DAEMON=.*|DAEMON=$3|" -e "s|^PIDFILE=.*|PIDFILE=$d/rngd.pid|" \
		-e "s|^\[ -r .* \] && \. .*|[ -r $d/default ] \&\& . $d/default|" \
		-e "s#\"\$DAEMON\" --\(grant\|restore\)-kernel-hwrng#\"$4\" --\1-kernel-hwrng#" \
		"$top_builddir/init/sysv/rngd" >"$script"
	[ "$(grep -c -- "\"$4\" --\(grant\|restore\)-kernel-hwrng" "$script")" = 3 ] ||
		{ echo "root's steps not found in the script"; return 1; }
	if [ "$v" = plain ]; then
		sed -i 's|^have_ssd() {.*|have_ssd() { false; }|' "$script"
	elif ! start-stop-daemon --version 2>/dev/null | grep -q '^start-stop-daemon'; then
		return 1
	fi
	chmod 755 "$script"
}
# The fake hw_random directory of root's steps (tests/rngd-root-test) in $1, root's 0644.
fake_sysfs() {
	export RNGD_TEST_SYSFS=$1/sys RNGD_TEST_RUNTIME_DIR=$1/run RNGD_TEST_ROOT_DIR=$1/rngd-root
	mkdir -m 755 "$1/sys" "$1/run"
	echo "virtio_rng.0 none" >"$1/sys/rng_available"
	echo virtio_rng.0 >"$1/sys/rng_current"
	echo 1000 >"$1/sys/rng_quality"
	echo 0 >"$1/sys/rng_selected"
	chmod 644 "$1"/sys/*
}
quality_is() { [ "$(stat -c %U:%G:%a "$RNGD_TEST_SYSFS/rng_quality")" = "$1" ]; }

# sysv_case VARIANT: VARIANT "ssd" uses dpkg's start-stop-daemon, "plain" does without.
sysv_case() {
	local v=$1 d=$T/$1 script=$T/$1/rngd.init pid pid2 out rc t0 ms
	mkdir -p "$d"
	chmod 755 "$T" "$d"
	slow_fifo "$d/in.fifo"
	if ! out=$(sysv_copy "$v" "$d" "$RNGD" "$ROOTTEST"); then
		[ -n "$out" ] && fail "sysv $v: $out" || skip "sysv with start-stop-daemon: dpkg's is not installed"
		return
	fi
	fake_sysfs "$d"
	cat >"$d/default" <<-END
		RNGD_ARGS="-x hwrng -x via -x rdseed -x rdrand -O file:t:path:$d/in.fifo -o $d/out --force-output -O rngd:status-file: -x jitter"
		RNGD_USER=daemon:daemon
	END
	out=$("$script" status 2>&1)
	rc=$?
	[ $rc -eq 3 ] || { fail "sysv $v: status before start: exit $rc ($out), want 3"; return; }
	out=$("$script" start 2>&1) || { fail "sysv $v: start: $out"; return; }
	pid=$(cat "$d/rngd.pid" 2>/dev/null)
	if [ -z "$pid" ] || ! wait_until 30 at_least "$d/out" 2500; then
		fail "sysv $v: start: no daemon feeding -o ($out)"
		return
	fi
	pids+=("$pid")
	[ "$(ps -o user= -p "$pid")" = daemon ] || { fail "sysv $v: runs as $(ps -o user= -p "$pid"), want daemon"; return; }
	quality_is root:daemon:664 && [ -s "$d/rngd-root/kernel-hwrng.grant" ] ||
		{ fail "sysv $v: start: rng_quality $(stat -c %U:%G:%a "$d/sys/rng_quality"), want root:daemon:664 (granted), and root's record"; return; }
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
	if [ -z "$pid2" ] || [ "$pid2" = "$pid" ] || ! wait_until 30 gone "$pid"; then
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
	wait_until 30 test ! -e "$d/rngd.pid" || { fail "sysv $v: pid file left after stop"; return; }
	quality_is root:root:644 && [ ! -e "$d/rngd-root" ] ||
		{ fail "sysv $v: stop: rng_quality $(stat -c %U:%G:%a "$d/sys/rng_quality"), want root:root:644 (put back), root's record $(ls "$d/rngd-root" 2>&1)"; return; }
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
	quality_is root:root:644 && [ ! -e "$d/rngd-root" ] ||
		{ fail "sysv $v: nothing to do: rng_quality $(stat -c %U:%G:%a "$d/sys/rng_quality") after the failed start, want root:root:644"; return; }
	ok "sysv $v: status 3, start (as daemon, feeding; rng_quality granted), status 0, start again, reload, force-reload, restart, stop in $ms ms (rng_quality put back), stop again, status 3, reload 7; nothing to do: exit 0 saying so, nothing left granted"
}

# sysv_stuck VARIANT: a "daemon" that ignores TERM (a copy of sleep named rngd) is not
# stopped, and root's restore does not run while it runs; once it is gone, a stop runs it.
# The script's 10 s of TERM are cut to 1 s here.
sysv_stuck() {
	local v=$1 d=$T/stuck-$1 pid out
	mkdir -p "$d"
	cp "$(command -v sleep)" "$d/rngd"
	printf '#!/bin/sh\necho "$*" >>%s\n' "$d/steps.log" >"$d/steps"
	chmod 755 "$d" "$d/steps"
	sysv_copy "$v" "$d" "$d/rngd" "$d/steps" >/dev/null || return
	sed -i -e 's|--retry=TERM/10|--retry=TERM/1|' -e 's|\[ \$n -ge 100 \]|[ $n -ge 10 ]|' "$d/rngd.init"
	: >"$d/default"
	(
		trap '' TERM
		exec "$d/rngd" 600
	) &
	pid=$!
	echo "$pid" >"$d/rngd.pid"
	# shellcheck disable=SC2016 # read again at each try, not once before the wait
	wait_until 30 sh -c '[ "$(cat "/proc/$1/comm" 2>/dev/null)" = rngd ]' sh "$pid"
	out=$("$d/rngd.init" stop 2>&1)
	rc=$?
	kill -0 "$pid" 2>/dev/null
	local alive=$?
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ $rc -eq 0 ] || [ $alive -ne 0 ] || [ -s "$d/steps.log" ]; then
		fail "sysv $v: a daemon deaf to TERM: stop exit $rc ($out), alive $alive, root's steps: $(cat "$d/steps.log" 2>/dev/null)"
		return
	fi
	"$d/rngd.init" stop >/dev/null 2>&1
	if [ "$(cat "$d/steps.log")" = "--restore-kernel-hwrng" ]; then
		ok "sysv $v: a daemon deaf to TERM: stop fails, no restore while it runs; after it is gone, stop restores"
	else
		fail "sysv $v: stop after the stuck daemon was killed: root's steps '$(cat "$d/steps.log")', want the restore"
	fi
}
sysv_case ssd
sysv_case plain
sysv_stuck ssd
sysv_stuck plain
finish
