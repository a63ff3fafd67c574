#!/bin/bash
# The daemon's life around the happy path, without touching the machine's hwrng: a FIFO
# created after start, reloads (transactional, bounded, 200 in a row without a leak, what
# a reload says it did). Each case prints "ok", "skip: why" or "FAIL: why".
set -u
. "$(dirname "$0")/lib.sh" lifecycle

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
	"$RNGD" -f "${NOSRC[@]}" -O "file:late:path:$fifo" "${sink[@]}" 2>"$log" &
	pid=$!
	pids+=("$pid")
	if ! wait_until 10 in_log "$log" "file:late: waiting"; then
		fail "FIFO created later: no 'waiting' at start: $(head -3 "$log")"
		return
	fi
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
	if ! wait_until 10 in_log "$log" "$want"; then
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
	"$RNGD" -f -t "${NOSRC[@]}" -c "$conf" 2>"$log" &
	pid=$!
	pids+=("$pid")
	if ! wait_until 10 in_log "$log" "test: "; then
		fail "200 reloads: rngd never ran: $(head -5 "$log")"
		return
	fi
	# One reload first, so that what the first rebuild allocates for good is in the base.
	write_conf 1
	kill -HUP "$pid"
	wait_until 10 log_has_n "$log" "configuration reloaded" 1
	fd0=$(fds_of "$pid") th0=$(threads_of "$pid") rss0=$(rss_kb_of "$pid")
	for i in $(seq 1 200); do
		write_conf $((i % 2))
		kill -HUP "$pid"
		if ! wait_until 10 log_has_n "$log" "configuration reloaded\|keeping the old" $((i + 1)); then
			fail "200 reloads: reload $i not done within 10 s: $(tail -3 "$log")"
			return
		fi
	done
	n=$(count_in_log "$log" "test: ")
	if ! wait_until 5 log_has_n "$log" "test: " $((n + 1)); then
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
	elif [ $((rss1 - rss0)) -ge 1024 ]; then
		fail "200 reloads: RSS grew by $((rss1 - rss0)) kB ($rss0 -> $rss1)"
	elif awk -v m="$max" 'BEGIN {exit !(m >= 100)}'; then
		fail "200 reloads: the slowest took $max ms (limit 100)"
	elif ! kill -0 "$pid" 2>/dev/null; then
		fail "200 reloads: rngd exited"
	else
		ok "200 reloads: fds $fd0 -> $fd1, threads $th0 -> $th1, RSS $rss0 -> $rss1 kB, slowest reload $max ms, output goes on ($rate)"
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
	"$RNGD" -f -t "${NOSRC[@]}" -c "$conf" 2>"$log" &
	pid=$!
	pids+=("$pid")
	wait_until 10 in_log "$log" "file:m: running" || {
		fail "reload messages: rngd never ran: $(head -5 "$log")"
		return
	}
	hup_expect() { # what, pattern
		local n
		n=$(count_in_log "$log" "reloading the configuration")
		kill -HUP "$pid"
		if wait_until 10 log_has_n "$log" "reloading the configuration" $((n + 1)) &&
			wait_until 5 in_log "$log" "$2"; then
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
	out=$("$RNGD" --check-config -c /dev/null -O rngd:max-age:5 -O rngd:status-file: 2>&1)
	rc=$?
	[ $rc -eq 0 ] && ok "-O rngd:max-age:5 -O rngd:status-file: accepted ($out)" ||
		fail "-O rngd:KEY:VALUE: exit $rc: $out"
	out=$("$RNGD" --check-config -c /dev/null -O rngd:max-age:0 2>&1)
	rc=$?
	[ $rc -eq 78 ] && ok "-O rngd:max-age:0 refused: exit 78 ($out)" ||
		fail "-O rngd:max-age:0: exit $rc, want 78: $out"
}

test_option_rngd_keys
test_fifo_created_later
test_reload_200
test_reload_messages
finish
