// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests for src/log.c: levels, the stderr format, and the repeat limiter. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

/* Run fn with stderr redirected to a temporary file; return what it wrote. */
static char *capture(void (*fn)(void))
{
	static char buf[8192];
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), STDERR_FILENO);
	fn();
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, sizeof(buf) - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
	return buf;
}

static void levels(void)
{
	log_setup(LOG_INFO, LOG_TARGET_STDERR);
	log_debug("hidden");
	log_info("shown %d", 1);
	log_full(LOG_WARNING, "hwrng", "source-failed", NULL, "read: %s", "EIO");
	log_flush();
}

static void test_levels_and_format(void **state)
{
	const char *out = capture(levels);

	assert_string_equal(out, "rngd: shown 1\nrngd: hwrng: read: EIO\n");
}

static void repeats(void)
{
	log_setup(LOG_INFO, LOG_TARGET_STDERR);
	for (int i = 0; i < 5; i++)
		log_full(LOG_WARNING, "caam", NULL, NULL, "hardware error");
	log_full(LOG_WARNING, "hwrng", NULL, NULL, "hardware error"); /* other source */
	log_info("different");
	log_info("different");
	log_flush();
	log_info("after flush");
	log_flush();
}

static void test_repeats_are_counted(void **state)
{
	const char *out = capture(repeats);

	assert_string_equal(out, "rngd: caam: hardware error\n"
				 "rngd: caam: last message repeated 4 more times: hardware error\n"
				 "rngd: hwrng: hardware error\n"
				 "rngd: different\n"
				 "rngd: last message repeated 1 more time: different\n"
				 "rngd: after flush\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels_and_format),
		cmocka_unit_test(test_repeats_are_counted),
	};

	log_set_ident("rngd");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
