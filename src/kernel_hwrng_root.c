// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Root's steps for kernel-hwrng = take-over (kernel_hwrng_root.h; rngd(8), SECURITY).
 *
 * Threat: user rngd (the daemon after a memory-safety bug) owns the runtime directory and can
 * put anything in it at any time: symlinks, hard links, FIFOs, directories, huge or empty
 * files, any text. Root therefore:
 *  - touches only the fixed hw_random directory in sysfs, each attribute opened O_NOFOLLOW and
 *    used only when fstatfs() says sysfs; owner and mode change through that fd (fchown,
 *    fchmod), to values from root's own record;
 *  - keeps its record in RUNSTATEDIR/rngd-root (0700, root's), written O_EXCL|O_NOFOLLOW and
 *    renamed into place;
 *  - reads the daemon's state file as data (kernel_hwrng_read_small(): no symlink, no FIFO,
 *    regular, < 4 KiB), each backend checked against rng_available and each quality capped
 *    by what root recorded before the daemon ran: a planted file can at most ask root to put
 *    back what the kernel had, or less.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_hwrng_root.h"
#include "kernel_hwrng_state.h"
#include "log.h"
#include "sysfs.h"
#include "util.h"

#define WHO "kernel-hwrng"
#define LIST_SIZE 1024
#define RECORD_SIZE_MAX 1024
/* The kernel's sysfs attributes are root's, 0644 (kernfs default for a DEVICE_ATTR_RW). */
#define MODE_MASK 0777

struct record {
	char backend[KERNEL_HWRNG_NAME_SIZE]; /* current at the grant; "" for none */
	bool has_quality;		      /* a backend was current: quality is its rng_quality */
	unsigned int quality;
	bool selected; /* rng_selected was 1: the administrator chose backend */
	uid_t uid;     /* rng_quality's owner, group and mode before the grant */
	gid_t gid;
	mode_t mode;
};

/* ---- sysfs, by the fixed path, checked ---- */

static int attr_read(const char *attr, char *buf, size_t size)
{
	int fd = sysfs_open_checked(kernel_hwrng_sysfs_dir(), attr, O_RDONLY), r;

	if (fd < 0)
		return fd;
	r = sysfs_fd_read(fd, buf, size);
	close(fd);
	return r;
}

static int attr_write(const char *attr, const char *value)
{
	int fd = sysfs_open_checked(kernel_hwrng_sysfs_dir(), attr, O_WRONLY), r;

	if (fd < 0)
		return fd;
	r = sysfs_fd_write(fd, value);
	close(fd);
	return r;
}

/* The current backend, "" for none. */
static int current_read(char *buf, size_t size)
{
	int r = attr_read("rng_current", buf, size);

	if (r >= 0 && sysfs_is_none(buf))
		buf[0] = '\0';
	return r;
}

static int quality_read(unsigned int *q)
{
	char buf[16];
	int r = attr_read("rng_quality", buf, sizeof(buf));

	return r < 0 ? r : sysfs_parse_quality(buf, q);
}

/* rng_selected: 1 (chosen by the administrator), 0 (automatic), -errno (before 6.3: absent). */
static int selected_read(void)
{
	char buf[8];
	int r = attr_read("rng_selected", buf, sizeof(buf));

	return r < 0 ? r : strcmp(buf, "1") == 0;
}

static const char *open_error(int r)
{
	return r == -ELOOP ? "a symlink (not followed)"
	       : r == -EXDEV ? "not on sysfs"
	       : r == -EINVAL ? "not a regular file"
			      : strerror(-r);
}

/* ---- root's directory and record ---- */

/*
 * Root's directory, made (0700) when create and missing. Used only when it is a directory of
 * this user's own that no one else may enter. fd or -errno (why).
 */
static int root_dir_open(bool create, char *why, size_t len)
{
	const char *path = kernel_hwrng_root_dir();
	struct stat st;
	int fd;

	if (create && mkdir(path, 0700) < 0 && errno != EEXIST) {
		snprintf(why, len, "cannot make %s: %s", path, strerror(errno));
		return -errno;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int r = -errno;

		snprintf(why, len, "%s: %s", path,
			 r == -ELOOP || r == -ENOTDIR ? "not a directory (not followed)"
						       : strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		snprintf(why, len, "%s is not a directory of root's own with mode 0700: not used",
			 path);
		close(fd);
		return -EPERM;
	}
	return fd;
}

static int record_parse(const char *text, size_t len, struct record *rec)
{
	char key[16], value[KERNEL_HWRNG_NAME_SIZE];
	unsigned int seen = 0;
	size_t pos = 0;
	uint64_t v;
	int r;

	memset(rec, 0, sizeof(*rec));
	while ((r = kernel_hwrng_kv_next(text, len, &pos, key, sizeof(key), value,
					 sizeof(value))) > 0) {
		if (strcmp(key, "backend") == 0) {
			if (value[0] && !kernel_hwrng_name_valid(value))
				return -EBADMSG;
			snprintf(rec->backend, sizeof(rec->backend), "%s", value);
			seen |= 1;
		} else if (strcmp(key, "quality") == 0) {
			rec->has_quality = value[0] != '\0';
			if (rec->has_quality && sysfs_parse_quality(value, &rec->quality) < 0)
				return -EBADMSG;
			seen |= 2;
		} else if (strcmp(key, "selected") == 0 && parse_uint(value, 0, 1, &v) == 0) {
			rec->selected = v == 1;
			seen |= 4;
		} else if (strcmp(key, "uid") == 0 && parse_uint(value, 0, UINT32_MAX - 1, &v) == 0) {
			rec->uid = (uid_t)v;
			seen |= 8;
		} else if (strcmp(key, "gid") == 0 && parse_uint(value, 0, UINT32_MAX - 1, &v) == 0) {
			rec->gid = (gid_t)v;
			seen |= 16;
		} else if (strcmp(key, "mode") == 0 && strspn(value, "01234567") == strlen(value) &&
			   value[0] && strlen(value) <= 4) {
			rec->mode = (mode_t)strtoul(value, NULL, 8) & MODE_MASK;
			seen |= 32;
		} else {
			return -EBADMSG;
		}
	}
	return r < 0 || seen != 63 ? -EBADMSG : 0;
}

/* Root's record from dfd. 0, -ENOENT, or -errno. */
static int record_read(int dfd, struct record *rec)
{
	char text[RECORD_SIZE_MAX];
	struct stat st;
	int n = kernel_hwrng_read_small(dfd, KERNEL_HWRNG_ROOT_RECORD, text, sizeof(text), &st);

	if (n < 0)
		return n;
	if (st.st_uid != geteuid())
		return -EPERM;
	return record_parse(text, (size_t)n, rec);
}

static int record_write(int dfd, const struct record *rec)
{
	static const char tmp[] = KERNEL_HWRNG_ROOT_RECORD ".tmp";
	char text[RECORD_SIZE_MAX], q[16] = "";
	int fd, n, r;

	if (rec->has_quality)
		snprintf(q, sizeof(q), "%u", rec->quality);
	n = snprintf(text, sizeof(text), "backend=%s\nquality=%s\nselected=%d\nuid=%u\ngid=%u\n"
		     "mode=%o\n", rec->backend, q, rec->selected, (unsigned int)rec->uid,
		     (unsigned int)rec->gid, (unsigned int)rec->mode);
	(void)unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = write_full(fd, text, (size_t)n);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, KERNEL_HWRNG_ROOT_RECORD) < 0)
		r = -errno;
	if (r < 0)
		(void)unlinkat(dfd, tmp, 0);
	return r;
}

/* ---- --grant-kernel-hwrng ---- */

/* What the kernel has now, through the open rng_quality fd qfd. */
static void record_now(int qfd, const struct stat *st, struct record *rec)
{
	char buf[16];
	int sel;

	memset(rec, 0, sizeof(*rec));
	rec->uid = st->st_uid;
	rec->gid = st->st_gid;
	rec->mode = st->st_mode & MODE_MASK;
	if (current_read(rec->backend, sizeof(rec->backend)) < 0 ||
	    (rec->backend[0] && !kernel_hwrng_name_valid(rec->backend)))
		rec->backend[0] = '\0';
	/* ENODEV without a current backend: no quality to remember. */
	rec->has_quality = rec->backend[0] && sysfs_fd_read(qfd, buf, sizeof(buf)) >= 0 &&
			   sysfs_parse_quality(buf, &rec->quality) == 0;
	sel = selected_read();
	rec->selected = sel == 1 && rec->backend[0];
}

int kernel_hwrng_root_grant(gid_t gid, char *why, size_t len)
{
	const char *dir = kernel_hwrng_sysfs_dir();
	struct record rec;
	struct stat st;
	int qfd, dfd, r;

	qfd = sysfs_open_checked(dir, "rng_quality", O_RDONLY);
	if (qfd == -ENOENT) {
		snprintf(why, len,
			 "%s/rng_quality does not exist (no hw_random driver, or a kernel before "
			 "5.18): nothing to grant; kernel-hwrng acts as leave",
			 dir);
		return 1;
	}
	if (qfd < 0) {
		snprintf(why, len, "%s/rng_quality: %s: not granted", dir, open_error(qfd));
		return qfd;
	}
	dfd = root_dir_open(true, why, len);
	if (dfd < 0) {
		close(qfd);
		return dfd;
	}
	r = record_read(dfd, &rec);
	/* A record that no restore took back (a restore that could not run) keeps the original. */
	if (r < 0) {
		if (fstat(qfd, &st) < 0) {
			r = -errno;
			snprintf(why, len, "%s/rng_quality: %s", dir, strerror(-r));
			goto out;
		}
		record_now(qfd, &st, &rec);
		r = record_write(dfd, &rec);
		if (r < 0) {
			snprintf(why, len, "cannot write %s/%s: %s", kernel_hwrng_root_dir(),
				 KERNEL_HWRNG_ROOT_RECORD, strerror(-r));
			goto out;
		}
	}
	if (fchown(qfd, (uid_t)-1, gid) < 0 || fchmod(qfd, 0664) < 0) {
		r = -errno;
		snprintf(why, len, "cannot give %s/rng_quality to group %u: %s", dir,
			 (unsigned int)gid, strerror(-r));
		goto out;
	}
	r = 0;
out:
	close(dfd);
	close(qfd);
	return r;
}

/* ---- --restore-kernel-hwrng ---- */

/*
 * Put quality back on backend (made current for the write when it is not). Only a backend
 * listed in rng_available, only when it reads 0 (what the daemon wrote). 1 when written,
 * 0 when skipped (logged), -errno (logged).
 */
static int put_back(const struct kernel_hwrng_saved *s, unsigned int cap, const char *why_cap)
{
	char list[LIST_SIZE], cur[KERNEL_HWRNG_NAME_SIZE], qs[16];
	unsigned int q = s->quality < cap ? s->quality : cap, now;
	int r;

	if (attr_read("rng_available", list, sizeof(list)) < 0 ||
	    !sysfs_list_has(list, s->backend)) {
		log_notice(WHO ": %s is not in rng_available (gone, or no backend of this "
			   "machine): nothing put back; a backend that registers again gets its "
			   "driver's quality",
			   s->backend);
		return 0;
	}
	r = current_read(cur, sizeof(cur));
	if (r >= 0 && strcmp(cur, s->backend) != 0) {
		r = attr_write("rng_current", s->backend);
		if (r >= 0)
			r = current_read(cur, sizeof(cur));
		if (r >= 0 && strcmp(cur, s->backend) != 0)
			r = -EAGAIN;
	}
	if (r < 0) {
		log_warning(WHO ": cannot make %s current to put its rng_quality back: %s",
			    s->backend, strerror(-r));
		return r;
	}
	if (quality_read(&now) == 0 && now != 0) {
		log_notice(WHO ": rng_quality of %s is %u now, not the 0 the daemon wrote: "
			   "left as it is",
			   s->backend, now);
		return 0;
	}
	if (q == 0) {
		log_notice(WHO ": %s: not put back: %s; left at 0", s->backend,
			   s->quality == 0 ? "its quality was 0" : why_cap);
		return 0;
	}
	snprintf(qs, sizeof(qs), "%u", q);
	r = attr_write("rng_quality", qs);
	if (r < 0) {
		log_warning(WHO ": cannot write %u to rng_quality of %s: %s", q, s->backend,
			    strerror(-r));
		return r;
	}
	if (q < s->quality)
		log_notice(WHO ": %s: rng_quality %u put back (the state file said %u; %s)",
			   s->backend, q, s->quality, why_cap);
	else
		log_notice(WHO ": %s: rng_quality %u put back", s->backend, q);
	return 1;
}

/*
 * The daemon's state file, as data: entries into *st (none when absent or refused). true
 * when it was refused (said why).
 */
static bool state_load(int run_fd, bool have_record, struct kernel_hwrng_state *st)
{
	const char *dir = kernel_hwrng_runtime_dir();
	char why[256];
	struct stat sb;
	int r;

	memset(st, 0, sizeof(*st));
	if (run_fd < 0)
		return false;
	r = kernel_hwrng_state_read(run_fd, KERNEL_HWRNG_STATE_NAME, st, &sb, why, sizeof(why));
	if (r == -ENOENT)
		return false;
	if (r < 0) {
		log_warning(WHO ": %s/%s refused: %s; %s", dir, KERNEL_HWRNG_STATE_NAME,
			    r == -EBADMSG ? why : kernel_hwrng_read_error(r),
			    have_record ? "restoring from root's own record"
					: "no record of --grant-kernel-hwrng either: nothing put back");
		memset(st, 0, sizeof(*st));
		return true;
	}
	/*
	 * Without root's record there is nothing to cap a quality by: trust only a file that
	 * root wrote (a daemon that took over while it was root: an init script's -D, or no
	 * drop). User rngd can rename such a file but not make one, nor change its text; a
	 * hard link to another of root's files would have a second link.
	 */
	if (!have_record && (sb.st_uid != 0 || sb.st_nlink != 1 || (sb.st_mode & 022))) {
		log_warning(WHO ": %s/%s refused: written by uid %u (or linked from elsewhere), "
			    "and no record of --grant-kernel-hwrng in %s to check it by",
			    dir, KERNEL_HWRNG_STATE_NAME, (unsigned int)sb.st_uid,
			    kernel_hwrng_root_dir());
		memset(st, 0, sizeof(*st));
		return true;
	}
	return false;
}

/* Put back the owner and mode that the grant changed, from root's record. */
static int ungrant(const struct record *rec)
{
	const char *dir = kernel_hwrng_sysfs_dir();
	int fd = sysfs_open_checked(dir, "rng_quality", O_RDONLY), r = 0;

	if (fd == -ENOENT)
		return 0; /* the hw_random class is gone: its next files are the kernel's */
	if (fd < 0) {
		log_warning(WHO ": %s/rng_quality: %s: owner and mode not put back", dir,
			    open_error(fd));
		return fd;
	}
	if (fchown(fd, rec->uid, rec->gid) < 0 || fchmod(fd, rec->mode) < 0) {
		r = -errno;
		log_warning(WHO ": cannot put back the owner and mode of %s/rng_quality: %s", dir,
			    strerror(-r));
	}
	close(fd);
	return r;
}

int kernel_hwrng_root_restore(void)
{
	char why[256], cur0[KERNEL_HWRNG_NAME_SIZE] = "", list[LIST_SIZE] = "";
	struct kernel_hwrng_state st;
	struct record rec;
	bool have_record = false, refused = false, changed = false;
	unsigned int cap = 1024;
	const char *why_cap = "";
	int root_fd, run_fd, sel0, r, ret = 0;

	root_fd = root_dir_open(false, why, sizeof(why));
	if (root_fd >= 0) {
		r = record_read(root_fd, &rec);
		have_record = r == 0;
		if (r < 0 && r != -ENOENT) {
			log_warning(WHO ": %s/%s: %s, ignoring", kernel_hwrng_root_dir(),
				    KERNEL_HWRNG_ROOT_RECORD,
				    r == -EBADMSG ? "malformed" : kernel_hwrng_read_error(r));
			refused = true;
		}
	} else if (root_fd != -ENOENT) {
		log_warning(WHO ": %s", why);
		refused = true;
	}
	if (have_record) {
		cap = rec.has_quality ? rec.quality : 0;
		snprintf(why, sizeof(why), "capped at %u, %s's rng_quality before rngd started",
			 cap, rec.backend[0] ? rec.backend : "no backend");
		why_cap = why;
	}

	run_fd = open(kernel_hwrng_runtime_dir(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	refused |= state_load(run_fd, have_record, &st);
	if (run_fd >= 0) {
		/* Names in the daemon's directory: unlinkat() removes the entry, follows nothing. */
		(void)unlinkat(run_fd, KERNEL_HWRNG_STATE_NAME, 0);
		(void)unlinkat(run_fd, KERNEL_HWRNG_ROOT_RECORD, 0); /* rngd before 2026-12 */
		close(run_fd);
	}
	/* A refused state file: what root saw at the grant is what it can put back. */
	if (refused && have_record && rec.backend[0] && rec.has_quality)
		(void)kernel_hwrng_state_add(&st, rec.backend, rec.quality);

	r = current_read(cur0, sizeof(cur0));
	if (r == -ENOENT) {
		if (st.n > 0 || have_record)
			log_notice(WHO ": %s has no hw_random class now: nothing to put back",
				   kernel_hwrng_sysfs_dir());
		st.n = 0;
		have_record = false;
	} else if (r < 0 && st.n > 0) {
		log_warning(WHO ": %s/rng_current: %s", kernel_hwrng_sysfs_dir(), open_error(r));
		ret = r;
		st.n = 0;
	}
	sel0 = selected_read();
	for (size_t i = 0; i < st.n; i++) {
		r = put_back(&st.saved[i], cap, why_cap);
		changed = true; /* rng_current may have been written even when skipped */
		if (r < 0)
			ret = r;
	}
	/* The administrator's choice of backend: as before (a write to rng_quality clears it). */
	if (have_record && rec.selected && sel0 == 0 &&
	    attr_read("rng_available", list, sizeof(list)) >= 0 &&
	    sysfs_list_has(list, rec.backend)) {
		if (attr_write("rng_current", rec.backend) == 0)
			log_notice(WHO ": %s selected again (the administrator's choice before rngd "
				   "started)", rec.backend);
	} else if (changed) {
		char now[KERNEL_HWRNG_NAME_SIZE] = "";

		if (current_read(now, sizeof(now)) < 0 || strcmp(now, cur0) != 0 || sel0 == 1)
			(void)attr_write("rng_current", sel0 == 0 ? "" : cur0[0] ? cur0 : "none");
	}
	if (have_record && ungrant(&rec) == 0)
		log_notice(WHO ": owner and mode of rng_quality put back (%u:%u, %o)",
			   (unsigned int)rec.uid, (unsigned int)rec.gid, (unsigned int)rec.mode);
	if (root_fd >= 0) {
		if (ret == 0 && unlinkat(root_fd, KERNEL_HWRNG_ROOT_RECORD, 0) == 0)
			(void)rmdir(kernel_hwrng_root_dir()); /* empty now; a symlink is not removed */
		close(root_fd);
	}
	return ret < 0 ? ret : refused ? -EBADMSG : 0;
}
