// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for src/source.c and src/sources/file.c: option validation, set rules, the
 * reader threads with regular-file and FIFO sources, stop latency, the failure policy and
 * the consumer side. Configurations are built by hand (no conf.c). source.c is compiled
 * here with a driver table of the file source alone, so that the machine's own hardware
 * sources (hwrng, via) stay out of these tests.
 */
#include "config.h"

#include "source.h"
#include "util.h"

/* The driver table of these tests, linked instead of src/sources/table.c. */
extern const struct source_ops source_file;
const struct source_ops *const source_drivers[] = { &source_file };
const size_t source_n_drivers = ARRAY_SIZE(source_drivers);

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fips.h"
#include "log.h"
#include "pool.h"
#include "source_internal.h"
#include "source_set.h"
#include "util.h"

#define MAX_AGE (60 * NSEC_PER_SEC)
#define BLOCK FIPS_BLOCK_BYTES

/*
 * Copy up to n fresh tested bytes of src into buf through the consumer API (as
 * source_take() did): peek and consume until n or nothing is left. Returns the bytes.
 */
static size_t take(struct source *src, uint8_t *buf, size_t n, uint64_t now, uint64_t max_age_ns)
{
	struct iovec iov[8];
	size_t done = 0, got;

	/* source_peek() drops the stale blocks, also when nothing is taken (n == 0). */
	do {
		size_t used = source_peek(src, iov, ARRAY_SIZE(iov), n - done, now, max_age_ns,
					  &got);

		for (size_t i = 0; i < used; i++) {
			memcpy(buf + done, iov[i].iov_base, iov[i].iov_len);
			done += iov[i].iov_len;
		}
		source_consume(src, got);
	} while (got > 0 && done < n);
	return done;
}

/* ---- hand-built configuration ---- */

struct sec {
	struct conf_section s;
	struct conf_kv kv[8];
};

/* pairs: key, value, key, value, ..., NULL */
static void sec_make(struct sec *x, const char *name, unsigned int line, ...)
{
	va_list ap;
	const char *k;

	memset(x, 0, sizeof(*x));
	x->s.name = (char *)name;
	x->s.type = (char *)name;
	x->s.line = line;
	x->s.kv = x->kv;
	va_start(ap, line);
	while ((k = va_arg(ap, const char *))) {
		x->kv[x->s.n_kv].key = (char *)k;
		x->kv[x->s.n_kv].value = va_arg(ap, char *);
		x->kv[x->s.n_kv].line = line + 1 + (unsigned int)x->s.n_kv;
		x->s.n_kv++;
	}
	va_end(ap);
}

/* A conf holding copies of the sections of x[0..n-1]. */
static void conf_make(struct conf *c, struct sec *x, size_t n)
{
	static struct conf_section secs[8];

	assert_true(n <= 8);
	for (size_t i = 0; i < n; i++)
		secs[i] = x[i].s;
	memset(c, 0, sizeof(*c));
	c->path = (char *)"test.conf";
	c->sections = secs;
	c->n_sections = n;
}

/* ---- files ---- */

static char tmpdir[64];

static int setup_dir(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/rngd-test-source-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *tmp_path(const char *name)
{
	static char buf[4][128];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, 128, "%s/%s", tmpdir, name);
	return p;
}

static void write_file(const char *path, const uint8_t *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write_full(fd, data, n), 0);
	close(fd);
}

static void random_bytes(uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);

		assert_true(r > 0);
		p += r;
		n -= (size_t)r;
	}
}

static bool is_zero_block(const uint8_t *b)
{
	for (size_t i = 0; i < BLOCK; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * Input of 4 seed bytes and nblocks blocks; the blocks listed in zero[] (ended by -1) are
 * all zero and fail, and every other block passes: a random block that fails (about one in
 * 1,250) is drawn again, so that no test depends on chance (one more failure is one more
 * back-off of the reader, which ran a drain past its deadline in CI). *want gets the blocks
 * that pass, replayed with our own FIPS context, concatenated; returns their number.
 */
static size_t make_input(uint8_t **in, size_t *in_len, uint8_t **want, size_t nblocks,
			 const int *zero)
{
	struct fips_ctx ctx;
	size_t npass = 0;

	*in_len = 4 + nblocks * BLOCK;
	*in = malloc(*in_len);
	*want = malloc(nblocks * BLOCK);
	assert_non_null(*in);
	assert_non_null(*want);
	random_bytes(*in, *in_len);
	for (const int *z = zero; z && *z >= 0; z++)
		memset(*in + 4 + (size_t)*z * BLOCK, 0, BLOCK);
	fips_init(&ctx, *in);
	for (size_t i = 0; i < nblocks; i++) {
		uint8_t *b = *in + 4 + i * BLOCK;
		struct fips_ctx before = ctx;

		while (fips_test_block(&ctx, b) != 0 && !is_zero_block(b)) {
			ctx = before;
			random_bytes(b, BLOCK);
		}
		if (!is_zero_block(b))
			memcpy(*want + BLOCK * npass++, b, BLOCK);
	}
	return npass;
}

static struct source_set *one_file_set(const char *path)
{
	static struct sec x;
	static struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];

	sec_make(&x, "file:t", 1, "path", path, NULL);
	conf_make(&c, &x, 1);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_size(set), 1);
	return set;
}

static enum source_state state_of(struct source *src)
{
	struct source_stats st;

	source_get_stats(src, &st);
	return st.state;
}

static void wait_wake(int efd, int ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	uint64_t v;

	if (poll(&p, 1, ms) > 0)
		assert_int_equal(read(efd, &v, sizeof(v)), (ssize_t)sizeof(v));
}

/*
 * Take everything the source publishes into out until done() says so or 60 s pass.
 * Returns the number of bytes taken.
 */
static size_t drain(struct source *src, int efd, uint8_t *out, size_t cap,
		    bool (*done)(struct source *src, size_t got, size_t want), size_t want)
{
	uint64_t deadline = now_ns() + 60 * NSEC_PER_SEC;
	size_t got = 0;

	while (now_ns() < deadline) {
		size_t n = take(src, out + got, cap - got, now_ns(), MAX_AGE);

		got += n;
		if (n == 0 && done(src, got, want))
			break;
		if (n == 0)
			wait_wake(efd, 100);
	}
	return got;
}

/*
 * Until the end of the file: failed with ENODATA and nothing left to take (failed with
 * another error is a source given up on, which no test here expects).
 */
static bool until_end(struct source *src, size_t got, size_t want)
{
	struct source_stats st;

	source_get_stats(src, &st);
	return st.state == SOURCE_FAILED && st.last_error == ENODATA &&
	       source_available(src, now_ns(), MAX_AGE) == 0;
}

static bool until_bytes(struct source *src, size_t got, size_t want)
{
	return got >= want;
}

/* An eventfd for a set's wakes (source_set_start()), as the daemon's loop has. */
static int wake_fd(void)
{
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	assert_true(efd >= 0);
	return efd;
}

/* one_file_set(path), opened: its one source usable. */
static struct source_set *opened_file_set(const char *path)
{
	struct source_set *set = one_file_set(path);

	assert_int_equal(source_set_init(set), 1);
	return set;
}

/* opened_file_set(path) with its reader thread started, waking efd. */
static struct source_set *started_file_set(const char *path, int efd)
{
	struct source_set *set = opened_file_set(path);

	assert_int_equal(source_set_start(set, efd), 0);
	return set;
}

/* Wait, woken through efd, until src is in state; fails after 60 s (CI: a loaded 2-core VM). */
static void wait_state(struct source *src, int efd, enum source_state state)
{
	uint64_t deadline = now_ns() + 60 * NSEC_PER_SEC;

	while (state_of(src) != state && now_ns() < deadline)
		wait_wake(efd, 100);
	assert_int_equal(state_of(src), state);
}

/* Stop set's threads, which must take less than 500 ms; what: where they wait, for the log. */
static void stop_promptly(struct source_set *set, const char *what)
{
	uint64_t t0 = now_ns(), dt;

	source_set_stop(set);
	dt = now_ns() - t0;
	print_message("stop %s took %.3f ms\n", what, (double)dt / NSEC_PER_MSEC);
	assert_true(dt < 500 * NSEC_PER_MSEC);
}

/*
 * The end of a test over the file tmp_path(name): set freed (its threads stopped first),
 * wfd (unless -1) and efd closed, in, want and got freed, the file removed.
 */
static void end_file_test(struct source_set *set, const char *name, int efd, int wfd, uint8_t *in,
			  uint8_t *want, uint8_t *got)
{
	source_set_free(set);
	if (wfd >= 0)
		close(wfd);
	close(efd);
	free(in);
	free(want);
	free(got);
	unlink(tmp_path(name));
}

/*
 * A FIFO at tmp_path(name), held open read-write by the test: a writer is always there, so
 * reads block instead of seeing end of file. Returns the descriptor.
 */
static int held_fifo(const char *name)
{
	int wfd;

	assert_int_equal(mkfifo(tmp_path(name), 0600), 0);
	wfd = open(tmp_path(name), O_RDWR | O_CLOEXEC);
	assert_true(wfd >= 0);
	return wfd;
}

/* ---- option validation ---- */

static ssize_t dummy_read(struct source *src, void *buf, size_t max)
{
	return 0;
}

static const char *const colours[] = { "red", "green", NULL };
static const char *const no_colours[] = { NULL };

static void test_check_drivers(void **state)
{
	struct option_spec good_opts[] = {
		{ .key = "n", .type = OPTION_UINT, .def = "5", .min = 1, .max = 9 },
		{ .key = "c", .type = OPTION_CHOICE, .def = "red", .choices = colours },
		{ .key = "p", .type = OPTION_PATH, .def = "/dev/hwrng" },
		{ .key = "b", .type = OPTION_BOOL, .def = "no" },
		{ 0 },
	};
	struct option_spec opts[3];
	struct source_ops a = { .name = "a", .read = dummy_read, .options = good_opts };
	struct source_ops b = { .name = "b", .read = dummy_read, .options = opts };
	const struct source_ops *tab[] = { &a, &b };
	char why[256];

	assert_int_equal(source_check_drivers(source_drivers, source_n_drivers, why, sizeof(why)),
			 0);
	memset(opts, 0, sizeof(opts));
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), 0);

	b.name = "a";
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "twice"));
	b.name = "";
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	b.name = "b:x";
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	b.name = "b";
	b.read = NULL;
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "no read"));
	b.read = dummy_read;
	b.quality = 1025;
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	b.quality = 1024;

	opts[0] = (struct option_spec){ .key = "n", .type = OPTION_UINT, .min = 9, .max = 1 };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "min > max"));
	opts[0] = (struct option_spec){
		.key = "n", .type = OPTION_UINT, .def = "10", .min = 1, .max = 9
	};
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad default"));
	opts[0] = (struct option_spec){ .key = "c", .type = OPTION_CHOICE };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "no choices"));
	opts[0] = (struct option_spec){ .key = "c", .type = OPTION_CHOICE, .choices = no_colours };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[0] = (struct option_spec){
		.key = "c", .type = OPTION_CHOICE, .choices = colours, .def = "blue"
	};
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[0] = (struct option_spec){ .key = "p", .type = OPTION_PATH, .def = "dev" };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[0] = (struct option_spec){ .key = "b", .type = OPTION_BOOL, .def = "maybe" };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[0] = (struct option_spec){ .key = "quality", .type = OPTION_UINT, .max = 9 };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "common"));
	opts[0] = (struct option_spec){ .key = "x", .type = OPTION_BOOL };
	opts[1] = (struct option_spec){ .key = "x", .type = OPTION_BOOL };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[1] = (struct option_spec){ .key = "", .type = OPTION_BOOL };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[1] = (struct option_spec){ .key = "y", .type = (enum option_type)99 };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), -EINVAL);
	opts[1] = (struct option_spec){ 0 };
	assert_int_equal(source_check_drivers(tab, 2, why, sizeof(why)), 0);
}

/* Expect source_check_section to refuse; bad_key is the offending key or NULL. */
static void expect_bad(struct sec *x, const char *bad_key, const char *why_part)
{
	const struct conf_kv *bad = (const struct conf_kv *)1;
	char why[256];

	assert_int_equal(source_check_section(&x->s, &bad, why, sizeof(why)), -EINVAL);
	if (bad_key) {
		assert_non_null(bad);
		assert_string_equal(bad->key, bad_key);
	} else {
		assert_null(bad);
	}
	if (!strstr(why, why_part))
		fail_msg("why '%s' lacks '%s'", why, why_part);
}

static void test_check_section(void **state)
{
	const struct conf_kv *bad;
	char why[256];
	struct sec x;
	char name[64];

	sec_make(&x, "file:usb0", 1, "path", "/tmp/x", "quality", "1024", "enabled", "no", NULL);
	assert_int_equal(source_check_section(&x.s, &bad, why, sizeof(why)), 0);
	assert_null(bad);
	sec_make(&x, "file:a.B_9-z", 1, "path", "/run/trng", NULL);
	assert_int_equal(source_check_section(&x.s, &bad, why, sizeof(why)), 0);
	snprintf(name, sizeof(name), "file:%s", "0123456789abcdef0123456789abcdef");
	sec_make(&x, name, 1, "path", "/x", NULL);
	assert_int_equal(source_check_section(&x.s, &bad, why, sizeof(why)), 0);

	sec_make(&x, "nosuch", 1, NULL);
	expect_bad(&x, NULL, "unknown source 'nosuch'");
	sec_make(&x, "nosuch:x", 1, NULL);
	expect_bad(&x, NULL, "unknown source 'nosuch'");
	sec_make(&x, "", 1, NULL);
	expect_bad(&x, NULL, "without a name");
	sec_make(&x, "file", 1, "path", "/x", NULL);
	expect_bad(&x, NULL, "needs an instance name");
	sec_make(&x, "file:", 1, "path", "/x", NULL);
	expect_bad(&x, NULL, "bad instance name");
	sec_make(&x, "file:a/b", 1, "path", "/x", NULL);
	expect_bad(&x, NULL, "bad instance name");
	sec_make(&x, "file:a b", 1, "path", "/x", NULL);
	expect_bad(&x, NULL, "bad instance name");
	snprintf(name, sizeof(name), "file:%s", "0123456789abcdef0123456789abcdefX");
	sec_make(&x, name, 1, "path", "/x", NULL);
	expect_bad(&x, NULL, "bad instance name");

	sec_make(&x, "file:a", 1, "path", "/x", "colour", "red", NULL);
	expect_bad(&x, "colour", "unknown key");
	sec_make(&x, "file:a", 1, "path", "/x", "path", "/y", NULL);
	expect_bad(&x, "path", "twice");
	sec_make(&x, "file:a", 1, "path", "/x", "enabled", "perhaps", NULL);
	expect_bad(&x, "enabled", "not a boolean (yes or no)");
	sec_make(&x, "file:a", 1, "path", "/x", "quality", "1025", NULL);
	expect_bad(&x, "quality", "out of range 0..1024");
	sec_make(&x, "file:a", 1, "path", "/x", "quality", "12k", NULL);
	expect_bad(&x, "quality", "not a decimal number");
	sec_make(&x, "file:a", 1, "path", "/x", "quality", "", NULL);
	expect_bad(&x, "quality", "not a decimal number");
	sec_make(&x, "file:a", 1, "path", "relative/x", NULL);
	expect_bad(&x, "path", "not an absolute path");
	sec_make(&x, "file:a", 1, "quality", "0", NULL);
	expect_bad(&x, NULL, "key 'path' is required");
	sec_make(&x, "file:a", 1, "path", NULL, NULL);
	expect_bad(&x, "path", "no value");
}

static void test_refuse_kernel_random(void **state)
{
	char *link = tmp_path("urandom-link");
	char *link2 = tmp_path("random-link");
	struct sec x;

	sec_make(&x, "file:a", 1, "path", "/dev/urandom", NULL);
	expect_bad(&x, NULL, "refusing /dev/urandom as a source: it is the kernel's own output");
	sec_make(&x, "file:a", 1, "path", "/dev/random", NULL);
	expect_bad(&x, NULL, "refusing /dev/random as a source: it is the kernel's own output");
	assert_int_equal(symlink("/dev/urandom", link), 0);
	sec_make(&x, "file:a", 1, "path", link, NULL);
	expect_bad(&x, NULL, "refusing /dev/urandom as a source: it is the kernel's own output");
	assert_int_equal(symlink("/dev/random", link2), 0);
	sec_make(&x, "file:a", 1, "path", link2, NULL);
	expect_bad(&x, NULL, "refusing /dev/random");
	sec_make(&x, "file:a", 1, "path", "/dev/../dev/./urandom", NULL);
	expect_bad(&x, NULL, "refusing /dev/urandom");
	/* A device node with the same numbers under another name. */
	if (mknod(tmp_path("ur-node"), S_IFCHR | 0600, makedev(1, 9)) == 0) {
		sec_make(&x, "file:a", 1, "path", tmp_path("ur-node"), NULL);
		expect_bad(&x, NULL, "refusing /dev/urandom");
	} else {
		print_message("mknod not permitted: device-number check not tested\n");
	}
	unlink(link);
	unlink(link2);
	unlink(tmp_path("ur-node"));
}

static void test_print_options(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(source_print_options("file", f), 0);
	assert_int_equal(source_print_options("file:x", f), 0);
	assert_int_equal(source_print_options("nosuch", f), -ENOENT);
	fclose(f);
	assert_non_null(strstr(buf, "file:NAME: "));
	assert_non_null(strstr(buf, "  path="));
	assert_non_null(strstr(buf, "  enabled=yes  (yes/no)"));
	assert_non_null(strstr(buf, "  quality=  (0..1024)"));
	free(buf);
}

/* ---- sets ---- */

/* Load text as "test.conf" into c through conf, as the daemon does. */
static int load_conf(struct conf *c, const char *text, char *err, size_t len)
{
	return conf_load_string(c, "test.conf", text, strlen(text), err, len);
}

static void test_set_new(void **state)
{
	struct sec x[3];
	struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];

	conf_make(&c, NULL, 0);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	/* The file driver is not on by default: nothing without configuration. */
	assert_int_equal(source_set_size(set), 0);
	assert_int_equal(source_set_init(set), 0);
	source_set_free(set);
	source_set_free(NULL);

	sec_make(&x[0], "file:a", 1, "path", "/nonexistent/a", NULL);
	sec_make(&x[1], "file:b", 4, "path", "/nonexistent/b", "enabled", "no", NULL);
	conf_make(&c, x, 2);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_size(set), 2);
	assert_non_null(source_set_find(set, "file:b"));
	assert_null(source_set_find(set, "file:c"));
	assert_string_equal(source_name(source_set_get(set, 0)), "file:a");
	assert_null(source_set_get(set, 2));
	/*
	 * file:a is not there yet: waiting for its path (usable, a reason recorded); file:b
	 * is disabled.
	 */
	assert_int_equal(source_set_init(set), 1);
	{
		struct source_stats st;

		source_get_stats(source_set_find(set, "file:a"), &st);
		assert_int_equal(st.state, SOURCE_WAITING);
		assert_int_equal(st.last_error, ENOENT);
		assert_non_null(strstr(st.last_error_text, "/nonexistent/a"));
		source_get_stats(source_set_find(set, "file:b"), &st);
		assert_int_equal(st.state, SOURCE_ABSENT);
		assert_int_equal(st.last_error, 0);
	}
	source_set_free(set);

	/*
	 * Section errors are found once, when conf takes the section (source_check_section()
	 * through conf's check), and name the file, the line and the key.
	 */
	conf_init(&c, source_check_section);
	assert_int_equal(load_conf(&c,
				   "[source file:a]\npath = /nonexistent/a\n\n"
				   "[source file:b]\npath = /x\nquality = 2000\n",
				   err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "test.conf:6: key 'quality': '2000' is out of range 0..1024");
	assert_int_equal(load_conf(&c,
				   "[source file:a]\npath = /nonexistent/a\n\n"
				   "[source file:b]\n",
				   err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "test.conf:4: key 'path' is required");
	assert_int_equal(load_conf(&c,
				   "[source file:a]\npath = /nonexistent/a\n\n"
				   "[source file:b]\npath = /x\n\n[source file:a]\n",
				   err, sizeof(err)),
			 -EINVAL);
	assert_non_null(
		strstr(err, "test.conf:7: duplicate section '[source file:a]' (first at line 1)"));
	assert_int_equal(conf_set_source(&c, "file:b", "path", "/dev/urandom", "command line", err,
					 sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "command line: refusing /dev/urandom as a source: it is the "
				 "kernel's own output");
	assert_int_equal(c.n_sections, 0);
	conf_free(&c);
}

static void test_set_list(void **state)
{
	struct sec x[3];
	struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	char line[256];
	uint8_t data[16] = { 0 };

	write_file(tmp_path("list"), data, sizeof(data));
	sec_make(&x[0], "file:a", 1, "path", tmp_path("list"), NULL);
	sec_make(&x[1], "file:b", 4, "path", tmp_path("missing"), NULL);
	sec_make(&x[2], "file:c", 8, "path", tmp_path("list"), "enabled", "no", "quality", "512",
		 NULL);
	conf_make(&c, x, 3);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(source_set_list(set, f), 1);
	fclose(f);
	print_message("%s", buf);
	snprintf(line, sizeof(line), "file:a: available, enabled (regular file %s, quality 0)\n",
		 tmp_path("list"));
	assert_non_null(strstr(buf, line));
	snprintf(line, sizeof(line), "file:b: not available: '%s': No such file or directory\n",
		 tmp_path("missing"));
	assert_non_null(strstr(buf, line));
	snprintf(line, sizeof(line), "file:c: available, disabled (regular file %s, quality 512)\n",
		 tmp_path("list"));
	assert_non_null(strstr(buf, line));
	free(buf);
	source_set_free(set);
	unlink(tmp_path("list"));
}

static void test_quality(void **state)
{
	struct sec x[2];
	struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];
	struct source *a, *b;

	sec_make(&x[0], "file:a", 1, "path", "/x", NULL);
	sec_make(&x[1], "file:b", 4, "path", "/x", "quality", "700", NULL);
	conf_make(&c, x, 2);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	a = source_set_find(set, "file:a");
	b = source_set_find(set, "file:b");
	assert_int_equal(source_quality(a), 0);
	assert_int_equal(source_quality(b), 700);
	source_set_quality(a, 900);
	source_set_quality(b, 900);
	assert_int_equal(source_quality(a), 900);
	assert_int_equal(source_quality(b), 700);
	assert_true(source_opt_is_set(b, "quality"));
	assert_false(source_opt_is_set(a, "quality"));
	assert_int_equal(source_opt_uint(b, "quality"), 700);
	assert_true(source_opt_bool(a, "enabled"));
	assert_string_equal(source_opt_str(a, "path"), "/x");
	assert_null(source_opt_str(a, "nosuch"));
	assert_int_equal(source_counter(a, "x"), 0);
	assert_int_equal(source_counter(a, "y"), 1);
	assert_int_equal(source_counter(a, "x"), 0);
	for (int i = 2; i < 8; i++) {
		char n[8];

		snprintf(n, sizeof(n), "c%d", i);
		assert_int_equal(source_counter(a, n), i);
	}
	assert_int_equal(source_counter(a, "z"), -ENOSPC);
	source_counter_add(a, 1, 5);
	source_counter_add(a, 9, 5);
	source_account_fed(a, 64, 100);
	{
		struct source_stats st;

		source_get_stats(a, &st);
		assert_int_equal(st.n_counters, 8);
		assert_string_equal(st.counter_names[1], "y");
		assert_int_equal(st.counters[1], 5);
		assert_int_equal(st.bytes_fed, 64);
		assert_int_equal(st.bits_credited, 100);
	}
	/* Not started: a sleep is a sleep, and a healthy one. */
	assert_int_equal(source_sleep(a, 1000), 0);
	assert_false(source_stopping(a));
	assert_true(source_is_healthy(a, now_ns(), 1));
	source_set_free(set);
}

static void test_state_names(void **state)
{
	assert_string_equal(source_state_name(SOURCE_ABSENT), "absent");
	assert_string_equal(source_state_name(SOURCE_STARTING), "starting");
	assert_string_equal(source_state_name(SOURCE_RUNNING), "running");
	assert_string_equal(source_state_name(SOURCE_BACKOFF), "backoff");
	assert_string_equal(source_state_name(SOURCE_FAILED), "failed");
}

/* ---- failure window ---- */

static void test_fail_window(void **state)
{
	struct source_fail_window w = { 0 };

	/* Two in a row and then a pass: fine; three in a row: out. */
	assert_false(source_fail_window_add(&w, true));
	assert_false(source_fail_window_add(&w, true));
	assert_false(source_fail_window_add(&w, false));
	assert_false(source_fail_window_add(&w, true));
	assert_false(source_fail_window_add(&w, true));
	assert_true(source_fail_window_add(&w, true));

	/* Four spread failures in 64 blocks: fine; a fifth within the window: out. */
	source_fail_window_reset(&w);
	for (int i = 0; i < 4; i++) {
		assert_false(source_fail_window_add(&w, true));
		for (int j = 0; j < 10; j++)
			assert_false(source_fail_window_add(&w, false));
	}
	assert_true(source_fail_window_add(&w, true));

	/* Failures slide out of the window: one failure every 16 blocks is never too many. */
	source_fail_window_reset(&w);
	for (int i = 0; i < 10000; i++)
		assert_false(source_fail_window_add(&w, i % 16 == 0));
	/* ... but one every 12 blocks is (6 in 64). */
	source_fail_window_reset(&w);
	{
		bool tripped = false;

		for (int i = 0; i < 64 && !tripped; i++)
			tripped = source_fail_window_add(&w, i % 12 == 0);
		assert_true(tripped);
	}
}

/* ---- threads ---- */

static void test_regular_file(void **state)
{
	/* Two failures in a row: what was read ahead of them moves back twice. */
	static const int zero[] = { 3, 4, 7, -1 };
	uint8_t *in, *want, *got;
	size_t in_len, npass, n;
	struct source_set *set;
	struct source *src;
	struct source_stats st;
	int efd = wake_fd();

	npass = make_input(&in, &in_len, &want, 12, zero);
	assert_int_equal(npass, 9);
	write_file(tmp_path("reg"), in, in_len);
	set = opened_file_set(tmp_path("reg"));
	src = source_set_get(set, 0);
	assert_int_equal(state_of(src), SOURCE_STARTING);
	assert_int_equal(source_set_start(set, efd), 0);
	got = malloc(12 * BLOCK);
	n = drain(src, efd, got, 12 * BLOCK, until_end, 0);
	assert_int_equal(n, npass * BLOCK);
	assert_memory_equal(got, want, n);

	source_get_stats(src, &st);
	assert_int_equal(st.state, SOURCE_FAILED);
	assert_string_equal(st.last_error_text, "end of file");
	assert_int_equal(st.last_error, ENODATA);
	assert_int_equal(st.bytes_read, in_len);
	/*
	 * The zero blocks never reach the FIPS tests: each fails SP 800-90B's repetition count
	 * test (the two after the first are replays of it too, but stuck is what they are).
	 */
	assert_int_equal(st.blocks_tested, 9);
	assert_int_equal(st.health_failures, 3);
	assert_int_equal(st.blocks_replayed, 0);
	assert_int_equal(st.blocks_passed, npass);
	assert_true(source_is_healthy(src, now_ns() + 100 * NSEC_PER_SEC, 1));
	source_set_stop(set);
	end_file_test(set, "reg", efd, -1, in, want, got);
}

static void test_fifo_and_stop_latency(void **state)
{
	static const int zero[] = { 5, -1 };
	uint8_t *in, *want, *got;
	size_t in_len, npass, n;
	struct source_set *set;
	struct source *src;
	int efd = wake_fd();
	int wfd = held_fifo("fifo");

	npass = make_input(&in, &in_len, &want, 10, zero);
	assert_true(in_len < 65536); /* fits in the pipe buffer */
	assert_int_equal(write_full(wfd, in, in_len), 0);

	set = started_file_set(tmp_path("fifo"), efd);
	src = source_set_get(set, 0);
	got = malloc(10 * BLOCK);
	n = drain(src, efd, got, 10 * BLOCK, until_bytes, npass * BLOCK);
	assert_int_equal(n, npass * BLOCK);
	assert_memory_equal(got, want, n);
	assert_int_equal(state_of(src), SOURCE_RUNNING);

	/* Now the reader is blocked in read() on a FIFO that never delivers. */
	{
		uint64_t deadline = now_ns() + 60 * NSEC_PER_SEC;

		while (source_is_healthy(src, now_ns(), 20 * NSEC_PER_MSEC) && now_ns() < deadline)
			usleep(10000);
		assert_false(source_is_healthy(src, now_ns(), 20 * NSEC_PER_MSEC));
		assert_true(source_is_healthy(src, now_ns(), 60 * NSEC_PER_SEC));
	}
	stop_promptly(set, "with a read blocked on a FIFO");
	assert_true(source_stopping(src));
	assert_int_equal(source_sleep(src, NSEC_PER_SEC), -ECANCELED);

	end_file_test(set, "fifo", efd, wfd, in, want, got);
}

static bool wake_pending(int efd)
{
	uint64_t v;

	return read(efd, &v, sizeof(v)) == (ssize_t)sizeof(v);
}

/* Take n wakes from efd (an eventfd read returns all the pending ones); fails after 60 s. */
static void take_wakes(int efd, uint64_t n)
{
	uint64_t deadline = now_ns() + 60 * NSEC_PER_SEC, v;
	struct pollfd p = { .fd = efd, .events = POLLIN };

	while (n > 0 && now_ns() < deadline) {
		if (poll(&p, 1, 100) > 0 && read(efd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
			assert_true(v <= n);
			n -= v;
		}
	}
	assert_int_equal(n, 0);
}

static void wait_held(struct source_set *set, size_t n)
{
	uint64_t deadline = now_ns() + 60 * NSEC_PER_SEC;

	while (source_set_held(set) < n && now_ns() < deadline)
		usleep(1000);
	assert_int_equal(source_set_held(set), n);
}

/*
 * A consumer that waits for a batch is woken by the first block in an empty ring and by
 * the block that completes the batch, not by the ones between.
 */
static void test_batched_wake(void **state)
{
	uint8_t *in, *want;
	size_t in_len;
	struct source_set *set;
	struct pollfd p;
	int efd = wake_fd();
	int wfd = held_fifo("fifo");

	make_input(&in, &in_len, &want, 4, NULL);
	set = one_file_set(tmp_path("fifo"));
	source_set_ring_blocks(set, 8);
	assert_int_equal(source_set_init(set), 1);
	assert_true(source_set_prepare_wait(set, 4, true));
	assert_int_equal(source_set_start(set, efd), 0);

	p = (struct pollfd){ .fd = efd, .events = POLLIN };
	assert_int_equal(write_full(wfd, in, 4 + BLOCK), 0);
	assert_int_equal(poll(&p, 1, 60000), 1); /* the first block wakes */
	wait_held(set, 1);
	/*
	 * The state change to running wakes too, just after it shows: two wakes in all, both
	 * taken before the next step (a fixed 20 ms for the second could miss it under load,
	 * and blocks 2 and 3 would seem to wake).
	 */
	take_wakes(efd, 2);
	assert_int_equal(state_of(source_set_get(set, 0)), SOURCE_RUNNING);

	assert_true(source_set_prepare_wait(set, 4, true));
	assert_int_equal(write_full(wfd, in + 4 + BLOCK, 2 * BLOCK), 0);
	wait_held(set, 3);
	assert_false(wake_pending(efd)); /* blocks 2 and 3 do not */

	assert_int_equal(write_full(wfd, in + 4 + 3 * BLOCK, BLOCK), 0);
	assert_int_equal(poll(&p, 1, 60000), 1); /* the fourth completes the batch */
	wait_held(set, 4);
	assert_false(source_set_prepare_wait(set, 4, true));
	assert_true(source_set_prepare_wait(set, 5, true));

	end_file_test(set, "fifo", efd, wfd, in, want, NULL);
}

/*
 * Each block is credited at the quality its source had when the block was read (issue 18:
 * an hwrng's backend switched meanwhile), not at the quality of the moment it is fed.
 */
static void test_credit_stamped_at_read(void **state)
{
	uint8_t *in, *want;
	size_t in_len, bytes;
	struct source_set *set;
	struct source *src;
	struct pool *pool;
	struct iovec iov[8];
	uint64_t bits;
	int efd = wake_fd();
	int wfd = held_fifo("stamp");

	(void)state;
	make_input(&in, &in_len, &want, 2, NULL);
	set = opened_file_set(tmp_path("stamp"));
	src = source_set_get(set, 0);
	assert_int_equal(pool_new(&pool, set), 0);
	source_set_quality(src, 1024); /* what its driver found for the first read */
	assert_int_equal(source_set_start(set, efd), 0);
	assert_int_equal(write_full(wfd, in, in_len - BLOCK), 0);
	wait_held(set, 1);
	source_set_quality(src, 0); /* ... and for the next one */
	assert_int_equal(write_full(wfd, in + in_len - BLOCK, BLOCK), 0);
	wait_held(set, 2);
	(void)pool_peek(pool, iov, ARRAY_SIZE(iov), 2 * BLOCK, now_ns(), MAX_AGE, 8, &bytes,
			&bits);
	assert_int_equal(bytes, 2 * BLOCK);
	assert_int_equal(bits, BLOCK * 8); /* the first at 1024/1024, the second at 0 */
	pool_consume(pool, true);
	source_set_stop(set);
	pool_free(pool);
	end_file_test(set, "stamp", efd, wfd, in, want, NULL);
}

static void test_fifo_without_writer(void **state)
{
	struct source_set *set;
	struct source *src;
	int efd = wake_fd();

	/* No writer: every read is end of file, i.e. "nothing now"; waits, never spins. */
	assert_int_equal(mkfifo(tmp_path("fifo2"), 0600), 0);
	set = started_file_set(tmp_path("fifo2"), efd);
	src = source_set_get(set, 0);
	usleep(300000);
	{
		struct source_stats st;

		source_get_stats(src, &st);
		assert_int_equal(st.state, SOURCE_STARTING);
		assert_int_equal(st.bytes_read, 0);
	}
	assert_true(source_is_healthy(src, now_ns(), 20 * NSEC_PER_MSEC));
	stop_promptly(set, "during a dry-spell wait");
	end_file_test(set, "fifo2", efd, -1, NULL, NULL, NULL);
}

static void test_fifo_writer_comes_and_goes(void **state)
{
	uint8_t *in, *want, *got;
	size_t in_len, npass, n, first = 4 + 2 * BLOCK;
	struct source_set *set;
	struct source *src;
	int efd = wake_fd();
	int wfd;

	/* A writer that closes is not the end: the next writer's data follows on. */
	assert_int_equal(mkfifo(tmp_path("fifo3"), 0600), 0);
	npass = make_input(&in, &in_len, &want, 4, NULL);
	set = started_file_set(tmp_path("fifo3"), efd);
	src = source_set_get(set, 0);
	wfd = open(tmp_path("fifo3"), O_WRONLY | O_CLOEXEC);
	assert_true(wfd >= 0);
	assert_int_equal(write_full(wfd, in, first), 0);
	close(wfd);
	/* Waited for, not slept on; the drain below shows the close did not end the source. */
	wait_state(src, efd, SOURCE_RUNNING);
	wfd = open(tmp_path("fifo3"), O_WRONLY | O_CLOEXEC);
	assert_true(wfd >= 0);
	assert_int_equal(write_full(wfd, in + first, in_len - first), 0);
	close(wfd);
	got = malloc(4 * BLOCK);
	n = drain(src, efd, got, 4 * BLOCK, until_bytes, npass * BLOCK);
	assert_int_equal(n, npass * BLOCK);
	assert_memory_equal(got, want, n);
	assert_int_equal(state_of(src), SOURCE_RUNNING);
	end_file_test(set, "fifo3", efd, -1, in, want, got);
}

static void test_backoff_on_failures(void **state)
{
	uint8_t *in = calloc(1, 4 + 6 * BLOCK);
	struct source_set *set;
	struct source *src;
	struct source_stats st;
	int efd = wake_fd();

	/* A stuck source: all zero. Three failed blocks in a row put it in back-off. */
	assert_non_null(in);
	write_file(tmp_path("zero"), in, 4 + 6 * BLOCK);
	set = started_file_set(tmp_path("zero"), efd);
	src = source_set_get(set, 0);
	wait_state(src, efd, SOURCE_BACKOFF);
	source_get_stats(src, &st);
	assert_int_equal(st.state, SOURCE_BACKOFF);
	/* Stuck: caught before the FIPS tests (SP 800-90B), and said to be constant output. */
	assert_int_equal(st.blocks_tested, 0);
	assert_int_equal(st.health_failures, 3);
	assert_int_equal(st.blocks_replayed, 0);
	assert_string_equal(st.last_error_text, "constant output: every byte of a block is 0x00");
	assert_int_equal(st.blocks_passed, 0);
	assert_int_equal(st.last_error, EBADMSG);
	assert_int_equal(source_available(src, now_ns(), MAX_AGE), 0);
	/* Back-off is a deliberate wait: healthy, and cut short by a stop. */
	assert_true(source_is_healthy(src, now_ns(), 1));
	stop_promptly(set, "during back-off");
	end_file_test(set, "zero", efd, -1, in, NULL, NULL);
}

/*
 * A file source over a regular file of three random blocks, started and left to read it
 * to the end: three blocks fit in its ring (4 here, not the default 2), so the thread gets
 * there on its own. Returns the set; *in, *want and *npass as from make_input().
 */
static struct source_set *three_blocks_read(const char *path, int efd, uint8_t **in, uint8_t **want,
					    size_t *npass)
{
	struct source_set *set;
	size_t in_len;

	*npass = make_input(in, &in_len, want, 3, NULL);
	assert_int_equal(*npass, 3);
	write_file(path, *in, in_len);
	set = one_file_set(path);
	source_set_ring_blocks(set, 4);
	assert_int_equal(source_set_init(set), 1);
	assert_int_equal(source_set_start(set, efd), 0);
	wait_state(source_set_get(set, 0), efd, SOURCE_FAILED);
	return set;
}

static void test_take_partial_and_max_age(void **state)
{
	uint8_t *in, *want, *got;
	size_t npass, n, off;
	struct source_set *set;
	struct source *src;
	uint64_t now;
	int efd = wake_fd();

	set = three_blocks_read(tmp_path("take"), efd, &in, &want, &npass);
	src = source_set_get(set, 0);
	now = now_ns();
	assert_int_equal(source_available(src, now, MAX_AGE), npass * BLOCK);

	got = malloc(npass * BLOCK);
	/* 64 bytes, then the rest of that block is kept for later takes. */
	assert_int_equal(take(src, got, 64, now, MAX_AGE), 64);
	assert_memory_equal(got, want, 64);
	assert_int_equal(source_available(src, now, MAX_AGE), npass * BLOCK - 64);
	assert_int_equal(take(src, got + 64, 100, now, MAX_AGE), 100);
	assert_memory_equal(got + 64, want + 64, 100);
	off = 164;
	if (npass >= 2) {
		/* Across a block boundary. */
		n = take(src, got + off, BLOCK, now, MAX_AGE);
		assert_int_equal(n, BLOCK);
		assert_memory_equal(got + off, want + off, n);
		off += n;
	}
	assert_int_equal(source_available(src, now, MAX_AGE), npass * BLOCK - off);
	assert_int_equal(take(src, got, 0, now, MAX_AGE), 0);

	/* An hour later everything left is stale: dropped, nothing handed out. */
	now += 3600 * NSEC_PER_SEC;
	assert_int_equal(source_available(src, now, MAX_AGE), 0);
	assert_int_equal(take(src, got, 10, now, MAX_AGE), 0);
	/* ... and gone for good, even for a consumer with a generous max age. */
	assert_int_equal(source_available(src, now_ns(), UINT64_MAX), 0);
	assert_int_equal(take(src, got, 10, now_ns(), UINT64_MAX), 0);

	end_file_test(set, "take", efd, -1, in, want, got);
}

/* source_peek() hands out what take() would, in place; source_consume() wipes it. */
static void test_peek_and_consume(void **state)
{
	static const uint8_t zeros[BLOCK];
	uint8_t *in, *want, got[200];
	size_t npass, n, used, off;
	struct iovec iov[8];
	struct source_set *set;
	struct source *src;
	uint64_t now;
	int efd = wake_fd();

	set = three_blocks_read(tmp_path("peek"), efd, &in, &want, &npass);
	src = source_set_get(set, 0);
	now = now_ns();

	used = source_peek(src, iov, ARRAY_SIZE(iov), 64, now, MAX_AGE, &n);
	assert_int_equal(used, 1);
	assert_int_equal(n, 64);
	assert_memory_equal(iov[0].iov_base, want, 64);
	source_consume(src, 64);
	assert_memory_equal(iov[0].iov_base, zeros, 64); /* wiped in place */

	/* Everything left: one entry per block, the first from where the last one ended. */
	used = source_peek(src, iov, ARRAY_SIZE(iov), SIZE_MAX, now, MAX_AGE, &n);
	assert_int_equal(used, npass);
	assert_int_equal(n, npass * BLOCK - 64);
	off = 64;
	for (size_t i = 0; i < used; i++) {
		assert_memory_equal(iov[i].iov_base, want + off, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	/* At most max_iov entries. */
	assert_int_equal(source_peek(src, iov, 1, SIZE_MAX, now, MAX_AGE, &n), 1);
	assert_int_equal(n, BLOCK - 64);
	/* Peeking takes nothing: a take still starts where the consume ended. */
	source_consume(src, 100);
	assert_int_equal(take(src, got, sizeof(got), now, MAX_AGE), sizeof(got));
	assert_memory_equal(got, want + 164, sizeof(got));
	assert_int_equal(source_available(src, now, MAX_AGE), npass * BLOCK - 364);
	/* Consuming more than is there stops at the end. */
	source_consume(src, SIZE_MAX);
	assert_int_equal(source_available(src, now, MAX_AGE), 0);
	assert_int_equal(source_peek(src, iov, ARRAY_SIZE(iov), SIZE_MAX, now, MAX_AGE, &n), 0);
	assert_int_equal(n, 0);

	end_file_test(set, "peek", efd, -1, in, want, NULL);
}

/* ---- source_read_once ---- */

struct chunked_writer {
	const char *path;
	const uint8_t *data;
	size_t first, len;
};

/* Writes data to the FIFO in two parts with a pause between, so the reader sees short reads. */
static void *chunked_writer_main(void *arg)
{
	struct chunked_writer *w = arg;
	int fd = open(w->path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return (void *)1;
	if (write_full(fd, w->data, w->first) < 0)
		return (void *)1;
	usleep(30000);
	if (write_full(fd, w->data + w->first, w->len - w->first) < 0)
		return (void *)1;
	close(fd);
	return NULL;
}

static void test_read_once(void **state)
{
	uint8_t in[1000], got[1000];
	struct chunked_writer w = { .data = in, .first = 60, .len = 200 };
	struct source_set *set;
	struct source *src;
	pthread_t th;
	void *ret;
	int efd = wake_fd();

	/* All zero: no FIPS test stands between the driver and the caller. */
	memset(in, 0, sizeof(in));
	write_file(tmp_path("once"), in, sizeof(in));
	set = one_file_set(tmp_path("once"));
	src = source_set_get(set, 0);
	assert_int_equal(source_read_once(src, got, 1), -EBADF); /* not opened */
	assert_int_equal(source_set_init(set), 1);
	memset(got, 0xaa, sizeof(got));
	assert_int_equal(source_read_once(src, got, 10), 10);
	assert_int_equal(source_read_once(src, got + 10, 990), 990);
	assert_memory_equal(got, in, sizeof(in));
	assert_int_equal(source_read_once(src, got, 1), -ENODATA);
	source_set_free(set);

	/* Running: the reader thread owns the driver. */
	write_file(tmp_path("once"), in, sizeof(in));
	set = started_file_set(tmp_path("once"), efd);
	src = source_set_get(set, 0);
	assert_int_equal(source_read_once(src, got, 1), -EBUSY);
	source_set_stop(set);
	assert_int_not_equal(source_read_once(src, got, 1), -EBUSY);
	source_set_free(set);
	unlink(tmp_path("once"));

	/* A FIFO: no writer yet (dry, 0), then a short read, then the rest. */
	random_bytes(in, w.len);
	assert_int_equal(mkfifo(tmp_path("once-fifo"), 0600), 0);
	w.path = tmp_path("once-fifo");
	set = opened_file_set(w.path);
	src = source_set_get(set, 0);
	assert_int_equal(pthread_create(&th, NULL, chunked_writer_main, &w), 0);
	assert_int_equal(source_read_once(src, got, w.len), (ssize_t)w.len);
	assert_int_equal(pthread_join(th, &ret), 0);
	assert_null(ret);
	assert_memory_equal(got, in, w.len);
	assert_true(source_read_once(src, got, 0) == 0);
	source_set_free(set);
	unlink(w.path);
	wipe(in, sizeof(in));
	wipe(got, sizeof(got));
	close(efd);
}

/* ---- source_test_now: blocks tested and published before the thread starts ---- */

static void test_test_now(void **state)
{
	static const int zero[] = { 1, -1 };
	uint8_t *in, *want, *got;
	size_t in_len, npass, n;
	struct source_set *set;
	struct source *src;
	struct source_stats st;
	int efd = wake_fd();

	npass = make_input(&in, &in_len, &want, 6, zero);
	write_file(tmp_path("now"), in, in_len);
	set = one_file_set(tmp_path("now"));
	src = source_set_get(set, 0);
	assert_int_equal(source_test_now(src, 1), -EBUSY); /* not opened */
	assert_int_equal(source_set_init(set), 1);
	/* Not a CPU source: the daemon's early pass leaves it to its thread. */
	assert_int_equal(source_set_test_cpu_now(set), 0);
	assert_int_equal(source_available(src, now_ns(), MAX_AGE), 0);
	/* The first block passes and is published; the second (zeros) is not. */
	assert_int_equal(source_test_now(src, 1), 0);
	assert_int_equal(source_available(src, now_ns(), MAX_AGE), BLOCK);
	assert_int_equal(state_of(src), SOURCE_RUNNING);
	assert_int_equal(source_test_now(src, 1), 0);
	assert_int_equal(source_available(src, now_ns(), MAX_AGE), BLOCK);
	/* The thread goes on from there: every passing block once, in order, nothing skipped. */
	assert_int_equal(source_set_start(set, efd), 0);
	assert_int_equal(source_test_now(src, 1), -EBUSY);
	got = malloc(6 * BLOCK);
	n = drain(src, efd, got, 6 * BLOCK, until_end, 0);
	assert_int_equal(n, npass * BLOCK);
	assert_memory_equal(got, want, n);
	source_get_stats(src, &st);
	assert_int_equal(st.bytes_read, in_len);
	assert_int_equal(st.blocks_passed, npass);
	source_set_stop(set);
	source_set_free(set);
	unlink(tmp_path("now"));

	/* A source with nothing now (a FIFO without a writer) is not waited for. */
	assert_int_equal(mkfifo(tmp_path("now-fifo"), 0600), 0);
	set = opened_file_set(tmp_path("now-fifo"));
	src = source_set_get(set, 0);
	assert_int_equal(source_test_now(src, 1), -EAGAIN);
	assert_int_equal(source_available(src, now_ns(), MAX_AGE), 0);
	source_set_free(set);
	unlink(tmp_path("now-fifo"));
	close(efd);
	free(in);
	free(want);
	free(got);
}

/*
 * Issue 12: the sub-bit credit remainder moves on only when the sink took the bytes. At
 * quality 1, 100 bytes deserve 800/1024 bit: 0 bits and 800 carried; a failed injection
 * carries nothing, so the next 100 bytes again get 0 (not 1600/1024 = 1 bit).
 */
static void test_remainder_after_feed(void **state)
{
	static struct sec x;
	static struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];
	uint8_t *in, *want;
	size_t in_len, npass, k;
	struct iovec iov[4];
	struct pool *p;
	uint64_t bits;
	int efd = wake_fd();

	npass = make_input(&in, &in_len, &want, 2, NULL);
	assert_int_equal(npass, 2);
	write_file(tmp_path("rem"), in, in_len);
	sec_make(&x, "file:t", 1, "path", tmp_path("rem"), "quality", "1", NULL);
	conf_make(&c, &x, 1);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	source_set_ring_blocks(set, 4); /* room to read past both blocks to the end */
	assert_int_equal(source_set_init(set), 1);
	assert_int_equal(source_set_start(set, efd), 0);
	wait_state(source_set_get(set, 0), efd, SOURCE_FAILED);
	assert_int_equal(pool_new(&p, set), 0);

	pool_peek(p, iov, ARRAY_SIZE(iov), 100, now_ns(), MAX_AGE, 8, &k, &bits);
	assert_int_equal(k, 100);
	assert_int_equal(bits, 0);
	pool_consume(p, false); /* RNDADDENTROPY failed: no remainder carried */
	pool_peek(p, iov, ARRAY_SIZE(iov), 100, now_ns(), MAX_AGE, 8, &k, &bits);
	assert_int_equal(bits, 0);
	pool_consume(p, true); /* fed: 800 carried */
	pool_peek(p, iov, ARRAY_SIZE(iov), 100, now_ns(), MAX_AGE, 8, &k, &bits);
	assert_int_equal(bits, 1);
	pool_consume(p, true);

	pool_free(p);
	end_file_test(set, "rem", efd, -1, in, want, NULL);
}

/*
 * The pool's turns go to the sources that have data: with file:b empty between file:a and
 * file:c, feeds alternate a, c, a, c (a turn by position in the set gave c two of three,
 * and a set's absent sources handed their turns to the one after them).
 */
static void test_pool_turns_skip_empty(void **state)
{
	static struct sec x[3];
	static struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX], name[3][8];
	uint8_t *in, *want;
	size_t in_len, k;
	struct iovec iov[4];
	struct pool *p;
	uint64_t bits, deadline;
	int efd = wake_fd();

	(void)state;
	/* Each its own data: the same bytes through two sources would be replays (health.h). */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(make_input(&in, &in_len, &want, 2, NULL), 2);
		snprintf(name[i], sizeof(name[i]), "turn%c", 'a' + i);
		write_file(tmp_path(name[i]), in, i == 1 ? 0 : in_len);
		if (i < 2) {
			free(in);
			free(want);
		}
	}
	sec_make(&x[0], "file:a", 1, "path", tmp_path(name[0]), NULL);
	sec_make(&x[1], "file:b", 2, "path", tmp_path(name[1]), NULL);
	sec_make(&x[2], "file:c", 3, "path", tmp_path(name[2]), NULL);
	conf_make(&c, x, 3);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	source_set_init(set);
	assert_int_equal(source_set_start(set, efd), 0);
	assert_int_equal(pool_new(&p, set), 0);
	deadline = now_ns() + 60 * NSEC_PER_SEC;
	while ((source_available(source_set_get(set, 0), now_ns(), MAX_AGE) == 0 ||
		source_available(source_set_get(set, 2), now_ns(), MAX_AGE) == 0) &&
	       now_ns() < deadline)
		wait_wake(efd, 100);

	for (int turn = 0; turn < 4; turn++) {
		struct source_stats a, cc;

		pool_peek(p, iov, ARRAY_SIZE(iov), 100, now_ns(), MAX_AGE, 8, &k, &bits);
		assert_int_equal(k, 100);
		pool_consume(p, true);
		source_get_stats(source_set_get(set, 0), &a);
		source_get_stats(source_set_get(set, 2), &cc);
		assert_int_equal(a.bytes_fed, 100 * (uint64_t)(turn / 2 + 1));
		assert_int_equal(cc.bytes_fed, 100 * (uint64_t)((turn + 1) / 2));
	}

	pool_free(p);
	source_set_free(set);
	close(efd);
	free(in);
	free(want);
	for (int i = 0; i < 3; i++)
		unlink(tmp_path(name[i]));
}

/* A new set over the file path, read to its end into got (3 blocks); its stats in *st. */
static size_t read_file_set(const char *path, int efd, uint8_t *got, struct source_stats *st)
{
	struct source_set *set = started_file_set(path, efd);
	size_t n;

	n = drain(source_set_get(set, 0), efd, got, 3 * BLOCK, until_end, 0);
	source_get_stats(source_set_get(set, 0), st);
	source_set_free(set);
	return n;
}

/*
 * Issue 12: a regular file is read once, front to back: a second set over the same file
 * (a reload) goes on where the first stopped, and a new file at the same path is new.
 */
static void test_file_offset_survives(void **state)
{
	uint8_t *in, *want, *got = malloc(3 * BLOCK);
	size_t in_len, npass;
	struct source_stats st;
	int efd = wake_fd();

	npass = make_input(&in, &in_len, &want, 3, NULL);
	write_file(tmp_path("once"), in, in_len);
	assert_int_equal(read_file_set(tmp_path("once"), efd, got, &st), npass * BLOCK);
	/* The same file again: at its end at once, nothing read. */
	assert_int_equal(read_file_set(tmp_path("once"), efd, got, &st), 0);
	assert_int_equal(st.bytes_read, 0);
	assert_string_equal(st.last_error_text, "end of file");
	/*
	 * A new file at the same path (a new inode) with the same data: read from its start,
	 * and every block a replay of what the first set read (the history outlives sets).
	 */
	unlink(tmp_path("once"));
	write_file(tmp_path("once"), in, in_len);
	assert_int_equal(read_file_set(tmp_path("once"), efd, got, &st), 0);
	assert_int_equal(st.bytes_read, in_len);
	assert_int_equal(st.blocks_replayed, 3);
	/* ... and with new data: read from its start, all of it. */
	free(in);
	free(want);
	unlink(tmp_path("once"));
	npass = make_input(&in, &in_len, &want, 3, NULL);
	write_file(tmp_path("once"), in, in_len);
	assert_int_equal(read_file_set(tmp_path("once"), efd, got, &st), npass * BLOCK);

	close(efd);
	free(in);
	free(want);
	free(got);
	unlink(tmp_path("once"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_drivers),
		cmocka_unit_test(test_check_section),
		cmocka_unit_test(test_refuse_kernel_random),
		cmocka_unit_test(test_print_options),
		cmocka_unit_test(test_set_new),
		cmocka_unit_test(test_set_list),
		cmocka_unit_test(test_quality),
		cmocka_unit_test(test_state_names),
		cmocka_unit_test(test_fail_window),
		cmocka_unit_test(test_regular_file),
		cmocka_unit_test(test_fifo_and_stop_latency),
		cmocka_unit_test(test_batched_wake),
		cmocka_unit_test(test_credit_stamped_at_read),
		cmocka_unit_test(test_fifo_without_writer),
		cmocka_unit_test(test_fifo_writer_comes_and_goes),
		cmocka_unit_test(test_backoff_on_failures),
		cmocka_unit_test(test_take_partial_and_max_age),
		cmocka_unit_test(test_peek_and_consume),
		cmocka_unit_test(test_read_once),
		cmocka_unit_test(test_test_now),
		cmocka_unit_test(test_remainder_after_feed),
		cmocka_unit_test(test_pool_turns_skip_empty),
		cmocka_unit_test(test_file_offset_survives),
	};

	log_setup(LOG_DEBUG, LOG_TARGET_STDERR);
	return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
