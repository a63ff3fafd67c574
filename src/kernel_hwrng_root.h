/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Root's steps around the unprivileged daemon (the unit's ExecStartPre=+ and ExecStopPost=+,
 * an init script's stop; rngd(8), SECURITY). A privilege boundary: a fixed list of operations
 * on fixed paths. The hw_random class in sysfs is opened without following symlinks and only
 * used when it is on sysfs; root's record of what it changed lives in a directory of its own
 * (RUNSTATEDIR/rngd-root, 0700); the daemon's runtime directory (user rngd's) is read only as
 * data: its state file names backends and qualities, each checked (listed in rng_available,
 * 0..1024, never above what root recorded), never a path, an owner or a mode.
 */
#ifndef RNGD_KERNEL_HWRNG_ROOT_H
#define RNGD_KERNEL_HWRNG_ROOT_H

#include <stddef.h>
#include <sys/types.h>

/* Root's record, in kernel_hwrng_root_dir(). */
#define KERNEL_HWRNG_ROOT_RECORD "kernel-hwrng.grant"

/*
 * --grant-kernel-hwrng: record (once, until restored) rng_quality's owner and mode, the
 * current backend, its quality and rng_selected in root's directory; then let group gid
 * write rng_quality (0664). 0 when granted, 1 when there is nothing to grant (no hw_random
 * in sysfs: why says so), -errno with why.
 */
int kernel_hwrng_root_grant(gid_t gid, char *why, size_t len);

/*
 * --restore-kernel-hwrng: put back the quality of every backend the daemon's state file
 * names (checked, capped by root's record; from root's record alone when the state file is
 * refused), the administrator's choice of backend, and rng_quality's owner and mode from
 * root's record; remove both files. Reads no configuration. Logs one line for each thing
 * done or refused. 0 when done (or nothing to do), -EBADMSG when something was refused
 * (the rest was still done), another -errno when sysfs could not be written.
 */
int kernel_hwrng_root_restore(void);

#endif
