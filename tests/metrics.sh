#!/bin/bash
# Metrics for Prometheus (rngd(8), METRICS) from a real run of the daemon: a FIFO source
# whose data has two blocks that fail FIPS 140-2, a file source waiting for its file, and,
# where this machine has a readable /dev/hwrng and rngd may feed the kernel, the hwrng
# source with kernel-hwrng = take-over acting on a copy of the hw_random sysfs directory (the
# real rng_quality is never written). Checks: `promtool check metrics` finds nothing in the
# daemon's metrics-file; `rngd --status --format=openmetrics` prints the same text from the
# status file (one snapshot, one formatter); the file is written atomically (mode 0644, no
# temporary left), through no symlink, and once more at exit; bad settings are refused.
# promtool comes from Debian's package prometheus (scripts/deps installs it); without it
# those cases skip, saying so.
set -u
. "$(dirname "$0")/lib.sh" metrics
hwrng_lock

have_promtool() { command -v promtool >/dev/null 2>&1; }
no_promtool="promtool not installed (Debian package prometheus; scripts/deps installs it)"

# $1 file, $2 blocks after a 4-byte seed: random, but blocks 1 and 3 have 55 % ones, which
# fails FIPS 140-2 (monobit allows 9725..10275 ones of 20000) and passes the SP 800-90B
# checks (no byte repeated, none too frequent) and the replay check.
make_input() {
	python3 - "$1" "$2" <<'EOF'
import random, sys
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(2222 + n)
def biased():
    bits = [1 if rng.random() < 0.55 else 0 for _ in range(20000)]
    return bytes(sum(b << i for i, b in enumerate(bits[j:j + 8])) for j in range(0, 20000, 8))
with open(path, "wb") as f:
    f.write(rng.randbytes(4))
    for i in range(n):
        f.write(biased() if i in (1, 3) else rng.randbytes(2500))
EOF
}

prom=$T/prom/rngd.prom
status=$T/run/status.json
mkdir -p "$T/prom"
: >"$T/conf"
args=(-f -c "$T/conf" "${NOCPU[@]}" -O "rngd:status-file:$status" -O rngd:pid-file:
	-O rngd:status-interval:0 --metrics-interval=0 --metrics-file="$prom"
	-O "file:fifo:path:$T/fifo" -O file:fifo:quality:500 -O "file:later:path:$T/later"
	-s 2500) # a block a feed: the fifo's reader gets past its ring (2 blocks) to block 3
takeover=
if is_root && have_sys_admin && hwrng_readable; then
	# A copy of the class directory: the take-over writes its rng_quality, not the kernel's.
	mkdir "$T/sys"
	for f in rng_current rng_available rng_quality rng_selected; do
		cat "/sys/class/misc/hw_random/$f" >"$T/sys/$f" 2>/dev/null || echo 0 >"$T/sys/$f"
	done
	backend=$(cat "$T/sys/rng_current")
	if [ "$backend" != none ] && [ "$(cat "$T/sys/rng_quality")" != 0 ]; then
		takeover=$backend
		args+=(-O "hwrng:sysfs:$T/sys" -R 1)
	fi
fi
if [ -z "$takeover" ]; then
	skip "take-over in the metrics: needs root, CAP_SYS_ADMIN and a readable /dev/hwrng with a backend of non-zero rng_quality"
	args+=(-x hwrng -o "$T/out")
fi

value() { # $1 series (name{labels}) in the metrics file: its value, or nothing
	awk -v s="$1" '$1 == s {print $2}' "$prom" 2>/dev/null
}
# Ask for a snapshot (SIGUSR1 writes both files from one) and wait for the new metrics file.
snapshot() {
	local ino
	ino=$(stat -c %i "$prom" 2>/dev/null)
	kill -USR1 "$pid"
	wait_until 30 eval '[ "$(stat -c %i "$prom" 2>/dev/null)" != "$ino" ]'
}
seen_all() {
	snapshot || return 1
	[ "$(value 'rngd_source_fips_failures_total{source="file:fifo",test="monobit"}')" = 2 ] &&
		[ "$(value 'rngd_source_state{source="file:later",state="waiting"}')" = 1 ] &&
		[ "$(value 'rngd_source_passed_blocks_total{source="file:fifo"}')" -ge 4 ] || return 1
	[ -z "$takeover" ] ||
		[ "$(value "rngd_kernel_hwrng_takeover{backend=\"$takeover\",state=\"held\"}")" = 1 ]
}

test_real_run() {
	local wfd t_before rc
	make_input "$T/in" 12
	mkfifo "$T/fifo"
	exec {wfd}<>"$T/fifo" # a writer that stays: the source never reaches its end
	cat "$T/in" >"$T/fifo" &
	pids+=($!)
	start_logged "$T/run.log" 30 "started" "real run" "${args[@]}" || return
	if ! wait_until 30 seen_all; then
		fail "real run: the metrics never showed 2 FIPS failures, a waiting source${takeover:+ and the take-over held}: $(grep -v '^#' "$prom" | grep -v ' 0$' | head -40 | tr '\n' ' ') log: $(head -5 "$T/run.log")"
		return
	fi
	ok "real run: 2 FIPS failures (monobit), file:later waiting${takeover:+, take-over of $takeover held} in the metrics file"
	echo "--- the rngd_* series that are not 0:"
	grep -v '^#' "$prom" | grep -v ' 0$'
	echo "---"

	if ! have_promtool; then
		skip "promtool check metrics: $no_promtool"
	elif out=$(promtool check metrics <"$prom" 2>&1) && [ -z "$out" ]; then
		ok "promtool check metrics: no problems in the daemon's file ($(grep -c '^# TYPE' "$prom") families, $(grep -vc '^#' "$prom") series)"
	else
		fail "promtool check metrics: $out"
	fi

	# Every family is described in rngd(8), METRICS.
	local undocumented=
	for m in $(sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$prom"); do
		sed -n '/^\.SH METRICS/,/^\.SH SIGNALS/p' "$top_srcdir/man/rngd.8.in" |
			grep -q "^\.B $m[{ ]" || undocumented="$undocumented $m"
	done
	if [ -z "$undocumented" ]; then
		ok "rngd(8), METRICS, describes every family of the file"
	else
		fail "not in rngd(8), METRICS:$undocumented"
	fi

	# One snapshot, one formatter: the same bytes from the status file.
	if "$RNGD" -c "$T/conf" -O "rngd:status-file:$status" --status --format=openmetrics \
		>"$T/from-status.prom" 2>"$T/from-status.err" && cmp -s "$T/from-status.prom" "$prom"; then
		ok "--status --format=openmetrics prints the metrics file's text from the status file"
	else
		fail "--status --format=openmetrics differs from the metrics file: $(diff "$T/from-status.prom" "$prom" | head -6 | tr '\n' ' ') $(cat "$T/from-status.err")"
	fi
	if [ "$(stat -c %a "$prom")" = 644 ] && [ -z "$(find "$T/prom" -name '*.tmp')" ]; then
		ok "metrics file: mode 0644, no temporary left beside it"
	else
		fail "metrics file: mode $(stat -c %a "$prom"), beside it: $(ls "$T/prom")"
	fi

	t_before=$(value rngd_last_update_timestamp_seconds)
	sleep 1.1 # the snapshot at exit is a second later, to tell it from the last one
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	exec {wfd}>&-
	if [ "$rc" = 0 ] && [ ! -e "$status" ] &&
		[ "$(value rngd_last_update_timestamp_seconds)" -gt "$t_before" ]; then
		ok "at exit: the metrics written once more and left in place (the status file removed)"
	else
		fail "at exit: rc $rc, status file $(ls "$status" 2>&1), last update $(value rngd_last_update_timestamp_seconds) (before: $t_before)"
	fi
}

# The directory discipline of the status file: a symlink in the directory's place is not
# followed; a symlink at the file is replaced, its target untouched; a missing directory is
# not created. Each logged once, and the daemon runs on.
test_no_symlink() {
	local victim=$T/victim
	mkdir -p "$victim" "$T/real"
	ln -s "$victim" "$T/linkdir"
	echo secret >"$T/secret"
	ln -s "$T/secret" "$T/real/rngd.prom"
	mkfifo "$T/idle"
	exec {wfd}<>"$T/idle"
	local base=(-f -c "$T/conf" "${NOSRC[@]}" -O "rngd:status-file:" -O rngd:pid-file:
		-O "file:idle:path:$T/idle" -o "$T/out2" --metrics-interval=1)
	start_logged "$T/link.log" 30 "cannot write the metrics file" "symlinked directory" \
		"${base[@]}" --metrics-file="$T/linkdir/rngd.prom" || return
	sleep 2.2 # two more intervals: the warning must not repeat
	if [ -z "$(ls -A "$victim")" ] && [ "$(grep -c 'cannot write the metrics file' "$T/link.log")" = 1 ] &&
		grep -q "symbolic links" "$T/link.log" && kill -0 "$pid"; then
		ok "metrics-file in a symlinked directory: not followed, said once, the daemon runs on"
	else
		fail "metrics-file in a symlinked directory: $(ls -A "$victim") $(cat "$T/link.log")"
	fi
	kill -TERM "$pid"
	wait "$pid"

	rm -f "$T/out2"
	start_logged "$T/file.log" 30 "started" "symlink at the file" "${base[@]}" \
		--metrics-file="$T/real/rngd.prom" || return
	if wait_until 30 eval '[ ! -L "$T/real/rngd.prom" ] && [ -f "$T/real/rngd.prom" ]' &&
		[ "$(cat "$T/secret")" = secret ]; then
		ok "metrics-file that is a symlink: replaced by the file, its target untouched"
	else
		fail "metrics-file that is a symlink: $(ls -l "$T/real") secret: $(cat "$T/secret")"
	fi
	kill -TERM "$pid"
	wait "$pid"

	rm -f "$T/out2"
	start_logged "$T/missing.log" 30 "cannot write the metrics file" "missing directory" \
		"${base[@]}" --metrics-file="$T/nodir/rngd.prom" || return
	if [ ! -e "$T/nodir" ] && grep -q "No such file or directory, ignoring" "$T/missing.log"; then
		ok "metrics-file in a missing directory: not created, said once"
	else
		fail "metrics-file in a missing directory: $(ls -d "$T/nodir" 2>&1) $(cat "$T/missing.log")"
	fi
	kill -TERM "$pid"
	wait "$pid"
	exec {wfd}>&-
}

# Every metrics-interval on time, whatever the other intervals: 3 s beside a status file of
# 2 s (a tick of 2 s would make it 4); and --dump, which is not the daemon, writes none.
test_cadence() {
	local times=() ino mt last=0 now end i bad=
	mkfifo "$T/idle3"
	exec {wfd}<>"$T/idle3"
	start_logged "$T/cadence.log" 30 "started" "cadence" -f -c "$T/conf" "${NOSRC[@]}" \
		-O "file:idle:path:$T/idle3" -o "$T/out3" -O rngd:pid-file: \
		-O "rngd:status-file:$T/run3/status.json" -O rngd:status-interval:2 \
		--metrics-file="$T/prom/cadence.prom" --metrics-interval=3 || return
	end=$(($(date +%s%N) + 11500000000))
	while now=$(date +%s%N) && [ "$now" -lt "$end" ]; do
		# The file's own mtime, not when this loop saw it: a loaded machine delays the loop.
		read -r ino mt < <(stat -c "%i %.3Y" "$T/prom/cadence.prom" 2>/dev/null)
		if [ -n "$ino" ] && [ "$ino" != "$last" ]; then
			times+=("${mt/./}000000")
			last=$ino
		fi
		sleep 0.05
	done
	kill -TERM "$pid"
	wait "$pid"
	exec {wfd}>&-
	for ((i = 1; i < ${#times[@]}; i++)); do
		local gap=$(((times[i] - times[i - 1]) / 1000000))
		[ "$gap" -ge 2500 ] && [ "$gap" -le 3500 ] || bad="$bad $gap"
	done
	if [ ${#times[@]} -ge 4 ] && [ -z "$bad" ]; then
		ok "metrics-interval 3 beside status-interval 2: rewritten every 3 s (${#times[@]} writes in 11.5 s)"
	else
		fail "metrics-interval 3: ${#times[@]} writes in 11.5 s, gaps off 3 s (ms):$bad"
	fi

	"$RNGD" -f -c "$T/conf" "${NOSRC[@]}" -O "file:d:path:$T/in" -O rngd:pid-file: \
		-O rngd:status-file: --metrics-file="$T/prom/dump.prom" --dump file:d \
		--dump-bytes 2500 >/dev/null 2>"$T/dump.log"
	if [ ! -e "$T/prom/dump.prom" ]; then
		ok "--dump with metrics-file set: no metrics file (the daemon's alone)"
	else
		fail "--dump wrote the metrics file"
	fi
}

test_bad_settings() {
	local rc
	printf '[rngd]\nmetrics-interval = soon\n' >"$T/bad.conf"
	"$RNGD" -c "$T/bad.conf" --check-config >"$T/bad.out" 2>&1
	rc=$?
	if [ $rc = 78 ] && grep -q "bad.conf:2: key 'metrics-interval'" "$T/bad.out"; then
		ok "metrics-interval = soon: exit 78, file:line and key named"
	else
		fail "metrics-interval = soon: exit $rc: $(cat "$T/bad.out")"
	fi
	"$RNGD" --check-config -c "$T/conf" --metrics-file=rngd.prom >"$T/rel.out" 2>&1
	rc=$?
	if [ $rc = 78 ] && grep -q "option --metrics-file: key 'metrics-file': 'rngd.prom' is not an absolute path" "$T/rel.out"; then
		ok "--metrics-file=rngd.prom: exit 78, not an absolute path"
	else
		fail "--metrics-file=rngd.prom: exit $rc: $(cat "$T/rel.out")"
	fi
	"$RNGD" --status --format=xml >"$T/fmt.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q "option --format: 'xml' is not one of" "$T/fmt.out"; then
		ok "--format=xml: exit 2, the formats listed"
	else
		fail "--format=xml: exit $rc: $(cat "$T/fmt.out")"
	fi
	"$RNGD" --format=openmetrics >"$T/fmt2.out" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q -- "--format goes with --status" "$T/fmt2.out"; then
		ok "--format without --status: exit 2"
	else
		fail "--format without --status: exit $rc: $(cat "$T/fmt2.out")"
	fi
	"$RNGD" -c "$T/conf" -O "rngd:status-file:$T/none/status.json" --status \
		--format=openmetrics >"$T/nost.out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "is rngd running?" "$T/nost.out"; then
		ok "--status --format=openmetrics without a daemon: exit 1, said why"
	else
		fail "--status --format=openmetrics without a daemon: exit $rc: $(cat "$T/nost.out")"
	fi
}

test_real_run
test_no_symlink
test_cadence
test_bad_settings
finish
