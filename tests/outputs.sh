#!/bin/bash
# Issue 24 items 7-8: what --dump and --status give back.
#  - --dump with standard output closed fails, naming the cause (it wrote to /dev/null and
#    exited 0);
#  - --dump >/dev/full gives up after its back-off (1, 2, 4, 8 s) with -o's exit 1 (it
#    retried without end);
#  - rngd --status prints a status document's strings with terminal controls escaped (a
#    planted OSC sequence reached the terminal).
# File sources only: no /dev/hwrng, no kernel.
set -u
. "$(dirname "$0")/lib.sh" outputs

head -c 250004 /dev/urandom >"$T/in.bin"
: >"$T/empty.conf"
DUMP=(--dump file:d -O "file:d:path:$T/in.bin" -O rngd:status-file: -O rngd:pid-file:)

test_dump_stdout_closed() {
	local rc
	"$RNGD" "${DUMP[@]}" >&- 2>"$T/closed.err"
	rc=$?
	if [ $rc -ne 78 ]; then
		fail "--dump >&-: exit $rc, want 78: $(head -2 "$T/closed.err")"
	elif ! grep -q "standard output is closed" "$T/closed.err"; then
		fail "--dump >&-: does not say why: $(head -2 "$T/closed.err")"
	else
		ok "--dump >&-: exit 78, '$(head -1 "$T/closed.err")'"
	fi
}

test_dump_full() {
	local rc t0=$SECONDS
	# A FIFO that keeps coming (a file would end first, and the daemon with it).
	mkfifo "$T/full.fifo"
	(while head -c 25000 /dev/urandom; do sleep 0.2; done) >"$T/full.fifo" 2>/dev/null &
	pids+=($!)
	timeout 60 "$RNGD" --dump file:f -O "file:f:path:$T/full.fifo" -O rngd:status-file: \
		-O rngd:pid-file: >/dev/full 2>"$T/full.err"
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "--dump >/dev/full: exit $rc after $((SECONDS - t0)) s, want 1: $(tail -2 "$T/full.err")"
	elif ! grep -q "giving up after 15 s of retries" "$T/full.err"; then
		fail "--dump >/dev/full: no 'giving up' line: $(tail -2 "$T/full.err")"
	else
		ok "--dump >/dev/full: exit 1 after $((SECONDS - t0)) s, $(grep -c 'cannot write the output' "$T/full.err") failed writes"
	fi
}

test_status_escapes() {
	local doc=$T/status.json out
	# A writer of the status directory plants terminal controls (OSC title, CSI, C1 CSI).
	printf '{"version": 1, "pid": %d, "rngd_version": "x\\u001b]0;owned\\u0007", "sources": [{"name": "file:a\\u001b[2J", "state": "running", "last_error": "\\u009b31mred\\\\"}]}\n' \
		$$ >"$doc"
	out=$("$RNGD" --status -O "rngd:status-file:$doc" -c "$T/empty.conf" 2>&1)
	if printf '%s' "$out" | LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]'; then
		fail "--status: control characters reach the terminal: $(printf '%s' "$out" | cat -v | head -3)"
	elif ! printf '%s' "$out" | grep -qF 'x\x1b]0;owned\x07' ||
		! printf '%s' "$out" | grep -qF 'file:a\x1b[2J' ||
		! printf '%s' "$out" | grep -qF '\xc2\x9b31mred\\'; then
		fail "--status: not escaped as \\xNN: $(printf '%s' "$out" | head -4)"
	else
		ok "--status: terminal controls in the document are shown escaped ($(printf '%s' "$out" | grep -o 'file:a[^ ]*'))"
	fi
	out=$("$RNGD" --status --json -O "rngd:status-file:$doc" -c "$T/empty.conf" 2>&1)
	if printf '%s' "$out" | LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]\|\xc2[\x80-\x9f]'; then
		fail "--status --json: control characters reach the terminal"
	else
		ok "--status --json: control characters escaped (\\u escapes, ASCII only)"
	fi
}

# Item 6a: a path of the wrong kind is a configuration error, exit 78, whatever the kind
# (a socket exited 66, a directory 78), for file: and for -r.
test_wrong_kind() {
	local kind p rc bad=""
	mkdir "$T/dir"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock"
	for p in "$T/dir" "$T/sock"; do
		timeout 20 "$RNGD" -f "${NOSRC[@]}" -O rngd:status-file: -O rngd:pid-file: \
			-O "file:k:path:$p" -o "$T/k.out" 2>"$T/k.err"
		rc=$?
		kind=$(grep -o "is a [a-z]*, not" "$T/k.err" | head -1)
		[ $rc -eq 78 ] && [ -n "$kind" ] || bad="$bad file:$p exit $rc ($(head -1 "$T/k.err"));"
		timeout 20 "$RNGD" -f "${NOCPU[@]}" -O rngd:status-file: -O rngd:pid-file: \
			-r "$p" -o "$T/k.out" 2>"$T/k.err"
		rc=$?
		[ $rc -eq 78 ] && grep -q "is a [a-z]*, not" "$T/k.err" ||
			bad="$bad -r $p exit $rc ($(head -1 "$T/k.err"));"
	done
	if [ -n "$bad" ]; then
		fail "wrong kind of path:$bad"
	else
		ok "a directory or a socket as file: or -r: exit 78 each, naming the kind"
	fi
}

# Item 9: a status directory that an earlier -D nobody run handed over; a root run cannot
# write there (no DAC override) and says once whose it is and what to do.
test_status_dir_handed_over() {
	if ! is_root || ! id nobody >/dev/null 2>&1; then
		skip "status directory of nobody: needs root and the user nobody"
		return
	fi
	mkdir -p "$T/run/rngd"
	chmod 755 "$T/run" "$T/run/rngd"
	chown nobody "$T/run/rngd"
	mkfifo "$T/sd.fifo"
	start_logged "$T/sd.log" 30 "cannot write the status file" "status directory of nobody" \
		-f "${NOSRC[@]}" -O "file:s:path:$T/sd.fifo" -O "rngd:status-file:$T/run/rngd/status.json" \
		-O rngd:pid-file: -o "$T/sd.out" || return
	kill -TERM "$pid"
	wait "$pid"
	if grep -q "belongs to nobody (uid [0-9]*), not to this rngd (uid 0).*chown 0 $T/run/rngd" "$T/sd.log" &&
		[ "$(grep -c "cannot write the status file" "$T/sd.log")" -eq 1 ]; then
		ok "status directory left to nobody: said once, whose it is and how to give it back"
	else
		fail "status directory left to nobody: $(grep "status file" "$T/sd.log" | head -2)"
	fi
}

test_wrong_kind
test_status_dir_handed_over
test_dump_stdout_closed
test_status_escapes
test_dump_full
finish
