// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests of src/source.c with a table of fake drivers (the real table holds only the
 * file source here): default-on drivers (and defer_to), the one-hwrng-family rule, option
 * types the file source lacks, -l lines, and recovery from a device error with back-off
 * (and the driver's reason for it, source_read_why()).
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pool.h"
#include "source.h"
#include "source_set.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/eventfd.h>

#include <cmocka.h>

/* ---- fake drivers ---- */

static uint64_t xs_state = 88172645463325252ULL;

static ssize_t good_read(struct source *src, void *buf, size_t max)
{
	uint8_t *p = buf;

	/* xorshift64: passes FIPS 140-2 like any decent generator. */
	for (size_t i = 0; i < max; i++) {
		xs_state ^= xs_state << 13;
		xs_state ^= xs_state >> 7;
		xs_state ^= xs_state << 17;
		p[i] = (uint8_t)(xs_state >> 32);
	}
	return (ssize_t)max;
}

static int hw_probe(struct source *src, char *why, size_t len)
{
	snprintf(why, len, "fake0");
	source_set_quality(src, 1000);
	return 0;
}

static const char *const modes[] = { "fast", "slow", NULL };

static const struct option_spec hw_options[] = {
	{ .key = "device", .type = OPTION_PATH, .def = "/dev/hwrng", .help = "device" },
	{ .key = "mode", .type = OPTION_CHOICE, .def = "fast", .choices = modes },
	{ .key = "rate", .type = OPTION_UINT, .def = "10", .min = 1, .max = 100 },
	{ .key = "label", .type = OPTION_STRING },
	{ 0 },
};

static const struct source_ops fake_hwrng = {
	.name = "hwrng",
	.help = "fake hwrng",
	.default_on = true,
	.hwrng_family = true,
	.quality = 1024,
	.options = hw_options,
	.probe = hw_probe,
	.read = good_read,
};

static const struct source_ops fake_virtio = {
	.name = "virtio",
	.hwrng_family = true,
	.quality = 1024,
	.read = good_read,
};

static int via_probe(struct source *src, char *why, size_t len)
{
	snprintf(why, len, "no PadLock RNG on this CPU");
	return -ENODEV;
}

static const struct source_ops fake_via = {
	.name = "via",
	.default_on = true,
	.quality = 1024,
	.probe = via_probe,
	.init = via_probe,
	.read = good_read,
};

/* Fails its first read with EIO, then works: a device that came back. */
static int flaky_inits, flaky_reads;

/*
 * While set, a re-open (init after the first) waits for the test to clear it, 60 s at most:
 * the back-off between lasts 20 ms in this build, too short to be sure of seeing it by
 * polling on a loaded machine.
 */
static _Atomic bool flaky_hold;

/* Wait, 60 s at most, until *flag is cleared. */
static void hold_while(_Atomic bool *flag)
{
	uint64_t deadline = now_ns() + 60 * NSEC_PER_SEC;

	while (atomic_load(flag) && now_ns() < deadline)
		usleep(1000);
}

static int flaky_init(struct source *src, char *why, size_t len)
{
	if (flaky_inits > 0)
		hold_while(&flaky_hold);
	flaky_inits++;
	return 0;
}

static ssize_t flaky_read(struct source *src, void *buf, size_t max)
{
	if (flaky_reads++ == 0)
		return -EIO;
	return good_read(src, buf, max < 100 ? max : 100);
}

static const struct source_ops fake_flaky = {
	.name = "flaky",
	.quality = 512,
	.init = flaky_init,
	.read = flaky_read,
};

/* Gone: the first read says ENODEV, then init fails until dead_back is set. */
static _Atomic int dead_inits;
static _Atomic bool dead_back;

static int dead_init(struct source *src, char *why, size_t len)
{
	if (atomic_fetch_add(&dead_inits, 1) > 0 && !atomic_load(&dead_back)) {
		snprintf(why, len, "no device");
		return -ENOENT;
	}
	return 0;
}

static ssize_t dead_read(struct source *src, void *buf, size_t max)
{
	if (!atomic_load(&dead_back))
		return -ENODEV;
	return good_read(src, buf, max);
}

static const struct source_ops fake_dead = {
	.name = "dead",
	.init = dead_init,
	.read = dead_read,
};

/*
 * Says why its reads fail (source_read_why()): once with a reason, then without. The
 * second read waits while whiny_hold is set (60 s at most), so that the test sees the
 * reason before it is replaced (20 ms later otherwise).
 */
static _Atomic int whiny_reads;
static _Atomic bool whiny_hold;

static ssize_t whiny_read(struct source *src, void *buf, size_t max)
{
	int n = atomic_fetch_add(&whiny_reads, 1);

	if (n == 0)
		source_read_why(src, "output stuck (%s)", "a test");
	if (n == 1)
		hold_while(&whiny_hold);
	if (n < 2)
		return -EIO;
	return good_read(src, buf, max < 100 ? max : 100);
}

static const struct source_ops fake_whiny = {
	.name = "whiny",
	.quality = 512,
	.read = whiny_read,
};

/* A better source where strong_here says so, and a default-on one that yields to it. */
static bool strong_here = true;

static int strong_probe(struct source *src, char *why, size_t len)
{
	if (strong_here)
		return 0;
	snprintf(why, len, "not on this CPU");
	return -ENODEV;
}

static const struct source_ops fake_strong = {
	.name = "strong",
	.quality = 512,
	.probe = strong_probe,
	.init = strong_probe,
	.read = good_read,
};

static const struct source_ops fake_weak = {
	.name = "weak",
	.default_on = true,
	.defer_to = "strong",
	.quality = 2,
	.read = good_read,
};

/* The driver table of these tests, linked instead of src/sources/table.c. */
extern const struct source_ops source_file;
const struct source_ops *const source_drivers[] = {
	&fake_hwrng, &fake_virtio, &fake_via,  &fake_flaky,  &fake_dead,
	&fake_whiny, &fake_strong, &fake_weak, &source_file,
};

/* Logged events, counted by name (linked with -Wl,--wrap=log_full). */
static _Atomic int n_failed, n_recovered, n_none_left, n_bad_id;

void __wrap_log_full(int level, const char *source, const char *event, const char *message_id,
		     const char *fmt, ...) _printf_(5, 6);
void __real_log_full(int level, const char *source, const char *event, const char *message_id,
		     const char *fmt, ...) _printf_(5, 6);

void __wrap_log_full(int level, const char *source, const char *event, const char *message_id,
		     const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (event && strcmp(event, "source-failed") == 0) {
		if (!message_id || strcmp(message_id, SOURCE_MESSAGE_FAILED) != 0)
			n_bad_id++; /* no cmocka asserts off the main thread */
		n_failed++;
	}
	if (event && strcmp(event, "source-recovered") == 0) {
		if (!message_id || strcmp(message_id, SOURCE_MESSAGE_RECOVERED) != 0)
			n_bad_id++; /* no cmocka asserts off the main thread */
		n_recovered++;
	}
	if (event && strcmp(event, "no-source-left") == 0) {
		if (!message_id || strcmp(message_id, SOURCE_MESSAGE_NO_SOURCE) != 0)
			n_bad_id++; /* no cmocka asserts off the main thread */
		n_none_left++;
	}
	__real_log_full(level, source, event, message_id, "%s", msg);
}
const size_t source_n_drivers = ARRAY_SIZE(source_drivers);

/* ---- helpers ---- */

static struct conf_section secs[4];
static struct conf_kv kvs[4][4];

static void sec_set(size_t i, const char *name, const char *k, const char *v)
{
	memset(&secs[i], 0, sizeof(secs[i]));
	secs[i].name = (char *)name;
	secs[i].type = (char *)name;
	secs[i].line = (unsigned int)(10 * i + 1);
	secs[i].kv = kvs[i];
	if (k) {
		kvs[i][0] = (struct conf_kv){ .key = (char *)k,
					      .value = (char *)v,
					      .line = secs[i].line + 1 };
		secs[i].n_kv = 1;
	}
}

static void conf_with(struct conf *c, size_t n)
{
	memset(c, 0, sizeof(*c));
	c->path = (char *)"rules.conf";
	c->sections = secs;
	c->n_sections = n;
}

static char *list_of(struct source_set *set, int *count)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*count = source_set_list(set, f);
	fclose(f);
	print_message("%s", buf);
	return buf;
}

static enum source_state state_of_rules(struct source *src)
{
	struct source_stats st;

	source_get_stats(src, &st);
	return st.state;
}

/* ---- tests ---- */

static void test_table(void **state)
{
	char why[256];

	assert_int_equal(source_check_drivers(source_drivers, source_n_drivers, why, sizeof(why)),
			 0);
	assert_ptr_equal(source_find_driver("hwrng"), &fake_hwrng);
	assert_ptr_equal(source_find_driver("file:x"), &source_file);
	assert_null(source_find_driver("hwrn"));
	assert_null(source_find_driver("hwrngx"));
}

static void test_defaults(void **state)
{
	struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];
	char *out;
	int count;

	conf_with(&c, 0);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	/* The default-on drivers, nothing else (weak is there, off: strong is available). */
	assert_int_equal(source_set_size(set), 3);
	assert_non_null(source_set_find(set, "hwrng"));
	assert_non_null(source_set_find(set, "via"));
	assert_string_equal(source_opt_str(source_set_find(set, "hwrng"), "device"), "/dev/hwrng");
	assert_string_equal(source_opt_str(source_set_find(set, "hwrng"), "mode"), "fast");
	assert_int_equal(source_opt_uint(source_set_find(set, "hwrng"), "rate"), 10);
	assert_null(source_opt_str(source_set_find(set, "hwrng"), "label"));
	out = list_of(set, &count);
	assert_int_equal(count, 1);
	assert_non_null(strstr(out, "hwrng: available, enabled (fake0, quality 1000)\n"));
	assert_non_null(strstr(out, "via: not available: no PadLock RNG on this CPU\n"));
	assert_non_null(strstr(out, "virtio: available, disabled (quality 1024)\n"));
	assert_non_null(strstr(out, "flaky: available, disabled (quality 512)\n"));
	assert_null(strstr(out, "file"));
	free(out);
	/* via cannot work: logged once, absent; hwrng is usable. */
	assert_int_equal(source_set_init(set), 1);
	{
		struct source_stats st;

		source_get_stats(source_set_find(set, "via"), &st);
		assert_int_equal(st.state, SOURCE_ABSENT);
		assert_int_equal(st.last_error, ENODEV);
		assert_string_equal(st.last_error_text, "no PadLock RNG on this CPU");
	}
	source_set_free(set);
}

static void test_one_hwrng_family(void **state)
{
	struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];
	char *out;
	int count;

	/* Configuring virtio leaves the default hwrng present but disabled. */
	sec_set(0, "virtio", NULL, NULL);
	conf_with(&c, 1);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_size(set), 4); /* with weak, off */
	out = list_of(set, &count);
	assert_int_equal(count, 1);
	assert_non_null(strstr(out, "virtio: available, enabled (quality 1024)\n"));
	assert_non_null(strstr(out, "hwrng: available, disabled (fake0, quality 1000)\n"));
	free(out);
	source_set_free(set);

	/* Two enabled: refused. */
	sec_set(1, "hwrng", "mode", "slow");
	conf_with(&c, 2);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
			    "sources 'virtio' and 'hwrng' both read /dev/hwrng: enable only one");
	/* One of them disabled: fine. */
	sec_set(1, "hwrng", "enabled", "no");
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_size(set), 4);
	source_set_free(set);
}

static void test_option_types(void **state)
{
	const struct conf_kv *bad;
	char why[256];

	sec_set(0, "hwrng:x", NULL, NULL);
	assert_int_equal(source_check_section(&secs[0], &bad, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "source 'hwrng' takes no instance name");
	sec_set(0, "hwrng", "mode", "medium");
	assert_int_equal(source_check_section(&secs[0], &bad, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "'medium' is not one of: fast slow");
	assert_string_equal(bad->key, "mode");
	sec_set(0, "hwrng", "mode", "slow");
	assert_int_equal(source_check_section(&secs[0], &bad, why, sizeof(why)), 0);
	sec_set(0, "hwrng", "label", "");
	assert_int_equal(source_check_section(&secs[0], &bad, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "empty value");
	sec_set(0, "hwrng", "rate", "0");
	assert_int_equal(source_check_section(&secs[0], &bad, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "'0' is out of range 1..100");
	sec_set(0, "hwrng", "device", "hwrng");
	assert_int_equal(source_check_section(&secs[0], &bad, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "'hwrng' is not an absolute path");
}

static void test_device_error_recovery(void **state)
{
	struct conf c;
	struct source_set *set = NULL;
	struct source *src;
	struct source_stats st;
	char err[CONF_ERR_MAX], eio[64];
	struct iovec iov[2];
	size_t got;
	uint64_t deadline;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	bool saw_backoff = false;

	flaky_inits = 0; /* -l above probed it with init + fini */
	atomic_store(&flaky_hold, true);
	sec_set(0, "flaky", NULL, NULL);
	sec_set(1, "hwrng", "enabled", "no");
	sec_set(2, "via", "enabled", "no");
	conf_with(&c, 3);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_init(set), 1);
	src = source_set_find(set, "flaky");
	assert_int_equal(source_set_start(set, efd), 0);
	/* EIO: close, back off 1 s, re-open, run. */
	deadline = now_ns() + 60 * NSEC_PER_SEC;
	while (now_ns() < deadline) {
		source_get_stats(src, &st);
		if (st.state == SOURCE_BACKOFF) {
			saw_backoff = true;
			atomic_store(&flaky_hold, false);
		}
		if (st.state == SOURCE_RUNNING)
			break;
		usleep(5000);
	}
	assert_true(saw_backoff);
	assert_int_equal(st.state, SOURCE_RUNNING);
	assert_int_equal(st.last_error, EIO);
	snprintf(eio, sizeof(eio), "read: %s", strerror(EIO)); /* the libc's wording */
	assert_string_equal(st.last_error_text, eio);
	assert_int_equal(flaky_inits, 2);
	/* 64 fresh tested bytes to take. */
	assert_int_equal(source_peek(src, iov, ARRAY_SIZE(iov), 64, now_ns(), NSEC_PER_SEC, &got), 1);
	assert_int_equal(got, 64);
	source_consume(src, got);
	assert_int_equal(source_quality(src), 512);
	source_set_free(set);
	close(efd);
}

static void test_defer_to(void **state)
{
	struct conf c;
	struct source_set *set = NULL;
	char err[CONF_ERR_MAX];
	char *out;
	int count;

	/* strong available: weak is off by default, and -l says why. */
	sec_set(0, "hwrng", "enabled", "no");
	conf_with(&c, 1);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_non_null(source_set_find(set, "weak"));
	out = list_of(set, &count);
	assert_int_equal(count, 0);
	assert_non_null(strstr(out, "weak: available, disabled (off by default where strong is "
				    "available, quality 2)\n"));
	assert_non_null(strstr(out, "strong: available, disabled (quality 512)\n"));
	free(out);
	source_set_free(set);

	/* Configured, it runs beside strong; the note is only for the default. */
	sec_set(1, "weak", NULL, NULL);
	conf_with(&c, 2);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	out = list_of(set, &count);
	assert_int_equal(count, 1);
	assert_non_null(strstr(out, "weak: available, enabled (quality 2)\n"));
	free(out);
	source_set_free(set);

	/* strong not available here: weak is on by default. */
	strong_here = false;
	conf_with(&c, 1);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	out = list_of(set, &count);
	assert_int_equal(count, 1);
	assert_non_null(strstr(out, "weak: available, enabled (quality 2)\n"));
	assert_non_null(strstr(out, "strong: not available: not on this CPU (disabled)\n"));
	free(out);
	source_set_free(set);
	strong_here = true;
}

static void test_read_why(void **state)
{
	struct conf c;
	struct source_set *set = NULL;
	struct source *src;
	struct source_stats st;
	char err[CONF_ERR_MAX];
	uint64_t deadline;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	bool saw_why = false, saw_plain = false;
	char eio[64];

	sec_set(0, "whiny", NULL, NULL);
	sec_set(1, "hwrng", "enabled", "no");
	sec_set(2, "via", "enabled", "no");
	conf_with(&c, 3);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_init(set), 1);
	src = source_set_find(set, "whiny");
	assert_int_equal(source_set_start(set, efd), 0);
	/* The driver's reason in the error text, then (not given again) strerror. */
	atomic_store(&whiny_hold, true);
	snprintf(eio, sizeof(eio), "read: %s", strerror(EIO));
	deadline = now_ns() + 60 * NSEC_PER_SEC;
	while (now_ns() < deadline) {
		source_get_stats(src, &st);
		if (strcmp(st.last_error_text, "read: output stuck (a test)") == 0) {
			saw_why = true;
			atomic_store(&whiny_hold, false);
		}
		if (saw_why && strcmp(st.last_error_text, eio) == 0)
			saw_plain = true;
		if (st.state == SOURCE_RUNNING)
			break;
		usleep(1000);
	}
	assert_true(saw_why);
	assert_true(saw_plain);
	assert_int_equal(st.state, SOURCE_RUNNING);
	source_set_free(set);
	close(efd);
}

static void test_log_once_per_state_change(void **state)
{
	struct conf c;
	struct source_set *set = NULL;
	struct source *src;
	struct source_stats st;
	char err[CONF_ERR_MAX];
	uint64_t deadline;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	n_failed = n_recovered = n_none_left = 0;
	dead_inits = 0; /* -l above probed it with init */
	sec_set(0, "dead", NULL, NULL);
	sec_set(1, "hwrng", "enabled", "no");
	sec_set(2, "via", "enabled", "no");
	conf_with(&c, 3);
	assert_int_equal(source_set_new(&set, &c, err, sizeof(err)), 0);
	assert_int_equal(source_set_init(set), 1);
	src = source_set_find(set, "dead");
	assert_int_equal(source_set_start(set, efd), 0);
	/* Several failed re-opens (back-off 20, 40, 80, ... ms): one line, not one each. */
	deadline = now_ns() + 60 * NSEC_PER_SEC;
	while (atomic_load(&dead_inits) < 4 && now_ns() < deadline)
		usleep(5000);
	assert_true(atomic_load(&dead_inits) >= 4);
	source_get_stats(src, &st);
	assert_int_equal(st.state, SOURCE_BACKOFF);
	assert_int_equal(st.last_error, ENOENT);
	assert_string_equal(st.last_error_text, "no device");
	assert_int_equal(n_failed, 1);
	assert_int_equal(n_none_left, 1);
	assert_int_equal(n_recovered, 0);
	/* The device comes back. */
	atomic_store(&dead_back, true);
	while (state_of_rules(src) != SOURCE_RUNNING && now_ns() < deadline)
		usleep(5000);
	assert_int_equal(state_of_rules(src), SOURCE_RUNNING);
	assert_int_equal(n_recovered, 1);
	assert_int_equal(n_failed, 1);
	assert_int_equal(n_bad_id, 0);
	source_set_free(set);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_one_hwrng_family),
		cmocka_unit_test(test_option_types),
		cmocka_unit_test(test_device_error_recovery),
		cmocka_unit_test(test_log_once_per_state_change),
		cmocka_unit_test(test_defer_to),
		cmocka_unit_test(test_read_why),
	};

	log_setup(LOG_DEBUG, LOG_TARGET_STDERR);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
