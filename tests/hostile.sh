#!/bin/bash
# Issue 12's hostile-environment probe, one case per repro: closed standard fds, opens that
# could block (a FIFO as the configuration), data credited or written twice (a file source
# re-read on reload, a replayed block), data lost (a FIFO writer killed by SIGPIPE, write
# errors retried in a storm), outputs that must be refused, test and output modes without
# CAP_SYS_ADMIN. File sources and output mode only: no /dev/hwrng, no kernel feeding.
# Every timing assertion waits for its condition with a generous deadline.
set -u
. "$(dirname "$0")/lib.sh" hostile

# Blocks of $1 that occur more than once (2500-byte blocks).
dup_blocks() {
	python3 - "$1" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
blocks = [d[i:i + 2500] for i in range(0, len(d), 2500)]
print(len(blocks) - len(set(blocks)))
EOF
}

alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
has_line() { grep -q -- "$2" "$1" 2>/dev/null; }
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
size_at_least() { [ "$(size_of "$1")" -ge "$2" ]; }
# CPU ticks (user + system) of a process.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Repro 1: every standard fd closed. The daemon must run, stop on SIGTERM, not spin.
test_closed_std_fds() {
	local pid t0 t1 rc
	mkfifo "$T/cfifo"
	sleep 60 >"$T/cfifo" & # a writer that never writes: the source stays, idle
	pids+=($!)
	"$RNGD" -f "${NOSRC[@]}" -O "file:c:path:$T/cfifo" -o "$T/cout" <&- >&- 2>&- &
	pid=$!
	pids+=("$pid")
	if ! wait_until 30 test -e "$T/cout" || ! alive "$pid"; then
		fail "closed fds 0-2: the daemon did not start"
		return
	fi
	sleep 1 # measured: the CPU it uses while idle
	t0=$(cpu_ticks "$pid")
	sleep 2
	t1=$(cpu_ticks "$pid")
	kill -TERM "$pid"
	if ! wait_until 30 dead "$pid"; then
		fail "closed fds 0-2: SIGTERM ignored"
		kill -KILL "$pid"
		return
	fi
	wait "$pid"
	rc=$?
	if [ $((t1 - t0)) -gt 20 ]; then
		fail "closed fds 0-2: $((t1 - t0)) CPU ticks in 2 s idle (spinning)"
	elif [ $rc -ne 0 ]; then
		fail "closed fds 0-2: exit $rc after SIGTERM"
	else
		ok "closed fds 0-2: runs idle ($((t1 - t0)) ticks in 2 s), stops on SIGTERM, exit 0"
	fi
}

# Repro 1: stderr closed with -o FILE: the log lines must not end up in the output.
test_closed_stderr_output() {
	make_random "$T/in_e.bin" 8
	"$RNGD" -f -d "${NOSRC[@]}" -O "file:e:path:$T/in_e.bin" -o "$T/out_e.bin" 2>&-
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "stderr closed, -o FILE: exit $rc"
	elif grep -aq "rngd\|file:e" "$T/out_e.bin"; then
		fail "stderr closed, -o FILE: log lines in the output"
	elif ! cmp -s <(tail -c +5 "$T/in_e.bin") "$T/out_e.bin"; then
		fail "stderr closed, -o FILE: the output is not exactly the tested blocks"
	else
		ok "stderr closed, -o FILE: the output holds the 8 tested blocks and nothing else"
	fi
}

# Repro 2: a configuration that is a FIFO hangs neither --check-config nor a reload.
test_fifo_config() {
	local rc pid
	mkfifo "$T/conf.fifo"
	timeout 10 "$RNGD" --check-config -c "$T/conf.fifo" >"$T/cc.out" 2>&1
	rc=$?
	if [ $rc -ne 78 ] || ! has_line "$T/cc.out" "not a regular file"; then
		fail "--check-config on a FIFO: exit $rc ($(head -c 200 "$T/cc.out"))"
	else
		ok "--check-config on a FIFO: exit 78 at once, 'not a regular file'"
	fi

	mkfifo "$T/hfifo"
	sleep 60 >"$T/hfifo" &
	pids+=($!)
	printf '[source file:h]\npath = %s\n' "$T/hfifo" >"$T/h.conf"
	"$RNGD" -f "${NOSRC[@]}" -c "$T/h.conf" -o "$T/hout" 2>"$T/h.err" &
	pid=$!
	pids+=("$pid")
	wait_until 30 has_line "$T/h.err" "started"
	rm -f "$T/h.conf"
	mkfifo "$T/h.conf"
	kill -HUP "$pid"
	wait_until 30 has_line "$T/h.err" "keeping the old configuration"
	kill -TERM "$pid"
	if ! wait_until 30 dead "$pid"; then
		fail "SIGHUP with a FIFO as the configuration: SIGTERM not obeyed within 30 s"
		kill -KILL "$pid"
	elif ! has_line "$T/h.err" "not a regular file"; then
		fail "SIGHUP with a FIFO as the configuration: no 'not a regular file' line"
	else
		ok "SIGHUP with a FIFO as the configuration: refused, old one kept, SIGTERM obeyed"
	fi
	wait "$pid" 2>/dev/null
}

# Repro 3: a regular file source is read once, front to back, whatever reloads happen.
test_file_read_once() {
	local pid i
	make_random "$T/in_o.bin" 6
	mkfifo "$T/ofifo"
	printf '[source file:o]\npath = %s\n' "$T/in_o.bin" >"$T/o.conf"
	# Stays up after the file's end: a second source on an idle FIFO.
	printf '[source file:idle]\npath = %s\n' "$T/ofifo" >>"$T/o.conf"
	sleep 60 >"$T/ofifo" &
	pids+=($!)
	"$RNGD" -f "${NOSRC[@]}" -c "$T/o.conf" -o "$T/out_o.bin" 2>"$T/o.err" &
	pid=$!
	pids+=("$pid")
	wait_until 30 size_at_least "$T/out_o.bin" $((6 * 2500))
	for i in 1 2 3 4 5; do
		kill -HUP "$pid"
		wait_until 30 eval "[ \$(grep -c 'configuration reloaded' '$T/o.err') -ge $i ]"
	done
	sleep 0.5 # anything re-read would be written by now
	kill -TERM "$pid"
	wait_until 30 dead "$pid"
	wait "$pid" 2>/dev/null
	local n dups
	n=$(size_of "$T/out_o.bin")
	dups=$(dup_blocks "$T/out_o.bin")
	if [ "$n" -ne $((6 * 2500)) ] || [ "$dups" -ne 0 ]; then
		fail "file source over 5 reloads: $n bytes written ($((6 * 2500)) in the file), $dups blocks twice"
	else
		ok "file source over 5 reloads: its 6 blocks written once each"
	fi
}

# Repro 3: data repeated forever passes FIPS 140-2. A file of $2 random bytes repeated $3
# times (after a 4-byte seed) is read to its end, however many back-offs that takes: the
# daemon stops by itself then ("no source left"), nothing left to race (a source at its end
# leaves no statistics: the log's "replayed data" says why the rest went unwritten). At most
# $4 bytes of it are written. $1 names the case.
replayed_case() {
	local name=$1 period=$2 times=$3 most=$4 pid n
	python3 -c "
import random
rng = random.Random(1313 + $period)
seed, d = rng.randbytes(4), rng.randbytes($period)
open('$T/rep_$name.bin', 'wb').write(seed + d * $times)"
	"$RNGD" -f "${NOSRC[@]}" -O "file:r:path:$T/rep_$name.bin" -o "$T/out_$name.bin" \
		2>"$T/r_$name.err" &
	pid=$!
	pids+=("$pid")
	if ! wait_until 120 dead "$pid"; then
		fail "$period bytes repeated $times times: not read to its end in 120 s"
		return
	fi
	wait "$pid" 2>/dev/null
	n=$(size_of "$T/out_$name.bin")
	if ! has_line "$T/r_$name.err" "file:r: end of file"; then
		fail "$period bytes repeated $times times: stopped before the end of the file"
	elif [ "$n" -gt "$most" ] || [ "$n" -lt 2500 ]; then
		fail "$period bytes repeated $times times: $n bytes written, want 2500 to $most"
	elif ! has_line "$T/r_$name.err" "replayed data"; then
		fail "$period bytes repeated $times times: no 'replayed data' in the log"
	elif has_line "$T/r_$name.err" "FIPS 140-2 failures\|SP 800-90B"; then
		fail "$period bytes repeated $times times: rejected for other reasons than replay"
	else
		ok "$period bytes repeated $times times: read to its end, $n bytes written, the rest replayed"
	fi
}

test_replayed_block() {
	replayed_case block 2500 30 2500
	replayed_case period 2496 40 5000
}

# Repro 4: a FIFO source that backs off keeps its read end: the writer is not killed by
# SIGPIPE, and its good data after the bad gets through.
test_fifo_backoff_no_sigpipe() {
	local pid writer rc
	mkfifo "$T/bfifo"
	python3 -c "
import random, sys
r = random.Random(77)
sys.stdout.buffer.write(r.randbytes(4) + bytes(4 * 2500) + r.randbytes(80 * 2500))" \
		>"$T/bad_then_good"
	"$RNGD" -f "${NOSRC[@]}" -O "file:b:path:$T/bfifo" -o "$T/out_b.bin" 2>"$T/b.err" &
	pid=$!
	pids+=("$pid")
	cat "$T/bad_then_good" >"$T/bfifo" &
	writer=$!
	wait_until 30 dead "$writer"
	wait "$writer"
	rc=$?
	wait_until 30 size_at_least "$T/out_b.bin" $((20 * 2500))
	kill -TERM "$pid"
	wait_until 30 dead "$pid"
	wait "$pid" 2>/dev/null
	if [ $rc -ne 0 ]; then
		fail "FIFO source in back-off: its writer ended with $rc (141: SIGPIPE)"
	elif ! has_line "$T/b.err" "back-off"; then
		fail "FIFO source in back-off: it never backed off"
	elif ! size_at_least "$T/out_b.bin" $((20 * 2500)); then
		fail "FIFO source in back-off: only $(size_of "$T/out_b.bin") bytes of good data after it"
	else
		ok "FIFO source in back-off: writer exit 0, $(($(size_of "$T/out_b.bin") / 2500)) good blocks after the bad"
	fi
}

# Repro 4: a failing output backs off (1 s, doubling) and the run ends with an error.
test_output_errors_back_off() {
	local pid rc lines
	mkfifo "$T/ffifo"
	# A block every 50 ms: there is always something to write when a retry is due.
	python3 -c "
import os, sys, time
with open(sys.argv[1], 'wb', buffering=0) as f:
    for _ in range(1200):
        f.write(os.urandom(2500))
        time.sleep(0.05)" "$T/ffifo" 2>/dev/null &
	pids+=($!)
	"$RNGD" -f "${NOSRC[@]}" -O "file:f:path:$T/ffifo" -o /dev/full 2>"$T/f.err" &
	pid=$!
	pids+=("$pid")
	# The first failed write says "retrying in 1 s", the retry a second later "in 2 s": two
	# lines then, the next 2 s later, not thousands. Waited for (a fixed 2.5 s sleep missed
	# the second line on a loaded machine).
	wait_until 60 has_line "$T/f.err" "retrying in 2 s"
	lines=$(grep -c "cannot write the output" "$T/f.err")
	kill -TERM "$pid"
	wait_until 30 dead "$pid"
	wait "$pid"
	rc=$?
	if [ "$lines" -gt 3 ]; then
		fail "-o /dev/full: $lines failed writes by the retry that said 2 s"
	elif ! grep -q "retrying in 2 s" "$T/f.err"; then
		fail "-o /dev/full: the back-off does not double ($(grep retrying "$T/f.err" | head -3))"
	elif [ $rc -ne 1 ]; then
		fail "-o /dev/full: exit $rc, want 1 (tested data was not written)"
	else
		ok "-o /dev/full: $lines failed writes by the retry that said 2 s (1 s, doubling), exit 1"
	fi
}

# Repro 4: outputs that are refused, and files that are never truncated unasked.
test_refused_outputs() {
	local rc
	make_random "$T/in_s.bin" 4
	cp "$T/in_s.bin" "$T/in_s.copy"
	"$RNGD" -f "${NOSRC[@]}" -O "file:s:path:$T/in_s.bin" -o "$T/in_s.bin" 2>"$T/s.err"
	rc=$?
	if [ $rc -eq 0 ] || ! cmp -s "$T/in_s.bin" "$T/in_s.copy" ||
		! has_line "$T/s.err" "it is also a source"; then
		fail "-o naming the source's own file: exit $rc, $(size_of "$T/in_s.bin") bytes left"
	else
		ok "-o naming the source's own file: refused (exit $rc), the file untouched"
	fi

	echo "precious" >"$T/existing"
	"$RNGD" -f "${NOSRC[@]}" -O "file:s:path:$T/in_s.copy" -o "$T/existing" 2>"$T/x.err"
	rc=$?
	if [ $rc -eq 0 ] || [ "$(cat "$T/existing")" != precious ] ||
		! has_line "$T/x.err" "force-output"; then
		fail "-o an existing file: exit $rc, content '$(head -c 20 "$T/existing")'"
	else
		ok "-o an existing file: refused (exit $rc), untouched, the line names --force-output"
	fi
	"$RNGD" -f "${NOSRC[@]}" -O "file:s2:path:$T/in_s.copy" -o "$T/existing" --force-output \
		2>"$T/x2.err"
	rc=$?
	if [ $rc -ne 0 ] || [ "$(size_of "$T/existing")" -ne $((4 * 2500)) ]; then
		fail "-o an existing file with --force-output: exit $rc, $(size_of "$T/existing") bytes"
	else
		ok "-o an existing file with --force-output: overwritten with the 4 tested blocks"
	fi

	# A block device node made here, for a minor that no loop device has: were the check
	# gone, the open would fail instead of writing over a disk. (Memory devices: test_sink
	# checks them without ever writing; no real /dev/mem here.)
	if ! mknod "$T/disk" b 7 250 2>/dev/null; then
		skip "-o a block device: cannot mknod here"
		return
	fi
	"$RNGD" -f "${NOSRC[@]}" -O "file:s:path:$T/in_s.copy" -o "$T/disk" 2>"$T/k.err"
	rc=$?
	if [ $rc -eq 0 ] || ! has_line "$T/k.err" "block device"; then
		fail "-o a block device: exit $rc: $(head -c 200 "$T/k.err")"
	else
		ok "-o a block device (node 7:250): refused (exit $rc) before any open"
	fi
}

# Repro 5: root without CAP_SYS_ADMIN (a container): test and output modes work.
test_no_sys_admin() {
	if ! is_root || ! command -v capsh >/dev/null; then
		skip "without CAP_SYS_ADMIN: needs root and capsh"
		return
	fi
	local rc
	make_random "$T/in_c.bin" 4
	capsh --drop=cap_sys_admin -- -c "exec '$RNGD' -f ${NOSRC[*]} -O 'file:c:path:$T/in_c.bin' \
		-o '$T/out_c.bin'" 2>"$T/c.err"
	rc=$?
	if [ $rc -ne 0 ] || [ "$(size_of "$T/out_c.bin")" -ne $((4 * 2500)) ]; then
		fail "-o FILE without CAP_SYS_ADMIN: exit $rc: $(head -c 300 "$T/c.err")"
	else
		ok "-o FILE without CAP_SYS_ADMIN: exit 0, the 4 tested blocks written"
	fi
	capsh --drop=cap_sys_admin -- -c "exec timeout --preserve-status -s INT 2 '$RNGD' -t ${NOSRC[*]} \
		-O 'file:c2:path:$T/in_c.bin'" >"$T/t.out" 2>"$T/t.err"
	rc=$?
	if [ $rc -ne 0 ] || has_line "$T/t.err" "cannot drop"; then
		fail "-t without CAP_SYS_ADMIN: exit $rc: $(head -c 300 "$T/t.err")"
	else
		ok "-t without CAP_SYS_ADMIN: exit 0"
	fi
	capsh --drop=cap_sys_admin -- -c "exec '$RNGD' -f ${NOSRC[*]} -O 'file:c3:path:$T/in_c.bin' \
		-o /dev/random" 2>"$T/k.err"
	rc=$?
	if [ $rc -ne 77 ]; then
		fail "feeding the kernel without CAP_SYS_ADMIN: exit $rc, want 77"
	else
		ok "feeding the kernel without CAP_SYS_ADMIN: exit 77, the one thing that needs it"
	fi
}

test_closed_std_fds
test_closed_stderr_output
test_fifo_config
test_file_read_once
test_replayed_block
test_fifo_backoff_no_sigpipe
test_output_errors_back_off
test_refused_outputs
test_no_sys_admin
finish
