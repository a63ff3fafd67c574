#!/bin/bash
# Root's steps around the unprivileged daemon (rngd(8), SECURITY) against a hostile runtime
# directory: as user nobody, the owner of that directory (the unit gives /run/rngd to user
# rngd), plant every kind of hostile content (symlinks to root's files, grant and state files
# naming other paths, owners and modes, FIFOs, directories, 1 MiB files, empty values, the
# two proofs of concept of issue 18), then run `rngd --grant-kernel-hwrng` and
# `rngd --restore-kernel-hwrng` as root. Each step must end within 2 s, say what it refused,
# and leave every canary (root's files: content hash, owner, mode) as it was.
# Most cases run tests/rngd-root-test (rngd with the test hooks) on a fake hw_random
# directory; the part on the real one is opt-in (RNGD_TEST_REAL_SWITCH=1, under the device
# lock) and puts rng_current, rng_quality and its owner and mode back.
. "$(dirname "$0")/lib.sh" root-steps
ROOTTEST=$top_builddir/tests/rngd-root-test
is_root || { echo "root-steps: skipped: root's steps need root"; exit 77; }
id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null ||
	{ echo "root-steps: skipped: no user nobody or no setpriv"; exit 77; }
[ -x "$ROOTTEST" ] || { echo "root-steps: skipped: tests/rngd-root-test not built"; exit 77; }
chmod 755 "$T"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

# Canaries: root's files that a confused root step could chown, chmod or write.
mkdir -m 755 "$T/canary"
echo secret >"$T/canary/victim"
echo short >"$T/canary/victim2"
cp /etc/passwd "$T/canary/passwd"
echo 0 >"$T/canary/sysctl"
chmod 600 "$T/canary/victim" "$T/canary/victim2" "$T/canary/sysctl"
chmod 644 "$T/canary/passwd"
canaries=("$T"/canary/* /etc/passwd /etc/group)
[ -e /etc/shadow ] && canaries+=(/etc/shadow)
snapshot() {
	local f
	for f in "${canaries[@]}"; do
		printf '%s %s %s\n' "$f" "$(stat -c '%u:%g:%a' "$f")" "$(sha256sum <"$f" | cut -c1-64)"
	done
}
snapshot >"$T/canaries.before"
canaries_ok() { snapshot | cmp -s - "$T/canaries.before"; }

# The fake hw_random class (plain files: the test build skips only the sysfs check).
sys=$T/sys run=$T/run rootdir=$T/rngd-root
fake_sysfs() { # quality
	rm -rf "$sys" && mkdir -m 755 "$sys"
	echo "virtio_rng.0 tpm-rng-0 none" >"$sys/rng_available"
	echo virtio_rng.0 >"$sys/rng_current"
	echo "$1" >"$sys/rng_quality"
	echo 0 >"$sys/rng_selected"
	chmod 644 "$sys"/*
}
fresh_run() { # the daemon's runtime directory, user nobody's
	rm -rf "$run" && mkdir -m 755 "$run" && chown nobody:nogroup "$run"
}
export RNGD_TEST_SYSFS=$sys RNGD_TEST_RUNTIME_DIR=$run RNGD_TEST_ROOT_DIR=$rootdir

# Run a root step ($1: name for the log, then the command): its exit code in rc, its
# stderr in $T/$1.err, its wall time checked against 2 s.
step() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s%N)
	timeout 10 "$@" 2>"$T/$name.err" >/dev/null
	rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	[ "$ms" -lt 2000 ] || fail "$name: took $ms ms"
}
grant() { step "$1" "$ROOTTEST" --grant-kernel-hwrng=nogroup; }
restore() { step "$1" "$ROOTTEST" --restore-kernel-hwrng; }
said() { grep -q -- "$2" "$T/$1.err"; }
quality() { cat "$sys/rng_quality"; }

# One hostile case: a fresh fake sysfs at 1000, grant, the daemon "takes over" (0 in
# sysfs), then $2 (a command run as nobody) plants; restore must refuse with $3 in its
# line, put back $4 from root's record, and leave the canaries alone.
hostile() { # name, plant command, expected refusal, expected rng_quality after
	local name=$1 plant=$2 why=$3 want=$4
	fake_sysfs 1000
	fresh_run
	rm -rf "$rootdir"
	grant "$name-grant"
	[ "$rc" = 0 ] || { fail "$name: grant exit $rc: $(cat "$T/$name-grant.err")"; return; }
	echo 0 >"$sys/rng_quality"
	as_nobody sh -c "cd '$run' && $plant" || { fail "$name: could not plant"; return; }
	restore "$name"
	if [ "$rc" = 1 ] && said "$name" "$why" && [ "$(quality)" = "$want" ] && canaries_ok &&
		[ "$(stat -c %a "$sys/rng_quality")" = 644 ]; then
		ok "$name: refused in $ms ms ('$(grep -m1 -o "refused.*" "$T/$name.err" | cut -c1-70)'), rng_quality $want, canaries untouched"
	else
		fail "$name: exit $rc, rng_quality $(quality), mode $(stat -c %a "$sys/rng_quality"): $(cat "$T/$name.err"); canaries: $(snapshot | diff "$T/canaries.before" - | tail -2)"
	fi
}

# ---- the proofs of concept of issue 18, as written there (the installed binary: fixed
# paths, so the planted directory is not even looked at) ----
mkdir -p "$T/poc/x" && ln -s "$T/canary/victim" "$T/poc/x/rng_quality"
printf 'sysfs=%s\nuid=65534\ngid=65534\nmode=4777\n' "$T/poc/x" >"$T/poc/kernel-hwrng.grant"
chown -R nobody "$T/poc"
env -u RNGD_TEST_SYSFS -u RNGD_TEST_RUNTIME_DIR -u RNGD_TEST_ROOT_DIR \
	timeout 10 "$RNGD" --restore-kernel-hwrng -O "rngd:status-file:$T/poc/status.json" \
	2>"$T/poc1.err"
canaries_ok && ok "PoC 1 (planted grant file, symlinked rng_quality) with rngd: victim untouched" ||
	fail "PoC 1: $(snapshot | diff "$T/canaries.before" - | tail -2)"
mkdir -p "$T/poc2/x" && ln -s "$T/canary/victim2" "$T/poc2/x/rng_current"
echo 'AAAAAAAAAAAAAAAAAAAAAAAA b' >"$T/poc2/x/rng_available"
echo 0 >"$T/poc2/x/rng_quality"
printf 'sysfs=%s\nbackend=AAAAAAAAAAAAAAAAAAAAAAAA\nquality=7\n' "$T/poc2/x" \
	>"$T/poc2/kernel-hwrng.state"
chown -R nobody "$T/poc2"
env -u RNGD_TEST_SYSFS -u RNGD_TEST_RUNTIME_DIR -u RNGD_TEST_ROOT_DIR \
	timeout 10 "$RNGD" --restore-kernel-hwrng -O "rngd:status-file:$T/poc2/status.json" \
	2>"$T/poc2.err"
canaries_ok && ok "PoC 2 (planted state file, symlinked rng_current) with rngd: victim untouched" ||
	fail "PoC 2: $(snapshot | diff "$T/canaries.before" - | tail -2)"
# The same files where root's step does look: the runtime directory is theirs.
fake_sysfs 0
rm -rf "$rootdir"
RNGD_TEST_RUNTIME_DIR=$T/poc step poc1-hooked "$ROOTTEST" --restore-kernel-hwrng
canaries_ok && [ "$(stat -c %a "$sys/rng_quality")" = 644 ] &&
	ok "PoC 1 as the runtime directory: the grant file's path, owner and mode not used" ||
	fail "PoC 1 hooked: exit $rc: $(cat "$T/poc1-hooked.err")"
RNGD_TEST_RUNTIME_DIR=$T/poc2 step poc2-hooked "$ROOTTEST" --restore-kernel-hwrng
if [ "$rc" = 1 ] && canaries_ok && [ "$(quality)" = 0 ] && said poc2-hooked "refused"; then
	ok "PoC 2 as the runtime directory: refused ($(head -c 150 "$T/poc2-hooked.err"))"
else
	fail "PoC 2 hooked: exit $rc, rng_quality $(quality): $(cat "$T/poc2-hooked.err")"
fi
# With root's record: the planted name is not in the (fixed) rng_available, nothing written.
fake_sysfs 1000
grant poc2-grant
echo 0 >"$sys/rng_quality"
printf 'sysfs=%s\nbackend=AAAAAAAAAAAAAAAAAAAAAAAA\nquality=7\n' "$T/poc2/x" \
	>"$T/poc2/kernel-hwrng.state" # the restore before removed it
chown nobody "$T/poc2/kernel-hwrng.state"
RNGD_TEST_RUNTIME_DIR=$T/poc2 step poc2-record "$ROOTTEST" --restore-kernel-hwrng
if canaries_ok && [ "$(cat "$sys/rng_current")" = virtio_rng.0 ] &&
	said poc2-record "AAAAAAAAAAAAAAAAAAAAAAAA is not in rng_available"; then
	ok "PoC 2 with a grant: the planted backend is not in rng_available, nothing written"
else
	fail "PoC 2 with a grant: exit $rc: $(cat "$T/poc2-record.err")"
fi

# ---- hostile state files: refused, root's record put back (1000) ----
hostile "symlink to a root file" "ln -s '$T/canary/victim' kernel-hwrng.state" \
	"a symlink (not followed)" 1000
hostile "symlink to etc-shadow" "ln -s /etc/shadow kernel-hwrng.state" \
	"a symlink (not followed)" 1000
hostile "FIFO (no writer)" "mkfifo kernel-hwrng.state" "not a regular file" 1000
hostile "directory" "mkdir kernel-hwrng.state && echo x >kernel-hwrng.state/x" \
	"not a regular file" 1000
hostile "1 MiB file" "head -c 1048576 /dev/zero | tr '\\\\0' a >kernel-hwrng.state" \
	"too long" 1000
hostile "empty file" ": >kernel-hwrng.state" "refused: empty" 1000
hostile "empty backend= (looped forever before)" "printf 'backend=\\nquality=7\\n' >kernel-hwrng.state" \
	"backend '' is not a backend's name" 1000
hostile "empty quality=" "printf 'backend=virtio_rng.0\\nquality=\\n' >kernel-hwrng.state" \
	"quality '' is not 0..1024" 1000
hostile "quality out of range" "printf 'backend=virtio_rng.0\\nquality=99999\\n' >kernel-hwrng.state" \
	"is not 0..1024" 1000
hostile "path as a backend name" "printf 'backend=../../etc/passwd\\nquality=7\\n' >kernel-hwrng.state" \
	"is not a backend's name" 1000
hostile "owner and mode keys" "printf 'backend=virtio_rng.0\\nquality=1000\\nuid=65534\\nmode=4777\\n' >kernel-hwrng.state" \
	"unknown key 'uid'" 1000
hostile "binary garbage" "head -c 3000 /dev/urandom >kernel-hwrng.state" "refused" 1000

# A FIFO with a writer that paces it: still not opened.
fake_sysfs 1000
fresh_run
rm -rf "$rootdir"
grant fifo-writer-grant
echo 0 >"$sys/rng_quality"
as_nobody mkfifo "$run/kernel-hwrng.state"
as_nobody sh -c "exec 3<>'$run/kernel-hwrng.state'; printf 'backend=virtio_rng.0\\n' >&3; sleep 5" &
writer=$!
pids+=("$writer")
restore fifo-writer
kill "$writer" 2>/dev/null
[ "$rc" = 1 ] && said fifo-writer "not a regular file" && [ "$(quality)" = 1000 ] && canaries_ok &&
	ok "FIFO with a writer: refused in $ms ms, rng_quality 1000 from root's record" ||
	fail "FIFO with a writer: exit $rc, rng_quality $(quality): $(cat "$T/fifo-writer.err")"

# A hard link to root's file (same file system; what protected_hardlinks would stop).
fake_sysfs 1000
fresh_run
rm -rf "$rootdir"
grant hardlink-grant
echo 0 >"$sys/rng_quality"
ln "$T/canary/victim" "$run/kernel-hwrng.state"
restore hardlink
[ "$rc" = 1 ] && [ "$(quality)" = 1000 ] && canaries_ok && [ -e "$T/canary/victim" ] &&
	ok "hard link to a root file: read as data, refused ($(grep -o "refused: [^;]*" "$T/hardlink.err")), the file unchanged" ||
	fail "hard link: exit $rc: $(cat "$T/hardlink.err")"

# ---- planted values that parse: checked as data ----
fake_sysfs 1000
fresh_run
rm -rf "$rootdir"
grant cap-grant
echo 0 >"$sys/rng_quality"
as_nobody sh -c "printf 'backend=virtio_rng.0\\nquality=1024\\n' >'$run/kernel-hwrng.state'"
restore cap
[ "$rc" = 0 ] && [ "$(quality)" = 1000 ] && said cap "capped at 1000" && canaries_ok &&
	ok "a planted quality 1024 is capped at the 1000 root recorded" ||
	fail "cap: exit $rc, rng_quality $(quality): $(cat "$T/cap.err")"
fake_sysfs 0
fresh_run
rm -rf "$rootdir"
grant zero-grant
as_nobody sh -c "printf 'backend=virtio_rng.0\\nquality=1024\\n' >'$run/kernel-hwrng.state'"
restore zero
[ "$(quality)" = 0 ] && canaries_ok &&
	ok "the administrator's 0: a planted 1024 does not raise it ($(head -c 100 "$T/zero.err"))" ||
	fail "zero: rng_quality $(quality): $(cat "$T/zero.err")"
# Without root's record (no grant ran): a file user nobody wrote is not trusted at all.
fake_sysfs 0
fresh_run
rm -rf "$rootdir"
as_nobody sh -c "printf 'backend=virtio_rng.0\\nquality=1024\\n' >'$run/kernel-hwrng.state'"
restore norecord
[ "$rc" = 1 ] && [ "$(quality)" = 0 ] && said norecord "refused: written by uid 65534" &&
	ok "no grant record: a state file of user nobody is refused ($ms ms)" ||
	fail "no record: exit $rc, rng_quality $(quality): $(cat "$T/norecord.err")"

# ... but one root wrote (a daemon that took over before its -D drop, as under an init
# script) is, in the directory user nobody owns.
fake_sysfs 0
fresh_run
rm -rf "$rootdir"
printf 'backend=virtio_rng.0\nquality=1000\n' >"$run/kernel-hwrng.state"
restore rootwrote
[ "$rc" = 0 ] && [ "$(quality)" = 1000 ] &&
	ok "no grant record: a state file root wrote is used (rng_quality 1000)" ||
	fail "root's state file: exit $rc, rng_quality $(quality): $(cat "$T/rootwrote.err")"

# ---- symlinks inside the (fake) sysfs directory: O_NOFOLLOW ----
fake_sysfs 1000
fresh_run
rm -rf "$rootdir"
rm "$sys/rng_quality" && ln -s "$T/canary/victim" "$sys/rng_quality"
grant sysfs-link
[ "$rc" != 0 ] && said sysfs-link "a symlink (not followed)" && canaries_ok &&
	ok "grant: a symlinked rng_quality is not followed ($(cat "$T/sysfs-link.err"))" ||
	fail "grant through a symlink: exit $rc: $(cat "$T/sysfs-link.err")"
fake_sysfs 1000
grant sysfs-link2-grant
echo 0 >"$sys/rng_quality"
rm "$sys/rng_current" && ln -s "$T/canary/victim2" "$sys/rng_current"
as_nobody sh -c "printf 'backend=tpm-rng-0\\nquality=7\\n' >'$run/kernel-hwrng.state'"
restore sysfs-link2
canaries_ok && ok "restore: a symlinked rng_current is not written through (exit $rc)" ||
	fail "restore through a symlinked rng_current: $(cat "$T/sysfs-link2.err")"

# ---- root's directory: only a directory of root's own, mode 0700 ----
fake_sysfs 1000
fresh_run
rm -rf "$rootdir"
mkdir -m 755 "$T/nobodys" && chown nobody "$T/nobodys"
as_nobody ln -s "$T/canary" "$T/nobodys/rngd-root"
RNGD_TEST_ROOT_DIR=$T/nobodys/rngd-root grant rootdir-link
[ "$rc" != 0 ] && said rootdir-link "not a directory" && canaries_ok &&
	[ "$(stat -c %a "$sys/rng_quality")" = 644 ] &&
	ok "a root directory that is a symlink is not used, nothing granted ($(cat "$T/rootdir-link.err"))" ||
	fail "root dir symlink: exit $rc: $(cat "$T/rootdir-link.err")"
rm -f "$T/nobodys/rngd-root"
as_nobody mkdir -m 777 "$T/nobodys/rngd-root"
RNGD_TEST_ROOT_DIR=$T/nobodys/rngd-root grant rootdir-theirs
[ "$rc" != 0 ] && said rootdir-theirs "not a directory of root's own" &&
	ok "a root directory of another user is not used" ||
	fail "root dir of nobody: exit $rc: $(cat "$T/rootdir-theirs.err")"

# ---- no configuration is read: a broken one, another status file, -c ----
for args in "-c $T/nonexistent.conf" "-c $T/broken.conf" "-O rngd:status-file:$T/elsewhere/s.json"; do
	printf '[rngd\nthis is not ini\n' >"$T/broken.conf"
	fake_sysfs 1000
	fresh_run
	rm -rf "$rootdir"
	grant conf-grant
	echo 0 >"$sys/rng_quality"
	as_nobody sh -c "printf 'backend=virtio_rng.0\\nquality=1000\\n' >'$run/kernel-hwrng.state'"
	# shellcheck disable=SC2086 # the words of args
	step conf "$ROOTTEST" $args --restore-kernel-hwrng
	[ "$rc" = 0 ] && [ "$(quality)" = 1000 ] && [ ! -e "$run/kernel-hwrng.state" ] &&
		ok "restore with '$args': rng_quality 1000 put back" ||
		fail "restore with '$args': exit $rc, rng_quality $(quality): $(cat "$T/conf.err")"
done

# ---- grant on a machine without hw_random: says so ----
rm -rf "$sys" && mkdir "$sys"
grant nohwrng
[ "$rc" = 0 ] && said nohwrng "nothing to grant" && said nohwrng "does not exist" &&
	ok "grant without hw_random: exit 0, says why ($(cat "$T/nohwrng.err"))" ||
	fail "grant without hw_random: exit $rc: $(cat "$T/nohwrng.err")"

# ---- the real hw_random (opt-in): sysfs checked for real, everything put back ----
real=/sys/class/misc/hw_random
if [ "${RNGD_TEST_REAL_SWITCH:-}" != 1 ]; then
	skip "the real hw_random: set RNGD_TEST_REAL_SWITCH=1"
elif [ ! -w "$real/rng_quality" ] || [ "$(cat $real/rng_current)" = none ]; then
	skip "the real hw_random: no current backend with rng_quality"
else
	hwrng_lock
	orig=$(cat $real/rng_quality) cur=$(cat $real/rng_current)
	sel=$(cat $real/rng_selected 2>/dev/null || echo 1)
	owner=$(stat -L -c '%u:%g:%a' $real/rng_quality)
	put_back_real() {
		[ "$(cat $real/rng_current)" = "$cur" ] || echo "$cur" >$real/rng_current
		[ "$sel" = 1 ] || echo "" >$real/rng_current
		[ "$(cat $real/rng_quality)" = "$orig" ] || echo "$orig" >$real/rng_quality
		chown "${owner%:*}" $real/rng_quality
		chmod "${owner##*:}" $real/rng_quality
	}
	trap 'put_back_real; cleanup' EXIT
	unset RNGD_TEST_SYSFS
	fresh_run
	rm -rf "$rootdir"
	grant real-grant
	[ "$rc" = 0 ] && [ "$(stat -L -c '%g:%a' $real/rng_quality)" = 65534:664 ] &&
		ok "real: grant gives rng_quality to group nogroup, 0664" ||
		fail "real grant: exit $rc, $(stat -L -c '%u:%g:%a' $real/rng_quality): $(cat "$T/real-grant.err")"
	echo 0 >$real/rng_quality # what the daemon's take-over does
	as_nobody sh -c "printf 'backend=%s\\nquality=1024\\nbackend=AAAAAAAA\\nquality=7\\n' '$cur' >'$run/kernel-hwrng.state'"
	restore real
	if [ "$rc" = 0 ] && [ "$(cat $real/rng_quality)" = "$orig" ] &&
		[ "$(cat $real/rng_current)" = "$cur" ] &&
		[ "$(cat $real/rng_selected 2>/dev/null || echo 1)" = "$sel" ] &&
		[ "$(stat -L -c '%u:%g:%a' $real/rng_quality)" = "$owner" ] && canaries_ok; then
		ok "real: restore puts back rng_quality $orig, $cur (selected $sel), owner and mode $owner"
	else
		fail "real restore: exit $rc, $(cat $real/rng_current) q=$(cat $real/rng_quality): $(cat "$T/real.err")"
	fi
	put_back_real
fi
canaries_ok && ok "canaries unchanged at the end" || fail "canaries changed"
finish
