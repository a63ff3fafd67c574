// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit tests for the rndr source (src/sources/rndr.c) on any architecture, with detection
 * and the instruction faked at link time (this file's rndr_detect() and rndr_step() replace
 * src/sources/rndr_insn.c): the reasons it is absent, RNDRRS preferred and RNDR as the
 * fallback with its own credit, failed instructions (NZCV Z) retried within their bound,
 * a dry source's naps and a stop during them, each stuck pattern rejected, the carry of
 * partial words. The real instructions run in tests/rndr-qemu.sh.
 */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fake_source.h"
#include "insn_script.h"
#include "sources/rndr.h"
#include "util.h"

#ifdef ENABLE_SOURCE_RNDR
#define BUILT 1
#else
#define BUILT 0
#endif

/* ---- the CPU: FEAT_RNG or not, and a script of instruction results per instruction ---- */

static int detect_r;			/* what rndr_detect() returns */
static bool rndrrs_broken, rndr_broken; /* after its script, that instruction always fails */
static uint64_t n_steps[2];

static void reset_cpu(void)
{
	detect_r = 0;
	rndrrs_broken = rndr_broken = false;
	insn_script_reset();
	n_steps[0] = n_steps[1] = 0;
}

int rndr_detect(char *why, size_t len)
{
	if (detect_r == -ENODEV)
		snprintf(why, len, "no FEAT_RNG on this CPU (fake)");
	else if (detect_r < 0)
		snprintf(why, len, "not compiled in for this architecture (fake)");
	return detect_r;
}

bool rndr_step(enum rndr_insn insn, uint64_t *v)
{
	n_steps[insn]++;
	return insn_script_next(insn == RNDR_RNDRRS ? rndrrs_broken : rndr_broken, v);
}

/* ---- helpers ---- */

static struct source *src;

static int teardown(void **state)
{
	if (src && source_rndr.fini)
		source_rndr.fini(src);
	fake_source_free(src);
	src = NULL;
	reset_cpu();
	return 0;
}

static int setup(void **state)
{
	reset_cpu();
	return 0;
}

static void test_table_entry(void **state)
{
	assert_string_equal(source_rndr.name, "rndr");
	assert_true(source_rndr.default_on);
	assert_true(source_rndr.cpu_rng); /* random.trust_cpu=off makes it 0 */
	assert_null(source_rndr.defer_to);
	/* Conservative: below RDSEED's half, above RNDR's fallback credit. */
	assert_int_equal(source_rndr.quality, 256);
	assert_true(RNDR_QUALITY_RNDR < source_rndr.quality);
}

#if BUILT
static const char *const opts_rndr[] = { "instruction=rndr", NULL };
static const char *const opts_rndrrs[] = { "instruction=rndrrs", NULL };

static void open_src(const char *const *opts)
{
	char why[160] = "";

	src = fake_source_new(&source_rndr, NULL, opts);
	if (source_rndr.init(src, why, sizeof(why)) != 0)
		fail_msg("init: %s", why);
}

static int probe(const char *const *opts, char *why, size_t len, int *quality)
{
	struct source *s = fake_source_new(&source_rndr, NULL, opts);
	int r;

	why[0] = '\0';
	r = source_rndr.probe(s, why, len);
	*quality = fake_source_found_quality(s);
	fake_source_free(s);
	return r;
}

static uint64_t counter(const char *name)
{
	return fake_source_counter(src, name);
}

static void test_absent(void **state)
{
	char why[160];
	int q;

	detect_r = -EOPNOTSUPP;
	assert_int_equal(probe(NULL, why, sizeof(why), &q), -EOPNOTSUPP);
	assert_string_equal(why, "not compiled in for this architecture (fake)");
	detect_r = -ENODEV;
	assert_int_equal(probe(NULL, why, sizeof(why), &q), -ENODEV);
	assert_string_equal(why, "no FEAT_RNG on this CPU (fake)");
	/* Not even tried where absent. */
	assert_int_equal(n_steps[RNDR_RNDRRS] + n_steps[RNDR_RNDR], 0);
	src = fake_source_new(&source_rndr, NULL, NULL);
	assert_int_equal(source_rndr.init(src, why, sizeof(why)), -ENODEV);
}

static void test_choice(void **state)
{
	char why[160];
	int q;

	/* RNDRRS delivers: it is used, at the driver's default credit. */
	assert_int_equal(probe(NULL, why, sizeof(why), &q), 0);
	assert_string_equal(why, "RNDRRS");
	assert_int_equal(q, -1);
	/* A few failures at start are not enough to fall back. */
	insn_push_fails(RNDR_PROBE_TRIES - 1);
	assert_int_equal(probe(NULL, why, sizeof(why), &q), 0);
	assert_string_equal(why, "RNDRRS");
	/* RNDRRS never delivers: RNDR, at RNDR's credit, and -l says why. */
	reset_cpu();
	rndrrs_broken = true;
	assert_int_equal(probe(NULL, why, sizeof(why), &q), 0);
	assert_string_equal(why, "RNDR: RNDRRS failed 32 times in a row");
	assert_int_equal(q, RNDR_QUALITY_RNDR);
	assert_int_equal(n_steps[RNDR_RNDRRS], RNDR_PROBE_TRIES);
	/* Neither. */
	rndr_broken = true;
	assert_int_equal(probe(NULL, why, sizeof(why), &q), -EIO);
	assert_non_null(strstr(why, "neither RNDRRS nor RNDR"));
	/* Configured: no trial, the instruction named. */
	reset_cpu();
	rndrrs_broken = true;
	assert_int_equal(probe(opts_rndrrs, why, sizeof(why), &q), 0);
	assert_string_equal(why, "RNDRRS, as configured");
	assert_int_equal(q, -1);
	assert_int_equal(probe(opts_rndr, why, sizeof(why), &q), 0);
	assert_string_equal(why, "RNDR, as configured");
	assert_int_equal(q, RNDR_QUALITY_RNDR);
	assert_int_equal(n_steps[RNDR_RNDRRS] + n_steps[RNDR_RNDR], 0);
}

static void test_read_and_carry(void **state)
{
	uint8_t buf[2 * 2500 + 3];
	struct iovec iov[3] = { { buf, 2500 }, { buf + 2500, 2500 }, { buf + 5000, 3 } };
	uint64_t w625, w626;

	open_src(NULL);
	n_steps[RNDR_RNDRRS] = 0;
	insn_script_reset();
	assert_int_equal(source_rndr.readv(src, iov, 3), (ssize_t)sizeof(buf));
	insn_expect_good(buf, sizeof(buf), 0);
	assert_int_equal(source_rndr.read(src, buf, 13), 13);
	/* 5003 bytes were 625 words and 3 bytes of word 625: its other 5 come next. */
	w625 = insn_good_word(625);
	w626 = insn_good_word(626);
	assert_memory_equal(buf, (uint8_t *)&w625 + 3, 5);
	assert_memory_equal(buf + 5, &w626, 8);
	/* All of it from RNDRRS. */
	assert_int_equal(n_steps[RNDR_RNDRRS], 627);
	assert_int_equal(n_steps[RNDR_RNDR], 0);
	assert_int_equal(counter("nzcv-fail"), 0);
}

static void test_rndr_when_configured(void **state)
{
	uint8_t buf[64];

	open_src(opts_rndr);
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(n_steps[RNDR_RNDR], 8);
	assert_int_equal(n_steps[RNDR_RNDRRS], 0);
	assert_int_equal(fake_source_found_quality(src), RNDR_QUALITY_RNDR);
}

static void test_failures_retried(void **state)
{
	uint8_t buf[64];

	open_src(opts_rndrrs);
	insn_push_fails(RNDR_RNDRRS_TRIES - 1); /* the last try succeeds */
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	insn_expect_good(buf, sizeof(buf), 0);
	assert_int_equal(counter("nzcv-fail"), RNDR_RNDRRS_TRIES - 1);
	assert_int_equal(counter("dry"), 0);
	assert_int_equal(fake_source_slept_ns(src), 0);
}

static void test_dry(void **state)
{
	uint8_t buf[64];

	memset(buf, 0x5a, sizeof(buf));
	open_src(opts_rndrrs);
	rndrrs_broken = true;
	/* Every try fails: naps of 20, 40, 80, 160 us, then 0 (the framework waits). */
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), 0);
	assert_int_equal(n_steps[RNDR_RNDRRS], (RNDR_NAPS + 1) * RNDR_RNDRRS_TRIES);
	assert_int_equal(counter("dry"), RNDR_NAPS + 1);
	assert_int_equal(fake_source_slept_ns(src), 300 * 1000);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0x5a); /* a failed MRS's value never delivered */
	/* It comes back. */
	rndrrs_broken = false;
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));

	/* RNDR's bound is its own. */
	teardown(NULL);
	open_src(opts_rndr);
	rndr_broken = true;
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), 0);
	assert_int_equal(n_steps[RNDR_RNDR], (RNDR_NAPS + 1) * RNDR_RNDR_TRIES);
}

static void test_partial_then_dry(void **state)
{
	uint8_t buf[64];

	open_src(opts_rndrrs);
	insn_push(true, insn_good_word(100));
	insn_push_fails(RNDR_RNDRRS_TRIES);
	/* One word, then a word given up on: the word is delivered at once, no nap. */
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), 8);
	assert_int_equal(fake_source_slept_ns(src), 0);
}

static void test_stop_during_nap(void **state)
{
	uint8_t buf[8];

	open_src(opts_rndrrs);
	rndrrs_broken = true;
	fake_source_stop(src);
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), -EINTR);
	assert_int_equal(n_steps[RNDR_RNDRRS], RNDR_RNDRRS_TRIES);
}

/*
 * One stuck word amid good ones (v, or with repeat the word before it again): what the
 * call had read is wiped and it starts over; counted as name.
 */
static void stuck_once(uint64_t v, bool repeat, const char *name)
{
	uint64_t want[3] = { insn_good_word(1001), insn_good_word(1002), insn_good_word(1003) };
	uint8_t buf[24];

	open_src(opts_rndrrs);
	insn_push(true, insn_good_word(1000));
	insn_push(true, repeat ? insn_good_word(1000) : v);
	for (int i = 0; i < 3; i++)
		insn_push(true, want[i]);
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(counter(name), 1);
	teardown(NULL);
}

static void test_stuck_patterns(void **state)
{
	stuck_once(0, false, "stuck-zero");
	stuck_once(UINT64_MAX, false, "stuck-ones");
	stuck_once(0, true, "stuck-repeat");
}

static void test_stuck_persistent_fails(void **state)
{
	uint8_t buf[64];

	memset(buf, 0x5a, sizeof(buf));
	open_src(opts_rndrrs);
	for (int i = 0; i < INSN_SCRIPT_MAX; i++)
		insn_push(true, UINT64_MAX);
	assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), -EIO);
	assert_int_equal(counter("stuck-ones"), RNDR_STUCK_DISCARDS);
	assert_non_null(
		strstr(fake_source_read_why(src), "RNDRRS output stuck (an all-ones word)"));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_not_equal(buf[i], 0xff);
}

static void test_stuck_in_calls_in_a_row(void **state)
{
	uint8_t buf[16];

	open_src(opts_rndrrs);
	for (int c = 1; c <= RNDR_STUCK_CALLS; c++) {
		insn_script_clear();
		insn_push(true, 0);
		if (c < RNDR_STUCK_CALLS) {
			assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), 16);
		} else {
			assert_int_equal(source_rndr.read(src, buf, sizeof(buf)), -EIO);
			assert_non_null(strstr(fake_source_read_why(src), "in 4 reads in a row"));
		}
	}
	assert_int_equal(counter("stuck-zero"), RNDR_STUCK_CALLS);
}
#endif /* BUILT */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table_entry, setup, teardown),
#if BUILT
		cmocka_unit_test_setup_teardown(test_absent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_choice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_and_carry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rndr_when_configured, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_then_dry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_during_nap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_persistent_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stuck_in_calls_in_a_row, setup, teardown),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
