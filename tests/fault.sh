#!/bin/bash
# Fault injection (issue 12): the daemon built with tests/fault_inject.c (tests/rngd-fault)
# gets failing reads from its source (EIO, EAGAIN, EINTR, ENODEV, short reads), failing
# writes to its output (EPIPE, ENOSPC, EINVAL) and a failing kernel (RNDADDENTROPY: EFAULT,
# EINVAL, ENOSPC, EPERM; the kernel is faked, never fed) at chosen calls. Each case checks
# what the daemon then does: its log lines, its exit status, and what went out: every byte
# written or credited was read from the source and tested, and none went out twice.
set -u
. "$(dirname "$0")/lib.sh" fault
FAULTY=$top_builddir/tests/rngd-fault
[ -x "$FAULTY" ] || {
	echo "fault: $FAULTY not built"
	exit 77
}

# Every chunk that went out ($2: a file of blocks, or "kernel:LOG" for the fake kernel's
# payloads) lies in the source's data $1, and no byte of $1 went out twice. Prints the
# number of bytes that went out; exits 1 (saying why) otherwise. For the kernel, each
# payload's credit must be 8 bits a byte (quality 1024).
check_out() {
	python3 - "$1" "$2" <<'EOF'
import sys
src = open(sys.argv[1], "rb").read()
if sys.argv[2].startswith("kernel:"):
    chunks = []
    for line in open(sys.argv[2][7:]):
        bits, data = line.split()
        data = bytes.fromhex(data)
        if int(bits) != 8 * len(data):
            sys.exit(f"credit {bits} for {len(data)} bytes")
        chunks.append(data)
else:
    d = open(sys.argv[2], "rb").read()
    chunks = [d[i:i + 2500] for i in range(0, len(d), 2500)]
used = []
for c in chunks:
    at = src.find(c)
    if at < 0:
        sys.exit(f"{len(c)} bytes out that the source never gave")
    if src.find(c, at + 1) >= 0:
        sys.exit("ambiguous chunk")
    used.append((at, at + len(c)))
used.sort()
for (a, b), (c, d) in zip(used, used[1:]):
    if c < b:
        sys.exit(f"bytes {c}..{b} went out twice")
print(sum(b - a for a, b in used))
EOF
}

has_line() { grep -q -- "$2" "$1" 2>/dev/null; }
dead() { ! kill -0 "$1" 2>/dev/null; }
size_at_least() { [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

# Source read faults, a regular file to an output file. $1 fault, $2 what the log must
# say (empty: nothing), $3 "exact" when no byte may be lost.
read_case() {
	local fault=$1 want=$2 exact=$3 name=${1//:/_} rc n
	make_random "$T/in_$name" 40 4242
	RNGD_FAULT=$fault RNGD_FAULT_SOURCE=$T/in_$name timeout 30 "$FAULTY" -f \
		"${NOSRC[@]}" -O "file:s:path:$T/in_$name" -o "$T/out_$name" 2>"$T/err_$name"
	rc=$?
	if ! n=$(check_out "$T/in_$name" "$T/out_$name"); then
		fail "source read $fault: $n"
	elif [ $rc -ne 0 ]; then
		fail "source read $fault: exit $rc: $(tail -3 "$T/err_$name")"
	elif ! has_line "$T/err_$name" "fault: ${fault//:/ }"; then
		fail "source read $fault: the fault was not injected"
	elif [ -n "$want" ] && ! has_line "$T/err_$name" "$want"; then
		fail "source read $fault: no line '$want' in: $(head -c 400 "$T/err_$name")"
	elif [ "$exact" = exact ] && ! cmp -s <(tail -c +5 "$T/in_$name") "$T/out_$name"; then
		fail "source read $fault: not every block went out, in order ($n bytes)"
	else
		ok "source read $fault: ${want:-no state change}; $n bytes out, each tested, none twice"
	fi
}

read_case read:2:EIO "failed: read: Input/output error; retrying with back-off" lossy
read_case read:1:ENODEV "failed: read: No such device; retrying with back-off" lossy
read_case read:2:EAGAIN "" exact
read_case read:2:EINTR "" exact
read_case read:2:short "" exact

# Output write faults: a FIFO source fed in bursts, so that the output gets several writes.
write_case() {
	local fault=$1 want=$2 want_rc=$3 name=${1//:/_} rc n pid writer
	make_random "$T/win_$name" 40 4242
	mkfifo "$T/wfifo_$name"
	RNGD_FAULT=$fault RNGD_FAULT_SINK=$T/wout_$name "$FAULTY" -f "${NOSRC[@]}" \
		-O "file:w:path:$T/wfifo_$name" -o "$T/wout_$name" 2>"$T/werr_$name" &
	pid=$!
	pids+=("$pid")
	python3 - "$T/win_$name" "$T/wfifo_$name" 2>/dev/null <<'EOF' &
import sys, time
d = open(sys.argv[1], "rb").read()
with open(sys.argv[2], "wb", buffering=0) as f:
    f.write(d[:4 + 2500 * 4])
    for i in range(4, 40, 4):
        time.sleep(0.15)
        f.write(d[4 + 2500 * i:4 + 2500 * (i + 4)])
    time.sleep(60) # stays: the source never ends by itself
EOF
	writer=$!
	pids+=("$writer")
	wait_until 30 has_line "$T/werr_$name" "fault: ${fault//:/ }"
	sleep 2.5 # past the 1 s retry: what comes next is written
	kill -TERM "$pid" 2>/dev/null
	wait_until 30 dead "$pid"
	wait "$pid"
	rc=$?
	kill "$writer" 2>/dev/null
	if ! n=$(check_out "$T/win_$name" "$T/wout_$name"); then
		fail "output write $fault: $n"
	elif [ $rc -ne "$want_rc" ]; then
		fail "output write $fault: exit $rc, want $want_rc: $(tail -3 "$T/werr_$name")"
	elif ! has_line "$T/werr_$name" "$want"; then
		fail "output write $fault: no line '$want' in: $(head -c 400 "$T/werr_$name")"
	else
		ok "output write $fault: '$want', exit $rc; $n bytes out, each tested, none twice"
	fi
}

write_case write:2:ENOSPC "cannot write the output: No space left on device, retrying in 1 s" 1
write_case write:2:EINVAL "cannot write the output: Invalid argument, retrying in 1 s" 1
write_case write:2:EPIPE "output closed by its reader; stopping" 0

# Kernel faults: the fake kernel (RNGD_FAULT_KERNEL), a FIFO source that stays, a feed of
# 2500 bytes at once and then every second, credited 8 bits a byte.
kernel_case() {
	local fault=$1 want=$2 want_rc=$3 name=${1//:/_} rc n pid
	make_random "$T/kin_$name" 20 4242
	mkfifo "$T/kfifo_$name"
	: >"$T/klog_$name"
	RNGD_FAULT=$fault RNGD_FAULT_KERNEL=$T/klog_$name "$FAULTY" -f "${NOSRC[@]}" \
		-O "file:k:path:$T/kfifo_$name" -O file:k:quality:1024 -o /dev/random -R 1 -s 2500 \
		2>"$T/kerr_$name" &
	pid=$!
	pids+=("$pid")
	{
		cat "$T/kin_$name"
		sleep 60
	} >"$T/kfifo_$name" &
	pids+=($!)
	wait_until 30 eval "[ \$(wc -l <'$T/klog_$name') -ge 3 ] || ! kill -0 $pid 2>/dev/null"
	kill -TERM "$pid" 2>/dev/null
	wait_until 30 dead "$pid"
	wait "$pid"
	rc=$?
	if ! n=$(check_out "$T/kin_$name" "kernel:$T/klog_$name"); then
		fail "kernel $fault: $n"
	elif [ $rc -ne "$want_rc" ]; then
		fail "kernel $fault: exit $rc, want $want_rc: $(tail -3 "$T/kerr_$name")"
	elif ! has_line "$T/kerr_$name" "fault: ${fault//:/ }"; then
		fail "kernel $fault: the fault was not injected"
	elif [ -n "$want" ] && ! has_line "$T/kerr_$name" "$want"; then
		fail "kernel $fault: no line '$want' in: $(head -c 400 "$T/kerr_$name")"
	elif [ -z "$want" ] && has_line "$T/kerr_$name" "cannot feed"; then
		fail "kernel $fault: a retried EFAULT was reported"
	else
		ok "kernel $fault: ${want:-retried at once}, exit $rc; $n bytes credited, each tested, none twice"
	fi
}

kernel_case ioctl:2:EFAULT "" 0
kernel_case ioctl:2:EINVAL "cannot feed: Invalid argument, retrying in 1 s" 0
kernel_case ioctl:2:ENOSPC "cannot feed: No space left on device, retrying in 1 s" 0
kernel_case ioctl:2:EPERM "the kernel refused RNDADDENTROPY: no CAP_SYS_ADMIN" 77
finish
