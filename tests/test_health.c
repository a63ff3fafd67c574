// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the health tests before the FIPS gate (src/health.c). */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <cmocka.h>

#include "fips.h"
#include "health.h"
#include "util.h"

#define BLOCK FIPS_BLOCK_BYTES

static const uint64_t key[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

static void random_block(uint8_t *b)
{
	for (size_t done = 0; done < BLOCK;) {
		ssize_t r = getrandom(b + done, BLOCK - done, 0);

		assert_true(r > 0);
		done += (size_t)r;
	}
}

/* A block seen again is replayed, while it is in the history; one bit of difference is not. */
static void test_repeated(void **state)
{
	static struct health h;
	uint8_t a[BLOCK], b[BLOCK];

	health_init(&h, key);
	random_block(a);
	assert_int_equal(health_test_block(&h, a, BLOCK), 0);
	assert_int_equal(health_test_block(&h, a, BLOCK), HEALTH_REPEATED);
	assert_int_equal(health_test_block(&h, a, BLOCK), HEALTH_REPEATED);
	memcpy(b, a, BLOCK);
	b[BLOCK - 1] ^= 1;
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	b[0] ^= 0x80;
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);

	/* HEALTH_HISTORY other blocks later, a is forgotten; one fewer, it is not. */
	for (int i = 0; i < HEALTH_HISTORY - 3; i++) {
		random_block(b);
		assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	}
	assert_int_equal(health_test_block(&h, a, BLOCK), HEALTH_REPEATED);
	random_block(b);
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	assert_int_equal(health_test_block(&h, a, BLOCK), 0);
}

/* SP 800-90B repetition count: 21 equal bytes in a row fail, 20 do not, anywhere. */
/*
 * A weak key (a clock value and 0: the reader's when the CRNG is not ready at boot) still
 * tells different blocks apart; a 0 key word once hashed every 2500-byte block alike.
 */
static void test_weak_key(void **state)
{
	static const uint64_t keys[][2] = { { 0, 0 }, { 1748000000123456789ull, 0 },
					    { 0, 1748000000123456789ull } };
	static struct health h;
	uint8_t b[BLOCK];

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		health_init(&h, keys[k]);
		for (int i = 0; i < 16; i++) {
			random_block(b);
			assert_int_equal(health_test_block(&h, b, BLOCK) & HEALTH_REPEATED, 0);
		}
		assert_int_equal(health_test_block(&h, b, BLOCK) & HEALTH_REPEATED,
				 HEALTH_REPEATED);
	}
}

static void test_rct(void **state)
{
	static struct health h;
	uint8_t b[BLOCK];

	for (size_t at = 0; at + HEALTH_RCT_CUTOFF <= BLOCK; at += 97) {
		health_init(&h, key);
		random_block(b);
		/* break runs at the edges so that the run is exactly as long as set */
		memset(b + at, 0xa5, HEALTH_RCT_CUTOFF - 1);
		if (at > 0)
			b[at - 1] = 0x5a;
		if (at + HEALTH_RCT_CUTOFF - 1 < BLOCK)
			b[at + HEALTH_RCT_CUTOFF - 1] = 0x5a;
		assert_int_equal(health_test_block(&h, b, BLOCK) & HEALTH_RCT, 0);
		memset(b + at, 0xa5, HEALTH_RCT_CUTOFF);
		assert_int_equal(health_test_block(&h, b, BLOCK) & HEALTH_RCT, HEALTH_RCT);
	}
	/* an all-zero block */
	memset(b, 0, BLOCK);
	health_init(&h, key);
	assert_int_equal(health_test_block(&h, b, BLOCK), HEALTH_RCT | HEALTH_APT);
}

/* SP 800-90B adaptive proportion: the window's first byte 410 times in 512 fails. */
static void test_apt(void **state)
{
	static struct health h;
	uint8_t b[BLOCK];

	health_init(&h, key);
	random_block(b);
	/*
	 * Window 1 (bytes 512..1023): 0x33 but at every fifth byte (runs of 4, far below the
	 * repetition cut-off): 410 of 512, starting with 0x33.
	 */
	for (int i = 0; i < 512; i++)
		b[512 + i] = i % 5 == 4 ? 0x34 : 0x33;
	assert_int_equal(health_test_block(&h, b, BLOCK), HEALTH_APT);
	/* 409: passes */
	b[512 + 3] = 0x34;
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);
}

/*
 * No false alarm on random data (100000 blocks: 250 MB, a second or two), and what the
 * tests cost per block (printed; the reader's budget is the FIPS tests' few microseconds).
 */
static void test_random_passes_and_cost(void **state)
{
	static struct health h;
	enum { N = 100000, DISTINCT = 64 };
	uint8_t *blocks = malloc((size_t)DISTINCT * BLOCK);
	struct timespec t0, t1;
	double ns;

	assert_non_null(blocks);
	for (int i = 0; i < DISTINCT; i++)
		random_block(blocks + (size_t)i * BLOCK);
	health_init(&h, key);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < N; i++) {
		uint8_t *b = blocks + (size_t)(i % DISTINCT) * BLOCK;

		/* a different block each time: change a word (the 90B tests see fresh data) */
		memcpy(b, &i, sizeof(i));
		assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	print_message("health tests: %.2f us per block (history of %d)\n", ns / N / 1000,
		      HEALTH_HISTORY);
	free(blocks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated),
		cmocka_unit_test(test_weak_key),
		cmocka_unit_test(test_rct),
		cmocka_unit_test(test_apt),
		cmocka_unit_test(test_random_passes_and_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
