// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * FIPS 140-2 tests, word-parallel.
 *
 * The block is read as a big-endian stream of 64-bit words, so the first bit of the stream
 * (the most significant bit of byte 0) is bit 63 of word 0. Runs are counted without
 * walking bits: for a word z of "ones" (the block itself for runs of ones, its complement
 * for runs of zeros), S = z & ~(z >> 1 | carry) marks the first bit of every run, and
 * S & (z << 1) & (z << 2) & ... & (z << (k - 1)) (with bits shifted in from the next word)
 * marks the first bit of every run of length k or more. The number of runs of length
 * exactly k is then popcount(>= k) - popcount(>= k + 1). Bits past the end of the block are
 * zero in both streams, which ends the last run where the block ends.
 *
 * The long-run test looks only at runs of 6 or more (a few hundred per block) and checks
 * whether the 26 bits from their first bit are all set.
 */
#include "config.h"

#include <endian.h>
#include <stdatomic.h>
#include <string.h>

#include "fips.h"

const char *const fips_test_names[FIPS_N_TESTS] = {
	"FIPS 140-2(2001-10-10) Monobit",
	"FIPS 140-2(2001-10-10) Poker",
	"FIPS 140-2(2001-10-10) Runs",
	"FIPS 140-2(2001-10-10) Long run",
	"FIPS 140-2(2001-10-10) Continuous run",
};

/* FIPS 140-2 Change Notice 1 (2001-10-10), section 4.9.1. */
#define MONOBIT_MIN 9726	/* pass: 9725 < X < 10275 */
#define MONOBIT_MAX 10274
/*
 * Poker: X = 16/5000 * sum(f(i)^2) - 5000 must satisfy 2.16 < X < 46.17. Multiplied by
 * 5000: 10800 < 16 * sum - 25000000 < 230850, exact in integers.
 */
#define POKER_LOW 10800
#define POKER_HIGH 230850
#define LONG_RUN 26		/* a run of 26 or more fails */

static const struct {
	unsigned int lo, hi;
} runs_interval[6] = {
	{ 2315, 2685 }, { 1114, 1386 }, { 527, 723 }, { 240, 384 }, { 103, 209 }, { 103, 209 },
};

#define WORDS ((FIPS_BLOCK_BYTES + 7) / 8)	/* 313; the last holds 32 bits */
#define TAIL_BYTES (FIPS_BLOCK_BYTES - (WORDS - 1) * 8)

void fips_init(struct fips_ctx *ctx, const uint8_t seed[4])
{
	memcpy(&ctx->last_word, seed, sizeof(ctx->last_word));
}

static inline uint64_t load_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

/* Bits p+j of the stream (z, then zn), moved to position p, for each p of the word. */
static inline uint64_t ahead(uint64_t z, uint64_t zn, unsigned int j)
{
	return (z << j) | (zn >> (64 - j));
}

/*
 * Count runs of the set bits of z (zn: the next word, pz: the previous word's last bit) by
 * length into ge[0..5] (>= 1 .. >= 6); return true when one reaches LONG_RUN.
 */
static inline __attribute__((always_inline)) bool count_runs(uint64_t z, uint64_t zn,
							      uint64_t pz, uint64_t ge[6])
{
	uint64_t c = z & ~((z >> 1) | (pz << 63));
	bool long_run = false;

	ge[0] += (uint64_t)__builtin_popcountll(c);
	for (unsigned int k = 1; k < 6; k++) {
		c &= ahead(z, zn, k);
		ge[k] += (uint64_t)__builtin_popcountll(c);
	}
	/* c: first bits of runs of 6 or more; look 26 bits ahead of each. */
	while (c) {
		unsigned int p = (unsigned int)__builtin_clzll(c);
		uint64_t window = p ? ahead(z, zn, p) : z;

		if ((window >> (64 - LONG_RUN)) == (UINT64_C(1) << LONG_RUN) - 1)
			long_run = true;
		c &= ~(UINT64_C(1) << (63 - p));
	}
	return long_run;
}

static inline __attribute__((always_inline)) unsigned int
test_bits(const uint8_t *block)
{
	uint64_t ones_ge[6] = { 0 }, zeros_ge[6] = { 0 };
	uint64_t x, xn, px = 0, py = 0;
	uint8_t tail[8] = { 0 };
	unsigned int ones = 0, result = 0;
	bool long_run = false;

	memcpy(tail, block + (WORDS - 1) * 8, TAIL_BYTES);
	x = load_be64(block);
	for (unsigned int i = 0; i < WORDS; i++) {
		/* The valid bits of the next word; past the end, none. */
		uint64_t next_mask = i + 2 < WORDS ? ~UINT64_C(0)
				     : i + 2 == WORDS ? ~UINT64_C(0) << (64 - TAIL_BYTES * 8)
						      : 0;
		uint64_t mask = i + 1 < WORDS ? ~UINT64_C(0) : ~UINT64_C(0) << (64 - TAIL_BYTES * 8);
		uint64_t y;

		xn = i + 2 < WORDS ? load_be64(block + (i + 1) * 8)
		     : i + 2 == WORDS ? load_be64(tail) : 0;
		y = ~x & mask;
		ones += (unsigned int)__builtin_popcountll(x);
		long_run |= count_runs(x, xn, px, ones_ge);
		long_run |= count_runs(y, ~xn & next_mask, py, zeros_ge);
		px = x & 1;
		py = y & 1;
		x = xn;
	}

	if (ones < MONOBIT_MIN || ones > MONOBIT_MAX)
		result |= FIPS_MONOBIT;
	for (unsigned int k = 0; k < 6; k++) {
		uint64_t n1 = k < 5 ? ones_ge[k] - ones_ge[k + 1] : ones_ge[k];
		uint64_t n0 = k < 5 ? zeros_ge[k] - zeros_ge[k + 1] : zeros_ge[k];

		if (n1 < runs_interval[k].lo || n1 > runs_interval[k].hi ||
		    n0 < runs_interval[k].lo || n0 > runs_interval[k].hi)
			result |= FIPS_RUNS;
	}
	if (long_run)
		result |= FIPS_LONG_RUN;
	return result;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("popcnt"))) static unsigned int test_bits_popcnt(const uint8_t *block)
{
	return test_bits(block);
}
#endif

static unsigned int test_bits_generic(const uint8_t *block)
{
	return test_bits(block);
}

typedef unsigned int (*bit_tests_fn)(const uint8_t *);

static unsigned int poker(const uint8_t *block)
{
	uint32_t hist[4][256];
	uint64_t f[16] = { 0 }, sum = 0;
	int64_t x;
	size_t i;

	/* Four histograms keep consecutive increments of the same byte value independent. */
	memset(hist, 0, sizeof(hist));
	for (i = 0; i + 4 <= FIPS_BLOCK_BYTES; i += 4) {
		hist[0][block[i]]++;
		hist[1][block[i + 1]]++;
		hist[2][block[i + 2]]++;
		hist[3][block[i + 3]]++;
	}
	for (; i < FIPS_BLOCK_BYTES; i++)
		hist[0][block[i]]++;
	for (unsigned int b = 0; b < 256; b++) {
		uint64_t n = (uint64_t)hist[0][b] + hist[1][b] + hist[2][b] + hist[3][b];

		f[b >> 4] += n;
		f[b & 15] += n;
	}
	for (unsigned int k = 0; k < 16; k++)
		sum += f[k] * f[k];
	x = (int64_t)(16 * sum) - 25000000;
	return x > POKER_LOW && x < POKER_HIGH ? 0 : FIPS_POKER;
}

static unsigned int continuous(struct fips_ctx *ctx, const uint8_t *block)
{
	uint32_t last = ctx->last_word;
	unsigned int result = 0;

	for (size_t i = 0; i < FIPS_BLOCK_BYTES; i += 4) {
		uint32_t w;

		memcpy(&w, block + i, sizeof(w));
		if (w == last)
			result = FIPS_CONTINUOUS;
		last = w;
	}
	ctx->last_word = last;
	return result;
}

unsigned int fips_test_block(struct fips_ctx *ctx, const uint8_t block[FIPS_BLOCK_BYTES])
{
	/* Chosen once; threads racing here store the same value. */
	static _Atomic(bit_tests_fn) bits;
	bit_tests_fn fn = atomic_load_explicit(&bits, memory_order_relaxed);

	if (!fn) {
		fn = test_bits_generic;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_cpu_init();
		if (__builtin_cpu_supports("popcnt"))
			fn = test_bits_popcnt;
#endif
		atomic_store_explicit(&bits, fn, memory_order_relaxed);
	}
	return fn(block) | poker(block) | continuous(ctx, block);
}
