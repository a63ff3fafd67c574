#!/bin/bash
# Issue 24 items 4-5: nothing is held over reloads. RELOADS (default 2000) SIGHUPs in a row
# while the names and the files change at every one: a FIFO source fed from /dev/urandom
# under a new name each time, and a regular-file source whose file is replaced (a new
# inode at the same path, the old one deleted) before each. After a warm-up, the daemon's
# fds (/proc/PID/fd) and RSS (VmRSS) must stay flat: 300 reloads once left 300 fds on
# deleted files, and 1,300 reloads grew RSS from 6 to 92 MB (a history per source name).
# The daemon's one replay history (health.h: up to 4.1 MiB, filled as blocks arrive,
# whatever the reloads do) is filled before the warm-up, so that RSS may grow by 1 MiB
# only. Measured from reload 50 with the history still filling, as this test once did,
# RSS grew 3,768 -> 7,272 kB over 2,000 reloads, all of it the history's mappings
# ([heap] 1,388 -> 1,400 kB; valgrind: nothing lost).
# Prints the figures; RNGD_SOAK_RELOADS changes the count. About 10 minutes: opt-in
# (RNGD_TEST_SOAK=1), run once by scripts/test on the plain build; make check's lifecycle.sh
# has the 200-reload version.
set -u
. "$(dirname "$0")/lib.sh" reload-soak
if [ "${RNGD_TEST_SOAK:-}" != 1 ]; then
	skip "the 2000-reload soak is opt-in (RNGD_TEST_SOAK=1; scripts/test runs it once)"
	finish
fi

RELOADS=${RNGD_SOAK_RELOADS:-2000}
WARMUP=200
fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
deleted_fds_of() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -lname '*(deleted)' 2>/dev/null | wc -l; }
rss_kb_of() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
threads_of() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
settled() { [ "$(fds_of "$pid")" -le "$fd0" ] && [ "$(threads_of "$pid")" -le "$th0" ]; }
asan_build() { grep -q __asan_init "$RNGD" 2>/dev/null; }
reloads_in() { grep -c "configuration reloaded\|keeping the old" "$1"; }
# A reload takes milliseconds: polled every 10 ms, for up to 30 s (a loaded machine).
wait_reloaded() {
	local end=$((SECONDS + 30))
	until [ "$(reloads_in "$log")" -ge "$1" ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.01
	done
}

conf=$T/soak.conf fifo=$T/soak.fifo reg=$T/reg.bin log=$T/soak.log filled=$T/filled
mkfifo "$fifo"
# First twice the replay history (2 x 65,536 blocks of 2500 bytes: every page of its FIFOs
# and tables written) at full speed, then about 1 MB/s: enough to keep the FIFO source
# running, not enough to starve the test of the CPU (a full-speed feeder made each reload
# wait for it). $filled appears when the first part is written: all but the pipe's 64 KiB
# read.
(head -c $((2 * 65536 * 2500)) /dev/urandom && : >"$filled" &&
	while head -c 65536 /dev/urandom; do sleep 0.05; done) >"$fifo" 2>/dev/null &
pids+=($!)
# Reload $1's configuration: the FIFO as file:fN, the regular file (replaced) as file:rN.
step() {
	head -c 12504 /dev/urandom >"$reg.new" && mv -f "$reg.new" "$reg"
	printf '[rngd]\nstatus-file =\n[source file:f%s]\npath = %s\n[source file:r%s]\npath = %s\n' \
		"$1" "$fifo" "$1" "$reg" >"$conf"
}
step 0
start_logged "$log" 30 "test: " "reload soak" -f -t "${NOSRC[@]}" -c "$conf" || finish
if ! wait_until 300 test -e "$filled"; then
	fail "reload soak: the replay history not filled (328 MB through the FIFO) within 300 s"
	finish
fi
t0=$SECONDS
done_n=0
# Reload until $1 reloads are done; 1 on a stuck reload. VmRSS after each of the last 50:
# the lowest in rss_lo, the highest in rss_hi. -t's 256-block rings (628 KiB, pages of
# their own) are resident as far as their readers got: the set running at a sample may
# have filled a few slots or all of them, and a retired set may still hold its own.
reload_to() {
	local r
	rss_lo='' rss_hi=''
	while [ $done_n -lt "$1" ]; do
		done_n=$((done_n + 1))
		step "$done_n"
		kill -HUP "$pid"
		if ! wait_reloaded $done_n; then
			fail "reload soak: reload $done_n not done within 30 s: $(grep -v "test: " "$log" | tail -3)"
			cp "$log" "${TMPDIR:-/tmp}/reload-soak.failed.log"
			return 1
		fi
		if [ $done_n -gt $(($1 - 50)) ]; then
			r=$(rss_kb_of "$pid")
			[ -n "$rss_lo" ] && [ "$rss_lo" -le "$r" ] || rss_lo=$r
			[ -n "$rss_hi" ] && [ "$rss_hi" -ge "$r" ] || rss_hi=$r
		fi
	done
}
if reload_to $WARMUP; then
	fd0=$(fds_of "$pid") rss0=$rss_hi th0=$(threads_of "$pid")
	if reload_to "$RELOADS"; then
		# Let the last set's readers reach their files' ends (and close them), as the first
		# ones did: a leaked fd or thread fails below after 10 s.
		wait_until 30 settled
		fd1=$(fds_of "$pid") rss1=$rss_lo th1=$(threads_of "$pid")
		del=$(deleted_fds_of "$pid")
		refused=$(grep -c "keeping the old" "$log")
		secs=$((SECONDS - t0))
		what="$RELOADS reloads with names and files changing ($secs s): fds $fd0 -> $fd1 ($del on deleted files), RSS $rss0 -> $rss1 kB (the highest of the warm-up's last 50 reloads, the lowest of the run's), threads $th0 -> $th1"
		if [ "$refused" -ne 0 ]; then
			fail "reload soak: $refused kept the old configuration: $(grep "keeping the old" "$log" | head -2)"
		elif ! kill -0 "$pid" 2>/dev/null; then
			fail "reload soak: rngd exited: $(tail -3 "$log")"
		elif [ "$fd1" -gt $((fd0 + 2)) ] || [ "$del" -gt 2 ]; then
			fail "$what"
		elif [ "$th1" -gt "$th0" ]; then
			fail "$what (threads)"
		# 1 MiB over 2,000 reloads (a leak of 512 bytes a reload); measured: -40 to +68 kB.
		# The old history per source name grew 66 kB a reload.
		elif ! asan_build && [ $((rss1 - rss0)) -ge 1024 ]; then
			fail "$what (RSS grew by $((rss1 - rss0)) kB)"
		else
			ok "$what$(asan_build && echo " (RSS not checked: ASan's quarantine keeps freed memory)")"
		fi
	fi
fi
kill -TERM "$pid"
wait "$pid"
rc=$?
# In the sanitize build, LeakSanitizer fails the exit on what is still allocated and
# unreachable then.
[ $rc -eq 0 ] || fail "reload soak: rngd exited $rc on SIGTERM: $(tail -3 "$log")"
finish
