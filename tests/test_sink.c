// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/sink.c. ioctl, getrandom and poll are wrapped at link time: by default
 * the wrappers pass through to the kernel and record what was asked (spies); a test can
 * script their results instead (fakes). Tests that need CAP_SYS_ADMIN skip with a reason.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cap-ng.h>
#include <cmocka.h>
#include <linux/capability.h>
#include <linux/random.h>

#include "sink.h"
#include "util.h"

#define MS NSEC_PER_MSEC
#define SEC NSEC_PER_SEC

/* ---- link-time wrappers ---- */

int __wrap_ioctl(int fd, unsigned long req, ...);
int __real_ioctl(int fd, unsigned long req, ...);
ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags);
ssize_t __real_getrandom(void *buf, size_t len, unsigned int flags);
int __wrap_poll(struct pollfd *fds, nfds_t nfds, int timeout);
int __real_poll(struct pollfd *fds, nfds_t nfds, int timeout);

#define MAX_SCRIPT 8
#define SPY_BYTES 8192

static struct {
	bool fake;		/* scripted results instead of the kernel */
	int errnos[MAX_SCRIPT]; /* fake: errno per call (0 = success) */
	int entcnt;		/* fake RNDGETENTCNT answer */
	int calls;		/* RNDADDENTROPY calls */
	int other_calls;	/* every other request */
	unsigned long last_req;
	int count, size;	 /* last RNDADDENTROPY header */
	uint8_t data[SPY_BYTES]; /* its first bytes */
} io;

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	int call;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);

	io.last_req = req;
	if (req == RNDADDENTROPY) {
		const struct rand_pool_info *info = arg;

		call = io.calls++;
		io.count = info->entropy_count;
		io.size = info->buf_size;
		if (info->buf_size > 0)
			memcpy(io.data, info->buf, MIN((size_t)info->buf_size, sizeof(io.data)));
	} else {
		call = io.other_calls++;
	}
	if (!io.fake)
		return __real_ioctl(fd, req, arg);
	if (req == RNDGETENTCNT && io.errnos[call % MAX_SCRIPT] == 0) {
		*(int *)arg = io.entcnt;
		return 0;
	}
	if (io.errnos[call % MAX_SCRIPT]) {
		errno = io.errnos[call % MAX_SCRIPT];
		return -1;
	}
	return 0;
}

static struct {
	int err; /* 0: pass through; else fail with this errno */
	int calls;
} gr;

ssize_t __wrap_getrandom(void *buf, size_t len, unsigned int flags)
{
	gr.calls++;
	if (gr.err) {
		errno = gr.err;
		return -1;
	}
	return __real_getrandom(buf, len, flags);
}

static struct {
	int n; /* scripted results left; 0: pass through */
	int next;
	int ret[MAX_SCRIPT];
	int err[MAX_SCRIPT];
	short revents[MAX_SCRIPT];
	int timeouts[MAX_SCRIPT]; /* timeout of each call, scripted or not */
	int calls;
} pl;

int __wrap_poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	int i = pl.calls++;

	if (i < MAX_SCRIPT)
		pl.timeouts[i] = timeout;
	if (pl.next < pl.n) {
		int k = pl.next++;

		if (pl.ret[k] < 0) {
			errno = pl.err[k];
			return -1;
		}
		fds[0].revents = pl.revents[k];
		return pl.ret[k];
	}
	return __real_poll(fds, nfds, timeout);
}

static int reset_fakes(void **state)
{
	memset(&io, 0, sizeof(io));
	memset(&gr, 0, sizeof(gr));
	memset(&pl, 0, sizeof(pl));
	return 0;
}

/* ---- helpers ---- */

/* Whether CAP_SYS_ADMIN is in our effective set (CapEff in /proc/self/status). */
static bool have_sys_admin(void)
{
	char line[256];
	bool ret = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long caps;

		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			ret = caps & (1ULL << CAP_SYS_ADMIN);
			break;
		}
	}
	fclose(f);
	return ret;
}

/* Skip the calling test, saying why, when the kernel would refuse the ioctls. */
static bool need_sys_admin(const char *what)
{
	const char *emu = getenv("RNGD_EMU");

	/* A cross build under qemu-user (scripts/cross): the ioctl is not translated. */
	if (emu) {
		print_message("SKIP %s: under emulation (%s): qemu-user answers RNDADDENTROPY "
			      "with ENOSYS\n", what, emu);
		skip();
		return false;
	}
	if (have_sys_admin())
		return true;
	print_message("SKIP %s: no CAP_SYS_ADMIN in the effective set\n", what);
	skip();
	return false;
}

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/rngd-test-sink-XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
}

static void tmp_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

static void put_file(const char *name, const char *text)
{
	char path[128];
	int fd;

	tmp_path(path, sizeof(path), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write_full(fd, text, strlen(text)), 0);
	assert_int_equal(write_full(fd, "\n", 1), 0);
	close(fd);
}

static void rm_tmpdir(void)
{
	static const char *const names[] = { "poolsize", "write_wakeup_threshold", "out", "fifo",
					     "link" };
	char path[128];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		tmp_path(path, sizeof(path), names[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

/*
 * The descriptor above 2 that names path (/proc/self/fd), -1 if none: what the sink opened.
 * The sink is opaque; this is how a test sees its descriptor.
 */
static int fd_of(const char *path)
{
	char link[64], target[PATH_MAX];

	for (int fd = 3; fd < 1024; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, path) == 0)
			return fd;
	}
	return -1;
}

/* The newest descriptor (the highest one open above 2), -1 if none. */
static int newest_fd(void)
{
	for (int fd = 1023; fd > 2; fd--)
		if (fcntl(fd, F_GETFD) >= 0)
			return fd;
	return -1;
}

static void fill(uint8_t *buf, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 131 + seed);
}

/* ---- credit arithmetic ---- */

static void test_credit_basic(void **state)
{
	uint64_t rem = 0;

	assert_int_equal(sink_credit(&rem, 64, 1024, 8), 512);
	assert_int_equal(rem, 0);
	assert_int_equal(sink_credit(&rem, 64, 1000, 8), 500);
	assert_int_equal(rem, 0);
	/* 3 * 8 * 1000 = 24000 = 23 * 1024 + 448 */
	assert_int_equal(sink_credit(&rem, 3, 1000, 8), 23);
	assert_int_equal(rem, 448);
	assert_int_equal(sink_credit(&rem, 0, 1000, 8), 0);
	assert_int_equal(rem, 448);
	rem = 0;
	assert_int_equal(sink_credit(&rem, 1000, 0, 8), 0);
	assert_int_equal(rem, 0);
}

static void test_credit_remainder_carried(void **state)
{
	static const size_t sizes[] = { 1, 3, 7, 64, 100, 2500 };
	static const unsigned int qualities[] = { 1, 100, 700, 1000, 1023, 1024 };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(qualities); j++) {
			uint64_t rem = 0, total = 0, bytes = 0;

			for (int k = 0; k < 1000; k++) {
				uint64_t b = sink_credit(&rem, sizes[i], qualities[j], 8);

				assert_true(b <= 8 * sizes[i]);
				assert_true(rem < 1024);
				total += b;
				bytes += sizes[i];
				assert_int_equal(total, bytes * 8 * qualities[j] / 1024);
			}
		}
	}
}

static void test_credit_caps(void **state)
{
	uint64_t rem = 0;

	/* max_bits_per_byte */
	assert_int_equal(sink_credit(&rem, 64, 1024, 1), 64);
	assert_int_equal(rem, 0);
	assert_int_equal(sink_credit(&rem, 64, 1024, 4), 256);
	/* more than 8 per byte is never given, whatever is asked */
	assert_int_equal(sink_credit(&rem, 64, 1024, 9), 512);
	assert_int_equal(sink_credit(&rem, 64, 1024, UINT_MAX), 512);
	/* quality above 1024 is 1024 */
	assert_int_equal(sink_credit(&rem, 64, 5000, 8), 512);
	assert_int_equal(sink_credit(&rem, 64, UINT_MAX, 8), 512);
	assert_int_equal(rem, 0);
	/* max 0 credits nothing */
	assert_int_equal(sink_credit(&rem, 64, 1024, 0), 0);

	/* A cap drops the remainder instead of crediting it later: 8000/1024 = 7 r 832. */
	rem = 0;
	assert_int_equal(sink_credit(&rem, 1, 1000, 7), 7);
	assert_int_equal(rem, 832);
	assert_int_equal(sink_credit(&rem, 1, 1000, 7), 7); /* 8832/1024 = 8 > 7 */
	assert_int_equal(rem, 0);

	/* a garbage remainder from the caller cannot push the credit past the cap */
	rem = UINT64_MAX;
	assert_true(sink_credit(&rem, 2, 1024, 8) <= 16);
}

static void test_credit_huge(void **state)
{
	uint64_t rem = 0, b;

	/* 2^51 - 1 bytes at quality 1000: 64-bit intermediates would overflow 8*1000*bytes. */
	b = SIZE_MAX / 8192;
	assert_int_equal(sink_credit(&rem, (size_t)b, 1000, 8), b * 1000 / 128);
	assert_int_equal(rem, (b * 1000 % 128) * 8);

	rem = 0;
	assert_int_equal(sink_credit(&rem, SIZE_MAX / 8, 1024, 8), (SIZE_MAX / 8) * 8);
	assert_int_equal(rem, 0);
	/* 8 * SIZE_MAX does not fit with a 64-bit size_t: saturate (32-bit: exact) */
	rem = 0;
	assert_true(sink_credit(&rem, SIZE_MAX, 1024, 8) ==
		    (SIZE_MAX > UINT32_MAX ? UINT64_MAX : (uint64_t)SIZE_MAX * 8));
	rem = 0;
	assert_int_equal(sink_credit(&rem, SIZE_MAX, 1024, 1), SIZE_MAX);
	/* SIZE_MAX * 8 * 1000 / 1024 = SIZE_MAX * 1000 / 128, past 2^64 if 64-bit: saturate */
	rem = 0;
	assert_true(sink_credit(&rem, SIZE_MAX, 1000, 8) ==
		    (SIZE_MAX > UINT32_MAX ? UINT64_MAX : (uint64_t)SIZE_MAX * 1000 / 128));
	rem = 0;
	assert_int_equal(sink_credit(&rem, SIZE_MAX, 64, 8), SIZE_MAX / 2);
	assert_int_equal(rem, 512);
}

/* ---- feed policy ---- */

struct fake_kernel {
	struct feed_policy p;
	struct feed_state st;
	uint64_t next;
};

static void fk_init(struct fake_kernel *k, enum kernel_gen gen, bool output, bool ready)
{
	memset(k, 0, sizeof(*k));
	feed_policy_init(&k->p, gen, 60 * SEC, 64, output);
	k->st.now_ns = 1000 * SEC;
	k->st.crng_ready = ready;
	k->st.entropy_avail = ready ? 256 : 0;
	k->st.watermark = 256;
}

/* Ask, and do what was asked: take the bytes from the sources and record the feed. */
static size_t fk_step(struct fake_kernel *k)
{
	size_t n = feed_plan(&k->p, &k->st, &k->next);

	assert_true(n <= k->st.available);
	if (n == 0) {
		assert_true(k->next > k->st.now_ns);
	} else {
		assert_true(k->next >= k->st.now_ns);
		k->st.available -= n;
		feed_done(&k->p, k->st.now_ns, n);
	}
	return n;
}

static void test_policy_init(void **state)
{
	struct feed_policy p;

	memset(&p, 0xa5, sizeof(p));
	feed_policy_init(&p, KERNEL_LEGACY, 5 * SEC, 128, true);
	assert_int_equal(p.gen, KERNEL_LEGACY);
	assert_int_equal(p.interval_ns, 5 * SEC);
	assert_int_equal(p.feed_bytes, 128);
	assert_true(p.output_mode);
	assert_false(p.fed_once);
	assert_int_equal(p.last_feed_ns, 0);

	feed_done(&p, 77, 0);
	assert_false(p.fed_once);
	feed_done(&p, 77, 1);
	assert_true(p.fed_once);
	assert_int_equal(p.last_feed_ns, 77);
}

static void test_policy_not_ready(void **state)
{
	struct fake_kernel k;

	for (int gen = KERNEL_MODERN; gen <= KERNEL_LEGACY; gen++) {
		fk_init(&k, gen, false, false);
		/* nothing yet: wait, without spinning, at most a second */
		k.st.available = 0;
		assert_int_equal(fk_step(&k), 0);
		assert_true(k.next > k.st.now_ns && k.next <= k.st.now_ns + SEC);
		/* everything, in chunks of 2500, right away */
		k.st.available = 6000;
		assert_int_equal(fk_step(&k), 2500);
		assert_int_equal(k.next, k.st.now_ns);
		assert_int_equal(fk_step(&k), 2500);
		assert_int_equal(fk_step(&k), 1000);
		assert_int_equal(fk_step(&k), 0);
		assert_true(k.next > k.st.now_ns && k.next <= k.st.now_ns + SEC);
		/* still not ready a moment later: feed again, no interval pacing */
		k.st.now_ns += 1 * MS;
		k.st.available = 64;
		assert_int_equal(fk_step(&k), 64);
		/* writable / entropy_avail do not matter before readiness */
		k.st.writable = false;
		k.st.entropy_avail = 4000;
		k.st.available = 10;
		assert_int_equal(fk_step(&k), 10);
	}
}

static void test_policy_first_feed_when_ready(void **state)
{
	struct fake_kernel k;

	/* modern, ready at start: the first block goes in at once, feed_bytes of it */
	fk_init(&k, KERNEL_MODERN, false, true);
	k.st.available = 0;
	assert_int_equal(fk_step(&k), 0);
	assert_true(k.next <= k.st.now_ns + SEC);
	k.st.now_ns += 140 * MS;
	k.st.available = 2500;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);
	/* then nothing until the interval */
	assert_int_equal(fk_step(&k), 0);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);

	/* legacy, ready and full: the first block still goes in */
	fk_init(&k, KERNEL_LEGACY, false, true);
	k.st.entropy_avail = 4000;
	k.st.watermark = 3072;
	k.st.available = 100;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);

	/* the clock may start at 0 */
	fk_init(&k, KERNEL_MODERN, false, true);
	k.st.now_ns = 0;
	k.st.available = 64;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(k.next, 60 * SEC);
}

static void test_policy_modern_interval(void **state)
{
	struct fake_kernel k;
	uint64_t t0;

	fk_init(&k, KERNEL_MODERN, false, true);
	k.st.available = 64;
	assert_int_equal(fk_step(&k), 64);
	t0 = k.st.now_ns;

	/* more data arrives: not used before the interval; POLLOUT is ignored */
	k.st.available = 5000;
	k.st.writable = true;
	k.st.entropy_avail = 0;
	for (uint64_t dt = 0; dt < 60 * SEC; dt += 7 * SEC) {
		k.st.now_ns = t0 + dt;
		assert_int_equal(fk_step(&k), 0);
		assert_int_equal(k.next, t0 + 60 * SEC);
	}
	k.st.now_ns = t0 + 60 * SEC - 1;
	assert_int_equal(fk_step(&k), 0);
	assert_int_equal(k.next, t0 + 60 * SEC);
	k.st.now_ns = t0 + 60 * SEC;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(k.next, t0 + 120 * SEC);
	/* late by 30 s: feed, and the next interval counts from now */
	k.st.now_ns = t0 + 150 * SEC;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(k.next, t0 + 210 * SEC);

	/* due but no data: no spin; the block arriving later is fed at once */
	k.st.now_ns = t0 + 300 * SEC;
	k.st.available = 0;
	assert_int_equal(fk_step(&k), 0);
	assert_true(k.next > k.st.now_ns && k.next <= k.st.now_ns + SEC);
	k.st.now_ns += 10 * MS;
	k.st.available = 32;
	assert_int_equal(fk_step(&k), 32);

	/* a clock behind the last feed is not a reason to feed */
	k.st.now_ns -= 5 * SEC;
	k.st.available = 64;
	assert_int_equal(fk_step(&k), 0);
}

static void test_policy_legacy(void **state)
{
	struct fake_kernel k;
	uint64_t t0;

	fk_init(&k, KERNEL_LEGACY, false, true);
	k.st.watermark = 3072;
	k.st.entropy_avail = 3500;
	k.st.available = 64;
	assert_int_equal(fk_step(&k), 64); /* first block */
	t0 = k.st.now_ns;

	/* full and not writable: nothing until the interval */
	k.st.available = 10000;
	k.st.now_ns = t0 + 10 * SEC;
	assert_int_equal(fk_step(&k), 0);
	assert_int_equal(k.next, t0 + 60 * SEC);

	/* POLLOUT with entropy_avail below the watermark: refill in chunks until full */
	k.st.writable = true;
	k.st.entropy_avail = 0;
	assert_int_equal(fk_step(&k), 384); /* 3072 bits at 8 per byte */
	assert_int_equal(k.next, k.st.now_ns);
	k.st.entropy_avail = 2000;	    /* the kernel credited less than asked */
	assert_int_equal(fk_step(&k), 134); /* ceil(1072 / 8) */
	assert_int_equal(k.next, k.st.now_ns);
	k.st.entropy_avail = 3070; /* a small deficit: at least feed_bytes */
	assert_int_equal(fk_step(&k), 64);
	k.st.entropy_avail = 3072; /* full: POLLOUT alone does not feed */
	assert_int_equal(fk_step(&k), 0);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);

	/* below the watermark without POLLOUT (e.g. after a poll timeout) */
	k.st.writable = false;
	k.st.now_ns += SEC;
	k.st.entropy_avail = 1000;
	assert_int_equal(fk_step(&k), 259);
	/* a huge deficit is cut to 2500 bytes per call */
	k.st.watermark = UINT_MAX;
	k.st.entropy_avail = 0;
	assert_int_equal(fk_step(&k), 2500);
	k.st.watermark = 3072;

	/* entropy_avail unknown: trust POLLOUT */
	k.st.entropy_avail = -1;
	k.st.writable = true;
	k.st.available = 3000;
	assert_int_equal(fk_step(&k), 2500);
	assert_int_equal(fk_step(&k), 500);
	k.st.writable = false;
	k.st.available = 3000;
	assert_int_equal(fk_step(&k), 0);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);

	/* refill wanted, no data: no spin */
	k.st.entropy_avail = 10;
	k.st.available = 0;
	assert_int_equal(fk_step(&k), 0);
	assert_true(k.next > k.st.now_ns && k.next <= k.st.now_ns + SEC);

	/* full and quiet for a whole interval: feed_bytes for freshness */
	t0 = k.p.last_feed_ns;
	k.st.entropy_avail = 4096;
	k.st.available = 1000;
	k.st.now_ns = t0 + 60 * SEC;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);
}

static void test_policy_output_mode(void **state)
{
	struct fake_kernel k;

	fk_init(&k, KERNEL_MODERN, true, true);
	k.st.available = 0;
	assert_int_equal(fk_step(&k), 0);
	assert_true(k.next > k.st.now_ns && k.next <= k.st.now_ns + SEC);
	for (int i = 0; i < 5; i++) {
		k.st.available = 100000 + (size_t)i;
		assert_int_equal(fk_step(&k), 100000 + (size_t)i); /* all, no cap */
		assert_int_equal(k.next, k.st.now_ns);
		k.st.now_ns += 1; /* no pacing */
	}
	/* readiness and the kernel's state are irrelevant */
	k.st.crng_ready = false;
	k.st.available = 3;
	assert_int_equal(fk_step(&k), 3);
	fk_init(&k, KERNEL_LEGACY, true, true);
	k.st.entropy_avail = 4096;
	k.st.available = 7;
	assert_int_equal(fk_step(&k), 7);
	k.st.available = 9;
	assert_int_equal(fk_step(&k), 9);
}

static void test_policy_degenerate(void **state)
{
	struct fake_kernel k;

	/* interval 0: feed each time something is there; idle waits do not spin */
	fk_init(&k, KERNEL_MODERN, false, true);
	feed_policy_init(&k.p, KERNEL_MODERN, 0, 64, false);
	k.st.available = 100;
	assert_int_equal(fk_step(&k), 64);
	assert_int_equal(fk_step(&k), 36);
	assert_int_equal(fk_step(&k), 0);
	assert_true(k.next > k.st.now_ns);

	/* feed_bytes 0: nothing periodic, and no spin */
	feed_policy_init(&k.p, KERNEL_MODERN, 60 * SEC, 0, false);
	k.st.available = 100;
	assert_int_equal(fk_step(&k), 0);
	assert_int_equal(k.next, k.st.now_ns + 60 * SEC);

	/* an enormous interval does not wrap around */
	feed_policy_init(&k.p, KERNEL_MODERN, UINT64_MAX, 64, false);
	assert_int_equal(fk_step(&k), 64);
	assert_true(k.next == UINT64_MAX);
	assert_int_equal(fk_step(&k), 0);
	assert_true(k.next == UINT64_MAX);
}

/* Boot: not ready, fed as fast as blocks come, ready, then one feed per interval. */
static void test_policy_boot(void **state)
{
	struct fake_kernel k;
	uint64_t fed = 0, feeds_after_ready = 0, t_ready = 0, last = 0;

	fk_init(&k, KERNEL_MODERN, false, false);
	k.st.now_ns = 0;
	/* a 2500-byte block every 250 ms for 10 minutes (fake clock) */
	for (uint64_t t = 0; t <= 600 * SEC; t += 250 * MS) {
		size_t n;

		k.st.now_ns = t;
		k.st.available += 2500;
		/* the CRNG becomes ready once 512 bytes went in */
		k.st.crng_ready = fed >= 512;
		if (k.st.crng_ready && !t_ready)
			t_ready = t;
		while ((n = fk_step(&k)) > 0) {
			fed += n;
			if (k.st.crng_ready) {
				feeds_after_ready++;
				assert_int_equal(n, 64);
				assert_true(last == 0 || t >= last + 60 * SEC);
				last = t;
			}
		}
		if (k.st.crng_ready)
			assert_true(k.next > t);
	}
	assert_int_equal(t_ready, 250 * MS); /* fed from the first block on */
	assert_int_equal(fed, 2500 + 64 * feeds_after_ready);
	/* the last not-ready feed was at 0 s: periodic feeds at 60, 120, ... 600 s */
	assert_int_equal(feeds_after_ready, 10);
}

/* ---- the sink ---- */

static void test_open_kernel_modern(void **state)
{
	struct sink *s = NULL;
	int fd;

	make_tmpdir();
	put_file("poolsize", "256");
	assert_int_equal(sink_open(&s, "/dev/random", tmpdir), 0);
	assert_false(sink_is_output(s));
	assert_int_equal(sink_generation(s), KERNEL_MODERN);
	fd = fd_of("/dev/random");
	assert_true(fd > 2);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	s = sink_close(s);
	assert_int_equal(fd_of("/dev/random"), -1);
	assert_null(s);
	sink_close(s); /* twice is fine */

	/* procdir is where the generation is read */
	put_file("poolsize", "4096");
	assert_int_equal(sink_open(&s, "/dev/random", tmpdir), 0);
	assert_int_equal(sink_generation(s), KERNEL_LEGACY);
	s = sink_close(s);

	/* default procdir: this kernel is modern */
	assert_int_equal(sink_open(&s, "/dev/urandom", NULL), 0);
	assert_false(sink_is_output(s));
	assert_int_equal(sink_generation(s), KERNEL_MODERN);
	s = sink_close(s);

	/* a symlink to /dev/random is followed */
	{
		char link[128];

		tmp_path(link, sizeof(link), "link");
		assert_int_equal(symlink("/dev/random", link), 0);
		assert_int_equal(sink_open(&s, link, tmpdir), 0);
		assert_false(sink_is_output(s));
		s = sink_close(s);
	}
	rm_tmpdir();
}

static void test_generation(void **state)
{
	enum kernel_gen g = KERNEL_LEGACY;
	struct sink *s;
	char path[128], buf[32];

	assert_int_equal(sink_detect_generation("/proc/sys/kernel/random", &g), 0);
	assert_int_equal(g, KERNEL_MODERN); /* this machine: poolsize 256 */

	make_tmpdir();
	assert_int_equal(sink_detect_generation(tmpdir, &g), -ENOENT);
	/* no poolsize: a kernel sink still opens, as modern */
	assert_int_equal(sink_open(&s, "/dev/random", tmpdir), 0);
	assert_int_equal(sink_generation(s), KERNEL_MODERN);
	s = sink_close(s);

	put_file("poolsize", "junk");
	g = KERNEL_LEGACY;
	assert_int_equal(sink_detect_generation(tmpdir, &g), -EINVAL);
	assert_int_equal(g, KERNEL_LEGACY); /* untouched on failure */

	put_file("poolsize", "4096");
	put_file("write_wakeup_threshold", "896");
	assert_int_equal(sink_detect_generation(tmpdir, &g), 0);
	assert_int_equal(g, KERNEL_LEGACY);
	assert_int_equal(sink_open(&s, "/dev/random", tmpdir), 0);
	assert_int_equal(sink_generation(s), KERNEL_LEGACY);
	assert_int_equal(sink_set_watermark(s, 3072), 0);
	tmp_path(path, sizeof(path), "write_wakeup_threshold");
	assert_int_equal(read_text_file(path, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "3072");

	io.fake = true;
	io.entcnt = 1234;
	assert_int_equal(sink_entropy_avail(s), 1234);
	assert_true(io.last_req == RNDGETENTCNT);
	io.entcnt = -5;
	assert_int_equal(sink_entropy_avail(s), 0);
	io.errnos[io.other_calls % MAX_SCRIPT] = ENOTTY;
	assert_int_equal(sink_entropy_avail(s), -ENOTTY);
	s = sink_close(s);

	put_file("poolsize", "256");
	assert_int_equal(sink_detect_generation(tmpdir, &g), 0);
	assert_int_equal(g, KERNEL_MODERN);
	rm_tmpdir();
}

static void test_entropy_avail_real(void **state)
{
	struct sink *s;

	assert_int_equal(sink_open(&s, "/dev/random", NULL), 0);
	/* RNDGETENTCNT needs no privilege; on a ready modern kernel it is 256 */
	if (sink_crng_ready())
		assert_int_equal(sink_entropy_avail(s), 256);
	else
		assert_true(sink_entropy_avail(s) >= 0);
	s = sink_close(s);
}

static void test_add_entropy_real(void **state)
{
	uint8_t buf[64];
	struct sink *s;
	bool ready;

	if (!need_sys_admin("RNDADDENTROPY against the kernel"))
		return;
	ready = sink_crng_ready();
	assert_int_equal(sink_open(&s, "/dev/random", NULL), 0);
	assert_int_equal(sink_generation(s), KERNEL_MODERN);
	assert_true(ready); /* this machine boots with the CRNG ready */

	/* Random bytes (credit only counts before readiness, and they are real entropy). */
	assert_int_equal(getrandom(buf, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(sink_add_entropy(s, buf, sizeof(buf), 512), 0);
	assert_int_equal(io.calls, 1);
	assert_int_equal(io.count, 512);
	assert_int_equal(io.size, 64);
	assert_memory_equal(io.data, buf, sizeof(buf));

	/* more credit than 8 bits per byte is clamped before the kernel sees it */
	assert_int_equal(sink_add_entropy(s, buf, 16, 100000), 0);
	assert_int_equal(io.count, 128);
	assert_int_equal(io.size, 16);
	assert_int_equal(sink_add_entropy(s, buf, 3, UINT_MAX), 0);
	assert_int_equal(io.count, 24);
	assert_int_equal(io.size, 3);
	/* zero credit is fine (mix only) */
	assert_int_equal(sink_add_entropy(s, buf, 64, 0), 0);
	assert_int_equal(io.count, 0);

	assert_int_equal(sink_reseed(s), 0);
	assert_true(io.last_req == RNDRESEEDCRNG);
	s = sink_close(s);

	/* the same ioctls work on /dev/urandom */
	assert_int_equal(sink_open(&s, "/dev/urandom", NULL), 0);
	assert_int_equal(sink_add_entropy(s, buf, sizeof(buf), 512), 0);
	assert_int_equal(sink_reseed(s), 0);
	s = sink_close(s);
	wipe(buf, sizeof(buf));
}

static void test_add_entropy_large_real(void **state)
{
	static uint8_t buf[5000];
	struct sink *s;

	if (!need_sys_admin("large RNDADDENTROPY against the kernel"))
		return;
	assert_int_equal(getrandom(buf, sizeof(buf), 0), sizeof(buf));
	assert_int_equal(sink_open(&s, "/dev/random", NULL), 0);
	/* beyond the stack buffer: a heap request, same layout */
	assert_int_equal(sink_add_entropy(s, buf, sizeof(buf), 50000), 0);
	assert_int_equal(io.size, 5000);
	assert_int_equal(io.count, 40000);
	assert_memory_equal(io.data, buf, sizeof(buf));
	/* exactly the stack buffer */
	assert_int_equal(sink_add_entropy(s, buf, 2500, 8), 0);
	assert_int_equal(io.size, 2500);
	assert_int_equal(io.count, 8);
	assert_memory_equal(io.data, buf, 2500);
	s = sink_close(s);
	wipe(buf, sizeof(buf));
}

static void test_add_entropy_faked(void **state)
{
	uint8_t buf[100];
	struct sink *s;

	fill(buf, sizeof(buf), 7);
	assert_int_equal(sink_open(&s, "/dev/random", NULL), 0);
	io.fake = true;

	/* EPERM: no CAP_SYS_ADMIN, not retried */
	io.errnos[0] = EPERM;
	assert_int_equal(sink_add_entropy(s, buf, 64, 512), -EPERM);
	assert_int_equal(io.calls, 1);

	/* EFAULT once: retried, succeeds */
	reset_fakes(NULL);
	io.fake = true;
	io.errnos[0] = EFAULT;
	assert_int_equal(sink_add_entropy(s, buf, 64, 512), 0);
	assert_int_equal(io.calls, 2);
	assert_int_equal(io.count, 512);
	assert_int_equal(io.size, 64);
	assert_memory_equal(io.data, buf, 64);

	/* EFAULT twice: given up */
	reset_fakes(NULL);
	io.fake = true;
	io.errnos[0] = EFAULT;
	io.errnos[1] = EFAULT;
	assert_int_equal(sink_add_entropy(s, buf, 64, 512), -EFAULT);
	assert_int_equal(io.calls, 2);

	/* other errors are returned as they are, once */
	reset_fakes(NULL);
	io.fake = true;
	io.errnos[0] = EINVAL;
	assert_int_equal(sink_add_entropy(s, buf, 64, 512), -EINVAL);
	assert_int_equal(io.calls, 1);

	/* clamping, seen by the spy */
	reset_fakes(NULL);
	io.fake = true;
	assert_int_equal(sink_add_entropy(s, buf, 100, 801), 0);
	assert_int_equal(io.count, 800);
	assert_int_equal(io.size, 100);
	assert_int_equal(sink_add_entropy(s, buf, 1, 9), 0);
	assert_int_equal(io.count, 8);
	assert_int_equal(sink_add_entropy(s, buf, 100, 799), 0);
	assert_int_equal(io.count, 799);

	/* nothing to add, or more than buf_size (an int) can say: no ioctl */
	reset_fakes(NULL);
	io.fake = true;
	assert_int_equal(sink_add_entropy(s, buf, 0, 0), 0);
	assert_int_equal(sink_add_entropy(s, buf, (size_t)INT_MAX + 1, 0), -EINVAL);
	assert_int_equal(io.calls, 0);

	/* reseed: ENODATA (not ready yet) is fine, other errors are not */
	io.errnos[0] = ENODATA;
	assert_int_equal(sink_reseed(s), 0);
	io.errnos[1] = EPERM;
	assert_int_equal(sink_reseed(s), -EPERM);
	assert_int_equal(sink_reseed(s), 0);
	assert_int_equal(io.other_calls, 3);
	s = sink_close(s);
}

/* In a child without CAP_SYS_ADMIN in its effective set, the kernel answers EPERM. */
static void test_eperm_real(void **state)
{
	pid_t pid;
	int status;

	if (!need_sys_admin("EPERM after dropping CAP_SYS_ADMIN"))
		return;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint8_t buf[64] = { 0 };
		struct sink *s;
		int r;

		capng_get_caps_process();
		if (capng_update(CAPNG_DROP, CAPNG_EFFECTIVE, CAP_SYS_ADMIN) < 0 ||
		    capng_apply(CAPNG_SELECT_CAPS) < 0)
			_exit(10);
		if (have_sys_admin())
			_exit(11);
		if (sink_open(&s, "/dev/random", NULL) < 0)
			_exit(12);
		r = sink_add_entropy(s, buf, sizeof(buf), 0);
		if (r != -EPERM)
			_exit(13);
		if (sink_reseed(s) != -EPERM)
			_exit(14);
		/* RNDGETENTCNT needs no privilege */
		if (sink_entropy_avail(s) < 0)
			_exit(15);
		s = sink_close(s);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_crng_ready(void **state)
{
	/* this machine: ready since early boot (random.trust_cpu) */
	assert_true(sink_crng_ready());
	assert_int_equal(gr.calls, 1);

	gr.err = EAGAIN;
	assert_false(sink_crng_ready());

	/* no getrandom (before 3.17): /dev/random polled for POLLIN, no wait */
	gr.err = ENOSYS;
	assert_true(sink_crng_ready());
	assert_int_equal(pl.calls, 1);
	assert_int_equal(pl.timeouts[0], 0);
	pl.n = 1;
	pl.ret[0] = 0;
	assert_false(sink_crng_ready());
}

/*
 * The main loop's wait on the sink: only a legacy kernel sink asks for POLLOUT, never without
 * a timeout (the feed interval); the sink decodes what poll() reported. (poll() itself, with
 * its EINTR, is the loop's: one poll() over every descriptor.)
 */
static void test_wait(void **state)
{
	struct pollfd pfd;
	struct sink *s;

	/* no sink (test mode): nothing to wait for */
	assert_int_equal(sink_prepare_wait(NULL, 60 * SEC, &pfd), -1);
	assert_int_equal(pfd.fd, -1);

	/* modern kernels are fed on the timer: no POLLOUT, on either device */
	assert_int_equal(sink_open(&s, "/dev/random", NULL), 0);
	assert_int_equal(sink_prepare_wait(s, 60 * SEC, &pfd), -1);
	assert_int_equal(pfd.fd, -1);
	s = sink_close(s);
	assert_int_equal(sink_open(&s, "/dev/urandom", NULL), 0);
	assert_int_equal(sink_prepare_wait(s, 60 * SEC, &pfd), -1);
	assert_int_equal(pfd.fd, -1);
	s = sink_close(s);

	/* legacy: POLLOUT on the sink, at most the feed interval */
	make_tmpdir();
	put_file("poolsize", "4096");
	assert_int_equal(sink_open(&s, "/dev/random", tmpdir), 0);
	assert_int_equal(sink_prepare_wait(s, 60 * SEC, &pfd), 60000);
	assert_int_equal(pfd.fd, fd_of("/dev/random"));
	assert_true(pfd.fd > 2);
	assert_true(pfd.events == POLLOUT);
	assert_int_equal(sink_prepare_wait(s, 1500 * MS, &pfd), 1500);
	assert_int_equal(sink_prepare_wait(s, UINT64_MAX, &pfd), INT_MAX);
	/* modern and ready underneath: /dev/random never polls writable */
	if (sink_crng_ready()) {
		assert_int_equal(poll(&pfd, 1, 0), 0);
		assert_int_equal(sink_wait_done(s, pfd.revents), 0);
	}
	/* what poll() may report */
	assert_int_equal(sink_wait_done(s, POLLOUT), 1);
	assert_int_equal(sink_wait_done(s, 0), 0);
	assert_int_equal(sink_wait_done(s, POLLERR), 1);
	assert_int_equal(sink_wait_done(s, POLLHUP), 1);
	assert_int_equal(sink_wait_done(s, POLLNVAL), -EBADF);
	assert_int_equal(sink_wait_done(s, POLLOUT | POLLNVAL), -EBADF);
	s = sink_close(s);
	rm_tmpdir();
}

/*
 * The main loop's use of the sink on a legacy kernel, as daemon_run() and feed_cycle() do
 * it, for secs seconds: a sink on /dev/urandom (it always polls writable), a fake legacy
 * procdir, and a kernel that holds 3200 bits, above our watermark (3072). Returns the CPU
 * time used, in ns; *wakes gets the number of loop iterations.
 */
static uint64_t legacy_loop(struct sink *s, uint64_t secs, int *wakes)
{
	struct feed_policy pol;
	struct timespec t0, t1;
	uint64_t end = now_ns() + secs * SEC, interval = 60 * SEC, next = 0;

	feed_policy_init(&pol, KERNEL_LEGACY, interval, 64, false);
	io.fake = true;
	io.entcnt = 3200;
	*wakes = 0;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	for (uint64_t now = now_ns(); now < end; now = now_ns()) {
		struct feed_state st = { .now_ns = now, .crng_ready = true, .available = 2500 };
		struct pollfd pfd;
		size_t want;
		int timeout;
		int64_t left;

		sink_feed_state(s, 3072, &st);
		want = feed_plan(&pol, &st, &next);
		if (want > 0)
			feed_done(&pol, now, want);
		timeout = sink_prepare_wait(s, interval, &pfd);
		/* The feed timer (next), and the test's end. */
		left = (int64_t)(MIN(next, end) - now) / (int64_t)MS + 1;
		if (timeout < 0 || left < timeout)
			timeout = (int)MAX(left, 0);
		assert_true(poll(&pfd, 1, timeout) >= 0);
		if (pfd.fd >= 0)
			sink_wait_done(s, pfd.revents);
		++*wakes;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	io.fake = false;
	return (uint64_t)(t1.tv_sec - t0.tv_sec) * SEC + (uint64_t)t1.tv_nsec -
	       (uint64_t)t0.tv_nsec;
}

/*
 * Issue 12: the loop polled a legacy sink for POLLOUT whenever data waited but refilled only
 * below its own watermark; with the kernel's threshold above it (the unit's
 * sink_set_watermark() fails) or a sink that always polls writable, a busy loop. It sleeps.
 */
static void legacy_case(const char *threshold, uint64_t secs, const char *what)
{
	struct sink *s;
	uint64_t cpu;
	int wakes;

	make_tmpdir();
	put_file("poolsize", "4096");
	if (threshold)
		put_file("write_wakeup_threshold", threshold);
	assert_int_equal(sink_open(&s, "/dev/urandom", tmpdir), 0);
	assert_int_equal(sink_generation(s), KERNEL_LEGACY);
	cpu = legacy_loop(s, secs, &wakes);
	print_message("%s: %d wake-ups, %.3f ms CPU in %" PRIu64 " s\n", what, wakes,
		      (double)cpu / MS, secs);
	/*
	 * The busy loop this guards against woke thousands of times and used the
	 * seconds; a sleeping loop's CPU time is noise (the scheduler charges whole
	 * ticks, ASan and a loaded machine add to it: 11.6 ms once), so the bound on it
	 * is 5 % of the time, far below a busy loop and far above noise.
	 */
	assert_true(cpu < secs * SEC / 20);
	assert_true(wakes < 10);
	sink_close(s);
	rm_tmpdir();
}

static void test_legacy_loop_sleeps(void **state)
{
	/* The kernel's threshold above ours: POLLOUT is never waited for. */
	legacy_case("3500", 5, "threshold above ours");
	/* Threshold unknown, a device that always polls writable: one wake, then the timer. */
	legacy_case(NULL, 2, "always writable");
}

/* A device node name (made here) that sink_open_flags() must refuse, saying what. */
static void refused_node(const char *name, mode_t type, dev_t dev, const char *what)
{
	char path[128], why[256];
	struct sink *s = NULL;

	tmp_path(path, sizeof(path), name);
	if (mknod(path, type | 0600, dev) < 0) {
		print_message("%s node: cannot mknod (%s), not checked\n", what, strerror(errno));
		return;
	}
	assert_int_equal(sink_open_flags(&s, path, NULL, SINK_OVERWRITE, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, what));
	assert_null(s);
	unlink(path);
}

static void test_output_file(void **state)
{
	uint8_t buf[3000], back[3100];
	char path[128], why[256];
	struct pollfd pfd;
	struct stat st;
	struct sink *s;
	int fd;

	make_tmpdir();
	tmp_path(path, sizeof(path), "out");
	fill(buf, sizeof(buf), 3);

	/* created 0600 */
	assert_int_equal(sink_open(&s, path, NULL), 0);
	assert_true(sink_is_output(s));
	assert_true(fcntl(fd_of(path), F_GETFD) & FD_CLOEXEC);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(sink_add_entropy(s, buf, 1000, 8000), 0);
	assert_int_equal(sink_add_entropy(s, buf + 1000, 2000, 0), 0);
	assert_int_equal(io.calls + io.other_calls, 0); /* no ioctls in output mode */
	assert_int_equal(sink_reseed(s), 0);
	assert_int_equal(io.other_calls, 0);
	assert_int_equal(sink_entropy_avail(s), -EOPNOTSUPP);
	assert_int_equal(sink_set_watermark(s, 1), -EOPNOTSUPP);
	/* an output is written with blocking writes: the loop never waits on it */
	assert_int_equal(sink_prepare_wait(s, 60 * SEC, &pfd), -1);
	assert_int_equal(pfd.fd, -1);
	s = sink_close(s);
	assert_int_equal(fd_of(path), -1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(read_full(fd, back, sizeof(back)), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	close(fd);

	/* an existing file that is not empty is refused, untouched (issue 12) ... */
	assert_int_equal(sink_open_flags(&s, path, NULL, 0, why, sizeof(why)), -EEXIST);
	assert_non_null(strstr(why, "exists and is not empty"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, sizeof(buf));
	assert_int_equal(sink_open(&s, path, NULL), -EEXIST);
	/* ... and truncated when asked to (--force-output) */
	assert_int_equal(sink_open_flags(&s, path, NULL, SINK_OVERWRITE, why, sizeof(why)), 0);
	assert_int_equal(sink_add_entropy(s, buf, 10, 0), 0);
	s = sink_close(s);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 10);
	/* an empty one is fine without it */
	assert_int_equal(truncate(path, 0), 0);
	assert_int_equal(sink_open(&s, path, NULL), 0);
	s = sink_close(s);
	/* block devices and memory devices are refused, unopened (nodes made here, as root) */
	refused_node("mem", S_IFCHR, makedev(1, 1), "memory device");
	refused_node("disk", S_IFBLK, makedev(7, 0), "block device");
	tmp_path(path, sizeof(path), "out");

	/* a directory that does not exist */
	tmp_path(path, sizeof(path), "nodir/out");
	fd = newest_fd();
	assert_int_equal(sink_open(&s, path, NULL), -ENOENT);
	assert_null(s); /* untouched */
	assert_int_equal(newest_fd(), fd); /* nothing left open */
	assert_int_equal(sink_open(&s, tmpdir, NULL), -EISDIR);
	assert_null(s);
	/* another character device, e.g. /dev/null, is an output */
	assert_int_equal(sink_open(&s, "/dev/null", NULL), 0);
	assert_true(sink_is_output(s));
	assert_int_equal(sink_add_entropy(s, buf, 100, 0), 0);
	s = sink_close(s);
	rm_tmpdir();
}

static void test_output_fifo(void **state)
{
	uint8_t buf[1000], back[1100];
	struct pollfd pfd;
	char path[128];
	struct sink *s;
	int rfd;

	make_tmpdir();
	tmp_path(path, sizeof(path), "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	/* a reader first, so that the sink's open does not block */
	rfd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	assert_true(rfd >= 0);
	assert_int_equal(sink_open(&s, path, NULL), 0);
	assert_true(sink_is_output(s));
	assert_int_equal(sink_prepare_wait(s, 60 * SEC, &pfd), -1);
	assert_int_equal(pfd.fd, -1);
	fill(buf, sizeof(buf), 11);
	assert_int_equal(sink_add_entropy(s, buf, sizeof(buf), 8000), 0);
	assert_int_equal(read(rfd, back, sizeof(back)), sizeof(buf));
	assert_memory_equal(back, buf, sizeof(buf));
	/* a full pipe: still no wait, the write blocks until the reader catches up */
	{
		int wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);

		assert_true(wfd >= 0);
		while (write(wfd, buf, sizeof(buf)) > 0)
			;
		assert_int_equal(errno, EAGAIN);
		assert_int_equal(sink_prepare_wait(s, 60 * SEC, &pfd), -1);
		assert_int_equal(pfd.fd, -1);
		while (read(rfd, back, sizeof(back)) > 0)
			;
		close(wfd);
	}
	/* the reader goes away: EPIPE (SIGPIPE is the caller's business) */
	close(rfd);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(sink_add_entropy(s, buf, 10, 0), -EPIPE);
	signal(SIGPIPE, SIG_DFL);
	s = sink_close(s);
	rm_tmpdir();
}

static void test_output_stdout(void **state)
{
	static const char *const names[] = { "-", "/dev/stdout" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char out[PATH_MAX];
		struct stat a, b;
		struct sink *s;
		ssize_t n;
		int fd;

		n = readlink("/proc/self/fd/1", out, sizeof(out) - 1);
		assert_true(n > 0);
		out[n] = '\0';
		assert_int_equal(sink_open(&s, names[i], NULL), 0);
		assert_true(sink_is_output(s));
		fd = fd_of(out); /* the sink's duplicate of stdout */
		assert_true(fd > 2);
		assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		assert_int_equal(fstat(fd, &a), 0);
		assert_int_equal(fstat(STDOUT_FILENO, &b), 0);
		assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
		assert_int_equal(sink_add_entropy(s, (const uint8_t *)"", 0, 0), 0);
		s = sink_close(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credit_basic),
		cmocka_unit_test(test_credit_remainder_carried),
		cmocka_unit_test(test_credit_caps),
		cmocka_unit_test(test_credit_huge),
		cmocka_unit_test(test_policy_init),
		cmocka_unit_test(test_policy_not_ready),
		cmocka_unit_test(test_policy_first_feed_when_ready),
		cmocka_unit_test(test_policy_modern_interval),
		cmocka_unit_test(test_policy_legacy),
		cmocka_unit_test(test_policy_output_mode),
		cmocka_unit_test(test_policy_degenerate),
		cmocka_unit_test(test_policy_boot),
		cmocka_unit_test_setup(test_open_kernel_modern, reset_fakes),
		cmocka_unit_test_setup(test_generation, reset_fakes),
		cmocka_unit_test_setup(test_entropy_avail_real, reset_fakes),
		cmocka_unit_test_setup(test_add_entropy_real, reset_fakes),
		cmocka_unit_test_setup(test_add_entropy_large_real, reset_fakes),
		cmocka_unit_test_setup(test_add_entropy_faked, reset_fakes),
		cmocka_unit_test_setup(test_eperm_real, reset_fakes),
		cmocka_unit_test_setup(test_crng_ready, reset_fakes),
		cmocka_unit_test_setup(test_wait, reset_fakes),
		cmocka_unit_test_setup(test_legacy_loop_sleeps, reset_fakes),
		cmocka_unit_test_setup(test_output_file, reset_fakes),
		cmocka_unit_test_setup(test_output_fifo, reset_fakes),
		cmocka_unit_test_setup(test_output_stdout, reset_fakes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
