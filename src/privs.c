// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <cap-ng.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "privs.h"
#include "util.h"

static struct {
	bool dropped;		/* privs_drop() succeeded */
	bool switched;		/* it changed uid/gid to want_uid/want_gid */
	bool bounding_set;	/* it reduced the bounding set */
	uid_t want_uid;
	gid_t want_gid;
} last_drop;	/* what the last privs_drop() did, for privs_verify() */

/* "user 'rngd' group 'rngd'", "user 'rngd'" or "root" for messages. */
static const char *who(char *buf, size_t size, const char *user, const char *group)
{
	if (!user)
		snprintf(buf, size, "root");
	else if (group)
		snprintf(buf, size, "user '%s' group '%s'", user, group);
	else
		snprintf(buf, size, "user '%s'", user);
	return buf;
}

/* Log why the drop to user/group failed, once, and return r (-errno) for the caller. */
static int log_fail(const char *user, const char *group, int r, const char *reason)
{
	char w[192];

	log_error("cannot drop privileges to %s: %s: %s", who(w, sizeof(w), user, group), reason,
		  strerror(-r));
	return r;
}

/* getpwnam(3) leaves errno 0 or one of several values for "no such entry". */
static int lookup_errno(void)
{
	if (errno == 0 || errno == ENOENT || errno == ESRCH || errno == EBADF || errno == EPERM)
		return -ENOENT;
	return -errno;
}

/* A numeric id ("65534"), as rngd.conf(5) allows for user and group. */
static bool numeric_id(const char *s, uint64_t *ret)
{
	return parse_uint(s, 0, UINT32_MAX - 1, ret) == 0;
}

static int resolve(const char *user, const char *group, uid_t *ret_uid, gid_t *ret_gid)
{
	struct passwd *pw;
	struct group *gr;
	uint64_t id;
	gid_t gid;

	errno = 0;
	pw = getpwnam(user);
	if (pw) {
		*ret_uid = pw->pw_uid;
		gid = pw->pw_gid;
	} else {
		/* A uid without a passwd entry: its group is the same number unless given. */
		int e = lookup_errno();

		if (e != -ENOENT || !numeric_id(user, &id))
			return log_fail(user, group, e, "unknown user");
		*ret_uid = (uid_t)id;
		errno = 0;
		pw = getpwuid((uid_t)id);
		gid = pw ? pw->pw_gid : (gid_t)id;
	}
	if (group) {
		errno = 0;
		gr = getgrnam(group);
		if (gr) {
			gid = gr->gr_gid;
		} else {
			int e = lookup_errno();

			if (e != -ENOENT || !numeric_id(group, &id))
				return log_fail(user, group, e, "unknown group");
			gid = (gid_t)id;
		}
	}
	if (*ret_uid == 0 || gid == 0)
		return log_fail(user, group, -EINVAL,
				"uid and gid must not be 0 (omit the user to stay root)");
	*ret_gid = gid;
	return 0;
}

int privs_lookup(const char *user, const char *group, uid_t *ret_uid, gid_t *ret_gid)
{
	uid_t uid;
	gid_t gid;
	int r;

	r = resolve(user, group, &uid, &gid);
	if (r < 0)
		return r;
	*ret_uid = uid;
	*ret_gid = gid;
	return 0;
}

/* libcap-ng returns -1, -2, ... and leaves errno set by the failed syscall, if any. */
static int capng_errno(void)
{
	return errno > 0 ? -errno : -EPERM;
}

struct proc_status {
	uint64_t cap_inh, cap_prm, cap_eff, cap_bnd, cap_amb;
	unsigned long uid[4], gid[4];
	unsigned int nnp;
	unsigned int seen;
};

/* n numbers of base in v, separated by blanks, into out; true if there were n. */
static bool status_numbers(const char *v, int base, unsigned int n, uint64_t *out)
{
	for (unsigned int i = 0; i < n; i++) {
		char *end;

		while (*v == ' ' || *v == '\t')
			v++;
		if (!isxdigit((unsigned char)*v))
			return false;
		errno = 0;
		out[i] = strtoull(v, &end, base);
		if (errno || end == v)
			return false;
		v = end;
	}
	return true;
}

/* One "Key:\tvalue" line of /proc/self/status into ps, if it is one of the eight wanted. */
static void status_field(struct proc_status *ps, const char *key, const char *v)
{
	static const struct {
		const char *key;
		size_t off;
	} masks[] = {
		{ "CapInh", offsetof(struct proc_status, cap_inh) },
		{ "CapPrm", offsetof(struct proc_status, cap_prm) },
		{ "CapEff", offsetof(struct proc_status, cap_eff) },
		{ "CapBnd", offsetof(struct proc_status, cap_bnd) },
		{ "CapAmb", offsetof(struct proc_status, cap_amb) },
	};
	uint64_t ids[4];
	unsigned long *to = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(masks); i++)
		if (strcmp(key, masks[i].key) == 0) {
			if (status_numbers(v, 16, 1, (uint64_t *)((char *)ps + masks[i].off)))
				ps->seen++;
			return;
		}
	if (strcmp(key, "NoNewPrivs") == 0) {
		if (status_numbers(v, 10, 1, ids) && ids[0] <= 1) {
			ps->nnp = (unsigned int)ids[0];
			ps->seen++;
		}
		return;
	}
	if (strcmp(key, "Uid") == 0)
		to = ps->uid;
	else if (strcmp(key, "Gid") == 0)
		to = ps->gid;
	if (to && status_numbers(v, 10, 4, ids)) {
		for (int i = 0; i < 4; i++)
			to[i] = (unsigned long)ids[i];
		ps->seen++;
	}
}

static int read_proc_status(struct proc_status *ps)
{
	/*
	 * About 1.5 KiB, on the heap: an 8 KiB buffer on the stack made this the daemon's
	 * deepest call chain (2 more pages resident, bench/README.md, footprint). Only the keys
	 * wanted are parsed (sscanf() on each line was half of the instructions rngd ran up to
	 * its first injection).
	 */
	char *buf, *line, *next;
	ssize_t n = read_text_alloc("/proc/self/status", 65536, &buf);

	if (n < 0)
		return (int)n;
	memset(ps, 0, sizeof(*ps));
	for (line = buf; line; line = next) {
		char *colon;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		colon = strchr(line, ':');
		if (colon) {
			*colon = '\0';
			status_field(ps, line, colon + 1);
		}
	}
	free(buf);
	/* CapAmb and NoNewPrivs exist since Linux 4.3 / 4.10; all eight are needed here. */
	return ps->seen == 8 ? 0 : -EPROTO;
}

/*
 * Effective and permitted = {CAP_SYS_ADMIN} if have_admin, else empty; inheritable empty.
 * ps: the process's status read since its capabilities last changed, or NULL.
 */
static int set_caps(bool have_admin, const struct proc_status *ps)
{
	uint64_t want = have_admin ? PRIVS_KEPT_CAPS : 0;

	/*
	 * Nothing to do (a root service with CapabilityBoundingSet=CAP_SYS_ADMIN): skip capset(),
	 * which the unit's SystemCallFilter=~@privileged may forbid.
	 */
	if (ps && ps->cap_eff == want && ps->cap_prm == want && !ps->cap_inh)
		return 0;
	capng_clear(CAPNG_SELECT_CAPS);
	if (have_admin &&
	    capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_SYS_ADMIN) < 0)
		return -EINVAL;
	errno = 0;
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return capng_errno();
	return 0;
}

/*
 * Every capability of bounding (the bounding set read from /proc) but CAP_SYS_ADMIN out of
 * the bounding set: prctl(PR_CAPBSET_DROP) one by one, as libcap-ng would, without its
 * four re-reads of /proc/PID/status. Needs CAP_SETPCAP (EPERM without it).
 */
static int drop_bounding_set(uint64_t bounding)
{
	for (unsigned int cap = 0; cap < 64; cap++) {
		if (!(bounding & (UINT64_C(1) << cap)) || cap == CAP_SYS_ADMIN)
			continue;
		if (prctl(PR_CAPBSET_DROP, (unsigned long)cap, 0, 0, 0) < 0)
			return -errno;
	}
	return 0;
}

static int clear_ambient(void)
{
	/* PR_CAP_AMBIENT exists since Linux 4.3; without it there is no ambient set. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	return 0;
}

static int set_no_new_privs(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* Started as a non-root uid: keep at most CAP_SYS_ADMIN, switch nothing. */
static int drop_unprivileged(const char *user, const char *group)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	struct proc_status ps;
	bool have_admin;
	int r;

	if (user) {
		uid_t want_uid;
		gid_t want_gid;

		r = resolve(user, group, &want_uid, &want_gid);
		if (r < 0)
			return r;
		/*
		 * Not root already (systemd's User=, with rng-tools' arguments that still say
		 * -D daemon:daemon): what -D is for, not running as root, is done; another
		 * user cannot be switched to, so this one stays.
		 */
		if (want_uid != uid || want_gid != gid)
			log_warning("-D %s%s%s: already running as uid %u gid %u, not root (the "
				    "service's User=?): staying so, ignoring",
				    user, group ? ":" : "", group ? group : "", (unsigned int)uid,
				    (unsigned int)gid);
	}
	r = read_proc_status(&ps);
	if (r < 0)
		return log_fail(user, group, r, "cannot read /proc/self/status");
	have_admin = ps.cap_prm & PRIVS_KEPT_CAPS;
	r = set_caps(have_admin, &ps);
	if (r < 0)
		return log_fail(user, group, r, "cannot reduce capabilities");
	r = clear_ambient();
	if (r < 0)
		return log_fail(user, group, r, "cannot clear the ambient capability set");
	r = set_no_new_privs();
	if (r < 0)
		return log_fail(user, group, r, "cannot set no-new-privs");
	log_debug("already running as uid %u gid %u (systemd User= with AmbientCapabilities=?), "
		  "not switching user; kept %s", (unsigned int)uid, (unsigned int)gid,
		  have_admin ? "CAP_SYS_ADMIN only" : "no capability (CAP_SYS_ADMIN missing)");
	last_drop.dropped = true;
	last_drop.switched = false;
	last_drop.bounding_set = false;
	return 0;
}

int privs_drop(const char *user, const char *group)
{
	struct proc_status ps;
	uid_t uid = 0;
	gid_t gid = 0;
	int r;

	memset(&last_drop, 0, sizeof(last_drop));
	if (geteuid() != 0)
		return drop_unprivileged(user, group);

	if (user) {
		r = resolve(user, group, &uid, &gid);
		if (r < 0)
			return r;
	}

	/*
	 * The bounding set first: dropping from it needs CAP_SETPCAP, which goes next. Skipped
	 * when already reduced (CapabilityBoundingSet=CAP_SYS_ADMIN, no CAP_SETPCAP left).
	 */
	r = read_proc_status(&ps);
	if (r < 0)
		return log_fail(user, group, r, "cannot read /proc/self/status");
	if (ps.cap_bnd & ~PRIVS_KEPT_CAPS) {
		r = drop_bounding_set(ps.cap_bnd);
		if (r < 0)
			return log_fail(user, group, r, "cannot reduce the bounding set");
	}
	r = clear_ambient();
	if (r < 0)
		return log_fail(user, group, r, "cannot clear the ambient capability set");

	if (user) {
		/*
		 * Keep the permitted set across the uid change (prctl(2) PR_SET_KEEPCAPS);
		 * setresuid() from 0 to non-zero clears it otherwise (capabilities(7)).
		 */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			return log_fail(user, group, -errno, "cannot set keep-capabilities");
		if (setgroups(1, &gid) < 0)
			return log_fail(user, group, -errno, "cannot set supplementary groups");
		if (setresgid(gid, gid, gid) < 0)
			return log_fail(user, group, -errno, "cannot change gid");
		if (setresuid(uid, uid, uid) < 0)
			return log_fail(user, group, -errno, "cannot change uid");
		if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
			return log_fail(user, group, -errno, "cannot clear keep-capabilities");
	}

	/*
	 * Keep CAP_SYS_ADMIN only when there is one to keep: root in a container may lack it,
	 * and test mode and outputs need none (feeding the kernel was refused before this).
	 * The uid change may have changed the sets (read again); the bounding set's drop did not.
	 */
	if (user && read_proc_status(&ps) < 0)
		r = set_caps(true, NULL);
	else
		r = set_caps(ps.cap_prm & PRIVS_KEPT_CAPS, &ps);
	if (r < 0)
		return log_fail(user, group, r, "cannot reduce capabilities to CAP_SYS_ADMIN");
	r = set_no_new_privs();
	if (r < 0)
		return log_fail(user, group, r, "cannot set no-new-privs");

	last_drop.dropped = true;
	last_drop.switched = user != NULL;
	last_drop.bounding_set = true;
	last_drop.want_uid = uid;
	last_drop.want_gid = gid;
	return 0;
}

static int regained(const char *what)
{
	log_error("privilege drop did not hold: %s", what);
	return -EPERM;
}

/*
 * libcap-ng's copy of the capability sets from ps (what capng_get_caps_process() would read
 * with capget(), without its sscanf() of /proc/self/status for the bounding and ambient
 * sets, not used here: that fault brought in 64 KiB of libc's scanf code for one call).
 */
static int caps_from_status(const struct proc_status *ps)
{
	capng_clear(CAPNG_SELECT_CAPS);
	for (unsigned int cap = 0; cap < 64; cap++) {
		int type = (ps->cap_eff >> cap & 1 ? CAPNG_EFFECTIVE : 0) |
			   (ps->cap_prm >> cap & 1 ? CAPNG_PERMITTED : 0) |
			   (ps->cap_inh >> cap & 1 ? CAPNG_INHERITABLE : 0);

		if (type && capng_update(CAPNG_ADD, (capng_type_t)type, cap) < 0)
			return -EPERM;
	}
	return 0;
}

/*
 * Try to add cap to the effective and permitted sets; true if the kernel allowed it. The
 * caller has loaded libcap-ng's copy of the process's capabilities (caps_from_status());
 * the copy is put back as it was when the kernel refused.
 */
static bool can_raise(unsigned int cap)
{
	if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, cap) < 0)
		return false;
	if (capng_apply(CAPNG_SELECT_CAPS) == 0)
		return true;
	capng_update(CAPNG_DROP, CAPNG_EFFECTIVE | CAPNG_PERMITTED, cap);
	return false;
}

static bool all_equal(const unsigned long v[4], unsigned long want)
{
	return v[0] == want && v[1] == want && v[2] == want && v[3] == want;
}

int privs_verify(void)
{
	struct proc_status ps;
	int r;

	if (getuid() != 0 || geteuid() != 0) {
		if (setresuid(0, 0, 0) == 0)
			return regained("setresuid(0, 0, 0) succeeded");
		if (setresgid(0, 0, 0) == 0)
			return regained("setresgid(0, 0, 0) succeeded");
		if (setgroups(0, NULL) == 0)
			return regained("setgroups() succeeded");
	}
	r = read_proc_status(&ps);
	if (r < 0) {
		log_error("cannot verify the privilege drop: /proc/self/status: %s", strerror(-r));
		return r;
	}
	if (caps_from_status(&ps) < 0) {
		log_error("cannot verify the privilege drop: cannot read capabilities");
		return -EPERM;
	}
	/* A raise the kernel refused changed nothing: ps still says what the process has. */
	if (can_raise(CAP_SYS_RAWIO))
		return regained("CAP_SYS_RAWIO could be raised");
	if (can_raise(CAP_SETUID))
		return regained("CAP_SETUID could be raised");
	if (last_drop.bounding_set && prctl(PR_CAPBSET_READ, CAP_SYS_RAWIO, 0, 0, 0) != 0)
		return regained("CAP_SYS_RAWIO is still in the bounding set");
	if ((ps.cap_eff | ps.cap_prm) & ~PRIVS_KEPT_CAPS)
		return regained("capabilities other than CAP_SYS_ADMIN remain");
	if (ps.cap_inh || ps.cap_amb)
		return regained("inheritable or ambient capabilities remain");
	if (last_drop.bounding_set && (ps.cap_bnd & ~PRIVS_KEPT_CAPS))
		return regained("the bounding set holds more than CAP_SYS_ADMIN");
	if (ps.nnp != 1)
		return regained("no-new-privs is not set");
	if (last_drop.switched &&
	    (!all_equal(ps.uid, last_drop.want_uid) || !all_equal(ps.gid, last_drop.want_gid)))
		return regained("uid or gid is not the target one");
	return 0;
}
