#!/bin/bash
# kernel-hwrng on this machine's real hwrng (rngd(8), "The kernel's hwrng thread"): with
# take-over, rng_quality reads 0 while rngd runs and its original value after SIGTERM, after
# SIGINT, after a start that fails after the take-over, and after kill -9 followed by
# `rngd --restore-kernel-hwrng` (the unit's ExecStopPost=; it reads no configuration); a
# daemon started after a kill -9 takes the remembered value, not the 0; leave keeps it; watch
# lowers it to 0 once the device fails rngd's tests (zeros injected by tests/rngd-fault).
# Also measures what a reader of /dev/hwrng gets with and without the take-over. Opt-in
# (RNGD_TEST_REAL_SWITCH=1, run alone by scripts/test): it changes the kernel's trust in the
# machine's hwrng for a while. The original rng_quality is put back on every exit path.
. "$(dirname "$0")/lib.sh" kernel-hwrng
real_hwrng_setup
run=$T/run
state=$run/kernel-hwrng.state
: >"$T/conf"
args=(-f -c "$T/conf" "${NOCPU[@]}" -O "rngd:status-file:$run/status.json" -O rngd:pid-file:)

for sig in TERM INT; do
	start_logged "$T/$sig.log" 30 "took over" "SIG$sig" "${args[@]}" -R 1 \
		-O rngd:status-interval:1 || continue
	if quality_is 0 && grep -q "quality=$orig" "$state"; then
		ok "take-over: rng_quality 0 while rngd runs, $orig in its state file"
	else
		fail "take-over: rng_quality $(cat "$q") while rngd runs; state: $(cat "$state")"
	fi
	if [ "$sig" = TERM ]; then
		# Fed each second: every feed after the first is credited at the remembered
		# quality, not at the 0 in sysfs (the hwrng source re-reads rng_quality each second).
		credited() {
			local j fed bits
			j=$("$top_builddir/rngd" -c "$T/conf" -O "rngd:status-file:$run/status.json" --status --json 2>/dev/null)
			fed=$(sed -n 's/^    "bytes_fed": \([0-9]*\),/\1/p' <<<"$j")
			bits=$(sed -n 's/^    "bits_credited": \([0-9]*\),/\1/p' <<<"$j")
			[ "${fed:-0}" -ge 192 ] && [ "$bits" = $((fed * 8 * orig / 1024)) ]
		}
		wait_until 30 credited &&
			ok "take-over: rngd credits the device at $orig after its tests, not at 0" ||
			fail "take-over credit: $("$top_builddir/rngd" -c "$T/conf" -O "rngd:status-file:$run/status.json" --status)"
	fi
	stop "$sig"
	if [ "$rc" = 0 ] && quality_is "$orig" && [ ! -e "$state" ] &&
		grep -q "gave .* back to the kernel (rng_quality 0 → $orig)" "$T/$sig.log"; then
		ok "take-over: rng_quality $orig again after SIG$sig, state file removed"
	else
		fail "SIG$sig: exit $rc, rng_quality $(cat "$q"): $(tail -2 "$T/$sig.log")"
	fi
	hwrng_restore
done

# -D: rng_quality is opened before the drop and written through that descriptor after it.
if id nobody >/dev/null 2>&1; then
	chmod 755 "$T"
	if start_logged "$T/drop.log" 30 "hwrng: running" "-D nobody" "${args[@]}" -D nobody; then
		quality_is 0 && [ "$(ps -o user= -p "$pid")" = nobody ] ||
			fail "-D nobody: rng_quality $(cat "$q"), user $(ps -o user= -p "$pid")"
		stop TERM
		[ "$rc" = 0 ] && quality_is "$orig" && [ ! -e "$state" ] &&
			ok "-D nobody: taken over as root, given back as nobody through the kept descriptor" ||
			fail "-D nobody: exit $rc, rng_quality $(cat "$q"): $(tail -2 "$T/drop.log")"
	fi
	chmod 700 "$T"
	chown -R root:root "$run" # handed to nobody: later daemons keep only CAP_SYS_ADMIN
	hwrng_restore
fi

# A start that fails after the take-over (the privilege drop: no such user).
"$RNGD" "${args[@]}" -D nosuchuser-khw 2>"$T/fail.log"
rc=$?
if [ "$rc" != 0 ] && grep -q "took over" "$T/fail.log" && quality_is "$orig" &&
	[ ! -e "$state" ]; then
	ok "a failed start after the take-over (exit $rc) gives rng_quality $orig back"
else
	fail "failed start: exit $rc, rng_quality $(cat "$q"): $(cat "$T/fail.log")"
fi
hwrng_restore

# kill -9: nothing given back by the daemon; the state file has it.
if start_logged "$T/kill.log" 30 "took over" "SIGKILL" "${args[@]}"; then
	stop KILL
	quality_is 0 && [ -e "$state" ] && ok "after kill -9: rng_quality still 0, the state file kept" ||
		fail "after kill -9: rng_quality $(cat "$q"), state $(ls "$run")"
	# A daemon started after the crash takes the remembered value, not the 0.
	if start_logged "$T/again.log" 30 "took over" "restart after SIGKILL" "${args[@]}"; then
		grep -q "says $orig: left by an rngd that stopped without giving it back" "$T/again.log" && quality_is 0 &&
			ok "a daemon started after kill -9 takes over at the remembered $orig" ||
			fail "after a crash: $(grep kernel-hwrng "$T/again.log")"
		stop KILL
	fi
	"$RNGD" -c "$T/conf" -O "rngd:status-file:$run/status.json" --restore-kernel-hwrng \
		2>"$T/restore.log"
	rc=$?
	if [ "$rc" = 0 ] && quality_is "$orig" && [ ! -e "$state" ]; then
		ok "rngd --restore-kernel-hwrng after kill -9: rng_quality $orig ($(cat "$T/restore.log"))"
	else
		fail "--restore-kernel-hwrng: exit $rc, rng_quality $(cat "$q"): $(cat "$T/restore.log")"
	fi
	"$RNGD" -c "$T/conf" -O "rngd:status-file:$run/status.json" --restore-kernel-hwrng \
		2>"$T/restore2.log"
	rc=$?
	[ "$rc" = 0 ] && [ ! -s "$T/restore2.log" ] &&
		ok "--restore-kernel-hwrng with nothing to do: exit 0, silent" ||
		fail "--restore-kernel-hwrng again: exit $rc: $(cat "$T/restore2.log")"
fi
hwrng_restore

# A reload that disables the hwrng source gives the backend back; one that enables it again
# takes it over again (rng_quality was opened at start and is written through that fd).
head -c 100000 /dev/urandom >"$T/data"
printf '[source hwrng]\nenabled = no\n[source file:d]\npath = %s\n' "$T/data" >"$T/off.conf"
cp "$T/conf" "$T/reload.conf"
if start_logged "$T/reload.log" 30 "took over" "reload" "${args[@]/$T\/conf/$T/reload.conf}"; then
	cp "$T/off.conf" "$T/reload.conf"
	kill -HUP "$pid"
	wait_until 30 grep -q "no source reads it any more" "$T/reload.log" && quality_is "$orig" &&
		ok "a reload that disables the source gives rng_quality $orig back" ||
		fail "reload: rng_quality $(cat "$q"): $(cat "$T/reload.log")"
	printf '[rngd]\n' >"$T/reload.conf"
	kill -HUP "$pid"
	wait_until 30 quality_is 0 &&
		ok "a reload that enables it again takes it over again" ||
		fail "reload back: rng_quality $(cat "$q"): $(cat "$T/reload.log")"
	stop TERM
	quality_is "$orig" || fail "after the reloads: rng_quality $(cat "$q")"
fi
hwrng_restore

# The backend switched away (to none, 6.18.y+) while taken over: given back at once (made
# current for the write, none put back after it); taken over again when it is back.
if grep -qw none $sys/rng_available &&
	start_logged "$T/switch.log" 30 "took over" "switch" "${args[@]}"; then
	echo none >$sys/rng_current
	if wait_until 30 grep -q "current backend is now 'none'" "$T/switch.log" &&
		grep -q "gave $cur back to the kernel (rng_quality 0 → $orig)" "$T/switch.log" &&
		[ "$(cat $sys/rng_current)" = none ]; then
		ok "switched to none while taken over: $cur got rng_quality $orig back, none kept"
	else
		fail "switch to none: $(cat $sys/rng_current), $(grep kernel-hwrng "$T/switch.log")"
	fi
	hwrng_restore_current
	wait_until 30 quality_is 0 && ok "... and is taken over again when it is current again" ||
		fail "switch back: rng_quality $(cat "$q"): $(grep kernel-hwrng "$T/switch.log")"
	stop TERM
	quality_is "$orig" || fail "after the switch: rng_quality $(cat "$q")"
fi
hwrng_restore

# leave: today's behaviour.
if start_logged "$T/leave.log" 30 "hwrng: running" "leave" "${args[@]}" --kernel-hwrng=leave; then
	quality_is "$orig" && [ ! -e "$state" ] && ! grep -q "kernel-hwrng" "$T/leave.log" &&
		ok "leave: rng_quality stays $orig while rngd runs" ||
		fail "leave: rng_quality $(cat "$q"): $(grep kernel-hwrng "$T/leave.log")"
	stop TERM
fi
hwrng_restore

# watch: the device fails rngd's tests (zeros from the 3rd read on): rng_quality lowered to 0
# once, with the journal alert, and not raised again at exit.
fault=$top_builddir/tests/rngd-fault
if [ -x "$fault" ]; then
	: >"$T/watch.log"
	RNGD_FAULT_SOURCE=/dev/hwrng RNGD_FAULT_ZEROS=3 "$fault" "${args[@]}" --kernel-hwrng=watch \
		2>"$T/watch.log" &
	pid=$!
	pids+=("$pid")
	if wait_until 30 grep -q "rng_quality lowered to 0" "$T/watch.log" && quality_is 0; then
		ok "watch: $(grep -o 'hwrng: failed: [^;]*' "$T/watch.log" | head -1) -> rng_quality 0"
	else
		fail "watch: no demotion: $(head -8 "$T/watch.log")"
	fi
	stop TERM
	quality_is 0 && [ "$(grep -c "rng_quality lowered to 0" "$T/watch.log")" = 1 ] &&
		ok "watch: demoted once, not undone at exit" ||
		fail "watch: rng_quality $(cat "$q") after exit: $(grep kernel-hwrng "$T/watch.log")"
else
	skip "watch: tests/rngd-fault not built"
fi
hwrng_restore

# What a reader of /dev/hwrng gets in 10 s while a daemon holds it, with and without the
# take-over (the daemon reads its ring full, then idles for feed-interval): the difference is
# what the kernel's hwrng thread takes (one 64-byte chunk per reseed interval once the CRNG is
# ready, whatever rng_quality says). Measured, not asserted.
rate() { # mode: bytes in 10 s
	start_logged "$T/rate-$1.log" 30 "first injection" "rate $1" "${args[@]}" \
		--kernel-hwrng="$1" -R 3600 || return
	sleep 1
	timeout -s INT 10 dd if=/dev/hwrng of="$T/rate.bin" bs=64 status=none
	stat -c %s "$T/rate.bin"
	stop TERM
}
with=$(rate take-over)
without=$(rate leave)
hwrng_restore
echo "kernel-hwrng: a reader of /dev/hwrng got ${with:-?} B in 10 s beside a take-over daemon," \
	"${without:-?} B beside one that leaves the kernel's thread alone"
[ -n "$with" ] && [ -n "$without" ] &&
	ok "rates measured (take-over ${with} B, leave ${without} B)" ||
	fail "rate measurement"
quality_is "$orig" && ok "rng_quality is $orig at the end" ||
	fail "rng_quality $(cat "$q") at the end"
finish
