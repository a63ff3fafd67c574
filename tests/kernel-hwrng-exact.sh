#!/bin/bash
# kernel-hwrng = take-over is exact on every path, on this machine's real hwrng (rngd(8), "The
# kernel's hwrng thread"; issue 18 item 2): SIGQUIT, SIGUSR2 and a crash (SIGSEGV, SIGABRT)
# give rng_quality back; two daemons never fight over it (the second names the first's pid
# and takes over when it stops); a reload from take-over to watch forgets the remembered
# quality (the credit follows rng_quality again); a daemon started while rng_quality was 0
# takes over when it is raised; the administrator's choice (rng_selected 1) survives; a
# backend switch to none and back, as the unit's user (rng_quality granted, rng_current
# root's) and as -D nobody (rng_current kept from start), gives every backend its quality
# back. Opt-in (RNGD_TEST_REAL_SWITCH=1, run alone by scripts/test, under the device lock):
# it changes the kernel's trust in the machine's hwrng, its backend and the modes of
# /dev/hwrng and rng_quality for a while; rng_current, rng_quality, rng_selected and both
# modes are put back on every exit path.
. "$(dirname "$0")/lib.sh" kernel-hwrng-exact
real_hwrng_setup
chmod 755 "$T" # the unprivileged daemons read their configuration in it
ulimit -c 0    # the crashes below dump no core

: >"$T/conf"
base=(-f -c "$T/conf" "${NOCPU[@]}" -O rngd:pid-file: -O rngd:status-interval:1)
args=("${base[@]}" -O "rngd:status-file:$T/run/status.json")
settled() { # the kernel's hwrng as it was before the case, else fail $1 and put it back
	if quality_is "$orig" && [ "$(cat $sys/rng_current)" = "$cur" ] &&
		[ "$(cat $sys/rng_selected)" = "$sel" ]; then
		return 0
	fi
	fail "$1: left rng_current $(cat $sys/rng_current), rng_quality $(cat "$q" 2>&1)," \
		"rng_selected $(cat $sys/rng_selected)"
	hwrng_restore
	return 1
}

# Stop signals: each stops the daemon as SIGTERM does, and the backend is given back.
for sig in QUIT USR2; do
	start_logged "$T/$sig.log" 30 "took over" "SIG$sig" "${args[@]}" || continue
	quality_is 0 || fail "SIG$sig: rng_quality $(cat "$q") while rngd runs"
	stop "$sig"
	[ "$rc" = 0 ] && quality_is "$orig" && grep -q "stopping on signal" "$T/$sig.log" &&
		grep -q "gave $cur back to the kernel (rng_quality 0 → $orig): rngd stops" "$T/$sig.log" &&
		ok "SIG$sig: exit 0, rng_quality $orig given back" ||
		fail "SIG$sig: exit $rc, rng_quality $(cat "$q"): $(tail -3 "$T/$sig.log")"
	settled "SIG$sig"
done

# A crash: the handler writes the remembered quality back before the signal ends rngd.
for sig in SEGV ABRT; do
	start_logged "$T/$sig.log" 30 "took over" "SIG$sig" "${args[@]}" || continue
	kill "-$sig" "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" -gt 128 ] && quality_is "$orig" &&
		ok "SIG$sig (a crash, exit $rc): rng_quality $orig put back by the handler" ||
		fail "SIG$sig: exit $rc, rng_quality $(cat "$q"): $(tail -3 "$T/$sig.log")"
	rm -f "$T/run/kernel-hwrng.state" # root's ExecStopPost= would find 1024 and drop it
	settled "SIG$sig"
done

# Two daemons: the second does not take the first's 0 for an original; it names the pid
# holding the take-over and takes over when the first stops.
if start_logged "$T/first.log" 30 "took over" "first daemon" "${args[@]}"; then
	first=$pid
	export RNGD_TEST_RUNTIME_DIR=$T/run2
	if start_logged "$T/second.log" 30 "another rngd (pid $first) holds the take-over" \
		"second daemon" "${base[@]}" -O "rngd:status-file:$T/run2/status.json"; then
		second=$pid
		quality_is 0 && ! grep -q "took over\|without giving it back" "$T/second.log" &&
			grep -q "quality=$orig" "$T/run/kernel-hwrng.state" &&
			[ ! -e "$T/run2/kernel-hwrng.state" ] &&
			ok "two daemons: the second names pid $first and leaves rng_quality alone" ||
			fail "two daemons: rng_quality $(cat "$q"): $(grep kernel-hwrng "$T/second.log")"
		pid=$first
		stop TERM
		if wait_until 30 grep -q "has let it go: taking it over" "$T/second.log" &&
			wait_until 30 quality_is 0 &&
			grep -q "took over $cur (rng_quality $orig → 0)" "$T/second.log"; then
			ok "two daemons: the second takes over at $orig once the first has stopped"
		else
			fail "two daemons after the first: rng_quality $(cat "$q"): $(grep kernel-hwrng "$T/second.log")"
		fi
		pid=$second
		stop TERM
	else
		pid=$first
		stop TERM
	fi
	export RNGD_TEST_RUNTIME_DIR=$T/run
	settled "two daemons"
fi

# A reload from take-over to watch: given back, and the remembered quality forgotten: once
# the administrator (or watch) lowers rng_quality to 0, rngd credits 0 too.
status() { # fed and credited bits of the daemon with status dir $1: "FED BITS"
	local j
	j=$("$top_builddir/rngd" -c "$T/conf" -O "rngd:status-file:$1/status.json" --status --json 2>/dev/null)
	echo "$(sed -n 's/^    "bytes_fed": \([0-9]*\),/\1/p' <<<"$j") $(sed -n 's/^    "bits_credited": \([0-9]*\),/\1/p' <<<"$j")"
}
fed_without_credit() { # new bytes fed since the snapshot in $s0, none of them credited
	local f0 b0 f1 b1
	read -r f0 b0 <<<"$s0"
	read -r f1 b1 <<<"$(status "$T/run")"
	s0="$f1 $b1"
	[ -n "$f1" ] && [ "$f1" -gt "$f0" ] && [ "$b1" = "$b0" ]
}
printf '[rngd]\nkernel-hwrng = take-over\n' >"$T/mode.conf"
margs=("${args[@]/$T\/conf/$T/mode.conf}")
if start_logged "$T/mode.log" 30 "took over" "mode reload" "${margs[@]}" -R 1 \
	-O rngd:feed-bytes:2500; then
	printf '[rngd]\nkernel-hwrng = watch\n' >"$T/mode.conf"
	kill -HUP "$pid"
	if wait_until 30 grep -q "kernel-hwrng changed from take-over to watch by a reload" "$T/mode.log" &&
		quality_is "$orig"; then
		ok "reload take-over → watch: rng_quality $orig given back"
	else
		fail "reload to watch: rng_quality $(cat "$q"): $(grep kernel-hwrng "$T/mode.log")"
	fi
	echo 0 >"$q" # as watch's demotion, or an administrator, would
	s0=$(status "$T/run")
	# Blocks read before the 0 keep their stamp (a ring of 4, one fed each second); the
	# ones read after it are credited 0, not the remembered $orig.
	wait_until 60 fed_without_credit &&
		ok "after the reload to watch and a 0 in rng_quality, rngd credits 0 (not the $orig it remembered)" ||
		fail "credit after the reload to watch: $(status "$T/run") (was $s0)"
	stop TERM
	hwrng_restore
	settled "mode reload"
fi

# Started while rng_quality was 0: left alone; taken over when the administrator raises it.
echo 0 >"$q"
if start_logged "$T/raise.log" 30 "nothing to take over" "rng_quality 0 at start" "${args[@]}"; then
	echo "$orig" >"$q"
	wait_until 30 grep -q "was raised to $orig" "$T/raise.log" && wait_until 30 quality_is 0 &&
		ok "started with rng_quality 0: taken over once it was raised to $orig" ||
		fail "raised later: rng_quality $(cat "$q"): $(grep kernel-hwrng "$T/raise.log")"
	stop TERM
	quality_is "$orig" || fail "raised later: rng_quality $(cat "$q") after the stop"
fi
hwrng_restore
settled "raised later"

# The administrator's choice: rng_selected 1 survives a root daemon's take-over and give-back.
echo "$cur" >$sys/rng_current
if start_logged "$T/sel.log" 30 "took over" "selected, root" "${args[@]}"; then
	[ "$(cat $sys/rng_selected)" = 1 ] && quality_is 0 ||
		fail "selected, root: rng_selected $(cat $sys/rng_selected) while taken over"
	stop TERM
	[ "$(cat $sys/rng_selected)" = 1 ] && quality_is "$orig" &&
		ok "rng_selected 1 kept through a root daemon's take-over and give-back" ||
		fail "selected, root: rng_selected $(cat $sys/rng_selected), rng_quality $(cat "$q")"
fi

# As the unit's user: rng_quality granted by root's step (group, 0664), rng_current root's,
# /dev/hwrng readable by the group, CAP_SYS_ADMIN ambient; root's restore after the stop.
ugid=$(id -g nobody 2>/dev/null)
unit_user=(setpriv --reuid=nobody --regid="$ugid" --clear-groups --inh-caps=+sys_admin
	--ambient-caps=+sys_admin)
if [ -n "$ugid" ] && "${unit_user[@]}" true 2>/dev/null; then
	mkdir -p "$T/urun" && chown nobody "$T/urun"
	export RNGD_TEST_RUNTIME_DIR=$T/urun
	chgrp "$ugid" /dev/hwrng && chmod 640 /dev/hwrng
	"$RNGD" --grant-kernel-hwrng="$ugid" 2>"$T/grant.log" ||
		fail "--grant-kernel-hwrng=$ugid: $(cat "$T/grant.log")"
	uargs=("${base[@]}" -O "rngd:status-file:$T/urun/status.json")
	ustate=$T/urun/kernel-hwrng.state
	start_unit_user() { # log what: as start_logged, as the unit's user
		: >"$1"
		"${unit_user[@]}" "$RNGD" "${uargs[@]}" 2>"$1" & # setpriv execs rngd: $! is its pid
		pid=$!
		pids+=("$pid")
		wait_until 30 grep -q "$3" "$1" && return 0
		fail "$2: no '$3': $(head -5 "$1")"
		return 1
	}
	# rng_selected is 1 still: the unit's user may not take over (it could not select again).
	if start_unit_user "$T/usel.log" "selected, the unit's user" "chosen by the administrator"; then
		sleep 2 # a few ticks: said once, nothing written
		quality_is "$orig" && [ "$(cat $sys/rng_selected)" = 1 ] &&
			[ "$(grep -c "chosen by the administrator" "$T/usel.log")" = 1 ] &&
			ok "the unit's user leaves an administrator's choice (rng_selected 1) alone, saying so once" ||
			fail "selected, the unit's user: rng_quality $(cat "$q"), rng_selected $(cat $sys/rng_selected): $(grep kernel-hwrng "$T/usel.log")"
		stop TERM
	fi
	# Root's step records the choice it finds and puts it back: start again from the
	# machine's own (automatic) choice.
	"$RNGD" --restore-kernel-hwrng 2>"$T/urestore0.log"
	[ "$sel" = 0 ] && echo "" >$sys/rng_current
	"$RNGD" --grant-kernel-hwrng="$ugid" 2>"$T/grant2.log" ||
		fail "--grant-kernel-hwrng=$ugid again: $(cat "$T/grant2.log")"
	if grep -qw none $sys/rng_available &&
		start_unit_user "$T/unone.log" "switch, the unit's user" "took over"; then
		echo none >$sys/rng_current
		wait_until 30 grep -q "$cur keeps its 0 and $ustate keeps its $orig" "$T/unone.log" &&
			grep -q "backend=$cur" "$ustate" &&
			ok "switched to none as the unit's user: $cur stays owed, in the state file" ||
			fail "switch to none, the unit's user: $(grep kernel-hwrng "$T/unone.log")"
		echo "" >$sys/rng_current # the kernel's choice again: $cur, at the 0 rngd wrote
		wait_until 30 grep -q "$cur is current again with the 0 rngd wrote: held again" "$T/unone.log" &&
			quality_is 0 && ok "... held again when it is current again" ||
			fail "switch back, the unit's user: $(grep kernel-hwrng "$T/unone.log")"
		echo none >$sys/rng_current
		owed_twice() { [ "$(grep -c "keeps its 0" "$T/unone.log")" = 2 ]; }
		wait_until 30 owed_twice ||
			fail "second switch to none: $(grep kernel-hwrng "$T/unone.log")"
		stop TERM # none is current: the daemon cannot give it back, root's step does
		"$RNGD" --restore-kernel-hwrng 2>"$T/urestore.log"
		rc=$?
		[ "$(cat $sys/rng_current)" = none ] && echo "" >$sys/rng_current
		[ "$rc" = 0 ] && quality_is "$orig" && [ ! -e "$ustate" ] &&
			ok "stopped while none was current: root's restore put $orig back ($(cat "$T/urestore.log"))" ||
			fail "root's restore after the unit's user: exit $rc, rng_quality $(cat "$q"): $(cat "$T/urestore.log")"
	fi
	"$RNGD" --restore-kernel-hwrng 2>>"$T/urestore.log" # owner and mode, from root's record
	[ "$(stat -c '%u:%g %a' "$q")" = "$q_mode" ] ||
		fail "root's restore left rng_quality $(stat -c '%u:%g %a' "$q"), not $q_mode"
	export RNGD_TEST_RUNTIME_DIR=$T/run
	hwrng_restore
	settled "the unit's user"
else
	skip "as the unit's user: no user nobody or no setpriv with ambient capabilities"
fi

# -D nobody (another init, no ExecStopPost=): rng_current is kept open from start, so the
# switched-away backend is given back at once, and the choice of none kept.
if id nobody >/dev/null 2>&1 && grep -qw none $sys/rng_available &&
	start_logged "$T/drop.log" 30 "took over" "-D nobody, switch" "${args[@]}" -D nobody; then
	echo none >$sys/rng_current
	wait_until 30 grep -q "gave $cur back to the kernel (rng_quality 0 → $orig)" "$T/drop.log" &&
		[ "$(cat $sys/rng_current)" = none ] &&
		ok "-D nobody: switched to none, $cur given back through the kept rng_current" ||
		fail "-D nobody, switch: $(cat $sys/rng_current): $(grep kernel-hwrng "$T/drop.log")"
	echo "" >$sys/rng_current
	wait_until 30 quality_is 0 || fail "-D nobody: not taken over again: $(grep kernel-hwrng "$T/drop.log")"
	stop TERM
	[ "$rc" = 0 ] && quality_is "$orig" && ok "-D nobody: given back at exit" ||
		fail "-D nobody: exit $rc, rng_quality $(cat "$q")"
	chown -R root:root "$T/run"
fi
hwrng_restore
settled "-D nobody"

quality_is "$orig" && ok "rng_quality is $orig at the end" || fail "rng_quality $(cat "$q") at the end"
finish
