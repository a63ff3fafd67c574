#!/bin/bash
# The daemon's life around the happy path, without touching the machine's hwrng: a FIFO
# created after start, reloads (transactional, bounded, 200 in a row without a leak, what
# a reload says it did). Each case prints "ok", "skip: why" or "FAIL: why".
set -u
. "$(dirname "$0")/lib.sh" lifecycle
# An empty configuration file (the configuration must be a regular file: not /dev/null).
EMPTY=$T/empty.conf
: >"$EMPTY"

# Seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }
# $1 - $2 in milliseconds.
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%d", (a - b) * 1000}'; }
in_log() { grep -q "$2" "$1" 2>/dev/null; }
count_in_log() { grep -c "$2" "$1"; }
# Whether log $1 holds at least $3 lines matching $2 (counted anew at each call).
log_has_n() { [ "$(grep -c "$2" "$1")" -ge "$3" ]; }
fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
threads_of() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
rss_kb_of() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# Built with AddressSanitizer (--enable-sanitizers)?
asan_build() { grep -q __asan_init "$RNGD" 2>/dev/null; }
# A writer of random bytes into FIFO $1, stopped on exit.
feed_fifo() {
	cat /dev/urandom >"$1" 2>/dev/null &
	pids+=($!)
}

# A FIFO path that does not exist at start: the source waits for it (no exit 66), and
# runs within 1.5 s of the FIFO being created 2 s later. As root, through the real kernel
# sink: the first credited RNDADDENTROPY must follow as fast.
test_fifo_created_later() {
	local log=$T/late.log fifo=$T/late.fifo made pid seen
	local -a sink=(-t)
	is_root && sink=(-O file:late:quality:8)
	start_logged "$log" 30 "file:late: waiting" "FIFO created later" -f "${NOSRC[@]}" -O "file:late:path:$fifo" "${sink[@]}" || return
	sleep 2
	kill -0 "$pid" 2>/dev/null || {
		fail "FIFO created later: rngd exited while waiting: $(cat "$log")"
		return
	}
	mkfifo "$fifo"
	made=$(now)
	feed_fifo "$fifo"
	local want="file:late: running"
	is_root && want="first injection: .* [1-9][0-9]* bits credited"
	if ! wait_until 30 in_log "$log" "$want"; then
		fail "FIFO created later: never '$want': $(cat "$log")"
		return
	fi
	seen=$(now)
	local ms
	ms=$(ms_between "$seen" "$made")
	if [ "$ms" -le 1500 ]; then
		ok "FIFO created 2 s after start: '$(grep -o "$want" "$log" | head -1)' ${ms} ms after mkfifo (limit 1500)"
	else
		fail "FIFO created later: ${ms} ms from mkfifo to '$want' (limit 1500)"
	fi
}

# 200 SIGHUPs in a row under a fast FIFO source, every other one changing the source (so
# that the set is rebuilt: new threads and fds, the old retired): fds and threads back to
# their start values, RSS growth under 1 MB, output still flowing, every reload < 100 ms.
test_reload_200() {
	local log=$T/r200.log conf=$T/r200.conf fifo=$T/r200.fifo pid
	local fd0 th0 rss0 fd1 th1 rss1 max i n
	mkfifo "$fifo"
	feed_fifo "$fifo"
	write_conf() { printf '[rngd]\nstatus-file =\n[source file:fast]\npath = %s\nquality = %s\n' "$fifo" "$1" >"$conf"; }
	write_conf 0
	start_logged "$log" 30 "test: " "200 reloads" -f -t "${NOSRC[@]}" -c "$conf" || return
	# One reload first, so that what the first rebuild allocates for good is in the base.
	write_conf 1
	kill -HUP "$pid"
	wait_until 30 log_has_n "$log" "configuration reloaded" 1
	fd0=$(fds_of "$pid") th0=$(threads_of "$pid") rss0=$(rss_kb_of "$pid")
	for i in $(seq 1 200); do
		write_conf $((i % 2))
		kill -HUP "$pid"
		if ! wait_until 30 log_has_n "$log" "configuration reloaded\|keeping the old" $((i + 1)); then
			fail "200 reloads: reload $i not done within 30 s: $(tail -3 "$log")"
			return
		fi
	done
	n=$(count_in_log "$log" "test: ")
	if ! wait_until 30 log_has_n "$log" "test: " $((n + 1)); then
		fail "200 reloads: no test line after the reloads"
		return
	fi
	fd1=$(fds_of "$pid") th1=$(threads_of "$pid") rss1=$(rss_kb_of "$pid")
	max=$(grep -o "reloaded in [0-9.]* ms" "$log" | awk '{if ($3 > m) m = $3} END {print m + 0}')
	local refused
	refused=$(count_in_log "$log" "keeping the old")
	local rate
	rate=$(grep "test: " "$log" | tail -1 | sed 's/.*test: //')
	if [ "$refused" -ne 0 ]; then
		fail "200 reloads: $refused kept the old configuration: $(grep "keeping the old" "$log" | head -2)"
	elif [ "$fd1" -ne "$fd0" ] || [ "$th1" -ne "$th0" ]; then
		fail "200 reloads: fds $fd0 -> $fd1, threads $th0 -> $th1"
	elif ! asan_build && [ $((rss1 - rss0)) -ge 1024 ]; then
		fail "200 reloads: RSS grew by $((rss1 - rss0)) kB ($rss0 -> $rss1)"
	elif awk -v m="$max" 'BEGIN {exit !(m >= 1000)}'; then
		# A bound that catches a stall, not a slow machine (the figure is reported).
		fail "200 reloads: the slowest took $max ms (limit 1000)"
	elif ! kill -0 "$pid" 2>/dev/null; then
		fail "200 reloads: rngd exited"
	else
		ok "200 reloads: fds $fd0 -> $fd1, threads $th0 -> $th1, RSS $rss0 -> $rss1 kB$(asan_build && echo " (not checked: ASan's quarantine keeps freed memory)"), slowest reload $max ms, output goes on ($rate)"
	fi
	kill -TERM "$pid"
	wait "$pid"
}

# What a reload says: unchanged sources keep running; user/group/random-device changes
# are named and wait for a restart; a configuration that cannot be read, is empty or has
# no usable source keeps the old one.
test_reload_messages() {
	local log=$T/msg.log conf=$T/msg.conf fifo=$T/msg.fifo pid
	mkfifo "$fifo"
	feed_fifo "$fifo"
	printf '[rngd]\nstatus-file =\n[source file:m]\npath = %s\n' "$fifo" >"$conf"
	start_logged "$log" 30 "file:m: running" "reload messages" -f -t "${NOSRC[@]}" -c "$conf" || return
	hup_expect() { # what, pattern
		local n
		n=$(count_in_log "$log" "reloading the configuration")
		kill -HUP "$pid"
		if wait_until 30 log_has_n "$log" "reloading the configuration" $((n + 1)) &&
			wait_until 30 in_log "$log" "$2"; then
			ok "reload, $1: '$(grep -o "$2.*" "$log" | tail -1 | cut -c1-140)'"
		else
			fail "reload, $1: no '$2': $(tail -3 "$log")"
		fi
	}
	hup_expect "unchanged sources" "unchanged and kept running"
	printf '[rngd]\nstatus-file =\nuser = nobody\n[source file:m]\npath = %s\n' "$fifo" >"$conf"
	hup_expect "user changed" "'user', 'group' change only with a restart"
	: >"$conf"
	hup_expect "empty file" "is empty; keeping the old configuration"
	rm -f "$conf"
	hup_expect "file gone" "keeping the old configuration"
	printf '[rngd]\nstatus-file =\n[source file:m]\npath = %s\n' "$T" >"$conf"
	hup_expect "a directory as the source" "misconfigured; keeping the old one"
	printf '[rngd]\nstatus-file =\n[source file:m]\npath = %s\nenabled = no\n' "$fifo" >"$conf"
	hup_expect "no usable source" "no usable source in the new configuration; keeping the old one"
	if kill -0 "$pid" 2>/dev/null && in_log "$log" "file:m: running"; then
		ok "reload failures: the old set still runs"
	else
		fail "reload failures: rngd is gone: $(tail -3 "$log")"
	fi
	kill -TERM "$pid"
	wait "$pid"
}

# -O rngd:KEY:VALUE sets any [rngd] key, validated like the file.
test_option_rngd_keys() {
	local out rc
	out=$("$RNGD" --check-config -c "$EMPTY" -O rngd:max-age:5 -O rngd:status-file: 2>&1)
	rc=$?
	[ $rc -eq 0 ] && ok "-O rngd:max-age:5 -O rngd:status-file: accepted ($out)" ||
		fail "-O rngd:KEY:VALUE: exit $rc: $out"
	out=$("$RNGD" --check-config -c "$EMPTY" -O rngd:max-age:0 2>&1)
	rc=$?
	[ $rc -eq 78 ] && ok "-O rngd:max-age:0 refused: exit 78 ($out)" ||
		fail "-O rngd:max-age:0: exit $rc, want 78: $out"
}

# --status with the status file disabled says so.
test_status_disabled() {
	local out rc
	out=$("$RNGD" --status -c "$EMPTY" -O rngd:status-file: 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [[ $out == *"status file is disabled"* ]] &&
		ok "--status with status-file disabled: exit 1 ($out)" ||
		fail "--status with status-file disabled: exit $rc: $out"
}

# --status runs the helper beside the daemon's binary (else the installed one), and the
# daemon does not link jansson: only the helper reads JSON (bench/README.md, footprint).
test_status_helper() {
	local helper=$top_builddir/rngd-status out rc
	if emulated; then
		skip "status helper: under $RNGD_EMU, rngd would exec a foreign helper (no binfmt handler)"
		return
	fi
	if ! command -v readelf >/dev/null; then
		skip "status helper: no readelf to read the daemon's libraries"
	elif readelf -d "$RNGD" | grep -q 'NEEDED.*libjansson'; then
		fail "the daemon links jansson: $(readelf -d "$RNGD" | grep NEEDED | tr -s ' ' | tr '\n' ' ')"
	else
		ok "the daemon does not link jansson"
	fi
	out=$("$helper" 2>&1)
	rc=$?
	[ $rc -eq 2 ] && [[ $out == *usage* ]] && ok "rngd-status without arguments: exit 2 ($out)" ||
		fail "rngd-status without arguments: exit $rc, want 2: $out"
	out=$("$helper" yaml "$T/none.json" 2>&1)
	rc=$?
	[ $rc -eq 2 ] && [[ $out == *"unknown format 'yaml'"* ]] &&
		ok "rngd-status yaml: exit 2 ($out)" || fail "rngd-status yaml: exit $rc, want 2: $out"
	out=$("$RNGD" --status -c "$EMPTY" -O "rngd:status-file:$T/none.json" 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [[ $out == *"$T/none.json"*"is rngd running?"* ]] &&
		ok "--status through the helper, no status file: exit 1 ($out)" ||
		fail "--status through the helper, no status file: exit $rc, want 1: $out"
	# A daemon binary without its helper beside it, and none installed: a clear error.
	mkdir -p "$T/alone" && cp "$RNGD" "$T/alone/rngd" || { fail "cannot copy $RNGD"; return; }
	out=$("$T/alone/rngd" --status -c "$EMPTY" -O "rngd:status-file:$T/none.json" 2>&1)
	rc=$?
	if [[ $out == *"cannot run '"*"rngd-status'"* ]] && [ $rc -eq 1 ]; then
		ok "--status without its helper: exit 1 ($out)"
	elif [[ $out == *"is rngd running?"* ]]; then
		skip "--status without its helper: one is installed where this build looks ($out)"
	else
		fail "--status without its helper: exit $rc, want 1 and 'cannot run': $out"
	fi
}

# Background daemons on an idle FIFO (no writer: nothing to feed, nothing read from the
# hwrng), each with its own pid and status file. Prints nothing; $! is not the daemon.
bg_rngd() { # pid-file status-file [more options]
	local pidf=$1 st=$2
	shift 2
	[ -p "$T/idle.fifo" ] || mkfifo "$T/idle.fifo"
	"$RNGD" "${NOSRC[@]}" -O "file:idle:path:$T/idle.fifo" -p "$pidf" \
		-O "rngd:status-file:$st" "$@"
}
pid_in() { [ -s "$1" ] && cat "$1"; }
status_pid() { "$RNGD" --status --json -c "$EMPTY" -O "rngd:status-file:$1" 2>/dev/null |
	awk -F': ' '/"pid"/ {gsub(/,/, "", $2); print $2}'; }
gone() { ! kill -0 "$1" 2>/dev/null; }
status_is() { [ "$(status_pid "$1")" = "$2" ]; }

# One daemon per pid file; SIGKILL then a new start; FIFOs and symlinks at the paths.
test_pid_file() {
	local first second rc out
	is_root || { skip "pid file: needs root to feed the kernel in background mode"; return; }
	chmod 755 "$T"
	bg_rngd "$T/rngd.pid" "$T/st/status.json" 2>"$T/bg1.err"
	rc=$?
	first=$(pid_in "$T/rngd.pid")
	[ $rc -eq 0 ] && [ -n "$first" ] || {
		fail "pid file: the first daemon did not start: exit $rc: $(cat "$T/bg1.err")"
		return
	}
	pids+=("$first")
	wait_until 30 status_is "$T/st/status.json" "$first"
	out=$(bg_rngd "$T/rngd.pid" "$T/st2/status.json" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [[ $out == *"pid $first"* ]]; then
		ok "second daemon with the same pid file: exit $rc: $out"
	else
		fail "second daemon with the same pid file: exit $rc, want non-zero naming pid $first: $out"
	fi
	kill -KILL "$first"
	wait_until 30 gone "$first"
	out=$("$RNGD" --status -c "$EMPTY" -O "rngd:status-file:$T/st/status.json" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [[ $out == *"pid $first) is not running"* ]]; then
		ok "--status after kill -9: exit 1 ($out)"
	else
		fail "--status after kill -9: exit $rc, want 1 saying pid $first is not running: $out"
	fi
	bg_rngd "$T/rngd.pid" "$T/st/status.json" 2>"$T/bg2.err"
	rc=$?
	second=$(pid_in "$T/rngd.pid")
	[ -n "$second" ] && pids+=("$second")
	if [ $rc -eq 0 ] && [ -n "$second" ] && [ "$second" != "$first" ] &&
		wait_until 30 status_is "$T/st/status.json" "$second"; then
		ok "after kill -9 of pid $first: a new start takes the pid file, --status shows pid $second only"
	else
		fail "after kill -9: exit $rc, pid file '$second', status pid '$(status_pid "$T/st/status.json")': $(cat "$T/bg2.err")"
	fi
	kill -TERM "$second"
	wait_until 30 gone "$second"
	if [ -e "$T/rngd.pid" ]; then
		fail "pid file left behind after SIGTERM"
	else
		ok "pid file removed at exit"
	fi

	# A restart meets the keeper of a daemon that has just exited (after a -D drop) as it
	# removes the pid file: the lock held by a process the file does not name (a pid that
	# has gone), then the file removed. The new start waits for it and takes a file of its
	# own; it does not refuse, nor lock the removed one.
	local kept=$T/kept.pid fifth="" dead
	dead=$(sh -c 'echo $$')
	echo "$dead" >"$kept"
	flock -x "$kept" sh -c ': >"$1.held"; sleep 0.5; rm -f "$2"' sh "$T/kept" "$kept" &
	wait_until 30 test -e "$T/kept.held"
	bg_rngd "$kept" "$T/st5/status.json" 2>"$T/kept.err"
	rc=$?
	fifth=$(pid_in "$kept")
	[ -n "$fifth" ] && pids+=("$fifth")
	if [ $rc -eq 0 ] && [ -n "$fifth" ] && [ "$fifth" != "$dead" ] &&
		wait_until 30 status_is "$T/st5/status.json" "$fifth"; then
		ok "pid file held by a keeper naming a gone pid $dead, then removed: the new start waits and writes pid $fifth"
	else
		fail "pid file held by a keeper, then removed: exit $rc, pid file '$fifth': $(cat "$T/kept.err")"
	fi
	[ -n "$fifth" ] && kill -TERM "$fifth"

	mkfifo "$T/pid.fifo"
	timeout 10 "$RNGD" "${NOSRC[@]}" -O "file:idle:path:$T/idle.fifo" -p "$T/pid.fifo" \
		-O "rngd:status-file:$T/st3/status.json" 2>"$T/fifo.err"
	rc=$?
	local third=""
	wait_until 30 test -s "$T/st3/status.json" && third=$(status_pid "$T/st3/status.json")
	[ -n "$third" ] && pids+=("$third")
	if [ $rc -eq 0 ] && grep -q "not a regular file" "$T/fifo.err"; then
		ok "a FIFO at the pid-file path: no hang, refused: $(head -1 "$T/fifo.err")"
	else
		fail "a FIFO at the pid-file path: exit $rc: $(cat "$T/fifo.err")"
	fi
	[ -n "$third" ] && kill -TERM "$third"

	ln -s "$T/planted" "$T/pid.link"
	bg_rngd "$T/pid.link" "$T/st4/status.json" 2>"$T/link.err"
	rc=$?
	local fourth=""
	wait_until 30 test -s "$T/st4/status.json" && fourth=$(status_pid "$T/st4/status.json")
	[ -n "$fourth" ] && pids+=("$fourth")
	if [ $rc -eq 0 ] && [ ! -e "$T/planted" ] && grep -q "symlink" "$T/link.err"; then
		ok "a symlink at the pid-file path is not followed: $(head -1 "$T/link.err")"
	else
		fail "a symlink at the pid-file path: exit $rc, planted $(ls "$T/planted" 2>&1): $(cat "$T/link.err")"
	fi
	[ -n "$fourth" ] && kill -TERM "$fourth"
}

# The status directory: a root run, then a -D nobody:nogroup run with the same path; a
# symlink in the directory's place; the pid file removed at exit after the drop.
test_status_dir() {
	local st=$T/run/rngd/status.json pid rc out
	is_root || { skip "status directory: needs root"; return; }
	chmod 755 "$T"
	bg_rngd "$T/root.pid" "$st" 2>"$T/sd1.err"
	pid=$(pid_in "$T/root.pid")
	[ -n "$pid" ] || { fail "status dir: root run did not start: $(cat "$T/sd1.err")"; return; }
	pids+=("$pid")
	wait_until 30 test -s "$st"
	kill -TERM "$pid"
	wait_until 30 gone "$pid"
	bg_rngd "$T/drop.pid" "$st" -D nobody:nogroup 2>"$T/sd2.err"
	rc=$?
	pid=$(pid_in "$T/drop.pid")
	[ -n "$pid" ] && pids+=("$pid")
	if [ $rc -eq 0 ] && [ -n "$pid" ] && wait_until 30 status_is "$st" "$pid" &&
		out=$("$RNGD" --status -c "$EMPTY" -O "rngd:status-file:$st" 2>&1); then
		ok "root run, then -D nobody:nogroup: status written, --status works ($(echo "$out" | head -1)); dir now $(stat -c %U "$T/run/rngd")"
	else
		fail "root run, then -D nobody: exit $rc: $(cat "$T/sd2.err") / $out"
	fi
	kill -TERM "$pid"
	if wait_until 30 gone "$pid" && wait_until 30 test ! -e "$T/drop.pid"; then
		ok "-D nobody:nogroup: pid file in a root-only directory removed at exit"
	else
		fail "-D nobody:nogroup: pid file left behind: $(ls -l "$T/drop.pid" 2>&1)"
	fi

	mkdir "$T/target"
	ln -s "$T/target" "$T/sdlink"
	bg_rngd "$T/sl.pid" "$T/sdlink/status.json" -D nobody:nogroup 2>"$T/sd3.err"
	rc=$?
	pid=$(pid_in "$T/sl.pid")
	[ -n "$pid" ] && pids+=("$pid")
	wait_until 30 grep -q "is a symlink: not followed" "$T/sd3.err"
	if [ $rc -eq 0 ] && grep -q "is a symlink: not followed" "$T/sd3.err" &&
		[ "$(stat -c %U "$T/target")" = root ] && [ -z "$(ls "$T/target")" ]; then
		ok "a symlink in place of the status directory is not followed: $(head -1 "$T/sd3.err")"
	else
		fail "a symlink in place of the status directory: exit $rc, target $(stat -c %U "$T/target") $(ls "$T/target"): $(cat "$T/sd3.err")"
	fi
	if [ -n "$pid" ]; then
		echo planted >"$T/target/status.json"
		kill -TERM "$pid"
		if wait_until 30 gone "$pid" && [ -e "$T/target/status.json" ]; then
			ok "at exit, nothing is removed through the symlinked status directory"
		else
			fail "the exit removed $T/target/status.json through the symlink"
		fi
	fi
}

# Errors that name their cause and exit with the right code.
test_error_causes() {
	local out rc
	expect() { # want-rc what command...
		local want=$1 what=$2
		shift 2
		out=$("$@" 2>&1)
		rc=$?
		[ $rc -eq "$want" ] && ok "$what: exit $rc ($(echo "$out" | tail -1 | cut -c1-150))" ||
			fail "$what: exit $rc, want $want: $out"
	}
	expect 0 "--check-config -D 65534 (numeric uid)" "$RNGD" --check-config -c "$EMPTY" -D 65534
	expect 0 "--check-config -D 4242:4343 (numeric ids without entries)" \
		"$RNGD" --check-config -c "$EMPTY" -D 4242:4343
	expect 78 "--check-config with an unknown user" \
		"$RNGD" --check-config -c "$EMPTY" -D no-such-user-here
	expect 78 "--check-config with an unknown group" \
		"$RNGD" --check-config -c "$EMPTY" -D nobody:no-such-group-here
	# The limit caps descriptor numbers, so what the harness left open decides where the
	# daemon runs out: close everything above 2 first. With 0-2 only, 8 is enough for a
	# -t run with /dev/hwrng alone; 6 runs out at the source's open, 5 at the main loop.
	local closeall='for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done'
	for n in 5 6; do
		expect 1 "ulimit -n $n: EMFILE is a runtime failure, said at the default level" \
			bash -c "$closeall; ulimit -n $n; exec timeout 10 '$RNGD' -f -t ${NOCPU[*]} -O rngd:status-file:"
		[[ $out == *"Too many open files"* ]] || fail "ulimit -n $n: the cause is not named: $out"
	done
	if [ -c /dev/hwrng ] && grep -qv '^none$' /sys/class/misc/hw_random/rng_available 2>/dev/null &&
		grep -q '[a-z]' /sys/class/misc/hw_random/rng_current 2>/dev/null &&
		[ "$(cat /sys/class/misc/hw_random/rng_current)" != none ]; then
		expect 78 "an unknown hwrng backend is a configuration error" \
			timeout 10 "$RNGD" -f -t "${NOCPU[@]}" -O hwrng:backend:nosuch -O rngd:status-file:
	else
		skip "unknown hwrng backend: no hwrng with a backend here"
	fi
	"$RNGD" --help | grep -q -- "--ignorefail" && fail "--help still documents -i" ||
		ok "--help no longer promises what -i does not do"
	expect 0 "-i still accepted" "$RNGD" -i --check-config -c "$EMPTY"
	"$RNGD" --help | grep -q "(@*[^ ]*/rngd.conf)" &&
		ok "default configuration: $("$RNGD" --help | grep -o "(/[^ ]*rngd.conf)")"
}

# Synchronous signals (SIGILL 4, SIGFPE 8, SIGBUS 7, SIGSEGV 11) are blocked in no thread.
test_sync_signals() {
	local log=$T/sig.log fifo=$T/sig.fifo pid bad=""
	mkfifo "$fifo"
	feed_fifo "$fifo"
	start_logged "$log" 30 "file:s: running" "sync signals" -f -t "${NOSRC[@]}" -O "file:s:path:$fifo" -O rngd:status-file: || return
	local n=0
	for st in /proc/"$pid"/task/*/status; do
		local blk
		blk=$(awk '/^SigBlk:/ {print $2}' "$st")
		n=$((n + 1))
		for sig in 4 7 8 11; do
			(((0x$blk >> (sig - 1)) & 1)) && bad="$bad ${st%/status}:$sig"
		done
	done
	[ -z "$bad" ] && ok "synchronous signals unblocked in all $n threads" ||
		fail "synchronous signals blocked in:$bad"
	kill -TERM "$pid"
	wait "$pid"
}

test_status_disabled
test_status_helper
test_error_causes
test_sync_signals
test_pid_file
test_status_dir
test_option_rngd_keys
test_fifo_created_later
test_reload_200
test_reload_messages
finish
