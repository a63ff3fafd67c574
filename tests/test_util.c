// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for src/util.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "util.h"

static void test_parse_uint(void **state)
{
	uint64_t v = 7;

	assert_int_equal(parse_uint("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_uint("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_uint("11", 0, 10, &v), -ERANGE);
	assert_int_equal(v, 10);
	assert_int_equal(parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(parse_uint("", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint("abc", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint("-1", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint("+1", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint("0x1", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint(" 1", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint("1 ", 0, 10, &v), -EINVAL);
	assert_int_equal(parse_uint("5", 6, 10, &v), -ERANGE);
}

/* utc_from_seconds() and utc_to_seconds() against gmtime_r() (32-bit time_t: its range). */
static void test_utc(void **state)
{
	int64_t lo = sizeof(time_t) > 4 ? -5000000000LL : INT32_MIN;
	int64_t hi = sizeof(time_t) > 4 ? 40000000000LL : INT32_MAX - 400000;
	struct utc_time u;
	int64_t back;

	for (int64_t t = lo; t < hi; t += 86400 * 3 + 3607) {
		time_t tt = (time_t)t;
		struct tm tm;

		assert_non_null(gmtime_r(&tt, &tm));
		utc_from_seconds(t, &u);
		assert_true(u.year == tm.tm_year + 1900 && u.mon == (unsigned int)tm.tm_mon + 1 &&
			    u.mday == (unsigned int)tm.tm_mday && u.hour == (unsigned int)tm.tm_hour &&
			    u.min == (unsigned int)tm.tm_min && u.sec == (unsigned int)tm.tm_sec);
		assert_int_equal(utc_to_seconds(&u, &back), 0);
		assert_true(back == t);
	}
	/* A time whose seconds are -EINVAL's value is a time, not an error. */
	u = (struct utc_time){ 1969, 12, 31, 23, 59, 60 - EINVAL };
	assert_int_equal(utc_to_seconds(&u, &back), 0);
	assert_true(back == -EINVAL);
	utc_from_seconds(951782400, &u); /* 2000-02-29, a leap day of a century year */
	assert_true(u.year == 2000 && u.mon == 2 && u.mday == 29);
	u = (struct utc_time){ 2026, 13, 1, 0, 0, 0 };
	assert_int_equal(utc_to_seconds(&u, &back), -EINVAL);
	u = (struct utc_time){ 2026, 12, 1, 24, 0, 0 };
	assert_int_equal(utc_to_seconds(&u, &back), -EINVAL);
}

static void test_parse_bool(void **state)
{
	bool b = false;

	assert_int_equal(parse_bool("yes", &b), 0);
	assert_true(b);
	assert_int_equal(parse_bool("OFF", &b), 0);
	assert_false(b);
	assert_int_equal(parse_bool("1", &b), 0);
	assert_true(b);
	assert_int_equal(parse_bool("maybe", &b), -EINVAL);
	assert_int_equal(parse_bool("", &b), -EINVAL);
}

static void test_text_file(void **state)
{
	char path[] = "/tmp/rngd-test-util-XXXXXX";
	char buf[8];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(write_text_file(path, "1024"), 0);
	assert_int_equal(read_text_file(path, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "1024");
	assert_int_equal(write_text_file(path, "12345678"), 0);
	assert_int_equal(read_text_file(path, buf, sizeof(buf)), -EFBIG);
	unlink(path);
	assert_int_equal(read_text_file(path, buf, sizeof(buf)), -ENOENT);
}

/* Files around the 4 KiB first buffer and its growth, one longer than the limit. */
static void test_text_alloc(void **state)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 16384, 16385, 65536, 70000 };
	char path[] = "/tmp/rngd-test-util-XXXXXX";
	char *data = malloc(70000), *text;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_non_null(data);
	for (size_t i = 0; i < 70000; i++)
		data[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t want = sizes[i] < 65536 ? sizes[i] : 65536;

		assert_int_equal(ftruncate(fd, 0), 0);
		assert_int_equal(pwrite(fd, data, sizes[i], 0), (ssize_t)sizes[i]);
		assert_int_equal(read_text_alloc(path, 65536, &text), (ssize_t)want);
		assert_memory_equal(text, data, want);
		assert_int_equal(text[want], '\0');
		free(text);
	}
	assert_int_equal(read_text_alloc(path, 100, &text), 100);
	assert_int_equal(strlen(text), 100);
	free(text);
	close(fd);
	unlink(path);
	assert_int_equal(read_text_alloc(path, 65536, &text), -ENOENT);
	assert_null(text);
	free(data);
}

static void test_read_full(void **state)
{
	int p[2];
	uint8_t buf[16];

	assert_int_equal(pipe(p), 0);
	assert_int_equal(write_full(p[1], "abcdef", 6), 0);
	close(p[1]);
	assert_int_equal(read_full(p[0], buf, sizeof(buf)), 6);
	assert_memory_equal(buf, "abcdef", 6);
	assert_int_equal(read_full(p[0], buf, sizeof(buf)), 0);
	close(p[0]);
	assert_int_equal(read_full(-1, buf, sizeof(buf)), -EBADF);
}

/* More buffers than one writev() takes, empty ones among them, in order. */
static void test_writev_full(void **state)
{
	enum { N = 1100 };
	static struct iovec iov[N];
	static uint8_t data[N], back[N];
	size_t total = 0;
	int p[2];

	assert_int_equal(pipe(p), 0);
	for (size_t i = 0; i < N; i++) {
		data[i] = (uint8_t)(i * 7 + 1);
		iov[i].iov_base = &data[i];
		iov[i].iov_len = i % 5 == 3 ? 0 : 1;
		total += iov[i].iov_len;
	}
	assert_int_equal(writev_full(p[1], iov, N), 0);
	assert_int_equal(read_full(p[0], back, total), (ssize_t)total);
	for (size_t i = 0, j = 0; i < N; i++)
		if (i % 5 != 3)
			assert_int_equal(back[j++], data[i]);
	close(p[1]);
	assert_int_equal(read(p[0], back, 1), 0);
	close(p[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_parse_bool),
		cmocka_unit_test(test_utc),
		cmocka_unit_test(test_text_file),
		cmocka_unit_test(test_text_alloc),
		cmocka_unit_test(test_read_full),
		cmocka_unit_test(test_writev_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
