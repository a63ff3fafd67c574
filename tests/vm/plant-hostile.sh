#!/bin/sh
# The VM test's stand-in for a compromised daemon (tests/vm/guest-check.sh, hostile_checks):
# run as the unit's User=rngd, inside its sandbox, from a drop-in's ExecStopPost= placed
# before root's `rngd --restore-kernel-hwrng`, it plants hostile content in the runtime
# directory that user rngd owns: round 1, a grant file and a state file naming another
# directory (whose attributes are symlinks to root's files), an owner, a mode and a planted
# backend (the proofs of concept of issue 18); round 2, the state file a symlink to
# /etc/shadow, the grant file a FIFO. The round is the first argument.
cd /run/rngd || exit 0
rm -rf kernel-hwrng.state kernel-hwrng.grant x
case ${1:-1} in
1)
	mkdir x
	ln -s /etc/shadow x/rng_quality
	ln -s /root/vmtest-victim x/rng_current
	echo 'AAAAAAAAAAAAAAAAAAAAAAAA b' >x/rng_available
	printf 'sysfs=/run/rngd/x\nuid=%s\ngid=%s\nmode=4777\n' "$(id -u)" "$(id -g)" \
		>kernel-hwrng.grant
	printf 'sysfs=/run/rngd/x\nbackend=AAAAAAAAAAAAAAAAAAAAAAAA\nquality=1024\n' \
		>kernel-hwrng.state
	;;
2)
	ln -s /etc/shadow kernel-hwrng.state
	mkfifo kernel-hwrng.grant 2>/dev/null || ln -s /root/vmtest-victim kernel-hwrng.grant
	;;
esac
echo "plant-hostile: round ${1:-1} as $(id -un): $(ls -l /run/rngd | tr '\n' '|')"
exit 0
