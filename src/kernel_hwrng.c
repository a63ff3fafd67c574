// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kernel-hwrng: the trust of the kernel's own hwrng thread (kernel_hwrng.h).
 *
 * Kernel facts this relies on (drivers/char/hw_random/core.c, 6.1 to 6.18; see
 * kernel-interfaces.md §1.7, §2.2):
 *  - rng_quality reads and writes the quality of the *current* backend; a write needs at
 *    least 2 bytes ("0\n"), takes 0..1024, and then re-runs enable_best_rng(), which makes
 *    the registered backend of highest quality current and clears rng_selected. With two
 *    backends, writing 0 to the current one can switch to the other: re-read rng_current.
 *  - hwrng_register() sets a backend's quality from its driver (6.2+: min(default_quality,
 *    driver's or 1024); 6.1: the driver's, virtio 1000): a backend that goes away and comes
 *    back (module reload, resume) is credited by the kernel again; the tick re-takes it.
 *  - hwrng_fillfn credits each 64-byte chunk at the current quality; at 0 it mixes one
 *    uncredited chunk per reseed interval (6.1+), before 6.1 the thread does not run at 0.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel_hwrng.h"
#include "kernel_hwrng_state.h"
#include "log.h"
#include "source.h"
#include "sysfs.h"
#include "util.h"

#define WHO "kernel-hwrng"

int kernel_hwrng_mode_parse(const char *s, enum kernel_hwrng_mode *ret)
{
	static const char *const names[] = { "take-over", "leave", "watch" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (s && strcmp(s, names[i]) == 0) {
			*ret = (enum kernel_hwrng_mode)i;
			return 0;
		}
	}
	return -EINVAL;
}

void kernel_hwrng_init(struct kernel_hwrng *kh)
{
	memset(kh, 0, sizeof(*kh));
	kh->mode = KERNEL_HWRNG_LEAVE;
	kh->fd = -1;
}

/* ---- sysfs ---- */

static int quality_read(const char *dir, unsigned int *q)
{
	char buf[16];
	int r = sysfs_read(dir, "rng_quality", buf, sizeof(buf));

	return r < 0 ? r : sysfs_parse_quality(buf, q);
}

/* Through fd when open (kept across the privilege drop), else by path. "N\n": 2+ bytes. */
static int quality_write(const char *dir, int fd, unsigned int q)
{
	char buf[16];
	int n;
	ssize_t w;

	if (fd < 0) {
		snprintf(buf, sizeof(buf), "%u", q);
		return sysfs_write(dir, "rng_quality", buf); /* adds the newline */
	}
	n = snprintf(buf, sizeof(buf), "%u\n", q);
	w = pwrite(fd, buf, (size_t)n, 0);
	return w == n ? 0 : w < 0 ? -errno : -EIO;
}

/* The current backend's name, "" when there is none ("none" or empty, §2.2). */
static int current_read(const char *dir, char *buf, size_t size)
{
	int r = sysfs_read(dir, "rng_current", buf, size);

	if (r >= 0 && sysfs_is_none(buf))
		buf[0] = '\0';
	return r;
}

static bool available(const char *dir, const char *name)
{
	char list[1024];

	return sysfs_read(dir, "rng_available", list, sizeof(list)) >= 0 &&
	       sysfs_list_has(list, name);
}

/*
 * Put quality q back on backend. When another backend is current now (switched by
 * someone), backend is made current for the write and the other one put back after it
 * (needs root: rng_current). 1 when written, 0 when skipped (why says so), -errno.
 */
static int restore_quality(const char *dir, int fd, const char *backend, unsigned int q, char *why,
			   size_t len)
{
	char cur[128], sel[8] = "1";
	unsigned int found;
	int r;

	r = current_read(dir, cur, sizeof(cur));
	if (r < 0) {
		snprintf(why, len, "cannot read %s/rng_current: %s", dir, strerror(-r));
		return r;
	}
	(void)sysfs_read(dir, "rng_selected", sel, sizeof(sel));
	if (strcmp(cur, backend) != 0) {
		if (!available(dir, backend)) {
			snprintf(why, len,
				 "%s is gone (not in rng_available): nothing to put back; "
				 "it registers again with its driver's quality",
				 backend);
			return 0;
		}
		r = sysfs_write(dir, "rng_current", backend);
		if (r < 0) {
			snprintf(why, len, "cannot make %s current to restore its rng_quality: %s",
				 backend, strerror(-r));
			return r;
		}
	} else if (quality_read(dir, &found) == 0 && found != 0) {
		snprintf(why, len, "rng_quality of %s is %u now, not the 0 written: left as it is",
			 backend, found);
		return 0;
	}
	r = quality_write(dir, fd, q);
	if (r < 0)
		snprintf(why, len, "cannot write %u to %s/rng_quality: %s", q, dir, strerror(-r));
	/* The write re-ran the kernel's choice and cleared rng_selected: put the choice back. */
	if (!cur[0]) /* the administrator's "none" (6.18.y+): back to none */
		(void)sysfs_write(dir, "rng_current", "none");
	else if (strcmp(cur, backend) != 0)
		(void)sysfs_write(dir, "rng_current", strcmp(sel, "1") == 0 ? cur : "");
	else if (strcmp(sel, "1") == 0)
		(void)sysfs_write(dir, "rng_current", backend);
	return r < 0 ? r : 1;
}

/* ---- state file ---- */

/* The state file's record for one backend (what the daemon remembers today). */
static int state_write_one(const char *path, const char *backend, unsigned int quality)
{
	struct kernel_hwrng_state st = { 0 };
	int r = kernel_hwrng_state_add(&st, backend, quality);

	return r < 0 ? r : kernel_hwrng_state_write(path, &st);
}

/* The original quality of backend in the state file (an earlier run's). 0 or -errno. */
static int state_read_one(const char *path, const char *backend, unsigned int *quality)
{
	struct kernel_hwrng_state st;
	const struct kernel_hwrng_saved *s;
	char why[160];
	int r = kernel_hwrng_state_read(AT_FDCWD, path, &st, NULL, why, sizeof(why));

	if (r < 0)
		return r;
	s = kernel_hwrng_state_find(&st, backend);
	if (!s)
		return -ENOENT;
	*quality = s->quality;
	return 0;
}

/* ---- the policy ---- */

/*
 * Log why the backend is left to the kernel (at level), mark the policy refused for it, and
 * return r for the caller to pass on.
 */
static int refuse(struct kernel_hwrng *kh, int r, int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(struct kernel_hwrng *kh, int r, int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_full(level, WHO, NULL, NULL, "%s", msg);
	kh->refused = true;
	return r;
}

int kernel_hwrng_take(struct kernel_hwrng *kh)
{
	char cur[128], now[128], sel[8] = "0", why[256];
	unsigned int q, saved_q = 0;
	int r;

	r = current_read(kh->dir, cur, sizeof(cur));
	if (r < 0 || !cur[0])
		return r < 0 ? r : 0; /* no backend now: the next tick looks again */
	snprintf(kh->backend, sizeof(kh->backend), "%s", cur);
	r = quality_read(kh->dir, &q);
	if (r < 0)
		return refuse(kh, r, LOG_WARNING, "cannot read %s/rng_quality: %s; leaving %s "
			      "to the kernel", kh->dir, strerror(-r), cur);
	/* rngd stopped without giving it back (a crash, SIGKILL): the file has the original. */
	if (q == 0 && state_read_one(kh->state, cur, &saved_q) == 0 && saved_q > 0) {
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "rng_quality of %s is 0 and %s says %u from "
			 "an earlier run that did not give it back: taking %u",
			 cur, kh->state, saved_q, saved_q);
		q = saved_q;
	} else if (q == 0) {
		kh->not_needed = true;
		return refuse(kh, 0, LOG_INFO, "rng_quality of %s is already 0: the kernel "
			      "credits it nothing; nothing to take over", cur);
	}
	/* The original is on disk before it is changed: a SIGKILL cannot lose it. */
	r = state_write_one(kh->state, cur, q);
	if (r < 0)
		return refuse(kh, r, LOG_WARNING, "cannot write %s: %s; not taking %s over "
			      "(it could not be given back after a crash)",
			      kh->state, strerror(-r), cur);
	(void)sysfs_read(kh->dir, "rng_selected", sel, sizeof(sel));
	r = quality_write(kh->dir, kh->fd, 0);
	if (r < 0) {
		(void)unlink(kh->state);
		return refuse(kh, r, LOG_WARNING, "cannot write 0 to %s/rng_quality: %s; "
			      "leaving %s to the kernel", kh->dir, strerror(-r), cur);
	}
	if (current_read(kh->dir, now, sizeof(now)) < 0 || strcmp(now, cur) != 0) {
		r = restore_quality(kh->dir, kh->fd, cur, q, why, sizeof(why));
		if (r > 0)
			(void)unlink(kh->state);
		return refuse(kh, 0, LOG_WARNING, "writing 0 to rng_quality of %s made the "
			      "kernel switch to '%s' (a better backend is registered); %s; not "
			      "taking over", cur, now, r > 0 ? "put back" : why);
	}
	/* The write cleared rng_selected (enable_best_rng()): keep the user's choice. */
	if (strcmp(sel, "1") == 0)
		(void)sysfs_write(kh->dir, "rng_current", cur);
	kh->taken = true;
	kh->lost = false;
	kh->quality = q;
	log_full(
		LOG_NOTICE, WHO, "hwrng-taken-over", NULL,
		"took over %s (rng_quality %u → 0): "
		"the kernel's hwrng thread credits it nothing now, rngd credits it at %u after its "
		"tests; given back at exit",
		cur, q, q);
	return 1;
}

void kernel_hwrng_give_back(struct kernel_hwrng *kh, const char *why)
{
	char text[512];
	int r;

	if (!kh->taken)
		return;
	kh->taken = false;
	r = restore_quality(kh->dir, kh->fd, kh->backend, kh->quality, text, sizeof(text));
	if (r > 0)
		log_full(LOG_NOTICE, WHO, "hwrng-given-back", NULL,
			 "gave %s back to the kernel (rng_quality 0 → %u): %s", kh->backend,
			 kh->quality, why);
	else
		log_full(r < 0 ? LOG_WARNING : LOG_NOTICE, WHO, "hwrng-given-back", NULL,
			 "%s: %s%s", why, text,
			 r < 0 ? "; 'rngd --restore-kernel-hwrng' as root puts it back" : "");
	/* Kept for --restore-kernel-hwrng when this process could not write. */
	if (r >= 0)
		(void)unlink(kh->state);
}

struct source *kernel_hwrng_reader(struct source_set *set, const char **dir_ret)
{
	for (size_t i = 0; set && i < source_set_size(set); i++) {
		struct source *src = source_set_get(set, i);
		const struct source_ops *ops = source_find_driver(source_name(src));
		const char *dev = source_opt_str(src, "device");
		struct source_stats st;
		struct stat sb;

		if (!ops || !ops->hwrng_family || !dev)
			continue;
		source_get_stats(src, &st);
		if (st.state == SOURCE_ABSENT || st.state == SOURCE_FAILED)
			continue;
		/* Only the misc hwrng reads the current backend (a file or FIFO does not). */
		if (stat(dev, &sb) < 0 || !sysfs_is_misc_hwrng(&sb))
			continue;
		*dir_ret = source_opt_str(src, "sysfs");
		return src;
	}
	return NULL;
}

static void watch(struct kernel_hwrng *kh, struct source *src)
{
	struct source_stats st;
	char cur[128] = "";
	int r;

	source_get_stats(src, &st);
	/* A new source (start, reload) counts from 0; a switch to watch from what it has. */
	if (src != kh->watched) {
		kh->trips = kh->trips == UINT64_MAX ? st.window_trips : 0;
		kh->watched = src;
	}
	if (st.window_trips <= kh->trips || kh->demoted) {
		kh->trips = st.window_trips;
		return;
	}
	kh->trips = st.window_trips;
	kh->demoted = true;
	(void)current_read(kh->dir, cur, sizeof(cur));
	snprintf(kh->backend, sizeof(kh->backend), "%s", cur);
	r = quality_write(kh->dir, kh->fd, 0);
	if (r < 0) {
		log_full(LOG_ERR, WHO, "hwrng-demoted", KERNEL_HWRNG_MESSAGE_DEMOTED,
			 "%s failed rngd's tests (%s) but rng_quality could not be lowered: %s",
			 cur, st.last_error_text, strerror(-r));
		return;
	}
	log_full(LOG_ALERT, WHO, "hwrng-demoted", KERNEL_HWRNG_MESSAGE_DEMOTED,
		 "%s failed rngd's tests (%s): rng_quality lowered to 0, the kernel no longer "
		 "credits it; not undone at exit",
		 cur, st.last_error_text);
}

void kernel_hwrng_update(struct kernel_hwrng *kh, struct source_set *set)
{
	const char *dir = NULL;
	struct source *src;
	char cur[128];
	unsigned int q;

	if (!kh->dir[0] || kh->mode == KERNEL_HWRNG_LEAVE)
		return;
	src = kernel_hwrng_reader(set, &dir);
	if (src && (!dir || strcmp(dir, kh->dir) != 0))
		src = NULL; /* a reload pointed it at another sysfs directory */
	if (kh->mode == KERNEL_HWRNG_WATCH) {
		if (src)
			watch(kh, src);
		return;
	}
	if (!src) {
		kh->lost = kh->lost || kh->taken;
		kernel_hwrng_give_back(kh, "no source reads it any more");
		return;
	}
	if (current_read(kh->dir, cur, sizeof(cur)) < 0)
		cur[0] = '\0';
	if (kh->taken && strcmp(cur, kh->backend) != 0) {
		char why[192];

		snprintf(why, sizeof(why), "the kernel's current backend is now '%s'",
			 cur[0] ? cur : "none");
		kh->lost = true;
		kernel_hwrng_give_back(kh, why);
	}
	if (kh->refused && strcmp(cur, kh->backend) != 0)
		kh->refused = kh->not_needed = false;
	if (!kh->taken && !kh->refused && kh->fd >= 0 && cur[0]) {
		(void)kernel_hwrng_take(kh);
	} else if (kh->taken && quality_read(kh->dir, &q) == 0 && q != 0) {
		/* Registered again (its driver's quality), or written by an administrator. */
		int r = state_write_one(kh->state, kh->backend, q);

		if (r == 0)
			r = quality_write(kh->dir, kh->fd, 0);
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "rng_quality of %s is %u again (registered "
			 "again, or written): %s",
			 kh->backend, q,
			 r == 0 ? "taken over again at that quality" : strerror(-r));
		if (r == 0)
			kh->quality = q;
	}
	source_keep_quality(src, kh->taken ? (int)kh->quality : -1);
}

void kernel_hwrng_start(struct kernel_hwrng *kh, enum kernel_hwrng_mode mode, const char *dir,
			const char *state_path, struct source_set *set)
{
	char path[PATH_MAX + 16];

	kh->mode = mode;
	if (mode == KERNEL_HWRNG_LEAVE || !dir || !state_path)
		return;
	snprintf(kh->state, sizeof(kh->state), "%s", state_path);
	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	kh->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (kh->fd < 0) {
		kh->no_access = true;
		(void)current_read(dir, kh->backend, sizeof(kh->backend));
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "cannot open %s for writing (%s): leaving "
			 "the kernel's hwrng thread as it is (kernel-hwrng = %s acts as leave)",
			 path, strerror(errno), mode == KERNEL_HWRNG_WATCH ? "watch" : "take-over");
		return;
	}
	snprintf(kh->dir, sizeof(kh->dir), "%s", dir);
	if (mode == KERNEL_HWRNG_WATCH) {
		char cur[128] = "";
		unsigned int q = 0;

		(void)current_read(dir, cur, sizeof(cur));
		(void)quality_read(dir, &q);
		log_full(LOG_INFO, WHO, NULL, NULL,
			 "watching %s (rng_quality %u): lowered to 0 "
			 "when it fails rngd's tests",
			 cur[0] ? cur : "the hwrng", q);
	}
	kernel_hwrng_update(kh, set);
}

void kernel_hwrng_reload(struct kernel_hwrng *kh, const char *mode, struct source_set *set)
{
	enum kernel_hwrng_mode m = KERNEL_HWRNG_TAKE_OVER;

	(void)kernel_hwrng_mode_parse(mode, &m);
	if (m != kh->mode) {
		kernel_hwrng_give_back(kh, "kernel-hwrng changed by a reload");
		if (m != KERNEL_HWRNG_LEAVE && !kh->dir[0])
			log_full(LOG_NOTICE, WHO, NULL, NULL,
				 "kernel-hwrng = %s needs rng_quality "
				 "opened at start: restart rngd to apply it",
				 mode);
		kh->mode = m;
		kh->refused = kh->not_needed = kh->lost = false;
		kh->watched = NULL;
		kh->trips = UINT64_MAX;
	}
	kernel_hwrng_update(kh, set);
}

const char *kernel_hwrng_takeover_state(const struct kernel_hwrng *kh, const char **backend)
{
	const char *state = "none";

	if (kh->mode == KERNEL_HWRNG_LEAVE)
		state = "none";
	else if (kh->no_access)
		state = "refused";
	else if (kh->mode == KERNEL_HWRNG_WATCH)
		state = kh->demoted ? "demoted" : "none";
	else if (kh->taken)
		state = "held";
	else if (kh->refused)
		state = kh->not_needed ? "not-needed" : "refused";
	else if (kh->lost)
		state = "lost";
	*backend = strcmp(state, "none") == 0 ? "" : kh->backend;
	return state;
}

void kernel_hwrng_stop(struct kernel_hwrng *kh)
{
	kernel_hwrng_give_back(kh, "rngd stops");
	closep(&kh->fd);
}
