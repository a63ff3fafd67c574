#!/bin/bash
# rng-tools' command lines as distributions ship them (issue 20's table): each one starts,
# writes a tested block to -o, says at most one notice per rng-tools source it does not
# have, and exits 0 on TERM. Then the exit codes of mistakes, and the mappings. None of it
# reads /dev/hwrng: every run adds a file source on random bytes and excludes the rest.
# Each case prints "ok", "skip: why" or "FAIL: why".
set -u
. "$(dirname "$0")/lib.sh" compat

# A FIFO with a slow writer of fresh random bytes (5 blocks a second), so that the daemon
# runs until it is stopped: $1 is the FIFO's path.
slow_fifo() {
	mkfifo "$1"
	(while head -c 2500 /dev/urandom; do sleep 0.2; done >"$1") 2>/dev/null &
	pids+=($!)
}
UNSUPPORTED="jitter pkcs11 nist qrypt rtlsdr tpm darn rndr"

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
at_least() { [ "$(size_of "$1")" -ge "$2" ]; }

# notices LOG NAME: how many lines of LOG give rng-tools' source NAME's notice.
notices() { grep -c "rng-tools' source '$2'" "$1"; }

# run_row WHAT WANT-NOTICES ARGS...: WANT-NOTICES lists the rng-tools names that must get
# exactly one notice; every other unsupported name must get none.
run_row() {
	local what=$1 want=$2 log out n name rc
	shift 2
	log=$T/row$((passed + failed)).log
	out=$T/row$((passed + failed)).out
	slow_fifo "$T/row$((passed + failed)).fifo"
	# The sources a run may use: only the file source on the FIFO, whatever the row enables.
	"$RNGD" -f "$@" -x hwrng -x via -x rdseed -x rdrand -x rndr \
		-O "file:t:path:$T/row$((passed + failed)).fifo" -O rngd:status-file: \
		-o "$out" 2>"$log" &
	local p=$!
	pids+=("$p")
	if ! wait_until 30 at_least "$out" 2500; then
		fail "$what: no tested block on -o in 30 s: $(head -5 "$log")"
		return
	fi
	if ! kill -TERM "$p"; then
		fail "$what: rngd exited before TERM: $(head -5 "$log")"
		return
	fi
	wait "$p"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$what: exit $rc on TERM: $(head -5 "$log")"
		return
	fi
	for name in $UNSUPPORTED; do
		n=$(notices "$log" "$name")
		case " $want " in
		*" $name "*) [ "$n" -eq 1 ] || {
			fail "$what: $n notices for '$name', want 1: $(cat "$log")"
			return
		} ;;
		*) [ "$n" -eq 0 ] || {
			fail "$what: $n notices for '$name', want none: $(cat "$log")"
			return
		} ;;
		esac
	done
	if grep -qiE "error|unknown" "$log"; then
		fail "$what: an error in the log: $(cat "$log")"
		return
	fi
	ok "$what: fed $(size_of "$out") bytes, exit 0 on TERM${want:+, one notice each for: $want}"
}

# The table of issue 20.
run_row "Fedora /etc/sysconfig/rngd" "" \
	--fill-watermark=0 -x pkcs11 -x nist -x qrypt -x namedpipe -x jitter -D daemon:daemon
run_row "dracut's rngd module" "" -x pkcs11 -x nist
run_row "OE-core /etc/default/rng-tools on i.MX" "jitter" \
	-O jitter:refill_thresh:2048 -O jitter:buffer_size:2048 -O jitter:thread_count:1 -d \
	-r /dev/hwrng
run_row "rng-tools-debian's examples" "" --hrng=viapadlock --fill-watermark=90% --feed-interval=1
run_row "rng-tools 6 source numbers" "" -x 5 -x 6 -x 7
run_row "rng-tools 6: -x tpm" "" -x tpm
run_row "rng-tools 6: -n darn" "darn" -n darn
run_row "rng-tools 6: -x rtlsdr -x qrypt" "" -x rtlsdr -x qrypt
run_row "rng-tools 6: -O rdrand:use_aes:1" "" -O rdrand:use_aes:1
# More of the same: every unsupported name through -n and -O, once each however often named.
run_row "every unsupported name, -n and -O twice" "jitter pkcs11 nist qrypt rtlsdr tpm darn" \
	-n jitter -O jitter:thread_count:1 -O jitter:timeout:20 -n pkcs11 -O pkcs11:chunk_size:1 \
	-n nist -O nist:use_aes:0 -n qrypt -n 9 -n rtlsdr -O 8:freq_min:1 -n tpm -n 1 -n darn \
	-O 3:use_aes:1
run_row "rng-tools-debian's long options" "" --rng-driver=stream --rng-entropy=0.998 \
	--rng-buffers=5 --rng-timeout=10 --rng-quality=high --timeout=30 --stats-interval=3600 \
	--pidfile="$T/x.pid" --fill-watermark=50%
run_row "Alpine's ARM jitter options" "jitter" -O jitter:buffer_size:4133 \
	-O jitter:refill_thresh:4133 -O jitter:thread_count:1 -O jitter:timeout:20
run_row "Alpine's EXTRA_ARGS=-q: its notices too are quiet" "" -q -n jitter -O jitter:timeout:20

# rndr: a source of every build (not available off arm64, -l says why), so no notice; the
# row stays for a build whose table lacks it.
if "$RNGD" -O rndr 2>/dev/null | grep -q "rng-tools' source"; then
	run_row "rng-tools 6: -n rndr (not an arm64 build)" "rndr" -n rndr
fi

# namedpipe is the file source 'file:namedpipe'; -O namedpipe:timeout is a no-op notice.
test_namedpipe() {
	local fifo=$T/np.fifo log=$T/np.log out=$T/np.out p rc
	slow_fifo "$fifo"
	"$RNGD" -f -x hwrng -x via -x rdseed -x rdrand -x rndr -O rngd:status-file: -n namedpipe \
		-O "namedpipe:path:$fifo" -O namedpipe:timeout:5 -o "$out" 2>"$log" &
	p=$!
	pids+=("$p")
	if ! wait_until 30 at_least "$out" 2500; then
		fail "-n namedpipe -O namedpipe:path:FIFO: nothing on -o: $(head -5 "$log")"
		return
	fi
	kill -TERM "$p" && wait "$p"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "namedpipe:timeout.*ignoring" "$log" &&
		grep -q "file:namedpipe" "$log"; then
		ok "-n namedpipe -O namedpipe:path:FIFO: fed through 'file:namedpipe', timeout a notice"
	else
		fail "namedpipe: exit $rc: $(cat "$log")"
	fi
}
test_namedpipe

# --import-rng-tools on each distribution's file (tests/data/compat/, written from the
# variables each documents): exit 0, the lines it must make, a configuration that rngd
# loads, and a daemon that starts on it, feeds and exits 0 on TERM.
DATA=$top_srcdir/tests/data/compat
# import_case FILE WHAT PATTERN...: every PATTERN (grep -x) is a line of the output.
import_case() {
	local file=$DATA/$1 what=$2 conf=$T/$1.conf out rc pat
	shift 2
	"$RNGD" --import-rng-tools "$file" >"$conf" 2>"$T/imp.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "import $what: exit $rc: $(cat "$T/imp.err")"
		return
	fi
	for pat in "$@"; do
		grep -qx -- "$pat" "$conf" || {
			fail "import $what: no line '$pat' in: $(cat "$conf")"
			return
		}
	done
	out=$("$RNGD" --check-config -c "$conf" 2>&1) || {
		fail "import $what: the output does not load: $out"
		return
	}
	ok "import $what: $(grep -c '^[a-z]' "$conf") settings, $(grep -c "^# $file:" "$conf") dropped with a reason, loads"
	run_row "import $what: rngd -c on the output" "" -c "$conf"
}
import_case rng-tools-debian "Debian rng-tools-debian" "fill-watermark = 3686" \
	"feed-interval = 1" "stats-interval = 3600" "device = /dev/hwrng" "backend = virtio_rng.0" \
	"# .*:11: RNGDOPTIONS: option --rng-buffers: .*; ignoring" \
	"# .*:11: RNGDOPTIONS: option -T: .*; ignoring"
import_case rng-tools-debian-padlock "Debian rng-tools-debian, PadLock" "feed-interval = 30" \
	"\[source via\]" "quality = 768" "\[source hwrng\]" "enabled = no" \
	"# .*:3: RNGDOPTIONS: option --rng-quality: .*; ignoring"
import_case rng-tools-oe "OpenEmbedded /etc/default/rng-tools" "device = /dev/hwrng" \
	"# .*:3: EXTRA_ARGS: option -O: rng-tools' source 'jitter' is not in rngd: .*" \
	"# .*:3: EXTRA_ARGS: -d/-q: .*"
import_case sysconfig-rngd "Fedora /etc/sysconfig/rngd" "fill-watermark = 0" \
	"user = daemon:daemon" "# .*:2: RNGD_ARGS: option -x: 'pkcs11' (rng-tools) is not in .*"
import_case sysconfig-rngd-dracut "dracut's /etc/sysconfig/rngd" \
	"# .*:2: RNGD_ARGS: option -x: 'nist' (rng-tools) is not in .*"
import_case conf.d-rngd-alpine "Alpine /etc/conf.d/rngd" "entropy-count = 8" \
	"feed-interval = 300" "feed-bytes = 64" "fill-watermark = 192" "\[source rdseed\]" \
	"\[source rdrand\]" "# .*:13: JITTER_OPTIONS: set again on line 14: the last value counts" \
	"# .*:11: RDRAND_OPTIONS: option -O rdrand:use_aes: .*"
import_case conf.d-rngd-arch "Arch /etc/conf.d/rngd" "feed-bytes = 128" \
	"random-device = /dev/random"
import_case default-rngd "Buildroot /etc/default/rngd" "feed-interval = 120" \
	"\[source file:namedpipe\]" "path = /run/trng.fifo" "enabled = yes"

# Shell in the file is read as data: nothing of it runs, each such line is named.
test_import_hostile_shell() {
	local conf=$T/hostile.conf n
	rm -f /tmp/rngd-import-pwned
	"$RNGD" --import-rng-tools "$DATA/hostile-shell" >"$conf" 2>&1 || {
		fail "import of shell: exit $?: $(cat "$conf")"
		return
	}
	n=$(grep -c "not run\|not closed\|not an rng-tools variable" "$conf")
	if [ -e /tmp/rngd-import-pwned ]; then
		fail "import of shell ran a command"
	elif [ "$n" -ne 7 ] || ! grep -qx "feed-interval = 30" "$conf" ||
		! grep -q "unknown source 'nosuch'" "$conf"; then
		fail "import of shell: $n lines named, want 7: $(cat "$conf")"
	else
		ok "import of shell: nothing run, 7 lines named, the rest carried over"
	fi
}
test_import_hostile_shell

# Files that are no environment file: one line saying what, exit 1, at once.
test_import_refused() {
	local what=$1 want=$2 path=$3 out rc
	out=$(timeout 5 "$RNGD" --import-rng-tools "$path" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$want" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ]; then
		ok "import of $what: exit 1, '$out'"
	else
		fail "import of $what: exit $rc (want 1, '$want'): $out"
	fi
}
head -c 100000 /dev/zero | tr '\0' '#' >"$T/huge"
test_import_refused "a 100 kB file" "larger than 64 KiB" "$T/huge"
head -c 4096 /dev/urandom >"$T/binary"
printf 'A=1\n\001\n' >>"$T/binary"
test_import_refused "a binary file" "a binary file" "$T/binary"
mkfifo "$T/fifo"
test_import_refused "a FIFO without a writer" "is a FIFO, not a regular file" "$T/fifo"
test_import_refused "a directory" "is a directory" "$T"
test_import_refused "/dev/zero" "is a character device" /dev/zero
test_import_refused "a missing file" "No such file" "$T/nosuch"

# With no FILE: the first of the known files that exists, in rngd(8)'s order (in a mount
# namespace whose /etc/default is a scratch tmpfs).
test_import_search() {
	local out
	if ! unshare -m true 2>/dev/null; then
		skip "import search order: no mount namespace here"
		return
	fi
	out=$(unshare -m sh -c 'mount -t tmpfs none /etc/default &&
		echo "DAEMON_ARGS=\"-s 100\"" >/etc/default/rngd && "$1" --import-rng-tools &&
		echo "EXTRA_ARGS=\"-s 200\"" >/etc/default/rng-tools && "$1" --import-rng-tools &&
		rm /etc/default/rng-tools /etc/default/rngd && "$1" --import-rng-tools' sh "$RNGD" 2>&1)
	if grep -q "from /etc/default/rngd" <<<"$out" && grep -q "feed-bytes = 100" <<<"$out" &&
		grep -q "from /etc/default/rng-tools$" <<<"$out" && grep -q "feed-bytes = 200" <<<"$out" &&
		grep -q "no rng-tools configuration here (looked for /etc/default/rng-tools-debian" <<<"$out"; then
		ok "import with no FILE: /etc/default/rng-tools before /etc/default/rngd; none: exit 1 saying where it looked"
	elif [ -e /etc/sysconfig/rngd ] || [ -e /etc/conf.d/rngd ]; then
		skip "import search order: this machine has its own rng-tools files"
	else
		fail "import with no FILE: $out"
	fi
}
test_import_search

# Under a unit's User= (here: started as nobody), a -D from rng-tools' arguments (Fedora's
# -D daemon:daemon) cannot switch user: a warning, and the daemon runs on as it is.
test_drop_as_user() {
	local fifo=$T/user.fifo log=$T/user.log p rc
	if ! is_root || ! command -v setpriv >/dev/null; then
		skip "-D as another user: needs root and setpriv"
		return
	fi
	chmod 755 "$T"
	slow_fifo "$fifo"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$RNGD" -f -t -D daemon:daemon \
		-x hwrng -x via -x rdseed -x rdrand -x rndr -O "file:u:path:$fifo" -O rngd:status-file: \
		2>"$log" &
	p=$!
	pids+=("$p")
	if ! wait_until 30 grep -q "file:u: running" "$log"; then
		fail "-D daemon:daemon as nobody: never running: $(head -5 "$log")"
		return
	fi
	kill -TERM "$p" && wait "$p"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "^rngd: -D daemon:daemon: already running as uid 65534 .*staying so, ignoring" "$log"; then
		ok "-D daemon:daemon as nobody: one warning, runs, exit 0 on TERM"
	else
		fail "-D daemon:daemon as nobody: exit $rc: $(cat "$log")"
	fi
}
test_drop_as_user

# expect_rc WHAT CODE PATTERN ARGS...: rngd ARGS exits CODE with PATTERN in its output.
expect_rc() {
	local what=$1 want=$2 pattern=$3 out rc
	shift 3
	out=$(timeout 20 "$RNGD" "$@" 2>&1)
	rc=$?
	if [ $rc -eq "$want" ] && grep -q -- "$pattern" <<<"$out"; then
		ok "$what: exit $rc"
	else
		fail "$what: exit $rc (want $want, '$pattern'): $out"
	fi
}
# Unknown names: the same mistake, the same code (2, usage), however given.
expect_rc "-x nosuch" 2 "unknown source 'nosuch'" --check-config -x nosuch
expect_rc "-n nosuch" 2 "unknown source 'nosuch'" --check-config -n nosuch
expect_rc "-O nosuch:k:v" 2 "unknown source 'nosuch'" --check-config -O nosuch:k:v
expect_rc "-O nosuch" 2 "unknown source 'nosuch'" -O nosuch
expect_rc "-x 11 (past rng-tools 6.17's table)" 2 "unknown source '11'" --check-config -x 11
# rng-tools' names are never an error.
expect_rc "-O jitter lists nothing, says why" 0 "not in rngd" -O jitter
expect_rc "-O 7 is pkcs11" 0 "pkcs11: rng-tools' source" -O 7
expect_rc "-x of every rng-tools name is silent" 0 "configuration OK" --check-config \
	-x jitter -x pkcs11 -x nist -x qrypt -x rtlsdr -x tpm -x darn -x rndr -x namedpipe
out=$("$RNGD" --check-config -x jitter -x pkcs11 -x nist -x qrypt -x rtlsdr -x tpm -x darn \
	-x namedpipe 2>&1 >/dev/null)
[ -z "$out" ] && ok "-x of unsupported names: nothing on stderr" ||
	fail "-x of unsupported names said: $out"
# A wrong value for a source that is here: 78.
expect_rc "-O rdrand:nosuch:1 (a source here)" 78 "key 'nosuch'" --check-config \
	-O rdrand:nosuch:1
expect_rc "-O via:dc-bias:9" 78 "dc-bias" --check-config -O via:dc-bias:9
expect_rc "--rng-entropy=2" 78 "option --rng-entropy" --check-config --rng-entropy=2
expect_rc "-W 101%" 78 "not a percentage" --check-config -W 101%
expect_rc "-n namedpipe without a path" 78 "key 'path' is required" --check-config -n namedpipe
# rng-tools-debian's letters where rng-tools 6 wins: a usage error that names the long form.
expect_rc "-H 0.9 (rng-tools-debian's letter)" 2 "--rng-entropy" -H 0.9
expect_rc "-S 60 (rng-tools-debian's letter)" 2 "--stats-interval" -S 60
expect_rc "-t 5 (rng-tools-debian's --feed-interval)" 2 "--feed-interval=N" -t 5
expect_rc "-R viapadlock (rng-tools-debian's driver)" 2 "--rng-driver=viapadlock" -R viapadlock
expect_rc "--hrng=nosuch" 2 "intelfwh viakernel viapadlock" --hrng=nosuch
expect_rc "--hrng=help" 0 "viapadlock" --hrng=help
expect_rc "-V" 0 "^rngd " -V
expect_rc "-?" 0 "Usage" -?

# What the mappings become: -W N% of the legacy 4096-bit pool, --rng-entropy a quality.
expect_rc "-W 90%" 0 "configuration OK" --check-config -W 90%
finish
