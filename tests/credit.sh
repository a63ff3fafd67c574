#!/bin/bash
# Issue 24, credit: each byte is credited (or written) once whichever source brings it.
#  - the same data through two file: sources (a file and a copy of it) goes out once, and
#    with the real kernel sink is credited once;
#  - a block replayed into a FIFO after more than 1024 other blocks (the old per-source
#    history) is still caught: the history reaches HEALTH_HISTORY (65,536) blocks;
#  - -r on a character device that is not the hwrng class's node defaults to quality 0,
#    with a notice saying how to set one.
# File sources, output mode and /dev/null; the kernel sink case needs CAP_SYS_ADMIN.
set -u
. "$(dirname "$0")/lib.sh" credit

# "blocks distinct-blocks" of a file cut into 2500-byte blocks.
blocks_of() {
	python3 - "$1" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
b = [d[i:i + 2500] for i in range(0, len(d) - len(d) % 2500, 2500)]
print(len(b), len(set(b)))
EOF
}

# A file and a copy of it, through file:a and file:b, to a file: the copy's blocks are
# replays of the file's, written once (before: both, 16 blocks for 8).
test_copy_output() {
	make_random "$T/in.bin" 8
	cp "$T/in.bin" "$T/copy.bin"
	timeout 60 "$RNGD" -f "${NOSRC[@]}" -O rngd:status-file: -O rngd:pid-file: \
		-O "file:a:path:$T/in.bin" -O file:a:quality:1024 \
		-O "file:b:path:$T/copy.bin" -O file:b:quality:1024 \
		-o "$T/out.bin" 2>"$T/copy.log"
	local rc=$? n d
	read -r n d < <(blocks_of "$T/out.bin")
	if [ $rc -ne 0 ]; then
		fail "a file and its copy: exit $rc: $(head -3 "$T/copy.log")"
	elif [ "$n" -ne 8 ] || [ "$d" -ne 8 ]; then
		fail "a file and its copy: $n blocks written ($d distinct), want the 8 of one copy"
	elif ! grep -q "replayed data" "$T/copy.log"; then
		fail "a file and its copy: no 'replayed data' line: $(head -5 "$T/copy.log")"
	else
		ok "a file and its copy through two file: sources: 8 blocks written, not 16; the copy's are replayed data"
	fi
}

# The same with the real kernel sink, quality 1024: credited once, 8 blocks' worth of
# bits at most (before: 320,000 bits for 160,000 of distinct data). The daemon stops by
# itself when both files are read; strace counts what RNDADDENTROPY was given.
test_copy_kernel() {
	if ! is_root || ! have_sys_admin; then
		skip "a file and its copy, kernel sink: needs root with CAP_SYS_ADMIN"
		return
	fi
	if ! command -v strace >/dev/null; then
		skip "a file and its copy, kernel sink: strace is not installed"
		return
	fi
	make_random "$T/k.bin" 8
	cp "$T/k.bin" "$T/kcopy.bin"
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS=detect_leaks=0 timeout 60 strace -f -e trace=ioctl -o "$T/kstrace" \
		"$RNGD" -f "${NOSRC[@]}" -O rngd:status-file: -O rngd:pid-file: -R 1 -s 2500 \
		-O "file:a:path:$T/k.bin" -O file:a:quality:1024 \
		-O "file:b:path:$T/kcopy.bin" -O file:b:quality:1024 2>"$T/kernel.log"
	local adds bits bytes
	read -r adds bits bytes < <(grep -o 'RNDADDENTROPY, {entropy_count=[0-9]*, buf_size=[1-9][0-9]*' "$T/kstrace" |
		awk -F'[=,]' '{n++; c += $3; b += $5} END {print n + 0, c + 0, b + 0}')
	if [ "$adds" -eq 0 ]; then
		fail "a file and its copy, kernel sink: nothing fed: $(head -5 "$T/kernel.log")"
	elif [ "$bits" -le 160000 ] && [ "$bytes" -le 20000 ]; then
		ok "a file and its copy, kernel sink, quality 1024: $adds RNDADDENTROPY calls, $bytes bytes, $bits bits for 20,000 distinct bytes: credited once"
	else
		fail "a file and its copy, kernel sink: $adds RNDADDENTROPY calls, $bytes bytes, $bits bits for 20,000 distinct bytes (credited twice)"
	fi
}

# One block written into a FIFO, then 2,000 other blocks (more than the old history of
# 1024), then the same block three times: written once.
test_replay_far_apart() {
	mkfifo "$T/ff"
	"$RNGD" -f "${NOSRC[@]}" -O rngd:status-file: -O rngd:pid-file: \
		-O "file:f:path:$T/ff" -o "$T/far.bin" 2>"$T/far.log" &
	local p=$! n d
	pids+=("$p")
	python3 - "$T/ff" <<'EOF'
import os, random, sys
rng = random.Random(24)
x = rng.randbytes(2500)
with open(sys.argv[1], "wb") as f:
    f.write(rng.randbytes(4))
    f.write(x)
    for _ in range(2000):
        f.write(rng.randbytes(2500))
    for _ in range(3):
        f.write(x)
        f.write(rng.randbytes(2500))
EOF
	# The writer closed: the daemon reads to the end and waits for another writer.
	grow() { [ "$(stat -c %s "$T/far.bin" 2>/dev/null || echo 0)" -ge $((2500 * 1990)) ]; }
	wait_until 60 grow
	settled() { [ "$(stat -c %s "$T/far.bin")" = "${last:-x}" ] || { last=$(stat -c %s "$T/far.bin"); false; }; }
	last=
	wait_until 30 settled
	kill -TERM "$p"
	wait "$p"
	read -r n d < <(blocks_of "$T/far.bin")
	if [ "$n" -lt 1990 ]; then
		fail "a block replayed 2,000 blocks later: only $n blocks written: $(head -3 "$T/far.log")"
	elif [ "$n" -ne "$d" ]; then
		fail "a block replayed 2,000 blocks later: written $((n - d + 1)) times ($n blocks, $d distinct)"
	else
		ok "a block replayed 3 times, 2,000 blocks after it was first read (history 1024 before): written once ($n blocks, all distinct)"
	fi
}

# -r /dev/null: a character device, not the hwrng's: quality 0 in -l, and the daemon says
# how to set one.
test_char_device_quality() {
	local out
	out=$("$RNGD" -l "${NOCPU[@]}" -r /dev/null 2>&1 | grep '^hwrng:')
	case $out in
	*"quality 0)"*) ok "-r /dev/null: -l gives quality 0 ($out)" ;;
	*) fail "-r /dev/null: -l says: $out (want quality 0)" ;;
	esac
	out=$("$RNGD" -l "${NOCPU[@]}" -r /dev/null -O hwrng:quality:300 2>&1 | grep '^hwrng:')
	case $out in
	*"quality 300)"*) ok "-r /dev/null -O hwrng:quality:300: quality 300" ;;
	*) fail "-r /dev/null -O hwrng:quality:300: -l says: $out" ;;
	esac
	start_logged "$T/null.log" 30 "not the kernel's hwrng device" "-r /dev/null: the notice" \
		-f "${NOCPU[@]}" -O rngd:status-file: -O rngd:pid-file: -r /dev/null -o "$T/null.out" ||
		return
	kill -TERM "$pid"
	wait "$pid"
	if grep -q "set quality = N (0..1024) in \[source hwrng\] or give -O hwrng:quality:N" "$T/null.log"; then
		ok "-r /dev/null: the daemon says it credits nothing and how to set a quality"
	else
		fail "-r /dev/null: notice without how to set a quality: $(grep hwrng "$T/null.log" | head -2)"
	fi
}

# Issue 24 item 4: a regular file replaced before each of 20 reloads (a new inode at the
# same path; the source renamed, so that the set is rebuilt) leaves no fd on the deleted
# ones (before: one each, with their disk space).
test_replaced_file_fds() {
	local conf=$T/rf.conf i del n
	mkfifo "$T/rf.fifo" # no writer: keeps the daemon up once the files are read
	printf '[rngd]\nstatus-file =\n[source file:w]\npath = %s\n[source file:r]\npath = %s\n' \
		"$T/rf.fifo" "$T/rf.bin" >"$conf"
	head -c 7504 /dev/urandom >"$T/rf.bin"
	start_logged "$T/rf.log" 30 "file:r: end of file" "replaced files" -f -t "${NOSRC[@]}" \
		-c "$conf" || return
	for i in $(seq 1 20); do
		head -c 7504 /dev/urandom >"$T/rf.new" && mv -f "$T/rf.new" "$T/rf.bin"
		printf '[rngd]\nstatus-file =\n[source file:w]\npath = %s\n[source file:r%s]\npath = %s\n' \
			"$T/rf.fifo" "$i" "$T/rf.bin" >"$conf"
		kill -HUP "$pid"
		reloaded() { [ "$(grep -c "configuration reloaded" "$T/rf.log")" -ge "$1" ]; }
		wait_until 30 reloaded "$i" || break
	done
	wait_until 30 reloaded 20
	n=$(grep -c "configuration reloaded" "$T/rf.log")
	del=$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 -lname '*(deleted)' 2>/dev/null | wc -l)
	kill -TERM "$pid"
	wait "$pid"
	if [ "$n" -lt 20 ]; then
		fail "replaced files: $n of 20 reloads done: $(tail -3 "$T/rf.log")"
	elif [ "$del" -gt 0 ]; then
		fail "replaced files: $del fds held on deleted files after 20 reloads"
	else
		ok "a regular file replaced before each of 20 reloads: no fd held on the deleted ones"
	fi
}

test_copy_output
test_replaced_file_fds
test_copy_kernel
test_replay_far_apart
test_char_device_quality
finish
