/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Privilege drop with libcap-ng, verified afterwards (the OpenSSH habit: try to regain what
 * was given up; success is fatal). The daemon needs CAP_SYS_ADMIN only, for RNDADDENTROPY
 * and RNDRESEEDCRNG (random(4)); everything else is opened before the drop.
 */
#ifndef RNGD_PRIVS_H
#define RNGD_PRIVS_H

#include <stdint.h>
#include <sys/types.h>

/* The one capability kept: CAP_SYS_ADMIN (21), as a /proc/PID/status Cap* mask. */
#define PRIVS_KEPT_CAPS (UINT64_C(1) << 21)

/*
 * Resolve user (getpwnam) and group (getgrnam; NULL: the user's primary group) into ids,
 * e.g. to hand the status directory to the user before privs_drop(). Root is refused.
 * Logs one error line; 0, -ENOENT for an unknown name, -EINVAL for uid or gid 0.
 */
int privs_lookup(const char *user, const char *group, uid_t *ret_uid, gid_t *ret_gid);

/*
 * Drop privileges for good. Call after every device, sysfs file and MSR the daemon needs is
 * open (the fds stay usable), before any source thread starts (capabilities are per thread).
 *
 * user NULL: stay root (uid 0) but keep only CAP_SYS_ADMIN. Otherwise switch to user and to
 * group (NULL: the user's primary group), the only supplementary group being that group.
 * In both cases: effective and permitted sets = {CAP_SYS_ADMIN}, inheritable and ambient
 * sets empty, bounding set = {CAP_SYS_ADMIN}, no-new-privs set.
 *
 * Already running as a non-root uid (systemd User= with AmbientCapabilities=CAP_SYS_ADMIN):
 * no switch is possible or needed; if user names another uid it fails with -EPERM. The
 * capability sets are reduced as far as an unprivileged process can (the bounding set is
 * left to the unit's CapabilityBoundingSet=), and that is logged at debug level.
 *
 * Logs one error line naming the user/group and the reason, and returns -errno:
 * -ENOENT unknown user or group, -EPERM not permitted, others from the failing call.
 */
int privs_drop(const char *user, const char *group);

/*
 * Check the drop: setresuid(0,0,0) and setresgid(0,0,0) must fail when not root, raising
 * a dropped capability (CAP_SYS_RAWIO, CAP_SETUID) must fail, and /proc/self/status must
 * show CapEff and CapPrm within {CAP_SYS_ADMIN}, CapAmb 0, NoNewPrivs 1 (and CapBnd
 * {CAP_SYS_ADMIN} when privs_drop() could set it). Logs one error line and returns -EPERM
 * if anything was regained (the caller must exit), -errno if the check itself failed.
 */
int privs_verify(void);

#endif
