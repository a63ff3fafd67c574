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

/* Deterministic pseudo-random bytes (SplitMix64): the same data, hence anchors, each run. */
static void fill(uint8_t *b, size_t len, uint64_t *state)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		memcpy(b + i, &z, len - i < 8 ? len - i : 8);
	}
}

/*
 * A block seen again is replayed, while it is in the history, and so is a near copy (one
 * bit of difference: it shares its anchored windows); HEALTH_HISTORY blocks later, a and
 * its anchors are forgotten (last: a itself, or a copy shifted by 7 bytes).
 */
static void repeated_and_evicted(bool shifted)
{
	static struct health h;
	uint8_t a[BLOCK], b[BLOCK], r[BLOCK];
	uint64_t seed = 1;

	health_init(&h, key);
	fill(a, BLOCK, &seed);
	a[100] = h.anchor; /* one anchor at least, whatever the data */
	assert_int_equal(health_test_block(&h, a, BLOCK), 0);
	assert_int_equal(health_test_block(&h, a, BLOCK), HEALTH_REPEATED);
	assert_int_equal(health_test_block(&h, a, BLOCK), HEALTH_REPEATED);
	memcpy(b, a, BLOCK);
	b[BLOCK - 1] ^= 1;
	assert_int_equal(health_test_block(&h, b, BLOCK), HEALTH_REPEATED);
	b[0] ^= 0x80;
	assert_int_equal(health_test_block(&h, b, BLOCK), HEALTH_REPEATED);

	/* HEALTH_HISTORY other blocks later, a is forgotten; one fewer, it is not. */
	for (int i = 0; i < HEALTH_HISTORY - 1; i++) {
		fill(b, BLOCK, &seed);
		assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	}
	memcpy(r, a + 7, BLOCK - 7);
	memcpy(r + BLOCK - 7, a, 7);
	assert_int_equal(health_test_block(&h, shifted ? r : a, BLOCK), HEALTH_REPEATED);
	fill(b, BLOCK, &seed);
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	assert_int_equal(health_test_block(&h, shifted ? r : a, BLOCK), 0);
}

static void test_repeated(void **state)
{
	repeated_and_evicted(false);
	repeated_and_evicted(true);
}

/*
 * Issue 24 item 2: the history's reach is HEALTH_HISTORY blocks of every source (65,536:
 * hours of a looped recording at hwrng rates), not 1024: a block comes back 5000 blocks
 * later, and a copy of it shifted by 100 bytes, and both are caught.
 */
static void test_reach(void **state)
{
	static struct health h;
	uint8_t a[BLOCK], b[BLOCK], r[BLOCK];
	uint64_t seed = 24;

	assert_true(HEALTH_HISTORY >= 65536);
	health_init(&h, key);
	fill(a, BLOCK, &seed);
	a[50] = h.anchor;
	assert_int_equal(health_test_block(&h, a, BLOCK), 0);
	for (int i = 0; i < 5000; i++) {
		fill(b, BLOCK, &seed);
		assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	}
	assert_int_equal(health_test_block(&h, a, BLOCK), HEALTH_REPEATED);
	memcpy(r, a + 100, BLOCK - 100);
	fill(r + BLOCK - 100, 100, &seed);
	assert_int_equal(health_test_block(&h, r, BLOCK), HEALTH_REPEATED);
}

/* A heap history (the daemon's) behaves as a static one. */
static void test_new(void **state)
{
	struct health *h = health_new(key);
	uint8_t a[BLOCK];
	uint64_t seed = 5;

	assert_non_null(h);
	fill(a, BLOCK, &seed);
	assert_int_equal(health_test_block(h, a, BLOCK), 0);
	assert_int_equal(health_test_block(h, a, BLOCK), HEALTH_REPEATED);
	free(h);
}

/*
 * A stream read again from another offset: each block the tail of one history block and
 * the head of the next. And one block repeated with a period other than its size.
 */
static void test_shifted(void **state)
{
	static const size_t shifts[] = { 1, 4, 7, 16, 1249, 1250, 2467, 2499 };
	static struct health h;
	static uint8_t s[6 * BLOCK];
	uint8_t b[BLOCK];
	uint64_t seed = 2;

	fill(s, sizeof(s), &seed);
	for (size_t k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++) {
		health_init(&h, key);
		for (int i = 0; i < 4; i++)
			assert_int_equal(health_test_block(&h, s + i * BLOCK, BLOCK), 0);
		/* blocks 0..3 seen: 0+s .. 2+s each straddle two of them */
		for (int i = 0; i < 3; i++)
			assert_int_equal(health_test_block(&h, s + i * BLOCK + shifts[k], BLOCK),
					 HEALTH_REPEATED);
		/* later data still passes */
		assert_int_equal(health_test_block(&h, s + 5 * BLOCK, BLOCK), 0);
	}
	/* 2496 bytes repeated: the second block is the first shifted by 4 */
	health_init(&h, key);
	for (size_t i = 0; i < BLOCK; i++)
		b[i] = s[i % 2496];
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);
	for (size_t i = 0; i < BLOCK; i++)
		b[i] = s[(BLOCK + i) % 2496];
	assert_int_equal(health_test_block(&h, b, BLOCK), HEALTH_REPEATED);

	/*
	 * A block without the anchor byte has its whole-block hash alone (health.h): caught
	 * repeated as it is, not shifted (p ~ 7e-5 for random data, and the next is caught).
	 */
	health_init(&h, key);
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] ^= s[i] == h.anchor;
	assert_int_equal(health_test_block(&h, s, BLOCK), 0);
	assert_int_equal(health_test_block(&h, s, BLOCK), HEALTH_REPEATED);
	assert_int_equal(health_test_block(&h, s + 1, BLOCK), 0);
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
	/* 409: passes (a new history: this near copy shares anchors with the last block) */
	b[512 + 3] = 0x34;
	health_init(&h, key);
	assert_int_equal(health_test_block(&h, b, BLOCK), 0);
}

/*
 * No false alarm on random data (200000 blocks: 500 MB of SplitMix64, a few seconds: every
 * anchor of 200 blocks' history against those of 1024), and what the tests cost per block
 * (printed; the reader's budget is the FIPS tests' few microseconds).
 */
static void test_random_passes_and_cost(void **state)
{
	static struct health h;
	enum { N = 200000, DISTINCT = 64 };
	uint8_t *blocks = malloc((size_t)DISTINCT * BLOCK);
	uint64_t seed = 3;
	double ns = 0;

	assert_non_null(blocks);
	health_init(&h, key);
	for (int i = 0; i < N; i += DISTINCT) {
		struct timespec t0, t1;

		fill(blocks, (size_t)DISTINCT * BLOCK, &seed);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int j = 0; j < DISTINCT; j++)
			assert_int_equal(health_test_block(&h, blocks + (size_t)j * BLOCK, BLOCK), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	}
	print_message("health tests: %.2f us per block (history of %d)\n", ns / N / 1000,
		      HEALTH_HISTORY);
	free(blocks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated),
		cmocka_unit_test(test_shifted),
		cmocka_unit_test(test_reach),
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_weak_key),
		cmocka_unit_test(test_rct),
		cmocka_unit_test(test_apt),
		cmocka_unit_test(test_random_passes_and_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
