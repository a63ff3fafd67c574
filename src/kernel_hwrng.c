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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/*
 * The two paths, "" while unset. They are allocated, not PATH_MAX arrays in the struct: 8 KiB
 * of struct daemon on run_daemon()'s stack were 2 pages more of the daemon's deepest call
 * chains (bench/README.md, footprint).
 */
static const char *dir_of(const struct kernel_hwrng *kh)
{
	return kh->dir ? kh->dir : "";
}

static const char *state_of(const struct kernel_hwrng *kh)
{
	return kh->state ? kh->state : "";
}

/* *field = a copy of value; -ENOMEM leaves it as it was. */
static int set_path(char **field, const char *value)
{
	char *copy;

	if (*field && strcmp(*field, value) == 0)
		return 0;
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

bool kernel_hwrng_acting(const struct kernel_hwrng *kh)
{
	return kh->dir && kh->dir[0];
}

unsigned int kernel_hwrng_look_seconds(const struct kernel_hwrng *kh)
{
	if (!kernel_hwrng_acting(kh))
		return 0;
	if (kh->mode == KERNEL_HWRNG_TAKE_OVER && kh->taken && !kh->busy && !kh->deferred)
		return KERNEL_HWRNG_LOOK_HELD;
	return 1;
}

void kernel_hwrng_init(struct kernel_hwrng *kh)
{
	memset(kh, 0, sizeof(*kh));
	kh->mode = KERNEL_HWRNG_LEAVE;
	kh->fd = kh->cur_fd = kh->cur_rfd = kh->q_rfd = kh->sel_rfd = -1;
}

/* ---- sysfs ---- */

/*
 * attr of dir through fd, kept open from start (a pread() at 0 makes sysfs show the
 * attribute anew: 1 syscall a look instead of 4), else, or when that fails (rng-core
 * reloaded: the kept file is gone), by path.
 */
static int attr_read(const char *dir, int fd, const char *attr, char *buf, size_t size)
{
	int r = fd >= 0 ? sysfs_fd_read(fd, buf, size) : -EBADF;

	return r >= 0 ? r : sysfs_read(dir, attr, buf, size);
}

static int quality_read(const struct kernel_hwrng *kh, unsigned int *q)
{
	char buf[16];
	int r = attr_read(dir_of(kh), kh->q_rfd, "rng_quality", buf, sizeof(buf));

	return r < 0 ? r : sysfs_parse_quality(buf, q);
}

static void selected_read(const struct kernel_hwrng *kh, char *buf, size_t size)
{
	(void)attr_read(dir_of(kh), kh->sel_rfd, "rng_selected", buf, size);
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
static int current_read_at(const char *dir, int fd, char *buf, size_t size)
{
	int r = attr_read(dir, fd, "rng_current", buf, size);

	if (r >= 0 && sysfs_is_none(buf))
		buf[0] = '\0';
	return r;
}

static int current_read(const struct kernel_hwrng *kh, char *buf, size_t size)
{
	return current_read_at(dir_of(kh), kh->cur_rfd, buf, size);
}

static bool available(const char *dir, const char *name)
{
	char list[1024];

	return sysfs_read(dir, "rng_available", list, sizeof(list)) >= 0 &&
	       sysfs_list_has(list, name);
}

/* ---- state file ---- */

/*
 * Every backend this process owes (the held one among them) with the quality it had before
 * the 0, written whole (kernel_hwrng_state_write(): atomic) before a 0 is written: a SIGKILL
 * loses nothing, and taking one backend never drops another's entry. No backend owed: no
 * file.
 */
static int state_write(const struct kernel_hwrng *kh)
{
	struct kernel_hwrng_state st = { 0 };

	for (size_t i = 0; i < kh->n_owed; i++) {
		int r = kernel_hwrng_state_add(&st, kh->owed[i].backend, kh->owed[i].quality);

		if (r < 0)
			return r;
	}
	return kernel_hwrng_state_write(state_of(kh), &st);
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

/* ---- what this process owes ---- */

static struct kernel_hwrng_owed *owed_find(struct kernel_hwrng *kh, const char *backend)
{
	for (size_t i = 0; i < kh->n_owed; i++)
		if (strcmp(kh->owed[i].backend, backend) == 0)
			return &kh->owed[i];
	return NULL;
}

static void owed_drop(struct kernel_hwrng *kh, const char *backend)
{
	struct kernel_hwrng_owed *o = owed_find(kh, backend);

	if (!o)
		return;
	memmove(o, o + 1, (size_t)(kh->owed + kh->n_owed - (o + 1)) * sizeof(*o));
	kh->n_owed--;
}

/* ---- the crash handler ---- */

/*
 * A crash (SIGSEGV, SIGABRT, ...) must not leave the held backend at 0 until root's
 * ExecStopPost= (there is none under another init): the handler writes the remembered
 * quality through the kept descriptor, when the held backend is still current, then lets
 * the signal take its course (the handler that was there before, or the default). Only
 * async-signal-safe calls; the main thread arms and disarms it.
 */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP };
static struct sigaction crash_old[ARRAY_SIZE(crash_signals)];
static volatile sig_atomic_t crash_armed;
static int crash_qfd = -1, crash_cfd = -1;
static char crash_name[136], crash_text[16];
static size_t crash_name_len, crash_text_len;

static void crash_handler(int sig)
{
	int saved = errno;

	if (crash_armed) {
		char now[sizeof(crash_name)];
		ssize_t n;

		crash_armed = 0;
		n = pread(crash_cfd, now, sizeof(now), 0);
		if (n == (ssize_t)crash_name_len && memcmp(now, crash_name, crash_name_len) == 0 &&
		    pwrite(crash_qfd, crash_text, crash_text_len, 0) < 0) {
			/* Nothing more can be done here: root's restore reads the state file. */
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
		if (crash_signals[i] == sig)
			(void)sigaction(sig, &crash_old[i], NULL);
	errno = saved;
	(void)raise(sig); /* delivered when the handler returns, to the action put back */
}

static void crash_disarm(void)
{
	crash_armed = 0;
}

static void crash_arm(const struct kernel_hwrng *kh)
{
	struct sigaction sa;

	crash_armed = 0;
	if (kh->fd < 0 || kh->cur_rfd < 0)
		return;
	/* Installed at each arming: whatever replaced it since runs after it. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	sigemptyset(&sa.sa_mask);
	/* One call a signal: what it replaced is kept, unless that was this handler already. */
	for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++) {
		struct sigaction was;

		if (sigaction(crash_signals[i], &sa, &was) == 0 && was.sa_handler != crash_handler)
			crash_old[i] = was;
	}
	crash_qfd = kh->fd;
	crash_cfd = kh->cur_rfd;
	crash_name_len = (size_t)snprintf(crash_name, sizeof(crash_name), "%s\n", kh->backend);
	crash_text_len = (size_t)snprintf(crash_text, sizeof(crash_text), "%u\n", kh->quality);
	if (crash_name_len < sizeof(crash_name))
		crash_armed = 1;
}

/* ---- one daemon at a time ---- */

/* The pid holding a flock on fd's file, from /proc/locks; 0 when not found. */
static pid_t lock_holder(int fd)
{
	char line[256];
	struct stat st;
	pid_t pid = 0;
	FILE *f;

	if (fstat(fd, &st) < 0 || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!pid && fgets(line, sizeof(line), f)) {
		const char *p = strchr(line, ':');
		unsigned int ma, mi;
		unsigned long ino;
		char type[16];
		long id;

		if (!p)
			continue;
		p += strspn(p + 1, " ") + 1;
		if (strncmp(p, "->", 2) == 0)
			continue; /* waiting for the lock, not holding it */
		if (sscanf(p, "%15s %*s %*s %ld %x:%x:%lu", type, &id, &ma, &mi, &ino) == 5 &&
		    strcmp(type, "FLOCK") == 0 && ma == major(st.st_dev) &&
		    mi == minor(st.st_dev) && ino == st.st_ino && id > 0)
			pid = (pid_t)id;
	}
	fclose(f);
	return pid;
}

/*
 * Two daemons must not fight over rng_quality (each would take the other's 0 for the
 * original): the one that takes over holds a flock on rng_quality, which every process that
 * opens the attribute sees, whatever its state file. 1 when this process holds it, 0 when
 * another does (logged once, with its pid; the caller retries each tick), -errno.
 */
static int lock_take(struct kernel_hwrng *kh, const char *cur)
{
	pid_t h;

	if (kh->locked)
		return 1;
	if (flock(kh->fd, LOCK_EX | LOCK_NB) == 0) {
		if (kh->busy)
			log_full(LOG_NOTICE, WHO, NULL, NULL,
				 "the process that held the take-over of %s (pid %ld) has let it "
				 "go: taking it over",
				 cur, (long)kh->holder);
		kh->locked = true;
		kh->busy = false;
		kh->holder = 0;
		return 1;
	}
	if (errno != EWOULDBLOCK)
		return -errno;
	h = lock_holder(kh->fd);
	if (!kh->busy || h != kh->holder) {
		char who[32] = "a pid /proc/locks does not show";

		if (h > 0)
			snprintf(who, sizeof(who), "pid %ld", (long)h);
		log_full(LOG_WARNING, WHO, NULL, NULL,
			 "another rngd (%s) holds the take-over of the kernel's hwrng (a lock on "
			 "%s/rng_quality): not taking %s over beside it; this one credits what "
			 "rng_quality says (0 while that one holds it), and takes over when it stops",
			 who, dir_of(kh), cur);
	}
	kh->busy = true;
	kh->holder = h;
	return 0;
}

static void lock_release(struct kernel_hwrng *kh)
{
	if (kh->locked && kh->fd >= 0)
		(void)flock(kh->fd, LOCK_UN);
	kh->locked = false;
}

/* ---- the policy ---- */

/* rng_current through the descriptor kept from start (root's); -EACCES without one. */
static int current_write(const struct kernel_hwrng *kh, const char *name)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "%s\n", name);
	ssize_t w;

	if (kh->cur_fd < 0)
		return -EACCES;
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	w = pwrite(kh->cur_fd, line, (size_t)n, 0);
	return w == n ? 0 : w < 0 ? -errno : -EIO;
}

/* A registered backend other than cur (and "none") into buf: true when there is one. */
static bool other_backend(const char *dir, const char *cur, char *buf, size_t size)
{
	char list[1024];

	if (sysfs_read(dir, "rng_available", list, sizeof(list)) < 0)
		return false;
	for (const char *s = list; *s;) {
		size_t n;

		s += strspn(s, " \t\n");
		n = strcspn(s, " \t\n");
		if (n > 0 && !(n == 4 && strncmp(s, "none", 4) == 0) &&
		    !(n == strlen(cur) && strncmp(s, cur, n) == 0)) {
			snprintf(buf, size, "%.*s", (int)n, s);
			return true;
		}
		s += n;
	}
	return false;
}

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

/*
 * Put the owed quality back on backend. When another backend is current (switched by the
 * kernel or an administrator), backend is made current for the write (rng_current: needs
 * the descriptor kept from start) and the other one, with its selection, put back after
 * it. 1 when written, 0 when there was nothing to write (why says so): both settle the
 * debt; -errno (why says so) keeps it owed, in the state file for root's restore.
 */
static int give_back_one(struct kernel_hwrng *kh, const char *backend, char *why, size_t len)
{
	struct kernel_hwrng_owed *o = owed_find(kh, backend);
	char cur[128], now[128], sel[8] = "0";
	unsigned int q, found;
	int r;

	if (!o) {
		snprintf(why, len, "nothing owed to %s", backend);
		return 0;
	}
	q = o->quality;
	r = current_read(kh, cur, sizeof(cur));
	if (r < 0) {
		snprintf(why, len, "cannot read %.300s/rng_current: %s", dir_of(kh), strerror(-r));
		return r;
	}
	selected_read(kh, sel, sizeof(sel));
	if (strcmp(cur, backend) != 0) {
		if (!available(dir_of(kh), backend)) {
			snprintf(why, len,
				 "%s is gone (not in rng_available): nothing to put back; it "
				 "registers again with its driver's quality",
				 backend);
			r = 0;
			goto settled;
		}
		if (kh->cur_fd < 0) {
			snprintf(why, len,
				 "%s is not the current backend ('%s' is), and making it current "
				 "for the write needs rng_current, which this process cannot write",
				 backend, cur[0] ? cur : "none");
			return -EACCES;
		}
		r = current_write(kh, backend);
		if (r == 0 && (current_read(kh, now, sizeof(now)) < 0 || strcmp(now, backend)))
			r = -ENODEV;
		if (r < 0) {
			snprintf(why, len, "cannot make %s current to put its rng_quality back: %s",
				 backend, strerror(-r));
			return r;
		}
	} else if (quality_read(kh, &found) == 0 && found != 0) {
		snprintf(why, len, "rng_quality of %s is %u now, not the 0 rngd wrote: left as it is",
			 backend, found);
		r = 0;
		goto settled;
	}
	r = quality_write(dir_of(kh), kh->fd, q);
	if (r < 0)
		snprintf(why, len, "cannot write %u to %.300s/rng_quality: %s", q, dir_of(kh),
			 strerror(-r));
	/* The write re-ran the kernel's choice and cleared rng_selected: put the choice back. */
	if (!cur[0]) /* the administrator's "none" (6.18.y+): back to none */
		(void)current_write(kh, "none");
	else if (strcmp(cur, backend) != 0)
		(void)current_write(kh, strcmp(sel, "1") == 0 ? cur : "");
	else if (strcmp(sel, "1") == 0 && current_write(kh, backend) < 0)
		log_full(LOG_WARNING, WHO, NULL, NULL,
			 "giving %s back cleared rng_selected (the administrator's choice of it): "
			 "this process cannot write rng_current to set it again; 'echo %s > "
			 "%s/rng_current' as root does",
			 backend, backend, dir_of(kh));
	if (r < 0)
		return r;
	r = 1;
	snprintf(why, len, "put back");
settled:
	owed_drop(kh, backend);
	(void)state_write(kh);
	return r;
}

/* Give backend's debt back and say how it went. */
static void give_back_logged(struct kernel_hwrng *kh, const char *backend, const char *why)
{
	char text[512], name[128];
	unsigned int q = 0;
	int r;

	snprintf(name, sizeof(name), "%s", backend);
	if (owed_find(kh, name))
		q = owed_find(kh, name)->quality;
	r = give_back_one(kh, name, text, sizeof(text));
	if (r > 0)
		log_full(LOG_NOTICE, WHO, "hwrng-given-back", NULL,
			 "gave %s back to the kernel (rng_quality 0 → %u): %s", name, q, why);
	else if (r == 0)
		log_full(LOG_NOTICE, WHO, "hwrng-given-back", NULL, "%s: %s", why, text);
	else
		log_full(LOG_WARNING, WHO, "hwrng-given-back", NULL,
			 "%s: %s; %s keeps its 0 and %s keeps its %u for 'rngd "
			 "--restore-kernel-hwrng' (root; the unit's ExecStopPost= runs it)%s",
			 why, text, name, state_of(kh), q,
			 kh->mode == KERNEL_HWRNG_TAKE_OVER ? ", or for rngd when it is current again"
							    : "");
}

/*
 * Leave the backend to the kernel for now, for a reason that may go away (the selection,
 * the other backends): retried each tick, said once per backend. Returns 0.
 */
static int defer(struct kernel_hwrng *kh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int defer(struct kernel_hwrng *kh, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (strcmp(kh->told, kh->backend) != 0) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		log_full(LOG_NOTICE, WHO, NULL, NULL, "%s", msg);
		snprintf(kh->told, sizeof(kh->told), "%s", kh->backend);
	}
	kh->deferred = true;
	return 0;
}

static int take(struct kernel_hwrng *kh)
{
	struct kernel_hwrng_owed *o;
	char cur[128], now[128], sel[8] = "0", why[512], other[128];
	unsigned int q, saved_q = 0;
	bool fresh;
	int r;

	r = current_read(kh, cur, sizeof(cur));
	if (r < 0 || !cur[0])
		return r < 0 ? r : 0; /* no backend now: the next tick looks again */
	snprintf(kh->backend, sizeof(kh->backend), "%s", cur);
	r = lock_take(kh, cur);
	if (r <= 0)
		return r < 0 ? refuse(kh, r, LOG_WARNING, "cannot lock %s/rng_quality: %s; leaving "
				      "%s to the kernel", dir_of(kh), strerror(-r), cur)
			     : 0;
	r = quality_read(kh, &q);
	if (r < 0)
		return refuse(kh, r, LOG_WARNING, "cannot read %s/rng_quality: %s; leaving %s "
			      "to the kernel", dir_of(kh), strerror(-r), cur);
	o = owed_find(kh, cur);
	if (q == 0 && o) {
		/* This process's own 0, still owed (its give-back needed rng_current). */
		q = o->quality;
		log_full(LOG_NOTICE, WHO, "hwrng-taken-over", NULL,
			 "%s is current again with the 0 rngd wrote: held again, credited at %u "
			 "after rngd's tests; given back at exit",
			 cur, q);
		goto held;
	}
	/* rngd stopped without giving it back (a crash, SIGKILL): the file has the original. */
	if (q == 0 && state_read_one(state_of(kh), cur, &saved_q) == 0 && saved_q > 0) {
		/* This process holds the lock: no running rngd holds the take-over. */
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "rng_quality of %s is 0 and %s says %u: left by an rngd that stopped "
			 "without giving it back (killed, or crashed; no running rngd holds it); "
			 "taking it over at %u",
			 cur, state_of(kh), saved_q, saved_q);
		q = saved_q;
	} else if (q == 0) {
		kh->not_needed = true;
		return refuse(kh, 0, LOG_INFO, "rng_quality of %s is 0: the kernel credits it "
			      "nothing; nothing to take over (taken over if it is raised)", cur);
	}
	selected_read(kh, sel, sizeof(sel));
	if (strcmp(sel, "1") == 0 && kh->cur_fd < 0)
		return defer(kh,
			      "%s was chosen by the administrator (rng_selected 1): writing its "
			      "rng_quality would clear that choice, and this process cannot write "
			      "rng_current to set it again; leaving %s to the kernel",
			      cur, cur);
	if (kh->cur_fd < 0 && other_backend(dir_of(kh), cur, other, sizeof(other)))
		return defer(kh,
			      "another backend is registered (%s): a 0 in the rng_quality of %s "
			      "may make the kernel switch to it, and this process cannot write "
			      "rng_current to give %s its quality back then; leaving %s to the "
			      "kernel",
			      other, cur, cur, cur);
	fresh = !o;
	if (fresh) {
		if (kh->n_owed == KERNEL_HWRNG_OWED_MAX)
			return refuse(kh, 0, LOG_WARNING, "%zu backends owed already: not taking "
				      "%s over", kh->n_owed, cur);
		o = &kh->owed[kh->n_owed++];
		snprintf(o->backend, sizeof(o->backend), "%s", cur);
	}
	o->quality = q;
	/* The original is on disk before it is changed: a SIGKILL cannot lose it. */
	r = state_write(kh);
	if (r < 0) {
		if (fresh)
			kh->n_owed--;
		return refuse(kh, r, LOG_WARNING, "cannot write %s: %s; not taking %s over "
			      "(it could not be given back after a crash)",
			      state_of(kh), strerror(-r), cur);
	}
	r = quality_write(dir_of(kh), kh->fd, 0);
	if (r < 0) {
		owed_drop(kh, cur);
		(void)state_write(kh);
		return refuse(kh, r, LOG_WARNING, "cannot write 0 to %s/rng_quality: %s; "
			      "leaving %s to the kernel", dir_of(kh), strerror(-r), cur);
	}
	if (current_read(kh, now, sizeof(now)) < 0 || strcmp(now, cur) != 0) {
		r = give_back_one(kh, cur, why, sizeof(why));
		return refuse(kh, 0, LOG_WARNING, "writing 0 to rng_quality of %s made the "
			      "kernel switch to '%s' (a better backend is registered); %s; not "
			      "taking over", cur, now, r >= 0 ? "put back" : why);
	}
	/* The write cleared rng_selected (enable_best_rng()): keep the user's choice. */
	if (strcmp(sel, "1") == 0)
		(void)current_write(kh, cur);
	log_full(LOG_NOTICE, WHO, "hwrng-taken-over", NULL,
		 "took over %s (rng_quality %u → 0): the kernel's hwrng thread credits it "
		 "nothing now, rngd credits it at %u after its tests; given back at exit",
		 cur, q, q);
held:
	kh->taken = true;
	kh->deferred = false;
	kh->lost = false;
	kh->quality = q;
	crash_arm(kh);
	return 1;
}

int kernel_hwrng_take(struct kernel_hwrng *kh)
{
	int r = take(kh);

	/* Held only while something is held or owed: a refusal lets another daemon have it. */
	if (r != 1 && kh->n_owed == 0)
		lock_release(kh);
	return r;
}

static void give_back_all(struct kernel_hwrng *kh, const char *why)
{
	struct kernel_hwrng_owed all[KERNEL_HWRNG_OWED_MAX];
	size_t n = kh->n_owed;

	kh->taken = false;
	crash_disarm();
	memcpy(all, kh->owed, n * sizeof(all[0]));
	for (size_t i = 0; i < n; i++)
		give_back_logged(kh, all[i].backend, why);
}

void kernel_hwrng_give_back(struct kernel_hwrng *kh, const char *why)
{
	give_back_all(kh, why);
	if (kh->n_owed == 0)
		lock_release(kh);
}

void kernel_hwrng_give_back_at_exit(struct kernel_hwrng *kh)
{
	give_back_all(kh, "rngd stops");
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
	(void)current_read(kh, cur, sizeof(cur));
	snprintf(kh->backend, sizeof(kh->backend), "%s", cur);
	r = quality_write(dir_of(kh), kh->fd, 0);
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

static const char *mode_name(enum kernel_hwrng_mode m)
{
	return m == KERNEL_HWRNG_TAKE_OVER ? "take-over" : m == KERNEL_HWRNG_WATCH ? "watch" : "leave";
}

/*
 * rng_quality (kept for writing), rng_current for writing when this process may (root at
 * start: kept across the drop, so that every backend can be given back) and for reading
 * (the crash handler's check). 0 or -errno of rng_quality's open.
 */
static int open_attrs(struct kernel_hwrng *kh, const char *dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	kh->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (kh->fd < 0)
		return -errno;
	if (set_path(&kh->dir, dir) < 0) {
		closep(&kh->fd);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/rng_current", dir);
	closep(&kh->cur_fd);
	closep(&kh->cur_rfd);
	closep(&kh->q_rfd);
	closep(&kh->sel_rfd);
	kh->cur_fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	kh->cur_rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	/* For the tick's looks (attr_read()): kept, as the others are. */
	snprintf(path, sizeof(path), "%s/rng_quality", dir);
	kh->q_rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	snprintf(path, sizeof(path), "%s/rng_selected", dir);
	kh->sel_rfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return 0;
}

/*
 * rng_quality was not opened at start (no source read the kernel's hwrng then: rng-core or
 * its device came later, or a reload changed the mode or the sources): open it now. The
 * outcome is logged when it changes. true when open.
 */
static bool open_late(struct kernel_hwrng *kh, const char *dir)
{
	bool first = !kh->open_tried;
	int r = open_attrs(kh, dir);

	kh->open_tried = true;
	if (r == 0) {
		kh->no_access = false;
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "the kernel's hwrng is read now (%s), after rngd started: kernel-hwrng "
			 "= %s is active from here on",
			 dir, mode_name(kh->mode));
		return true;
	}
	if (first || !kh->no_access)
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "the kernel's hwrng is read now (%s), after rngd started, but %s/"
			 "rng_quality cannot be opened for writing (%s): kernel-hwrng = %s acts "
			 "as leave; restart rngd to apply it (as root, or through its unit, whose "
			 "ExecStartPre= grants rng_quality)",
			 dir, dir, strerror(-r), mode_name(kh->mode));
	kh->no_access = true;
	return false;
}

void kernel_hwrng_update(struct kernel_hwrng *kh, struct source_set *set)
{
	const char *dir = NULL;
	struct source *src;
	char cur[128], why[192];
	unsigned int q;

	if (kh->disabled || kh->mode == KERNEL_HWRNG_LEAVE)
		return;
	src = kernel_hwrng_reader(set, &dir);
	if (src && (!dir || (kernel_hwrng_acting(kh) && strcmp(dir, dir_of(kh)) != 0)))
		src = NULL; /* a reload pointed it at another sysfs directory */
	if (!src) {
		kh->lost = kh->lost || kh->taken;
		if (kh->taken || kh->n_owed)
			kernel_hwrng_give_back(kh, "no source reads it any more");
		return;
	}
	if (kh->fd < 0 && !open_late(kh, dir)) {
		source_keep_quality(src, NULL, -1);
		return;
	}
	if (kh->mode == KERNEL_HWRNG_WATCH) {
		source_keep_quality(src, NULL, -1);
		watch(kh, src);
		return;
	}
	if (current_read(kh, cur, sizeof(cur)) < 0)
		cur[0] = '\0';
	if (kh->taken && strcmp(cur, kh->backend) != 0) {
		snprintf(why, sizeof(why), "the kernel's current backend is now '%s'",
			 cur[0] ? cur : "none");
		kh->taken = false;
		kh->lost = true;
		crash_disarm();
		give_back_logged(kh, kh->backend, why);
		if (kh->n_owed == 0)
			lock_release(kh);
	}
	if (kh->refused && strcmp(cur, kh->backend) != 0)
		kh->refused = kh->not_needed = false;
	if (kh->not_needed && quality_read(kh, &q) == 0 && q > 0) {
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "rng_quality of %s was raised to %u (it was 0, which rngd left alone): "
			 "the kernel credits it untested again; taking it over",
			 kh->backend, q);
		kh->refused = kh->not_needed = false;
	}
	if (!kh->taken && !kh->refused && cur[0]) {
		(void)kernel_hwrng_take(kh);
	} else if (kh->taken && quality_read(kh, &q) == 0 && q != 0) {
		/* Registered again (its driver's quality), or written by an administrator. */
		struct kernel_hwrng_owed *o = owed_find(kh, kh->backend);
		int r = -ENOENT;

		if (o) {
			o->quality = q;
			r = state_write(kh);
		}
		if (r == 0)
			r = quality_write(dir_of(kh), kh->fd, 0);
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "rng_quality of %s is %u again (registered "
			 "again, or written): %s",
			 kh->backend, q,
			 r == 0 ? "taken over again at that quality" : strerror(-r));
		if (r == 0) {
			kh->quality = q;
			crash_arm(kh);
		}
	}
	source_keep_quality(src, kh->taken ? kh->backend : NULL, kh->taken ? (int)kh->quality : -1);
}

void kernel_hwrng_start(struct kernel_hwrng *kh, enum kernel_hwrng_mode mode, const char *dir,
			const char *state_path, struct source_set *set)
{
	int r;

	kh->mode = mode;
	if (!state_path) {
		kh->disabled = true;
		return;
	}
	if (set_path(&kh->state, state_path) < 0) {
		log_full(LOG_WARNING, WHO, NULL, NULL,
			 "out of memory: the kernel's hwrng thread is left as it is");
		kh->disabled = true;
		return;
	}
	/* No source reads the kernel's hwrng yet: the tick opens rng_quality when one does. */
	if (mode == KERNEL_HWRNG_LEAVE || !dir)
		return;
	kh->open_tried = true;
	r = open_attrs(kh, dir);
	if (r < 0) {
		kh->no_access = true;
		(void)current_read_at(dir, -1, kh->backend, sizeof(kh->backend));
		log_full(LOG_NOTICE, WHO, NULL, NULL,
			 "cannot open %s/rng_quality for writing (%s): leaving "
			 "the kernel's hwrng thread as it is (kernel-hwrng = %s acts as leave)",
			 dir, strerror(-r), mode_name(mode));
		return;
	}
	if (mode == KERNEL_HWRNG_WATCH) {
		char cur[128] = "";
		unsigned int q = 0;

		(void)current_read(kh, cur, sizeof(cur));
		(void)quality_read(kh, &q);
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
	const char *dir = NULL;
	struct source *src;

	(void)kernel_hwrng_mode_parse(mode, &m);
	if (m != kh->mode) {
		char why[128];

		snprintf(why, sizeof(why), "kernel-hwrng changed from %s to %s by a reload",
			 mode_name(kh->mode), mode_name(m));
		kernel_hwrng_give_back(kh, why);
		/* What take-over remembered no longer applies: the credit follows rng_quality. */
		kh->quality = 0;
		src = kernel_hwrng_reader(set, &dir);
		if (src)
			source_keep_quality(src, NULL, -1);
		kh->mode = m;
		kh->refused = kh->not_needed = kh->lost = kh->busy = kh->deferred = false;
		kh->watched = NULL;
		kh->trips = UINT64_MAX;
	}
	kernel_hwrng_update(kh, set);
}

const char *kernel_hwrng_takeover_state(const struct kernel_hwrng *kh, const char **backend)
{
	const char *state = "none";

	if (kh->mode == KERNEL_HWRNG_LEAVE || kh->disabled)
		state = "none";
	else if (kh->no_access)
		state = "refused";
	else if (kh->mode == KERNEL_HWRNG_WATCH)
		state = kh->demoted ? "demoted" : "none";
	else if (kh->taken)
		state = "held";
	else if (kh->busy || kh->deferred)
		state = "refused";
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
	crash_disarm();
	lock_release(kh);
	closep(&kh->fd);
	closep(&kh->cur_fd);
	closep(&kh->cur_rfd);
	closep(&kh->q_rfd);
	closep(&kh->sel_rfd);
	free(kh->dir);
	free(kh->state);
	kh->dir = kh->state = NULL;
}
