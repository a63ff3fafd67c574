#!/bin/bash
# Integration tests of the real rngd binary in the foreground: output mode byte for byte,
# the real /dev/hwrng, the real kernel sink (strace), stop latency, signals, exit codes.
# Each case prints "ok", "skip: why" or "FAIL: why"; the script exits 1 if any failed,
# 77 if all were skipped.
set -u
. "$(dirname "$0")/lib.sh" daemon
hwrng_lock

# Pseudo-random blocks with two all-zero blocks (they fail monobit): $1 file, $2 blocks.
# A fixed seed keeps the input the same from run to run: about one random block in 1250
# fails FIPS 140-2, and the counts below must not depend on luck. With 40 blocks this seed
# gives exactly the two zero blocks as failures (38 pass).
make_input() {
	python3 - "$1" "$2" <<'EOF'
import random, sys
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261130 + n)
with open(path, "wb") as f:
    f.write(rng.randbytes(4))
    for i in range(n):
        f.write(bytes(2500) if i in (5, n - 3) else rng.randbytes(2500))
EOF
}

# What passes: rngtest -p discards 4 bytes and seeds with the next 4, as a source seeds.
expected_output() { { printf 'XXXX'; cat "$1"; } | "$RNGTEST" -p 2>/dev/null; }

test_file_to_output() {
	make_input "$T/in.bin" 40
	expected_output "$T/in.bin" >"$T/expected"
	timeout 20 "$RNGD" -f -q "${NOSRC[@]}" -O "file:in:path:$T/in.bin" -o "$T/out.bin"
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "file source to output file: exit $rc"
	elif ! cmp -s "$T/expected" "$T/out.bin"; then
		fail "file source to output file: output differs from the passed blocks ($(stat -c %s "$T/out.bin") vs $(stat -c %s "$T/expected") bytes)"
	elif [ "$(stat -c %s "$T/out.bin")" -ne $((38 * 2500)) ]; then
		fail "file source to output file: expected 38 blocks"
	else
		ok "file source to output file: exactly the 38 passed blocks, byte for byte"
	fi
}

test_fifo_to_stdout() {
	make_input "$T/in2.bin" 40
	expected_output "$T/in2.bin" >"$T/expected2"
	mkfifo "$T/fifo"
	cat "$T/in2.bin" >"$T/fifo" &
	local writer=$!
	pids+=("$writer")
	timeout 20 "$RNGD" -f -q "${NOSRC[@]}" -O "file:f:path:$T/fifo" -o /dev/stdout \
		--dump-bytes $((38 * 2500)) --dump file:f >"$T/out2.bin" 2>"$T/err2"
	local rc=$?
	wait "$writer" 2>/dev/null
	if [ $rc -ne 0 ]; then
		fail "FIFO source --dump to stdout: exit $rc: $(head -c 300 "$T/err2")"
	elif ! cmp -s "$T/expected2" "$T/out2.bin"; then
		fail "FIFO source --dump to stdout: output differs from the passed blocks"
	else
		ok "FIFO source --dump to stdout: the 38 passed blocks, byte for byte"
	fi
}

# Output mode writes in batches of 128 blocks; a lone block must not wait for the rest.
test_partial_batch_flush() {
	make_input "$T/one.bin" 1
	expected_output "$T/one.bin" >"$T/expected_one"
	if [ "$(stat -c %s "$T/expected_one")" -ne 2500 ]; then
		fail "lone block in output mode: the seeded input block does not pass"
		return
	fi
	mkfifo "$T/pfifo"
	local wfd
	exec {wfd}<>"$T/pfifo" # a writer that stays, so that the source never ends
	"$RNGD" -f -q "${NOSRC[@]}" -O "file:p:path:$T/pfifo" -o "$T/out_one" 2>"$T/err_one" &
	local pid=$! size=0 t0 ms
	pids+=("$pid")
	sleep 0.3
	t0=$(date +%s%N)
	cat "$T/one.bin" >&"$wfd"
	while :; do
		size=$(stat -c %s "$T/out_one" 2>/dev/null || echo 0)
		[ "$size" -ge 2500 ] && break
		[ $(($(date +%s%N) - t0)) -gt 30000000000 ] && break
		sleep 0.005
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	kill -TERM "$pid"
	wait "$pid" 2>/dev/null
	exec {wfd}>&-
	if [ "$size" -lt 2500 ]; then
		fail "lone block in output mode: not written within 30 s: $(head -c 300 "$T/err_one")"
	elif ! cmp -s "$T/expected_one" "$T/out_one"; then
		fail "lone block in output mode: output differs from the passed block"
	else
		ok "lone block in output mode: written without the rest of its batch, $ms ms after it reached the FIFO"
	fi
}

test_real_hwrng() {
	if ! hwrng_readable; then
		skip "real /dev/hwrng: $(hwrng_why)"
		return
	fi
	timeout 60 "$RNGD" --dump hwrng --dump-bytes 10000 >"$T/hw.bin" 2>"$T/hw.err"
	local rc=$? n
	n=$(stat -c %s "$T/hw.bin")
	# --dump writes the passed blocks only, not the seed the daemon read first: rngtest gets
	# a stand-in seed ahead of them (as expected_output), so that it tests the daemon's own 4
	# blocks. Seeded with the head of hw.bin, it tested windows shifted by 4 bytes, random
	# ones that fail about 1 in 1,250 each (1 run in ~300 failed).
	if [ $rc -ne 0 ] || [ "$n" -ne 10000 ]; then
		fail "real /dev/hwrng: exit $rc, $n bytes: $(head -c 300 "$T/hw.err")"
	elif ! { printf 'XXXX'; cat "$T/hw.bin"; } | "$RNGTEST" 2>"$T/hw.rngtest" ||
		! grep -q '^rngtest: FIPS 140-2 successes: 4$' "$T/hw.rngtest"; then
		fail "real /dev/hwrng: tested output fails rngtest: $(grep -E 'successes|failures' "$T/hw.rngtest" | tr '\n' ' ')"
	else
		ok "real /dev/hwrng: the 4 tested blocks read through --dump pass rngtest"
	fi
}

test_kernel_sink() {
	if emulated; then
		skip "real kernel sink: under emulation ($RNGD_EMU): the kernel's own rngd feeds it, strace would trace qemu"
		return
	fi
	if ! is_root || ! have_sys_admin; then
		skip "real kernel sink: needs CAP_SYS_ADMIN"
		return
	fi
	if ! command -v strace >/dev/null; then
		skip "real kernel sink: strace is not installed"
		return
	fi
	if ! hwrng_readable; then
		skip "real kernel sink: no /dev/hwrng to feed from: $(hwrng_why)"
		return
	fi
	# strace -f prefixes each line with the traced PID; the daemon is the first one.
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS=detect_leaks=0 strace -f -e trace=execve,ioctl -o "$T/strace" "$RNGD" -f -q -R 1 -s 64 &
	local st=$! p="" rc
	pids+=("$st")
	# Three injections at least (the first, then one a second): waited for, with a deadline.
	adds_at_least() { [ "$(grep -c 'RNDADDENTROPY, {entropy_count=[0-9]*, buf_size=[1-9].*= 0$' "$T/strace" 2>/dev/null)" -ge "$1" ]; }
	wait_until 30 adds_at_least 3
	p=$(awk 'NR == 1 {print $1}' "$T/strace")
	if [ -z "$p" ] || ! kill -TERM "$p"; then
		fail "real kernel sink: could not find the daemon's PID in the strace log"
		return
	fi
	wait "$st"
	rc=$(awk '/exited with/ {print $(NF-1)}' "$T/strace" | tail -1)
	python3 - "$T/strace" <<'EOF' >"$T/sink.res"
import re, sys
adds = []
events = []
for line in open(sys.argv[1]):
    m = re.search(r"RNDADDENTROPY, \{entropy_count=(\d+), buf_size=(\d+)", line)
    if m and line.rstrip().endswith("= 0"):
        c, n = int(m.group(1)), int(m.group(2))
        if n > 0:
            adds.append((c, n))
            events.append("add")
    elif "RNDRESEEDCRNG" in line and line.rstrip().endswith("= 0"):
        events.append("reseed")
bad = [a for a in adds if a[0] > 8 * a[1]]
unreseeded = sum(1 for i, e in enumerate(events) if e == "add" and (i + 1 >= len(events) or events[i + 1] != "reseed"))
print(len(adds), len(bad), unreseeded, " ".join(f"{c}/{n}" for c, n in adds))
EOF
	local adds bad unre
	read -r adds bad unre _ <"$T/sink.res"
	if [ $rc -ne 0 ]; then
		fail "real kernel sink: rngd exited $rc"
	elif [ "$adds" -lt 3 ]; then
		fail "real kernel sink: $adds RNDADDENTROPY calls in 3.6 s with -R 1 (want >= 3): $(cat "$T/sink.res")"
	elif [ "$bad" -ne 0 ]; then
		fail "real kernel sink: credit above 8 bits per byte: $(cat "$T/sink.res")"
	elif [ "$unre" -ne 0 ]; then
		fail "real kernel sink: $unre feeds not followed by RNDRESEEDCRNG"
	else
		ok "real kernel sink: $adds feeds (credit/bytes: $(cut -d' ' -f4- "$T/sink.res")), each followed by RNDRESEEDCRNG"
	fi
}

# The functions a daemon's normal life runs (the default sources, the kernel sink, the status
# file; a start with a configuration file and -x, -O) sit in .text.rngd_hot
# (src/rngd-hot.ld; configure.ac, footprint), a segment of their own: the cold .text after
# the gap is a second executable mapping, and a daemon's life maps none of it. A function
# added or renamed since the list was generated runs from the cold mapping, and up to 64 KiB
# of it stay resident for the process's life: regenerate the list (bench/hot-functions.py).
# The plain build only: a sanitizer's or the minimal build's functions are not the list's.
test_hot_layout() {
	local what="hot layout: a daemon's life runs no function outside src/rngd-hot.ld"
	if emulated || ! is_root || ! have_sys_admin || ! hwrng_readable; then
		skip "$what: needs the real /dev/hwrng and CAP_SYS_ADMIN, natively"
		return
	fi
	if ! built_with HAVE_SYSTEMD || readelf --dyn-syms -W "$RNGD" | grep -q '__[at]san_init'; then
		skip "$what: not the plain build (sanitizers or the minimal one)"
		return
	fi
	if ! readelf -SW "$RNGD" | grep -q '\.text\.rngd_hot'; then
		skip "$what: rngd was linked without the hot section"
		return
	fi
	# The executable segments' file offsets, page-aligned: the hot one, then the cold one.
	local offs hot_off cold_off
	offs=$(readelf -lW "$RNGD" | awk '$1 == "LOAD" && $8 == "E" {printf "%s ", $2}')
	read -r hot_off cold_off <<<"$offs"
	if [ -z "$cold_off" ]; then
		fail "$what: one executable segment ($offs): the gap after .text.rngd_hot is gone"
		return
	fi
	local conf=$T/hot.conf bin
	bin=$(readlink -f "$RNGD")
	printf '[rngd]\nmax-age = 60\n[source hwrng]\nquality = 1000\n' >"$conf"
	local how hot cold
	local -a argv
	for how in "the default start" "a configuration file, -x and -O"; do
		argv=()
		[ "$how" = "the default start" ] || argv=(-c "$conf" -x rdseed -O rngd:status-file:)
		start_logged "$T/hot.err" 30 "first injection" "$what" -f "${argv[@]}" || return
		wait_until 30 grep -q "hwrng: running" "$T/hot.err"
		# Resident kB of the binary's executable mappings by page-aligned file offset.
		hot=0 cold=0
		local off rss
		while read -r off rss; do
			[ $((0x$off)) -eq $((hot_off & ~0xfff)) ] && hot=$rss
			[ $((0x$off)) -eq $((cold_off & ~0xfff)) ] && cold=$rss
		done < <(awk -v bin="$bin" '
			/^[0-9a-f]+-[0-9a-f]+ / { cur = ($2 ~ /x/ && $6 == bin); off = $3 }
			cur && /^Rss:/ { print off, $2 }' "/proc/$pid/smaps")
		kill -TERM "$pid"
		wait "$pid"
		if [ "$hot" -eq 0 ]; then
			fail "$what ($how): no resident hot text in /proc/$pid/smaps"
		elif [ "$cold" -gt 0 ]; then
			fail "$what ($how): $cold kB of the cold text resident ($hot kB of the hot): a function outside src/rngd-hot.ld ran; regenerate it (bench/hot-functions.py)"
		else
			ok "$what ($how): $hot kB of its text resident, none of the cold"
		fi
	done
}

# Milliseconds between SIGTERM and exit of a daemon reading a FIFO that never delivers.
test_stop_latency() {
	mkfifo "$T/idle"
	sleep 60 >"$T/idle" &
	local holder=$!
	pids+=("$holder")
	"$RNGD" -f -t "${NOSRC[@]}" -O "file:idle:path:$T/idle" 2>"$T/idle.err" &
	local p=$!
	pids+=("$p")
	# Started, its reader in the FIFO's read (the daemon's "started" line comes after).
	wait_until 30 grep -q "started" "$T/idle.err"
	sleep 0.1
	local t0 t1 rc
	t0=$(date +%s%N)
	kill -TERM "$p"
	wait "$p"
	rc=$?
	t1=$(date +%s%N)
	kill "$holder" 2>/dev/null
	local ms=$(((t1 - t0) / 1000000))
	# The target is 100 ms (bench/ measures it); the test allows for slow machines.
	if [ $rc -ne 0 ]; then
		fail "stop while a read blocks: exit $rc"
	elif [ $ms -gt 2000 ]; then
		fail "stop while a read blocks: took $ms ms"
	else
		ok "stop while a read blocks on a silent FIFO: $ms ms, exit 0"
	fi
}

test_signals() {
	make_input "$T/sig.bin" 4
	mkfifo "$T/sigfifo"
	sleep 60 >"$T/sigfifo" &
	local holder=$!
	pids+=("$holder")
	printf '[source file:s]\npath = %s\n' "$T/sigfifo" >"$T/good.conf"
	"$RNGD" -f -t -c "$T/good.conf" "${NOSRC[@]}" 2>"$T/sig.err" &
	local p=$!
	pids+=("$p")
	wait_until 30 grep -q "started" "$T/sig.err"
	kill -USR1 "$p"
	wait_until 30 grep -q "bytes read" "$T/sig.err"
	printf '[rngd]\nno-such-key = 1\n' >"$T/good.conf"
	kill -HUP "$p"
	wait_until 30 grep -q "keeping the old configuration" "$T/sig.err"
	if ! kill -0 "$p" 2>/dev/null; then
		fail "signals: USR1 or a bad reload killed the daemon: $(tail -3 "$T/sig.err")"
		return
	fi
	kill -TERM "$p"
	wait "$p"
	local rc=$?
	kill "$holder" 2>/dev/null
	if [ $rc -ne 0 ]; then
		fail "signals: exit $rc after TERM"
	elif ! grep -q "bytes read" "$T/sig.err"; then
		fail "signals: USR1 logged no statistics: $(head -5 "$T/sig.err")"
	elif ! grep -q "no-such-key" "$T/sig.err"; then
		fail "signals: the bad reload was not reported"
	else
		ok "signals: USR1 logs statistics, a bad reload is reported and the old config runs"
	fi
}

expect_exit() { # want, description, command...
	local want=$1 what=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq "$want" ]; then
		ok "$what: exit $rc ($(head -1 "$T/err"))"
	else
		fail "$what: exit $rc, want $want: $(head -3 "$T/err")"
	fi
}

test_exit_codes() {
	expect_exit 66 "no source at all" timeout 10 "$RNGD" -f "${NOSRC[@]}" -o "$T/o"
	expect_exit 78 "a file source that can never be read (a directory)" \
		timeout 10 "$RNGD" -f "${NOSRC[@]}" -O "file:x:path:$T" -o "$T/o"
	printf '[rngd]\nfeed-interval = soon\n' >"$T/bad.conf"
	expect_exit 78 "bad configuration file" timeout 10 "$RNGD" -f -c "$T/bad.conf"
	grep -q "bad.conf:2" "$T/err" || fail "bad configuration file: message lacks file:line"
	expect_exit 78 "missing configuration file named with -c" timeout 10 "$RNGD" -f -c "$T/none.conf"
	expect_exit 78 "/dev/urandom as a source" timeout 10 "$RNGD" -f -r /dev/urandom
	expect_exit 78 "bad -s value" timeout 10 "$RNGD" -f -s 0
	expect_exit 2 "unknown option" timeout 10 "$RNGD" --no-such-option
	expect_exit 2 "-O without a value" timeout 10 "$RNGD" -O hwrng:device
	expect_exit 78 "-O with an unknown key" timeout 10 "$RNGD" -O hwrng:colour:blue
	expect_exit 0 "-O NAME lists the keys" "$RNGD" -O file:usb0
	grep -q "path" "$T/out" || fail "-O file:usb0 does not list the key 'path'"
	expect_exit 0 "--check-config on a good file" "$RNGD" --check-config -c "$top_srcdir/rngd.conf.example"
	if emulated; then
		skip "exit 77: under emulation ($RNGD_EMU) the kernel sink's ioctls answer ENOSYS"
	elif is_root && command -v setpriv >/dev/null; then
		if hwrng_readable; then
			expect_exit 77 "no CAP_SYS_ADMIN" timeout 10 setpriv --inh-caps=-sys_admin \
				--bounding-set=-sys_admin "$RNGD" -f
		else
			expect_exit 77 "no CAP_SYS_ADMIN" timeout 10 setpriv --inh-caps=-sys_admin \
				--bounding-set=-sys_admin "$RNGD" -f "${NOSRC[@]}" -O "file:z:path:$T/sig.bin"
		fi
	else
		skip "exit 77: needs root and setpriv to drop CAP_SYS_ADMIN"
	fi
}

test_list() {
	local t0 t1 rc
	t0=$(date +%s%N)
	"$RNGD" -l >"$T/list" 2>&1
	rc=$?
	t1=$(date +%s%N)
	local ms=$(((t1 - t0) / 1000000))
	if ! grep -q "^via: " "$T/list"; then
		fail "-l: no line for via: $(cat "$T/list")"
	elif hwrng_readable && [ $rc -ne 0 ]; then
		fail "-l: exit $rc with a readable /dev/hwrng: $(cat "$T/list")"
	elif [ $ms -gt 2000 ]; then
		fail "-l took $ms ms"
	else
		ok "-l: exit $rc in $ms ms: $(tr '\n' ';' <"$T/list")"
	fi
	"$RNGD" -l "${NOSRC[@]}" >"$T/list2" 2>&1
	[ $? -eq 66 ] && ok "-l with every source excluded: exit 66" ||
		fail "-l with every source excluded: want exit 66"
}

[ -x "$RNGD" ] || { echo "no $RNGD"; exit 1; }
test_file_to_output
test_fifo_to_stdout
test_partial_batch_flush
test_real_hwrng
test_kernel_sink
test_hot_layout
test_stop_latency
test_signals
test_exit_codes
test_list
finish
