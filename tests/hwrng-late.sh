#!/bin/bash
# The real hwrng backend coming late and going away, with rngd running (kernel-interfaces.md
# §2.4): started with rng_current at "none", the daemon waits and feeds within 1.5 s of the
# backend being selected; under -D nobody:nogroup a switch to none and back and SIGHUPs
# keep it feeding (the device stays open: no re-open needing root), and a reload that would
# need root is refused naming the key. Opt-in (RNGD_TEST_REAL_SWITCH=1) like hwrng-real.sh:
# other readers of /dev/hwrng get nothing for a moment. The original rng_current (or the
# kernel's automatic choice) is restored on every exit path.
set -u
. "$(dirname "$0")/lib.sh" hwrng-late
sys=/sys/class/misc/hw_random

[ "${RNGD_TEST_REAL_SWITCH:-}" = 1 ] || {
	skip "set RNGD_TEST_REAL_SWITCH=1 to switch the machine's hwrng backend (disturbs other readers briefly)"
	finish
}
is_root || { skip "needs root to write $sys/rng_current"; finish; }
[ -c /dev/hwrng ] && [ -w "$sys/rng_current" ] || { skip "no /dev/hwrng with a writable $sys/rng_current"; finish; }
grep -qw none "$sys/rng_available" || { skip "this kernel cannot select 'none' (needs 6.19 or 6.18.y)"; finish; }
have_sys_admin || { skip "no CAP_SYS_ADMIN to feed the kernel"; finish; }
hwrng_lock
cur=$(cat "$sys/rng_current")
sel=$(cat "$sys/rng_selected" 2>/dev/null || echo 1)
[ "$cur" != none ] || { skip "no current hwrng backend"; finish; }
# The kernel's own choice (rng_selected 0) is given back by writing an empty line.
restore() { if [ "$sel" = 0 ]; then echo; else echo "$cur"; fi >"$sys/rng_current"; }
trap 'rc=$?; cleanup; restore; exit $rc' EXIT
trap 'exit 1' INT TERM HUP

now() { date +%s.%N; }
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%d", (a - b) * 1000}'; }
in_log() { grep -q "$2" "$1" 2>/dev/null; }
# Whether log $1, after its first $4 lines, has a line matching $3 after one matching $2.
# (Not a line count taken after $2 was seen: by then $3 may have come, and its repeats are
# held back for a minute by the log's "last message repeated".)
after_both() { tail -n +"$(($4 + 1))" "$1" | sed -n "/$2/,\$p" | tail -n +2 | grep -q "$3"; }
lines() { wc -l <"$1"; }

# 1. rng_current is none at start, the backend comes back 2 s later.
test_backend_late() {
	local log=$T/late.log pid back seen ms
	echo none >"$sys/rng_current"
	start_logged "$log" 30 "hwrng: waiting" "backend late" -f "${NOCPU[@]}" -O rngd:status-file: || return
	sleep 2
	if ! kill -0 "$pid" 2>/dev/null; then
		fail "backend late: rngd exited while the backend was none: $(cat "$log")"
		return
	fi
	restore
	back=$(now)
	if ! wait_until 30 in_log "$log" "first injection: .* [1-9][0-9]* bits credited"; then
		fail "backend late: no credited injection after the switch: $(cat "$log")"
		return
	fi
	seen=$(now)
	ms=$(ms_between "$seen" "$back")
	if [ "$ms" -le 1500 ]; then
		ok "backend none at start, selected 2 s later: first credited RNDADDENTROPY ${ms} ms after the switch (limit 1500)"
	else
		fail "backend late: ${ms} ms from the switch to the first credited injection (limit 1500)"
	fi
	kill -TERM "$pid"
	wait "$pid"
}

# 2. Under -D nobody:nogroup (the device is root 0600 here: no re-open is possible).
test_dropped() {
	local log=$T/drop.log conf=$T/drop.conf pid n ms
	chmod 755 "$T"
	printf '[rngd]\nstatus-file =\n[source hwrng]\nread-size = 2500\n' >"$conf"
	chmod 644 "$conf"
	# A block a feed (-s 2500): a reader whose ring is full reads nothing until a block is
	# taken (or max-age passes), and sees the switch to none at its next read.
	start_logged "$log" 30 "first injection" "-D nobody" -f -d -R 1 -s 2500 "${NOCPU[@]}" -c "$conf" \
		-D nobody:nogroup || return
	echo none >"$sys/rng_current"
	wait_until 30 in_log "$log" "hwrng: waiting" || {
		fail "-D nobody: no 'waiting' after the switch to none: $(tail -3 "$log")"
		restore # the next cases need the backend back
		return
	}
	sleep 1
	n=$(lines "$log")
	restore
	if wait_until 30 after_both "$log" "hwrng: recovered" "fed [0-9]* bytes" "$n"; then
		ok "-D nobody: backend switched to none and back: $(grep -o "hwrng: recovered" "$log" | head -1), feeding again"
	else
		fail "-D nobody: no feeding after the backend came back: $(tail -5 "$log")"
	fi

	n=$(lines "$log")
	kill -HUP "$pid"
	if wait_until 30 after_both "$log" "unchanged and kept running" "fed [0-9]* bytes" "$n"; then
		ok "-D nobody: SIGHUP with the configuration unchanged: still feeding"
	else
		fail "-D nobody: SIGHUP unchanged: $(tail -5 "$log")"
	fi

	printf '[rngd]\nstatus-file =\n[source hwrng]\nread-size = 2000\n' >"$conf"
	n=$(lines "$log")
	kill -HUP "$pid"
	if wait_until 30 after_both "$log" "reload refused: .*key 'read-size'" "fed [0-9]* bytes" "$n"; then
		ok "-D nobody: SIGHUP needing root refused: '$(grep -o "reload refused.*" "$log" | head -1 | cut -c1-150)'; still feeding"
	else
		fail "-D nobody: SIGHUP needing root: $(tail -5 "$log")"
	fi
	kill -TERM "$pid"
	wait "$pid"
	local rc=$?
	[ $rc -eq 0 ] || fail "-D nobody: exit $rc"
}

# 3. A reload with the hwrng reader blocked in the device (2500 bytes at ~10 kB/s here):
# the old set is retired without waiting for that read.
test_reload_blocked() {
	local log=$T/blk.log conf=$T/blk.conf pid n
	printf '[rngd]\nstatus-file =\n[source hwrng]\nread-size = 2500\n' >"$conf"
	start_logged "$log" 30 "hwrng: running" "reload while blocked" -f -t "${NOCPU[@]}" -c "$conf" || return
	for rs in 2000 2500 2000 2500 2000; do
		printf '[rngd]\nstatus-file =\n[source hwrng]\nread-size = %s\n' "$rs" >"$conf"
		n=$(grep -c "configuration reloaded" "$log")
		kill -HUP "$pid"
		wait_until 30 test_count "$log" $((n + 1)) || break
	done
	local max
	max=$(grep -o "reloaded in [0-9.]* ms" "$log" | awk '{if ($3 > m) m = $3} END {print m + 0}')
	if [ "$(grep -c "configuration reloaded" "$log")" -ne 5 ]; then
		fail "reload while blocked: $(grep -c "configuration reloaded" "$log") of 5 reloads: $(tail -3 "$log")"
	elif awk -v m="$max" 'BEGIN {exit !(m >= 100)}'; then
		fail "reload while blocked: slowest reload $max ms (limit 100)"
	else
		ok "reload with the hwrng reader blocked in its read: 5 reloads, slowest $max ms (limit 100)"
	fi
	kill -TERM "$pid"
	wait "$pid"
}
# 4. A start that fails after the hwrng source selected its backend puts rng_current back.
test_failed_start_restores() {
	local out rc now_cur
	echo none >"$sys/rng_current"
	out=$(timeout 20 "$RNGD" -f "${NOCPU[@]}" -O "hwrng:backend:$cur" -O rngd:status-file: \
		-D no-such-user-here 2>&1)
	rc=$?
	now_cur=$(cat "$sys/rng_current")
	if [ $rc -eq 78 ] && [ "$now_cur" = none ]; then
		ok "start failing after 'backend = $cur' was selected: exit $rc, rng_current back to none"
	else
		fail "failed start: exit $rc, rng_current '$now_cur' (want none): $out"
	fi
	restore
}
test_count() { [ "$(grep -c "configuration reloaded" "$1")" -ge "$2" ]; }

test_backend_late
test_dropped
test_reload_blocked
test_failed_start_restores
restore
now_cur=$(cat "$sys/rng_current")
[ "$now_cur" = "$cur" ] || fail "rng_current is '$now_cur', was '$cur'"
finish
