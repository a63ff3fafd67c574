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

/*
 * Deterministic pseudo-random bytes (SplitMix64, each word little-endian): the same data,
 * hence anchors, each run and on every machine.
 */
static void fill(uint8_t *b, size_t len, uint64_t *state)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		for (size_t k = 0; k < 8 && i + k < len; k++)
			b[i + k] = (uint8_t)(z >> (8 * k));
	}
}

/* A new history in *h (the old one freed). */
static void renew(struct health **h, const uint64_t k[2])
{
	health_free(*h);
	*h = health_new(k);
	assert_non_null(*h);
}

/*
 * A block seen again is replayed, while it is in the history, and so is a near copy (one
 * bit of difference: it shares its anchored windows); HEALTH_HISTORY blocks later, a and
 * its anchors are forgotten (last: a itself, or a copy shifted by 7 bytes).
 */
static void repeated_and_evicted(bool shifted)
{
	struct health *h = NULL;
	uint8_t a[BLOCK], b[BLOCK], r[BLOCK];
	uint64_t seed = 1;

	renew(&h, key);
	fill(a, BLOCK, &seed);
	a[100] = h->anchor; /* one anchor at least, whatever the data */
	assert_int_equal(health_test_block(h, a, BLOCK), 0);
	assert_int_equal(health_test_block(h, a, BLOCK), HEALTH_REPEATED);
	assert_int_equal(health_test_block(h, a, BLOCK), HEALTH_REPEATED);
	memcpy(b, a, BLOCK);
	b[BLOCK - 1] ^= 1;
	assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_REPEATED);
	b[0] ^= 0x80;
	assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_REPEATED);

	/* HEALTH_HISTORY other blocks later, a is forgotten; one fewer, it is not. */
	for (int i = 0; i < HEALTH_HISTORY - 1; i++) {
		fill(b, BLOCK, &seed);
		assert_int_equal(health_test_block(h, b, BLOCK), 0);
	}
	memcpy(r, a + 7, BLOCK - 7);
	memcpy(r + BLOCK - 7, a, 7);
	assert_int_equal(health_test_block(h, shifted ? r : a, BLOCK), HEALTH_REPEATED);
	fill(b, BLOCK, &seed);
	assert_int_equal(health_test_block(h, b, BLOCK), 0);
	assert_int_equal(health_test_block(h, shifted ? r : a, BLOCK), 0);
	health_free(h);
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
	struct health *h = NULL;
	uint8_t a[BLOCK], b[BLOCK], r[BLOCK];
	uint64_t seed = 24;

	assert_true(HEALTH_HISTORY >= 65536);
	renew(&h, key);
	fill(a, BLOCK, &seed);
	a[50] = h->anchor;
	assert_int_equal(health_test_block(h, a, BLOCK), 0);
	for (int i = 0; i < 5000; i++) {
		fill(b, BLOCK, &seed);
		assert_int_equal(health_test_block(h, b, BLOCK), 0);
	}
	assert_int_equal(health_test_block(h, a, BLOCK), HEALTH_REPEATED);
	memcpy(r, a + 100, BLOCK - 100);
	fill(r + BLOCK - 100, 100, &seed);
	assert_int_equal(health_test_block(h, r, BLOCK), HEALTH_REPEATED);
	health_free(h);
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
	health_free(h);
}

/*
 * A stream read again from another offset: each block the tail of one history block and
 * the head of the next. And one block repeated with a period other than its size.
 */
static void test_shifted(void **state)
{
	static const size_t shifts[] = { 1, 4, 7, 16, 1249, 1250, 2467, 2499 };
	struct health *h = NULL;
	static uint8_t s[6 * BLOCK];
	uint8_t b[BLOCK];
	uint64_t seed = 2;

	fill(s, sizeof(s), &seed);
	for (size_t k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++) {
		renew(&h, key);
		for (int i = 0; i < 4; i++)
			assert_int_equal(health_test_block(h, s + i * BLOCK, BLOCK), 0);
		/* blocks 0..3 seen: 0+s .. 2+s each straddle two of them */
		for (int i = 0; i < 3; i++)
			assert_int_equal(health_test_block(h, s + i * BLOCK + shifts[k], BLOCK),
					 HEALTH_REPEATED);
		/* later data still passes */
		assert_int_equal(health_test_block(h, s + 5 * BLOCK, BLOCK), 0);
	}
	/* 2496 bytes repeated: the second block is the first shifted by 4 */
	renew(&h, key);
	for (size_t i = 0; i < BLOCK; i++)
		b[i] = s[i % 2496];
	assert_int_equal(health_test_block(h, b, BLOCK), 0);
	for (size_t i = 0; i < BLOCK; i++)
		b[i] = s[(BLOCK + i) % 2496];
	assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_REPEATED);

	/*
	 * A block without the anchor byte has its whole-block hash alone (health.h): caught
	 * repeated as it is, not shifted (p ~ 7e-5 for random data, and the next is caught).
	 */
	renew(&h, key);
	for (size_t i = 0; i < sizeof(s); i++)
		s[i] ^= s[i] == h->anchor;
	assert_int_equal(health_test_block(h, s, BLOCK), 0);
	assert_int_equal(health_test_block(h, s, BLOCK), HEALTH_REPEATED);
	assert_int_equal(health_test_block(h, s + 1, BLOCK), 0);
	health_free(h);
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
	struct health *h = NULL;
	uint8_t b[BLOCK];

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		renew(&h, keys[k]);
		for (int i = 0; i < 16; i++) {
			random_block(b);
			assert_int_equal(health_test_block(h, b, BLOCK) & HEALTH_REPEATED, 0);
		}
		assert_int_equal(health_test_block(h, b, BLOCK) & HEALTH_REPEATED,
				 HEALTH_REPEATED);
	}
	health_free(h);
}

static void test_rct(void **state)
{
	struct health *h = NULL;
	uint8_t b[BLOCK];

	for (size_t at = 0; at + HEALTH_RCT_CUTOFF <= BLOCK; at += 97) {
		renew(&h, key);
		random_block(b);
		/* break runs at the edges so that the run is exactly as long as set */
		memset(b + at, 0xa5, HEALTH_RCT_CUTOFF - 1);
		if (at > 0)
			b[at - 1] = 0x5a;
		if (at + HEALTH_RCT_CUTOFF - 1 < BLOCK)
			b[at + HEALTH_RCT_CUTOFF - 1] = 0x5a;
		assert_int_equal(health_test_block(h, b, BLOCK) & HEALTH_RCT, 0);
		memset(b + at, 0xa5, HEALTH_RCT_CUTOFF);
		assert_int_equal(health_test_block(h, b, BLOCK) & HEALTH_RCT, HEALTH_RCT);
	}
	/* an all-zero block */
	memset(b, 0, BLOCK);
	renew(&h, key);
	assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_RCT | HEALTH_APT);
	health_free(h);
}

/* SP 800-90B adaptive proportion: the window's first byte 410 times in 512 fails. */
static void test_apt(void **state)
{
	struct health *h = NULL;
	uint8_t b[BLOCK];

	renew(&h, key);
	random_block(b);
	/*
	 * Window 1 (bytes 512..1023): 0x33 but at every fifth byte (runs of 4, far below the
	 * repetition cut-off): 410 of 512, starting with 0x33.
	 */
	for (int i = 0; i < 512; i++)
		b[512 + i] = i % 5 == 4 ? 0x34 : 0x33;
	assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_APT);
	/* 409: passes (a new history: this near copy shares anchors with the last block) */
	b[512 + 3] = 0x34;
	renew(&h, key);
	assert_int_equal(health_test_block(h, b, BLOCK), 0);
	health_free(h);
}

/*
 * No false alarm on random data (200000 blocks: 500 MB of SplitMix64, a few seconds: every
 * anchor of 200 blocks' history against those of 1024), and what the tests cost per block
 * (printed; the reader's budget is the FIPS tests' few microseconds).
 */
static void test_random_passes_and_cost(void **state)
{
	struct health *h = NULL;
	enum { N = 200000, DISTINCT = 64 };
	uint8_t *blocks = malloc((size_t)DISTINCT * BLOCK);
	uint64_t seed = 3;
	double ns = 0;

	assert_non_null(blocks);
	renew(&h, key);
	for (int i = 0; i < N; i += DISTINCT) {
		struct timespec t0, t1;

		fill(blocks, (size_t)DISTINCT * BLOCK, &seed);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int j = 0; j < DISTINCT; j++)
			assert_int_equal(health_test_block(h, blocks + (size_t)j * BLOCK, BLOCK), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns += (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
	}
	print_message("health tests: %.2f us per block (history of %d)\n", ns / N / 1000,
		      HEALTH_HISTORY);
	free(blocks);
	health_free(h);
}

/*
 * Block i of the growth tests: the same bytes whenever asked (seed i), with an anchor at
 * byte 1999 (its last anchor, which the history keeps, lies in its last 1500 bytes).
 */
static void nth_block(const struct health *h, uint8_t *b, uint64_t i)
{
	uint64_t seed = 0x5eed0000ull + i;

	fill(b, BLOCK, &seed);
	b[1999] = h->anchor;
}

/* Entries in the block table, and in the anchor table. */
static size_t table_entries(const struct health *h, size_t *anchors)
{
	size_t n = 0;

	*anchors = 0;
	for (size_t i = 0; i < 2 * h->cap; i++)
		n += h->table[i] != 0;
	for (size_t b = 0; b < (uint64_t)h->cap * HEALTH_ABUCKETS / HEALTH_HISTORY; b++)
		for (int k = 0; k < HEALTH_ASLOTS; k++)
			*anchors += h->atable[b][k] != 0;
	return n;
}

/*
 * Blocks 0 to n - 1 (nth_block()) are all still remembered, whole and by their anchors (a
 * copy shifted by 1000 bytes, new bytes after it); checked at a few of them, the first
 * and the last always.
 */
static void assert_remembered(struct health *h, uint64_t n)
{
	uint8_t b[BLOCK], r[BLOCK];
	uint64_t seed = n;

	for (uint64_t i = 0; i < n; i += i + 1 < n && n - i > 64 ? 1 + n / 16 : 1) {
		nth_block(h, b, i);
		assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_REPEATED);
		memcpy(r, b + 1000, BLOCK - 1000);
		fill(r + BLOCK - 1000, 1000, &seed);
		assert_int_equal(health_test_block(h, r, BLOCK), HEALTH_REPEATED);
	}
}

/*
 * The history grows as blocks arrive (health.h): empty, it holds tables for
 * HEALTH_HISTORY_MIN blocks; full at each size, the next block doubles them and nothing
 * seen is forgotten (every entry moved, anchors too); at HEALTH_HISTORY it stops growing
 * and the oldest block leaves (test_repeated: a block and its shifted copy forgotten just
 * after HEALTH_HISTORY others).
 */
static void test_growth(void **state)
{
	struct health *h = health_new(key);
	uint8_t b[BLOCK];
	uint64_t i = 0;

	assert_non_null(h);
	/* empty: the first tables, nothing in them; a repeat is caught from the first block */
	assert_int_equal(h->cap, HEALTH_HISTORY_MIN);
	assert_int_equal(h->n_hist, 0);
	for (size_t cap = HEALTH_HISTORY_MIN; cap <= HEALTH_HISTORY; cap *= 2) {
		size_t before, a_before, after, a_after;

		/* full at this size: no growth yet */
		for (; i < cap; i++) {
			nth_block(h, b, i);
			assert_int_equal(health_test_block(h, b, BLOCK), 0);
		}
		assert_int_equal(h->cap, cap);
		assert_int_equal(h->n_hist, cap);
		before = table_entries(h, &a_before);
		assert_int_equal(before, cap);
		assert_true(a_before <= h->a_count && a_before + h->a_count / 64 >= h->a_count);
		/* the next block grows the tables (or, at the last size, evicts block 0) */
		nth_block(h, b, i++);
		assert_int_equal(health_test_block(h, b, BLOCK), 0);
		after = table_entries(h, &a_after);
		if (cap < HEALTH_HISTORY) {
			assert_int_equal(h->cap, 2 * cap);
			assert_int_equal(h->n_hist, cap + 1);
			assert_int_equal(after, before + 1);
			assert_true(a_after >= a_before &&
				    a_after <= a_before + HEALTH_ANCHOR_KEEP);
			assert_remembered(h, i);
		} else {
			assert_int_equal(h->cap, HEALTH_HISTORY);
			assert_int_equal(h->n_hist, HEALTH_HISTORY);
			assert_int_equal(after, HEALTH_HISTORY);
			nth_block(h, b, 0);
			assert_int_equal(health_test_block(h, b, BLOCK),
					 0); /* evicted: new again */
			nth_block(h, b, 2);
			assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_REPEATED);
		}
		if (cap == HEALTH_HISTORY_MIN)
			assert_remembered(h, i); /* right after the first growth: all checked */
	}
	health_free(h);
}

/*
 * A history that could not grow (no memory) stays at its size for good and wraps there: the
 * oldest block leaves when a new one comes.
 */
static void test_capped(void **state)
{
	struct health *h = health_new(key);
	uint8_t b[BLOCK];

	assert_non_null(h);
	h->capped = true;
	for (uint64_t i = 0; i <= HEALTH_HISTORY_MIN; i++) {
		nth_block(h, b, i);
		assert_int_equal(health_test_block(h, b, BLOCK), 0);
	}
	assert_int_equal(h->cap, HEALTH_HISTORY_MIN);
	assert_int_equal(h->n_hist, HEALTH_HISTORY_MIN);
	nth_block(h, b, 1);
	assert_int_equal(health_test_block(h, b, BLOCK), HEALTH_REPEATED);
	nth_block(h, b, 0);
	assert_int_equal(health_test_block(h, b, BLOCK), 0);
	health_free(h);
}

/*
 * The same blocks make the same history on every machine (byte order, SSE2 or not): the
 * tables' contents after 300 blocks (two growths) against a value pinned on x86-64
 * (RNGD_TEST_PRINT=1 prints it). ./scripts/cross runs this on s390x (big-endian) and i386.
 */
static void test_same_everywhere(void **state)
{
	const uint64_t want = 0xcbff955727f6f8b0ull;
	struct health *h = health_new(key);
	uint8_t b[BLOCK];
	uint64_t f = 0xcbf29ce484222325ull;

	assert_non_null(h);
	for (uint64_t i = 0; i < 300; i++) {
		nth_block(h, b, i);
		b[i % BLOCK] = h->anchor;
		assert_int_equal(health_test_block(h, b, BLOCK), 0);
	}
	assert_int_equal(h->cap, 512);
	for (size_t i = 0; i < 2 * h->cap; i++)
		f = (f ^ h->table[i]) * 0x100000001b3ull;
	for (size_t i = 0; i < (uint64_t)h->cap * HEALTH_ABUCKETS / HEALTH_HISTORY; i++)
		for (int k = 0; k < HEALTH_ASLOTS; k++)
			f = (f ^ h->atable[i][k]) * 0x100000001b3ull;
	for (size_t i = 0; i < h->a_count; i++)
		f = (f ^ h->afp[i]) * 0x100000001b3ull;
	if (getenv("RNGD_TEST_PRINT"))
		print_message("tables: 0x%016llxull\n", (unsigned long long)f);
	else
		assert_int_equal(f, want);
	health_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeated),
		cmocka_unit_test(test_shifted),
		cmocka_unit_test(test_reach),
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_capped),
		cmocka_unit_test(test_same_everywhere),
		cmocka_unit_test(test_weak_key),
		cmocka_unit_test(test_rct),
		cmocka_unit_test(test_apt),
		cmocka_unit_test(test_random_passes_and_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
