// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The entropy sink: /dev/random ioctls or plain writes to an output, and the feeding policy.
 * Kernel facts are from docs/kernel-interfaces.md §1 (drivers/char/random.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/random.h>

#include "log.h"
#include "sink.h"
#include "util.h"
#include "wide.h"

#define DEFAULT_PROCDIR "/proc/sys/kernel/random"
/*
 * A path under the proc directory: /proc/sys/kernel/random/write_wakeup_threshold is 46
 * bytes, a test's directory under /tmp not much more. Not PATH_MAX: the start runs these
 * on the main thread, and a 4 KiB buffer there was a page of its stack (a longer procdir
 * is ENAMETOOLONG).
 */
#define PROC_PATH_MAX 256
#define RANDOM_DEV "/dev/random"
#define LEGACY_POOLSIZE 4096

/* Largest injection per feed_plan() call; also the stack buffer of sink_add_entropy(). */
#define FEED_MAX_CHUNK 2500
/* When data is wanted but none is available: ask again after at most this long. */
#define FEED_RETRY_NS NSEC_PER_SEC
#define FEED_RETRY_MIN_NS NSEC_PER_MSEC

/*
 * struct rand_pool_info with a fixed buffer: int entropy_count (bits), int buf_size (BYTES,
 * although the uapi declares buf as __u32[]), then the data.
 */
struct pool_req {
	int entropy_count;
	int buf_size;
	alignas(4) uint8_t buf[FEED_MAX_CHUNK];
};

_Static_assert(offsetof(struct pool_req, buf) == offsetof(struct rand_pool_info, buf),
	       "struct pool_req must match struct rand_pool_info");
_Static_assert(offsetof(struct pool_req, buf_size) == offsetof(struct rand_pool_info, buf_size),
	       "struct pool_req must match struct rand_pool_info");

struct sink {
	int fd;
	bool output_mode;	/* plain write(), no ioctls */
	enum kernel_gen gen;
	bool pollout;		/* legacy: the last wait saw POLLOUT */
	bool threshold_above;	/* legacy: the kernel's write_wakeup_threshold > ours */
	uint64_t interval_ns;	/* the last wait's feed interval */
	uint64_t quiet_until;	/* legacy: no POLLOUT wait before (CLOCK_MONOTONIC ns) */
	char *procdir;		/* "/proc/sys/kernel/random", replaceable by tests */
};

#define SINK_NO_TRUNCATE (1u << 8) /* internal: stdout */

/* mem 1:1, kmem 1:2, port 1:4 (Documentation/admin-guide/devices.txt). */
static bool memory_device(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && major(st->st_rdev) == 1 &&
	       (minor(st->st_rdev) == 1 || minor(st->st_rdev) == 2 || minor(st->st_rdev) == 4);
}

static int _printf_(3, 4) refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* What an output may not be; checked on what was opened. 0 or -EINVAL/-EEXIST with why. */
static int check_output(int fd, const char *path, unsigned int flags, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		return refuse(why, len, "'%s' is a block device: refusing to write over it", path);
	if (memory_device(&st))
		return refuse(why, len, "'%s' is a memory device: refusing to write to it", path);
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		if (!(flags & SINK_OVERWRITE)) {
			refuse(why, len, "'%s' exists and is not empty: refusing to overwrite it "
				"without --force-output", path);
			return -EEXIST;
		}
		if (!(flags & SINK_NO_TRUNCATE) && ftruncate(fd, 0) < 0)
			return -errno;
	}
	return 0;
}

static int open_output(const char *path, const struct stat *st, bool exists)
{
	int fd;

	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0) {
		/* Reopening /proc/self/fd/1 fails for sockets; a dup works for anything. */
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	if (!exists || S_ISREG(st->st_mode))
		/*
		 * 0600: the data may end up as key material; only its owner should read it.
		 * No O_TRUNC: check_output() decides on what was opened.
		 */
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	else
		/* FIFOs block here until a reader opens them; that is what the user asked. */
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

static void grow_pipe(int fd);

int sink_open(struct sink **ret, const char *path, const char *procdir)
{
	return sink_open_flags(ret, path, procdir, 0, NULL, 0);
}

int sink_open_flags(struct sink **ret, const char *path, const char *procdir, unsigned int flags,
		    char *why, size_t len)
{
	struct sink *s;
	struct stat st;
	bool exists = true;
	int r;

	if (!path)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct sink){ .fd = -1, .gen = KERNEL_MODERN };
	s->procdir = strdup(procdir ? procdir : DEFAULT_PROCDIR);
	if (!s->procdir) {
		r = -ENOMEM;
		goto fail;
	}

	if (strcmp(path, "-") != 0 && stat(path, &st) < 0) {
		if (errno != ENOENT) {
			r = -errno;
			goto fail;
		}
		exists = false;
	}

	if (strcmp(path, "-") != 0 && exists && kernel_random_device(&st)) {
		/*
		 * RNDADDENTROPY checks CAP_SYS_ADMIN, not the open mode; write access only matters
		 * for POLLOUT semantics, so fall back to read-only when the node denies writes.
		 */
		s->fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY);
		if (s->fd < 0 && (errno == EACCES || errno == EPERM))
			s->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (s->fd < 0) {
			r = -errno;
			goto fail;
		}
		/*
		 * Without a readable poolsize (no /proc in a container), assume modern: its
		 * timer-driven feeding never blocks and is harmless on legacy kernels too.
		 */
		r = sink_detect_generation(s->procdir, &s->gen);
		if (r < 0) {
			log_debug("sink: cannot read %s/poolsize (%s), assuming a modern kernel",
				  s->procdir, strerror(-r));
			s->gen = KERNEL_MODERN;
		}
		*ret = s;
		return 0;
	}

	s->output_mode = true;
	/* Not even opened (opening /dev/port has effects); checked again on what is opened. */
	if (exists && strcmp(path, "-") != 0) {
		if (S_ISBLK(st.st_mode)) {
			r = refuse(why, len, "'%s' is a block device: refusing to write over it",
				   path);
			goto fail;
		}
		if (memory_device(&st)) {
			r = refuse(why, len, "'%s' is a memory device: refusing to write to it",
				   path);
			goto fail;
		}
	}
	r = open_output(path, &st, exists);
	if (r < 0)
		goto fail;
	s->fd = r;
	/* Standard output is the caller's: the shell already truncated or appends. */
	if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
		flags |= SINK_OVERWRITE | SINK_NO_TRUNCATE;
	r = check_output(s->fd, path, flags, why, len);
	if (r < 0)
		goto fail;
	grow_pipe(s->fd);
	*ret = s;
	return 0;

fail:
	sink_close(s);
	return r;
}

/*
 * A pipe holds 64 KiB by default: a fast daemon writing into it would switch to its reader
 * every 64 KiB. Ask for 1 MiB (the default pipe-max-size); best effort.
 */
static void grow_pipe(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

struct sink *sink_close(struct sink *s)
{
	if (!s)
		return NULL;
	closep(&s->fd);
	free(s->procdir);
	free(s);
	return NULL;
}

bool sink_is_output(const struct sink *s)
{
	return s->output_mode;
}

enum kernel_gen sink_generation(const struct sink *s)
{
	return s->gen;
}

static int proc_path(const struct sink *s, const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", s->procdir ? s->procdir : DEFAULT_PROCDIR, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int sink_detect_generation(const char *procdir, enum kernel_gen *ret)
{
	struct sink tmp = { .procdir = (char *)procdir };
	char path[PROC_PATH_MAX], buf[32];
	uint64_t v;
	ssize_t n;
	int r;

	r = proc_path(&tmp, "poolsize", path, sizeof(path));
	if (r < 0)
		return r;
	n = read_text_file(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	r = parse_uint(buf, 0, UINT32_MAX, &v);
	if (r < 0)
		return r;
	/* 4096 bits until 5.17; the BLAKE2s pool of 5.18+ reports 256. */
	*ret = v == LEGACY_POOLSIZE ? KERNEL_LEGACY : KERNEL_MODERN;
	return 0;
}

static bool poll_random_readable(void)
{
	struct pollfd pfd = { .events = POLLIN };
	int r;

	pfd.fd = open(RANDOM_DEV, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (pfd.fd < 0)
		return false;
	r = poll(&pfd, 1, 0);
	close(pfd.fd);
	return r > 0 && (pfd.revents & POLLIN);
}

bool sink_crng_ready(void)
{
	uint8_t b;
	ssize_t r;

	do
		r = getrandom(&b, 1, GRND_NONBLOCK);
	while (r < 0 && errno == EINTR);
	wipe(&b, sizeof(b));
	if (r == 1)
		return true;
	/*
	 * getrandom() appeared in 3.17. Before that, /dev/random polls readable once its pool
	 * holds read_wakeup_threshold bits: the closest signal those kernels have.
	 */
	if (r < 0 && errno == ENOSYS)
		return poll_random_readable();
	return false;
}

int sink_entropy_avail(struct sink *s)
{
	int bits;

	if (s->output_mode)
		return -EOPNOTSUPP;
	if (ioctl(s->fd, RNDGETENTCNT, &bits) < 0)
		return -errno;
	return bits < 0 ? 0 : bits;
}

int sink_set_watermark(struct sink *s, unsigned int bits)
{
	char path[PROC_PATH_MAX], val[16];
	int r;

	if (s->output_mode)
		return -EOPNOTSUPP;
	r = proc_path(s, "write_wakeup_threshold", path, sizeof(path));
	if (r < 0)
		return r;
	snprintf(val, sizeof(val), "%u", bits);
	/* Since 5.18 the write succeeds and is ignored (proc_do_rointvec). */
	return write_text_file(path, val);
}

uint64_t sink_credit(uint64_t *rem, size_t bytes, unsigned int quality,
		     unsigned int max_bits_per_byte)
{
	uint64_t total_hi, total, bits_hi, bits, cap_hi, cap;

	if (quality > 1024)
		quality = 1024;
	if (max_bits_per_byte > 8)
		max_bits_per_byte = 8;
	/*
	 * In 1/1024-bit units, as 128-bit numbers in two words (hi, lo) (src/wide.h): no
	 * overflow, SIZE_MAX * 8 * 1024 + *rem < 2^78.
	 */
	total = wide_mul64(bytes, 8 * quality, &total_hi);
	total += *rem;
	total_hi += total < *rem;
	bits = total >> 10 | total_hi << 54, bits_hi = total_hi >> 10;
	cap = wide_mul64(bytes, max_bits_per_byte, &cap_hi);
	if (bits_hi > cap_hi || (bits_hi == cap_hi && bits > cap)) {
		/* Capped: carrying the remainder would credit the excess later. */
		bits = cap, bits_hi = cap_hi;
		*rem = 0;
	} else {
		*rem = total & 1023;
	}
	return bits_hi ? UINT64_MAX : bits;
}

static int add_entropy_ioctl(int fd, void *req)
{
	/*
	 * RNDADDENTROPY answers EFAULT when it could not consume every byte, e.g. a signal
	 * arrived at a page boundary of the copy; one retry is enough for that.
	 */
	for (int attempt = 0;; attempt++) {
		if (ioctl(fd, RNDADDENTROPY, req) == 0)
			return 0;
		if (errno != EFAULT || attempt > 0)
			return -errno;
	}
}

int sink_write_iov(struct sink *s, struct iovec *iov, int cnt)
{
	return s->output_mode ? writev_full(s->fd, iov, cnt) : -EINVAL;
}

int sink_add_entropy(struct sink *s, const uint8_t *buf, size_t n, unsigned int bits)
{
	struct rand_pool_info *info;
	struct pool_req req;
	int r;

	if (n == 0)
		return 0;
	if (s->output_mode)
		return write_full(s->fd, buf, n);
	if (n > INT_MAX)
		return -EINVAL;
	/* The kernel never checks entropy_count <= 8 * buf_size; we must. */
	if ((uint64_t)bits > (uint64_t)n * 8)
		bits = (unsigned int)MIN((uint64_t)n * 8, (uint64_t)UINT_MAX);
	if (bits > INT_MAX)
		bits = INT_MAX;

	if (n <= sizeof(req.buf)) {
		req.entropy_count = (int)bits;
		req.buf_size = (int)n;
		memcpy(req.buf, buf, n);
		r = add_entropy_ioctl(s->fd, &req);
		wipe(&req, offsetof(struct pool_req, buf) + n);
		return r;
	}

	info = malloc(sizeof(*info) + n);
	if (!info)
		return -ENOMEM;
	info->entropy_count = (int)bits;
	info->buf_size = (int)n;
	memcpy(info->buf, buf, n);
	r = add_entropy_ioctl(s->fd, info);
	wipe(info, sizeof(*info) + n);
	free(info);
	return r;
}

int sink_check_access(struct sink *s)
{
	struct pool_req req = { .entropy_count = 0, .buf_size = 0 };

	if (s->output_mode)
		return 0;
	return add_entropy_ioctl(s->fd, &req);
}

int sink_reseed(struct sink *s)
{
	if (s->output_mode)
		return 0;
	if (ioctl(s->fd, RNDRESEEDCRNG) == 0)
		return 0;
	/* ENODATA: the CRNG is not ready yet, so there is nothing to reseed. */
	return errno == ENODATA ? 0 : -errno;
}

static bool waits_for_pollout(const struct sink *s)
{
	return s && !s->output_mode && s->gen == KERNEL_LEGACY;
}

int sink_prepare_wait(struct sink *s, uint64_t interval_ns, struct pollfd *pfd)
{
	*pfd = (struct pollfd){ .fd = -1, .events = POLLOUT };
	/*
	 * Modern kernels never poll writable once the CRNG is ready: they are fed on the
	 * timer. Outputs are written as blocks come, with blocking writes.
	 */
	if (!waits_for_pollout(s))
		return -1;
	s->interval_ns = interval_ns;
	/*
	 * POLLOUT only when it asks for data. The kernel reports it below its own threshold;
	 * above ours (it could not be set) it would wake the loop at once, again and again,
	 * without a refill (§1.4). /dev/urandom has no poll handler and always polls
	 * writable: after one such wake the next interval goes by on the timer.
	 */
	if (s->threshold_above || now_ns() < s->quiet_until)
		return -1;
	pfd->fd = s->fd;
	/* Never without a timeout: a kernel may never report POLLOUT (§1.4). */
	return (int)MIN(interval_ns / NSEC_PER_MSEC, (uint64_t)INT_MAX);
}

int sink_wait_done(struct sink *s, short revents)
{
	s->pollout = false;
	if (revents & POLLNVAL)
		return -EBADF;
	s->pollout = revents & (POLLOUT | POLLERR | POLLHUP);
	return s->pollout;
}

/* The kernel's write_wakeup_threshold in bits, -1 when unknown. */
static int64_t kernel_threshold(const struct sink *s)
{
	char path[PROC_PATH_MAX], buf[32];
	uint64_t v;

	if (proc_path(s, "write_wakeup_threshold", path, sizeof(path)) < 0 ||
	    read_text_file(path, buf, sizeof(buf)) < 0 || parse_uint(buf, 0, INT32_MAX, &v) < 0)
		return -1;
	return (int64_t)v;
}

void sink_feed_state(struct sink *s, unsigned int watermark, struct feed_state *st)
{
	if (!waits_for_pollout(s))
		return;
	st->entropy_avail = sink_entropy_avail(s);
	st->watermark = watermark;
	/*
	 * The kernel's count decides, not the POLLOUT of the last wait (s->pollout): a known
	 * count overrides it in feed_plan() anyway, and an unknown one counts as not writable.
	 */
	st->writable = st->entropy_avail >= 0 && (unsigned int)st->entropy_avail < watermark;
	s->threshold_above = kernel_threshold(s) > (int64_t)watermark;
	if (s->pollout && !st->writable)
		s->quiet_until = st->now_ns + (s->interval_ns ? s->interval_ns : FEED_RETRY_NS);
	s->pollout = false;
}

/* Feeding policy. */

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void feed_policy_init(struct feed_policy *p, enum kernel_gen gen, uint64_t interval_ns,
		      size_t feed_bytes, bool output_mode)
{
	*p = (struct feed_policy){
		.gen = gen,
		.interval_ns = interval_ns,
		.feed_bytes = feed_bytes,
		.output_mode = output_mode,
	};
}

/*
 * Decisions, in order (now = st->now_ns, avail = st->available):
 *  1. Output mode: everything available, no pacing and no cap.
 *  2. CRNG not ready, or nothing fed yet: up to FEED_MAX_CHUNK right away (the very first
 *     injection of a ready modern kernel is feed_bytes, of a ready legacy kernel the legacy
 *     amount below).
 *  3. Modern, ready: feed_bytes once now >= last_feed + interval.
 *  4. Legacy, ready: a refill is needed when entropy_avail < watermark; when entropy_avail
 *     is unknown (< 0), when POLLOUT was seen. A known entropy_avail >= watermark overrides
 *     POLLOUT, which can be stale or come from /dev/urandom (always writable). The refill is
 *     the deficit in bytes at full credit, ceil((watermark - avail) / 8), at least feed_bytes
 *     and at most FEED_MAX_CHUNK; the caller asks again with a fresh entropy_avail until the
 *     watermark is reached. Without a refill, feed_bytes once the interval has passed.
 * Return value and *next_ns:
 *  - n > 0: inject n bytes (at most avail), call feed_done() and ask again at *next_ns:
 *    now while a phase wants more (output, not ready, legacy refill), else
 *    now + interval (the periodic feed just made).
 *  - 0 because nothing is due: *next_ns is when the next periodic feed falls due.
 *  - 0 because data is wanted but avail == 0: *next_ns = now + min(interval, 1 s) (at least
 *    1 ms), so the loop never spins; new blocks wake the caller earlier.
 * Every 0 return sets *next_ns > now. The caller refreshes crng_ready, entropy_avail and
 * writable before each call: with a stale entropy_avail a legacy refill would go on until
 * the sources run dry. It may inject fewer bytes than returned (its buffer) and report
 * what it injected to feed_done().
 */
size_t feed_plan(const struct feed_policy *p, const struct feed_state *st, uint64_t *next_ns)
{
	uint64_t now = st->now_ns, retry, due_at;
	size_t want;
	bool due, more = false;

	retry = p->interval_ns < FEED_RETRY_NS ? p->interval_ns : FEED_RETRY_NS;
	if (retry < FEED_RETRY_MIN_NS)
		retry = FEED_RETRY_MIN_NS;
	due_at = add_sat(p->last_feed_ns, p->interval_ns);
	due = !p->fed_once || now >= due_at;

	if (p->output_mode) {
		want = SIZE_MAX;
		more = true;
	} else if (!st->crng_ready) {
		want = FEED_MAX_CHUNK;
		more = true;
	} else if (p->gen == KERNEL_LEGACY) {
		bool refill = st->entropy_avail >= 0
				      ? (unsigned int)st->entropy_avail < st->watermark
				      : st->writable;

		want = 0;
		if (refill) {
			if (st->entropy_avail >= 0) {
				uint64_t deficit = st->watermark - (unsigned int)st->entropy_avail;

				want = (size_t)MIN((deficit + 7) / 8, (uint64_t)FEED_MAX_CHUNK);
			} else {
				want = FEED_MAX_CHUNK;
			}
			want = MAX(want, MIN(p->feed_bytes, (size_t)FEED_MAX_CHUNK));
			more = true;
		} else if (due) {
			want = p->feed_bytes;
		}
	} else {
		want = due ? p->feed_bytes : 0;
	}

	if (want == 0) {
		/* Nothing due (or feed_bytes 0): wake for the next periodic feed. */
		*next_ns = due ? add_sat(now, p->interval_ns ? p->interval_ns : retry) : due_at;
		if (*next_ns <= now)
			*next_ns = add_sat(now, retry);
		return 0;
	}
	if (st->available == 0) {
		*next_ns = add_sat(now, retry);
		return 0;
	}
	*next_ns = more ? now : add_sat(now, p->interval_ns);
	return MIN(want, st->available);
}

void feed_done(struct feed_policy *p, uint64_t now_ns, size_t bytes)
{
	if (bytes == 0)
		return;
	p->fed_once = true;
	p->last_feed_ns = now_ns;
}
