#!/bin/bash
# Integration tests of the real rngd binary as a systemd service (issue 5) without systemd
# as PID 1: sd_notify through a fake NOTIFY_SOCKET (READY after the first injection, STATUS
# at most once a second, WATCHDOG pings that stop when a source is wedged, RELOADING/READY
# around SIGHUP, STOPPING last, nothing when NOTIFY_SOCKET is unset), the privilege drop
# seen from /proc, the JSON status file and `rngd --status`, and --once.
# Each case prints "ok", "skip: why" or "FAIL: why"; the script exits 1 if any failed,
# 77 if all were skipped.
set -u
export LC_ALL=C # EPOCHREALTIME with a dot
. "$(dirname "$0")/lib.sh" systemd-daemon
hwrng_lock
# The privilege-drop case writes its status file below $T as nobody.
chmod 755 "$T"
have_strace() { command -v strace >/dev/null; }
# Feeding the kernel from the real hwrng: root with CAP_SYS_ADMIN and a readable device.
can_feed_hwrng() { is_root && have_sys_admin && hwrng_readable; }
WATCHDOG_SEC=2
# A fixed copy of the environment without anything systemd might have set for us.
CLEANENV=(env -u NOTIFY_SOCKET -u WATCHDOG_USEC -u WATCHDOG_PID -u JOURNAL_STREAM -u LISTEN_FDS -u LISTEN_PID)

# Lines of file $2 that have $1; 0 when there is no such file yet (grep -c prints 0 and fails
# when none has it: no "|| echo 0", which would make that "0 0").
count_lines() {
	local n
	n=$(grep -c -- "$1" "$2" 2>/dev/null)
	echo "${n:-0}"
}

# A configuration in $T whose status file is $2 (empty: none), so nothing goes to /run.
write_conf() { # file, status-file, status-interval
	printf '[rngd]\nstatus-file = %s\nstatus-interval = %s\n' "$2" "${3:-1}" >"$1"
}

# The fake service manager: every datagram on $T/$1.sock goes to $T/$1.log as
# "monotonic wall text" (newlines of the text as '|'). Returns once the socket exists.
start_listener() {
	python3 - "$T/$1.sock" "$T/$1.log" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        d = s.recv(4096)
        f.write("%.6f %.6f %s\n" % (time.monotonic(), time.time(),
                                    d.decode(errors="replace").replace("\n", "|")))
EOF
	pids+=($!)
	for _ in $(seq 50); do
		[ -S "$T/$1.sock" ] && return 0
		sleep 0.05
	done
	return 1
}

# A healthy source: FIFO $1 gets a fresh random block every 50 ms for $2 seconds, then EOF.
start_writer() {
	mkfifo "$1"
	python3 - "$1" "$2" <<'EOF' &
import os, sys, time
end = time.monotonic() + float(sys.argv[2])
try:
    with open(sys.argv[1], "wb", buffering=0) as f:
        while time.monotonic() < end:
            f.write(os.urandom(2500))
            time.sleep(0.05)
except (BrokenPipeError, KeyboardInterrupt):
    pass
EOF
	pids+=($!)
}

# The PID of the traced program: the first PID strace logged (strace -f prefixes lines).
traced_pid() {
	local p=""
	for _ in $(seq 100); do
		p=$(awk 'NR == 1 {print $1}' "$1" 2>/dev/null)
		[ -n "$p" ] && break
		sleep 0.02
	done
	echo "$p"
}

# 1a. Start, reload, stop: READY after the first injection, STATUS, WATCHDOG, RELOADING,
# STOPPING, read from the listener's log and (feeding the kernel) from strace.
test_notify_sequence() {
	local mode args=() trace=() p st rc t0 thup tterm
	if ! built_with HAVE_SYSTEMD; then
		skip "notify sequence: rngd was built --without-systemd"
		return
	fi
	write_conf "$T/n.conf" ""
	if can_feed_hwrng; then
		mode=kernel
		args=(-R 1)
		if have_strace; then
			trace=(strace -f -ttt -s 300 -e trace=ioctl,sendmsg -o "$T/n.strace")
		fi
	else
		mode=output
		start_writer "$T/n.fifo" 10
		args=("${NOSRC[@]}" -O "file:n:path:$T/n.fifo" -o "$T/n.out")
	fi
	start_listener n || {
		fail "notify sequence: the fake NOTIFY_SOCKET listener did not start"
		return
	}
	t0=$EPOCHREALTIME
	"${CLEANENV[@]}" NOTIFY_SOCKET="$T/n.sock" WATCHDOG_USEC=$((WATCHDOG_SEC * 1000000)) \
		ASAN_OPTIONS=detect_leaks=0 "${trace[@]}" "$RNGD" -f -q -c "$T/n.conf" "${args[@]}" \
		2>"$T/n.err" &
	st=$!
	pids+=("$st")
	p=$st
	[ ${#trace[@]} -gt 0 ] && p=$(traced_pid "$T/n.strace")
	# Conditions, not sleeps: READY=1, 3 WATCHDOG=1 and the STATUS= lines the checks below
	# want, then SIGHUP; READY=1 again and one more WATCHDOG=1, then SIGTERM.
	n_msgs() { count_lines " $1" "$T/n.log"; }
	before_hup() {
		[ "$(n_msgs READY=1)" -ge 1 ] && [ "$(n_msgs WATCHDOG=1)" -ge 3 ] &&
			[ "$(n_msgs STATUS=)" -ge "$([ $mode = kernel ] && echo 2 || echo 1)" ]
	}
	wait_until 30 before_hup
	thup=$EPOCHREALTIME
	local pings_at_hup
	pings_at_hup=$(n_msgs WATCHDOG=1)
	kill -HUP "$p"
	after_hup() { [ "$(n_msgs READY=1)" -ge 2 ] && [ "$(n_msgs WATCHDOG=1)" -gt "$pings_at_hup" ]; }
	wait_until 30 after_hup
	tterm=$EPOCHREALTIME
	kill -TERM "$p"
	wait "$st"
	rc=$?
	wait_until 30 grep -q " STOPPING=1" "$T/n.log" # the last datagram reaches the log
	if [ $rc -ne 0 ]; then
		fail "notify sequence ($mode): rngd exited $rc: $(tail -3 "$T/n.err")"
		return
	fi
	python3 - "$T/n.log" "$t0" "$thup" "$tterm" "$WATCHDOG_SEC" "$T/n.strace" "$mode" \
		>"$T/n.res" 2>&1 <<'EOF'
import os, re, sys
log, t0, thup, tterm, wd, trace, mode = sys.argv[1], *map(float, sys.argv[2:6]), *sys.argv[6:8]
msgs = []  # (mono, wall, text)
for line in open(log):
    m, w, text = line.rstrip("\n").split(" ", 2)
    msgs.append((float(m), float(w), text))
err = []
def kind(t):
    return t.split("=", 1)[0]
texts = [t for _, _, t in msgs]
ready = [(w, m) for m, w, t in msgs if t == "READY=1"]
status = [w for m, w, t in msgs if t.startswith("STATUS=")]
pings = [w for m, w, t in msgs if t == "WATCHDOG=1"]
reload = [(m, w, t) for m, w, t in msgs if t.startswith("RELOADING=1")]
figures = []
# READY=1 once at start, once after the reload.
if len(ready) != 2:
    err.append("%d READY=1, want 2 (start, reload)" % len(ready))
elif not (t0 < ready[0][0] <= t0 + 1.5):
    err.append("first READY=1 %.3f s after start, want within 1.5 s" % (ready[0][0] - t0))
else:
    figures.append("READY %.0f ms after start" % ((ready[0][0] - t0) * 1000))
# The first READY=1 follows the first injection (strace: ioctl, then sendmsg).
if os.path.exists(trace):
    first_add = first_ready = None
    for line in open(trace):
        m = re.match(r"\d+\s+([\d.]+) (.*)", line)
        if not m:
            continue
        t, call = float(m.group(1)), m.group(2)
        a = re.search(r"RNDADDENTROPY, \{entropy_count=\d+, buf_size=(\d+)", call)
        if a and int(a.group(1)) > 0 and call.rstrip().endswith("= 0") and first_add is None:
            first_add = t
        if 'iov_base="READY=1"' in call and first_ready is None:
            first_ready = t
    if first_ready is None or first_add is None:
        err.append("strace: no RNDADDENTROPY or no READY=1 sendmsg")
    elif first_ready < first_add:
        err.append("strace: READY=1 sent %.3f s BEFORE the first RNDADDENTROPY" % (first_add - first_ready))
    elif first_ready - first_add > 0.25:
        err.append("strace: READY=1 %.0f ms after the first RNDADDENTROPY (target 50 ms)" % ((first_ready - first_add) * 1000))
    else:
        figures.append("%.1f ms after the first RNDADDENTROPY (strace)" % ((first_ready - first_add) * 1000))
# STATUS= present, never two within a second. It changes with every feed of the kernel;
# in output mode nothing is "fed" and the text may stay the same.
gaps = [b - a for a, b in zip(status, status[1:])] or [1.0]
if len(status) < (2 if mode == "kernel" else 1):
    err.append("%d STATUS= messages" % len(status))
elif min(gaps) < 0.95:
    err.append("two STATUS= %.3f s apart (at most one a second)" % min(gaps))
else:
    figures.append("%d STATUS (min gap %.2f s)" % (len(status), min(gaps)))
# WATCHDOG=1 throughout: the first within the interval, no gap reaching it.
wgaps = [b - a for a, b in zip([t0] + pings, pings + [tterm])]
if len(pings) < 3:
    err.append("%d WATCHDOG=1 in %.1f s" % (len(pings), tterm - t0))
elif max(wgaps) >= wd:
    err.append("WATCHDOG=1 gap of %.2f s (WatchdogSec=%g)" % (max(wgaps), wd))
else:
    figures.append("%d WATCHDOG (gaps %.2f-%.2f s)" % (len(pings), min(wgaps[1:-1] or wgaps), max(wgaps)))
# RELOADING=1 with MONOTONIC_USEC after SIGHUP, then READY=1.
if len(reload) != 1:
    err.append("%d RELOADING=1, want 1" % len(reload))
else:
    m, w, t = reload[0]
    mu = re.search(r"MONOTONIC_USEC=(\d+)", t)
    i = texts.index(t)
    after = [x for x in texts[i + 1:] if kind(x) in ("READY", "RELOADING", "STOPPING")]
    if w < thup:
        err.append("RELOADING=1 before SIGHUP")
    elif not mu or abs(int(mu.group(1)) / 1e6 - m) > 0.5:
        err.append("RELOADING=1 without a plausible MONOTONIC_USEC: %r" % t)
    elif not after or after[0] != "READY=1":
        err.append("RELOADING=1 not followed by READY=1: %r" % after[:2])
    else:
        rw = [x for x in msgs[i + 1:] if x[2] == "READY=1"][0][1]
        figures.append("RELOADING (MONOTONIC_USEC %+.1f ms) -> READY in %.1f ms" %
                       ((int(mu.group(1)) / 1e6 - m) * 1000, (rw - w) * 1000))
# STOPPING=1 once, last, after SIGTERM.
if texts.count("STOPPING=1") != 1 or texts[-1] != "STOPPING=1":
    err.append("STOPPING=1 not sent exactly once as the last message: %r" % texts[-3:])
elif msgs[-1][1] < tterm:
    err.append("STOPPING=1 before SIGTERM")
else:
    figures.append("STOPPING last, %.0f ms after SIGTERM" % ((msgs[-1][1] - tterm) * 1000))
unknown = sorted({kind(t) for t in texts} - {"READY", "STATUS", "WATCHDOG", "RELOADING", "STOPPING"})
if unknown:
    err.append("unexpected messages: %s" % unknown)
print(("ERR " + "; ".join(err)) if err else "; ".join(figures))
EOF
	if grep -q '^ERR ' "$T/n.res" || [ ! -s "$T/n.res" ]; then
		fail "notify sequence ($mode): $(sed 's/^ERR //' "$T/n.res" | head -5 | tr '\n' ' ') [log: $(tr '\n' ';' <"$T/n.log" | cut -c1-600)]"
	else
		ok "notify start/reload/stop ($mode): $(cat "$T/n.res")"
	fi
}

# WATCHDOG=1 pings in the log $1 between $2 and $3 (wall clock): "count last-offset maxgap".
ping_summary() {
	python3 - "$@" <<'EOF'
import sys
t0, tend = float(sys.argv[2]), float(sys.argv[3])
p = [float(l.split(" ", 2)[1]) for l in open(sys.argv[1]) if l.rstrip("\n").endswith(" WATCHDOG=1")]
gaps = [b - a for a, b in zip([t0] + p, p + [tend])]
print(len(p), "%.2f" % ((p[-1] - t0) if p else -1), "%.2f" % max(gaps))
EOF
}

# 1b. A wedged source (a read that never returns) stops the pings within one watchdog
# interval; a healthy one in the same configuration keeps them coming. 1c. Nothing is sent
# without NOTIFY_SOCKET, and a NOTIFY_SOCKET nobody listens on breaks nothing. All in
# parallel, in output mode (no privileges needed).
test_watchdog_and_unset() {
	local t0 tend pw ph pu pb rcw rch rcu rcb trace=() n last gap
	if ! built_with HAVE_SYSTEMD; then
		skip "watchdog and unset: rngd was built --without-systemd"
		return
	fi
	write_conf "$T/w.conf" ""
	mkfifo "$T/wedged"
	sleep 30 >"$T/wedged" & # holds the FIFO open and never writes
	pids+=($!)
	start_writer "$T/healthy" 30
	start_writer "$T/unset" 30
	start_writer "$T/badsock" 30
	start_listener w && start_listener h || {
		fail "watchdog: the fake NOTIFY_SOCKET listeners did not start"
		return
	}
	t0=$EPOCHREALTIME
	"${CLEANENV[@]}" NOTIFY_SOCKET="$T/w.sock" WATCHDOG_USEC=$((WATCHDOG_SEC * 1000000)) \
		"$RNGD" -f -q -c "$T/w.conf" "${NOSRC[@]}" -O "file:w:path:$T/wedged" -o "$T/w.out" \
		2>"$T/w.err" &
	pw=$!
	"${CLEANENV[@]}" NOTIFY_SOCKET="$T/h.sock" WATCHDOG_USEC=$((WATCHDOG_SEC * 1000000)) \
		"$RNGD" -f -q -c "$T/w.conf" "${NOSRC[@]}" -O "file:h:path:$T/healthy" -o "$T/h.out" \
		2>"$T/h.err" &
	ph=$!
	have_strace && trace=(strace -f -s 200 -e trace=execve,socket,connect,sendmsg,sendto -o "$T/u.strace")
	"${CLEANENV[@]}" WATCHDOG_USEC=$((WATCHDOG_SEC * 1000000)) ASAN_OPTIONS=detect_leaks=0 \
		"${trace[@]}" "$RNGD" -f -q -c "$T/w.conf" "${NOSRC[@]}" -O "file:u:path:$T/unset" \
		-o "$T/u.out" 2>"$T/u.err" &
	pu=$!
	"${CLEANENV[@]}" NOTIFY_SOCKET="$T/nobody-listens.sock" WATCHDOG_USEC=$((WATCHDOG_SEC * 1000000)) \
		"$RNGD" -f -q -c "$T/w.conf" "${NOSRC[@]}" -O "file:b:path:$T/badsock" -o "$T/b.out" \
		2>"$T/b.err" &
	pb=$!
	pids+=("$pw" "$ph" "$pu" "$pb")
	# 4.5 s at least (the wedged one must have stopped pinging), and 3 pings of the healthy
	# one whatever the load: a condition with a deadline, not a bet on a sleep.
	healthy_pinged() {
		[ "$(count_lines ' WATCHDOG=1' "$T/h.log")" -ge 3 ] &&
			awk -v t0="$t0" -v now="$EPOCHREALTIME" 'BEGIN { exit !(now - t0 >= 4.5) }'
	}
	wait_until 30 healthy_pinged
	tend=$EPOCHREALTIME
	if ! kill -0 "$pw" 2>/dev/null; then
		fail "watchdog, wedged source: rngd died: $(tail -3 "$T/w.err")"
	fi
	kill -TERM "$pw" "$ph" "$pb"
	# Stop the traced daemon itself (strace then exits with its status).
	kill -TERM "$(if [ ${#trace[@]} -gt 0 ]; then traced_pid "$T/u.strace"; else echo "$pu"; fi)"
	wait "$pw"
	rcw=$?
	wait "$ph"
	rch=$?
	wait "$pu"
	rcu=$?
	wait "$pb"
	rcb=$?
	read -r n last gap < <(ping_summary "$T/w.log" "$t0" "$tend")
	if [ $rcw -ne 0 ]; then
		fail "watchdog, wedged source: exit $rcw after SIGTERM: $(tail -3 "$T/w.err")"
	elif awk -v l="$last" -v w=$WATCHDOG_SEC 'BEGIN { exit !(l >= w) }'; then
		fail "watchdog, wedged source: WATCHDOG=1 still sent $last s after start ($n pings)"
	else
		ok "watchdog, wedged source (read blocked forever): $n WATCHDOG=1, the last $last s after start, then none for $(awk -v t0="$t0" -v e="$tend" -v l="$last" 'BEGIN { printf "%.1f", e - t0 - (l < 0 ? 0 : l) }') s (WatchdogSec=$WATCHDOG_SEC)"
	fi
	read -r n last gap < <(ping_summary "$T/h.log" "$t0" "$tend")
	if [ $rch -ne 0 ]; then
		fail "watchdog, healthy source: exit $rch: $(tail -3 "$T/h.err")"
	elif [ "$n" -lt 3 ] || awk -v g="$gap" -v w=$WATCHDOG_SEC 'BEGIN { exit !(g >= w) }'; then
		fail "watchdog, healthy source: $n WATCHDOG=1 in 4.5 s, largest gap $gap s"
	elif [ ! -s "$T/h.out" ]; then
		fail "watchdog, healthy source: nothing written to the output"
	else
		ok "watchdog, healthy source in the same configuration: $n WATCHDOG=1 in 4.5 s, largest gap $gap s, $(stat -c %s "$T/h.out") bytes output"
	fi
	if [ $rcu -ne 0 ]; then
		fail "NOTIFY_SOCKET unset: exit $rcu: $(tail -3 "$T/u.err")"
	elif [ ${#trace[@]} -eq 0 ]; then
		ok "NOTIFY_SOCKET unset: ran and stopped with exit 0 (strace missing: messages not checked)"
	elif grep -Eq 'READY=|STATUS=|WATCHDOG=|STOPPING=|RELOADING=' "$T/u.strace"; then
		fail "NOTIFY_SOCKET unset: a notification was sent: $(grep -E 'READY=|STATUS=|WATCHDOG=' "$T/u.strace" | head -2)"
	elif grep -q 'AF_UNIX' "$T/u.strace"; then
		fail "NOTIFY_SOCKET unset: an AF_UNIX socket was used: $(grep AF_UNIX "$T/u.strace" | head -2)"
	else
		ok "NOTIFY_SOCKET unset: no socket, no message (strace), $(stat -c %s "$T/u.out") bytes output, exit 0"
	fi
	if [ $rcb -ne 0 ]; then
		fail "NOTIFY_SOCKET with no listener: exit $rcb: $(tail -3 "$T/b.err")"
	elif [ ! -s "$T/b.out" ]; then
		fail "NOTIFY_SOCKET with no listener: nothing written to the output"
	else
		ok "NOTIFY_SOCKET with no listener: $(stat -c %s "$T/b.out") bytes output, exit 0"
	fi
}

# Feeds so far according to the status file $1 (-1 when unreadable).
status_feeds() {
	python3 -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))["feed"]["feeds"])
except Exception:
    print(-1)' "$1"
}

# 2. -D nobody:nogroup: every thread has exactly CAP_SYS_ADMIN, no-new-privs, the new ids,
# and the daemon still feeds the kernel afterwards.
test_privilege_drop() {
	if ! is_root || ! have_sys_admin; then
		skip "privilege drop: needs root with CAP_SYS_ADMIN"
		return
	fi
	if ! hwrng_readable; then
		skip "privilege drop: no readable /dev/hwrng to feed the kernel from"
		return
	fi
	local uid gid p rc f1 f2 res f
	uid=$(id -u nobody 2>/dev/null) && gid=$(getent group nogroup | cut -d: -f3) && [ -n "$gid" ] || {
		skip "privilege drop: no user nobody or group nogroup here"
		return
	}
	# A directory the daemon creates and hands to nobody before the switch.
	write_conf "$T/p.conf" "$T/priv/status.json" 1
	"${CLEANENV[@]}" "$RNGD" -f -q -c "$T/p.conf" -D nobody:nogroup -R 1 2>"$T/p.err" &
	p=$!
	pids+=("$p")
	wait_until 30 eval "[ -s '$T/priv/status.json' ] || ! kill -0 $p 2>/dev/null"
	if ! kill -0 "$p" 2>/dev/null; then
		wait "$p"
		fail "privilege drop: rngd exited $?: $(tail -3 "$T/p.err")"
		return
	fi
	# Fed once (the first injection), then again: waited for, not assumed after a sleep.
	fed_more() { f=$(status_feeds "$T/priv/status.json") && [ "$f" -gt "$1" ]; }
	wait_until 30 fed_more 0
	f1=$(status_feeds "$T/priv/status.json")
	res=$(python3 - "$p" "$uid" "$gid" <<'EOF'
import glob, sys
pid, uid, gid = sys.argv[1:4]
want = {"CapEff": "0000000000200000", "CapPrm": "0000000000200000",
        "CapBnd": "0000000000200000", "CapAmb": "0000000000000000",
        "CapInh": "0000000000000000", "NoNewPrivs": "1"}
bad, n = [], 0
for f in ["/proc/%s/status" % pid] + sorted(glob.glob("/proc/%s/task/*/status" % pid)):
    try:
        kv = dict(l.rstrip("\n").split(":\t", 1) for l in open(f) if ":\t" in l)
    except OSError:
        continue  # a thread that ended meanwhile
    n += 1
    for k, v in want.items():
        if kv.get(k) != v:
            bad.append("%s %s=%s" % (f, k, kv.get(k)))
    if kv["Uid"].split() != [uid] * 4 or kv["Gid"].split() != [gid] * 4:
        bad.append("%s Uid=%s Gid=%s" % (f, kv["Uid"], kv["Gid"]))
    if kv.get("Groups", "").split() not in ([], [gid]):
        bad.append("%s Groups=%s" % (f, kv.get("Groups")))
print(("ERR " + "; ".join(bad)) if bad else "%d tasks" % (n - 1))
EOF
	)
	wait_until 30 fed_more "$f1"
	f2=$(status_feeds "$T/priv/status.json")
	kill -TERM "$p"
	wait "$p"
	rc=$?
	if [[ $res == ERR* ]]; then
		fail "privilege drop: ${res#ERR }"
	elif [ $rc -ne 0 ]; then
		fail "privilege drop: exit $rc after SIGTERM: $(tail -3 "$T/p.err")"
	elif [ "$f1" -lt 1 ] || [ "$f2" -le "$f1" ]; then
		fail "privilege drop: the kernel is not fed after the drop: feeds $f1, then $f2 within 30 s"
	else
		ok "privilege drop to nobody:nogroup ($uid:$gid): process and $res: CapEff=CapPrm=CapBnd=0000000000200000, CapAmb=CapInh=0, NoNewPrivs 1; feeds went on: $f1, then $f2"
	fi
}

# 3. The status file: valid, replaced atomically (a reader hammering it while the daemon
# rewrites it every second and on SIGUSR1 never sees a partial document), counters
# consistent; `rngd --status` (table and --json); removed at stop.
test_status_file() {
	local mode args=() p rc r res out
	write_conf "$T/s.conf" "$T/st/status.json" 1
	if can_feed_hwrng; then
		mode=kernel
		args=(-R 1)
	else
		mode=output
		start_writer "$T/s.fifo" 30
		args=("${NOSRC[@]}" -O "file:s:path:$T/s.fifo" -o "$T/s.out")
	fi
	"${CLEANENV[@]}" "$RNGD" -f -q -c "$T/s.conf" "${args[@]}" 2>"$T/s.err" &
	p=$!
	pids+=("$p")
	python3 - "$T/st/status.json" 3.5 >"$T/s.reader" 2>&1 <<'EOF' &
import json, sys, time
path, end = sys.argv[1], time.monotonic() + float(sys.argv[2])
reads = bad = missing = 0
seen, docs, first = set(), None, None
while time.monotonic() < end:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        if first is not None:
            missing += 1  # after the first write the file must always be there
        continue
    reads += 1
    try:
        doc = json.loads(data)
        seen.add(doc["updated"] + str(hash(data)))
        first = first or doc
    except Exception:
        bad += 1
print(reads, bad, missing, len(seen))
EOF
	r=$!
	pids+=("$r")
	for _ in $(seq 30); do # SIGUSR1 forces a rewrite: 30 in 3 s
		sleep 0.1
		kill -USR1 "$p"
	done
	wait "$r"
	read -r reads bad missing versions <"$T/s.reader"
	if [ "${bad:-1}" -ne 0 ] || [ "${missing:-1}" -ne 0 ] || [ "${reads:-0}" -lt 100 ]; then
		fail "status file ($mode): concurrent reader: $(cat "$T/s.reader") (reads, partial/invalid, missing, versions)"
	else
		ok "status file ($mode): $reads reads, $versions distinct documents seen (every 1 s + 30 SIGUSR1), 0 partial or invalid, never missing"
	fi
	res=$(python3 - "$T/st/status.json" "$p" "$mode" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
pid, mode = int(sys.argv[2]), sys.argv[3]
B = 2500
err = []
def need(cond, what):
    if not cond:
        err.append(what)
need(doc.get("version") == 1, "version %r" % doc.get("version"))
need(doc.get("pid") == pid, "pid %r, want %d" % (doc.get("pid"), pid))
feed, srcs = doc["feed"], doc["sources"]
names = [s["name"] for s in srcs]
need(("hwrng" if mode == "kernel" else "file:s") in names, "sources %s" % names)
for s in srcs:
    n = s["name"]
    need(s["blocks_passed"] <= s["blocks_tested"], "%s: passed > tested" % n)
    need(s["bytes_read"] >= s["blocks_tested"] * B, "%s: bytes_read %d < %d tested blocks" % (n, s["bytes_read"], s["blocks_tested"]))
    need(s["bytes_fed"] <= s["blocks_passed"] * B, "%s: bytes_fed %d > %d passed blocks" % (n, s["bytes_fed"], s["blocks_passed"]))
    need(s["bits_credited"] <= 8 * s["bytes_fed"], "%s: credit above 8 bits a byte" % n)
    need(s["blocks_tested"] - s["blocks_passed"] == 0 or sum(s["fips_failures"].values()) > 0,
         "%s: failed blocks without a FIPS failure count" % n)
need(feed["bytes_fed"] == sum(s["bytes_fed"] for s in srcs), "feed.bytes_fed != sum of sources")
need(feed["bits_credited"] == sum(s["bits_credited"] for s in srcs), "feed.bits_credited != sum of sources")
need(feed["bits_credited"] <= 8 * feed["bytes_fed"], "credit above 8 bits a byte")
main = [s for s in srcs if s["name"] == ("hwrng" if mode == "kernel" else "file:s")][0]
if mode == "kernel":
    need(feed["feeds"] >= 2, "%d feeds in 3.5 s with -R 1" % feed["feeds"])
    need(feed["reseeds"] <= feed["feeds"], "more reseeds than feeds")
    need(feed["last_feed"] is not None, "no last_feed")
    need(doc["kernel"]["crng_ready"] is True, "crng_ready %r" % doc["kernel"]["crng_ready"])
else:
    need(feed["bits_credited"] == 0, "credit in output mode")
need(main["bytes_fed"] > 0 and main["blocks_passed"] > 0, "the source fed nothing")
print(("ERR " + "; ".join(err)) if err else
      "feeds %d, bytes_fed %d, bits %d; %s: read %d, tested %d, passed %d" %
      (feed["feeds"], feed["bytes_fed"], feed["bits_credited"], main["name"],
       main["bytes_read"], main["blocks_tested"], main["blocks_passed"]))
EOF
	)
	if [[ $res == ERR* ]] || [ -z "$res" ]; then
		fail "status file ($mode): counters: ${res#ERR }"
	else
		ok "status file ($mode): version 1, counters consistent: $res"
	fi
	"$RNGD" --status -c "$T/s.conf" >"$T/s.table" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^SOURCE ' "$T/s.table" || ! grep -q "pid $p" "$T/s.table"; then
		fail "rngd --status: exit $rc: $(head -5 "$T/s.table")"
	else
		ok "rngd --status: a table of $(wc -l <"$T/s.table") lines: $(sed -n 3p "$T/s.table")"
	fi
	"$RNGD" --status --json -c "$T/s.conf" >"$T/s.json" 2>"$T/s.json.err"
	rc=$?
	if [ $rc -ne 0 ] || ! python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["version"] == 1' "$T/s.json" 2>/dev/null; then
		fail "rngd --status --json: exit $rc, not a version 1 document: $(head -c 200 "$T/s.json") $(cat "$T/s.json.err")"
	else
		ok "rngd --status --json: valid JSON, version 1"
	fi
	kill -TERM "$p"
	wait "$p"
	rc=$?
	"$RNGD" --status -c "$T/s.conf" >"$T/s.gone" 2>&1
	r=$?
	out=$(ls -A "$T/st" 2>/dev/null | tr '\n' ' ')
	if [ $rc -ne 0 ]; then
		fail "status file at stop: rngd exited $rc: $(tail -3 "$T/s.err")"
	elif [ -e "$T/st/status.json" ] || [ -n "$out" ]; then
		fail "status file at stop: left behind: $out"
	elif [ $r -eq 0 ] || ! grep -q "status.json" "$T/s.gone"; then
		fail "rngd --status after the stop: exit $r: $(cat "$T/s.gone")"
	else
		ok "after the stop the status file is gone (no temp files left) and rngd --status exits $r: $(head -1 "$T/s.gone")"
	fi
}

# 4. --once: the feed(s), one reseed, exit 0; 66 without a source; 77 without CAP_SYS_ADMIN.
test_once() {
	if ! is_root || ! have_sys_admin; then
		skip "--once: needs root with CAP_SYS_ADMIN"
		return
	fi
	local rc t0 t1 res src=()
	write_conf "$T/o.conf" ""
	if ! hwrng_readable; then
		skip "--once with the real hwrng: no readable /dev/hwrng"
	elif ! have_strace; then
		skip "--once with the real hwrng: strace is not installed"
	else
		t0=$EPOCHREALTIME
		"${CLEANENV[@]}" ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=ioctl -o "$T/o.strace" \
			"$RNGD" --once -q -c "$T/o.conf" 2>"$T/o.err"
		rc=$?
		t1=$EPOCHREALTIME
		res=$(python3 - "$T/o.strace" <<'EOF'
import re, sys
ev = []
for line in open(sys.argv[1]):
    if "RNDADDENTROPY" in line:
        m = re.search(r"buf_size=(\d+)", line)
        if m and int(m.group(1)) == 0:
            continue  # the start-up check of the permission
        ev.append("add(%s)%s" % (m.group(1) if m else "?", "" if line.rstrip().endswith("= 0") else "!"))
    elif "RNDRESEEDCRNG" in line:
        ev.append("reseed" + ("" if line.rstrip().endswith("= 0") else "!"))
good = len(ev) >= 2 and ev[-1] == "reseed" and all(e.startswith("add(") and not e.endswith("!") for e in ev[:-1])
print("OK" if good else "ERR", " ".join(ev))
EOF
		)
		local secs
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
		if [ $rc -ne 0 ]; then
			fail "--once: exit $rc: $(tail -3 "$T/o.err")"
		elif [[ $res != OK* ]]; then
			fail "--once: want RNDADDENTROPY(s) then one RNDRESEEDCRNG, strace shows: ${res#ERR }"
		elif awk -v s="$secs" 'BEGIN { exit !(s > 5) }'; then
			fail "--once: took $secs s"
		else
			ok "--once: exit 0 in $secs s (under strace), ioctls: ${res#OK }"
		fi
	fi
	"${CLEANENV[@]}" "$RNGD" --once -c "$T/o.conf" "${NOSRC[@]}" >/dev/null 2>"$T/o66.err"
	rc=$?
	[ $rc -eq 66 ] && ok "--once with no source: exit 66 ($(head -1 "$T/o66.err"))" ||
		fail "--once with no source: exit $rc, want 66: $(head -2 "$T/o66.err")"
	if ! command -v setpriv >/dev/null; then
		skip "--once without CAP_SYS_ADMIN: setpriv is not installed"
		return
	fi
	if ! hwrng_readable; then
		head -c 30000 /dev/urandom >"$T/o.bin"
		src=("${NOSRC[@]}" -O "file:o:path:$T/o.bin")
	fi
	"${CLEANENV[@]}" setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin \
		"$RNGD" --once -c "$T/o.conf" "${src[@]}" >/dev/null 2>"$T/o77.err"
	rc=$?
	[ $rc -eq 77 ] && ok "--once without CAP_SYS_ADMIN: exit 77 ($(head -1 "$T/o77.err"))" ||
		fail "--once without CAP_SYS_ADMIN: exit $rc, want 77: $(head -2 "$T/o77.err")"
}

# 1d. libsystemd is loaded only where systemd is there (src/sdlib.c): not mapped without
# NOTIFY_SOCKET, WATCHDOG_USEC and JOURNAL_STREAM, mapped with NOTIFY_SOCKET; where it
# cannot be loaded (a stand-in without its functions) rngd says why once and goes on
# feeding, with plain lines on a journal stream. Output mode, in parallel.
test_libsystemd_loading() {
	local i p rc pids_l=() maps
	if ! built_with HAVE_SYSTEMD; then
		skip "loading libsystemd: rngd was built --without-systemd"
		return
	fi
	if ! command -v cc >/dev/null; then
		skip "loading libsystemd: no C compiler for the stand-in library"
		return
	fi
	mkdir "$T/fakelib"
	echo 'int rngd_test_not_libsystemd;' >"$T/fakelib/x.c"
	cc -shared -fPIC -Wl,-soname,libsystemd.so.0 -o "$T/fakelib/libsystemd.so.0" \
		"$T/fakelib/x.c" || {
		fail "loading libsystemd: cannot build the stand-in library"
		return
	}
	write_conf "$T/l.conf" ""
	for i in 1 2 3 4; do
		start_writer "$T/l$i.fifo" 30
	done
	start_listener l2 && start_listener l3 || {
		fail "loading libsystemd: the fake NOTIFY_SOCKET listeners did not start"
		return
	}
	: >"$T/l4.err"
	local env=([1]="" [2]="NOTIFY_SOCKET=$T/l2.sock"
		[3]="NOTIFY_SOCKET=$T/l3.sock LD_LIBRARY_PATH=$T/fakelib"
		[4]="JOURNAL_STREAM=$(stat -c '%d:%i' "$T/l4.err") LD_LIBRARY_PATH=$T/fakelib")
	for i in 1 2 3 4; do
		# shellcheck disable=SC2086 # the assignments are words
		"${CLEANENV[@]}" ${env[$i]} "$RNGD" -f -c "$T/l.conf" "${NOSRC[@]}" \
			-O "file:l$i:path:$T/l$i.fifo" -o "$T/l$i.out" 2>>"$T/l$i.err" &
		pids_l[$i]=$!
		pids+=($!)
	done
	all_fed() {
		for i in 1 2 3 4; do
			[ -s "$T/l$i.out" ] || return 1
		done
		grep -q ' READY=1' "$T/l2.log" 2>/dev/null
	}
	wait_until 30 all_fed || fail "loading libsystemd: not all four fed within 30 s"
	for i in 1 2 3 4; do
		maps[$i]=$(grep -c 'libsystemd\.so' "/proc/${pids_l[$i]}/maps" 2>/dev/null)
	done
	kill -TERM "${pids_l[@]:1}"
	for i in 1 2 3 4; do
		wait "${pids_l[$i]}"
		rc=$?
		[ $rc -eq 0 ] || fail "loading libsystemd: run $i: exit $rc: $(tail -2 "$T/l$i.err")"
	done
	[ "${maps[1]}" = 0 ] && ok "libsystemd not mapped without NOTIFY_SOCKET or JOURNAL_STREAM" ||
		fail "libsystemd mapped (${maps[1]} lines of /proc/PID/maps) with no systemd around"
	[ "${maps[2]:-0}" -gt 0 ] && grep -q ' READY=1' "$T/l2.log" &&
		ok "libsystemd loaded under NOTIFY_SOCKET, READY=1 sent" ||
		fail "under NOTIFY_SOCKET: libsystemd mapped ${maps[2]} times, READY=1 $(grep -c ' READY=1' "$T/l2.log")"
	p="NOTIFY_SOCKET is set, but libsystemd cannot be loaded ("
	if [ "$(grep -cF "$p" "$T/l3.err")" = 1 ] && grep -q 'undefined symbol: sd_notify' "$T/l3.err" &&
		[ ! -s "$T/l3.log" ]; then
		ok "libsystemd that cannot be loaded: said once ($(grep -F "$p" "$T/l3.err" | cut -c1-90)...), fed anyway"
	else
		fail "libsystemd that cannot be loaded, NOTIFY_SOCKET: $(head -3 "$T/l3.err"); sent: $(head -2 "$T/l3.log")"
	fi
	p="libsystemd cannot be loaded ("
	if [ "$(grep -cF "$p" "$T/l4.err")" = 1 ] && grep -q '^rngd: started:' "$T/l4.err"; then
		ok "libsystemd that cannot be loaded, JOURNAL_STREAM: said once, plain lines on stderr"
	else
		fail "libsystemd that cannot be loaded, JOURNAL_STREAM: $(head -3 "$T/l4.err")"
	fi
}

[ -x "$RNGD" ] || { echo "no $RNGD"; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 is needed for the fake service manager"; exit 77; }
test_notify_sequence
test_watchdog_and_unset
test_libsystemd_loading
test_privilege_drop
test_status_file
test_once
finish
